"""cuDNN checks about builds and releases (GD308-GD310): the CUDA a copy was built for against
the toolkit it sits in, the cuDNN torch runs against the one it was built with, and releases
with a published defect. The placement checks (GD301-GD307) and their helpers are in
gpudoctor.checks.cudnn; this module keeps that one under 500 lines."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import Check, check, failed, passed, skipped, warned
from gpudoctor.checks.cudnn import (
    _installs,
    _loaded_by_torch,
    _major,
    _none,
    _reinstall,
    _unset_fix,
    _version,
    _where,
)
from gpudoctor.compat import machine
from gpudoctor.compat.rules import cudnn_runs_with_cuda
from gpudoctor.compat.wheels import cudnn_wheel_line, cudnn_wheel_name
from gpudoctor.model import (
    CudnnInstall,
    Environment,
    Finding,
    Layer,
    Severity,
    Unavailable,
)
from gpudoctor.versions import format_cudnn_version

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


@check("GD308", "cudnn-cuda-build-matches-toolkit", "cuDNN built for the toolkit's CUDA",
       Layer.CUDNN, Severity.ERROR, "cuDNN's CUDA build, the toolkit version, the cuDNN table",
       reads={"cudnn", "toolkits"})
def check_cuda_build(env: Environment, tables: Tables) -> Finding:
    """A cuDNN tarball is built for one CUDA major (before CUDA 11: one CUDA minor), and links
    that CUDA's cuBLAS. Copied into a toolkit of another CUDA, it cannot find its libraries.
    The build is read from gpudoctor's install manifest, package metadata or the CUDA
    libraries it links; the rule (`gpudoctor.compat.rules.cudnn_runs_with_cuda`: from CUDA 11
    on, a build for CUDA N runs with every N.x; before, a build serves the minors it names)
    tells from the release's table row whether it has a build for the toolkit's CUDA at all,
    and, for a release the tables lack, from the build at hand. The finding names the rule or
    row that decided; a copy no rule can judge is said to be unjudged, not passed.

    Fix: install the cuDNN tarball built for the toolkit's CUDA (`gpudoctor compat cuda X.Y` lists
    the builds and their tarball names).

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/reference/support-matrix.html
    """
    toolkits = {t.root: t for t in env.toolkits.toolkits} if not isinstance(
        env.toolkits, Unavailable) else {}
    rows: list[tuple[CudnnInstall, str]] = [
        (i, tv) for i in _installs(env) if i.prefix and (t := toolkits.get(i.prefix))
        and isinstance(tv := t.version, str)]
    if not rows:
        return skipped("no cuDNN inside a CUDA toolkit of known version")
    evidence: list[tuple[str, str]] = []
    unjudged: list[str] = []
    for i, tv in rows:
        v, build = _version(i), i.cuda_build
        evidence.append((i.prefix or "", f"toolkit CUDA {tv}; cuDNN {v or '?'} built for "
                         f"{'CUDA ' + build if isinstance(build, str) else '?'}"))
        told = _major(build) if isinstance(build, str) else None
        ruling = cudnn_runs_with_cuda(tables, v, tv, build_major=told) if v else None
        if told is not None and told != _major(tv):
            why = f"cuDNN {v} in {i.prefix} is the CUDA {build} build; the toolkit is CUDA {tv}"
        elif ruling is not None and ruling.verdict == "no":
            why = f"{ruling.cited}; the toolkit in {i.prefix} is CUDA {tv}"
        else:
            if ruling is None or ruling.verdict == "unknown":
                unjudged.append(f"{i.prefix}: " + (ruling.why if ruling else
                                                   "its cuDNN version could not be read"))
            continue
        return failed(why, _build_fix(tables, i, v, tv), tuple(evidence))
    if len(unjudged) == len(rows):
        return skipped(f"no row or rule can tell whether the cuDNN fits its toolkit's CUDA "
                       f"({'; '.join(unjudged)})", tuple(evidence))
    left = f" ({'; '.join(unjudged)}: not judged)" if unjudged else ""
    return passed(f"every toolkit's cuDNN is built for its CUDA{left}", tuple(evidence))


def _build_fix(tables: Tables, i: CudnnInstall, v: str | None, tv: str) -> str:
    release = tables.cudnn_release(v) if v else None
    if release is None or not v or cudnn_runs_with_cuda(tables, v, tv).verdict != "yes":
        newer = tables.cudnn_for_cuda(tv)
        release = newer[0] if newer else None
    fmt = tables.cudnn_tarball_format(release.version) if release else None
    if release is None or fmt is None:
        return f"install a cuDNN built for CUDA {tv} into {i.prefix}"
    key = tv.split(".")[0] if fmt.cuda_key == "major" else ".".join(tv.split(".")[:2])
    name = fmt.pattern.format(cuda=key, build=release.build or release.version)
    return (f"gpudoctor install-cudnn --tarball {shlex.quote(name)} --prefix "
            f"{shlex.quote(i.prefix or '')}")


@check("GD309", "cudnn-matches-torch-build", "cuDNN at run time fits PyTorch's build",
       Layer.CUDNN, Severity.ERROR, "torch's cuDNN at run time, the PyTorch table",
       reads={"cudnn", "torch"})
def check_torch_cudnn(env: Environment, tables: Tables) -> Finding:
    """PyTorch refuses a run-time cuDNN of another major, or of an older minor, than the one it
    was compiled against ("cuDNN version incompatibility: PyTorch was compiled against …").
    The compiled-against version is the installed `nvidia-cudnn-cuNN` wheel torch pins (this
    machine's own metadata), else the cuDNN the PyTorch table lists for the wheel variant; the
    run-time one is torch.backends.cudnn.version(), else the copy torch mapped.

    Fix: drop the cuDNN that shadows torch's own (usually an LD_LIBRARY_PATH entry, see GD307), or
    install the torch wheel whose cuDNN matches.

    Sources: https://pytorch.org/get-started/locally/
    """
    rt = V.torch_runtime(env)
    if rt is None:
        missing = V.torch_missing(env)
        return skipped(missing.message if missing is not None else "PyTorch was not imported")
    if rt.cuda is None:
        return skipped(f"torch {rt.version} is not a CUDA build")
    told = machine.torch_built_cudnn(env, tables)  # torch's own words need no version
    if told is None and isinstance(rt.version, Unavailable):
        return skipped(rt.version.message)
    if told is None:
        return skipped(f"neither an installed nvidia-cudnn wheel nor the PyTorch table tells "
                       f"the cuDNN torch {rt.version} was built for")
    wanted, source = told
    loaded = _loaded_by_torch(env)
    runtime = format_cudnn_version(rt.cudnn_version) if isinstance(
        rt.cudnn_version, int) and rt.cudnn_version else (
        _version(loaded[1]) if loaded and loaded[1] else None)
    if runtime is None:
        return skipped("the cuDNN PyTorch loads could not be told")
    built = tuple(int(x) for x in wanted.split(".")[:2])
    have = tuple(int(x) for x in runtime.split(".")[:2])
    evidence = (("compiled against", f"{wanted} ({source})"), ("run time", runtime))
    if have[0] == built[0] and have[1] >= built[1]:
        return passed(f"{V.torch_name(env)} runs cuDNN {runtime} (built with {wanted})",
                      evidence)
    major = (V.torch_cuda(env) or "").split(".")[0]
    # a version torch printed ("8.7.0") names a release, not a wheel ("8.7.0.84"): any of it
    spec = wanted if wanted.count(".") >= 3 else f"{wanted}.*"
    fix = cudnn_wheel_line(major, spec, V.interpreter(env)) if major else (
        f"remove the cuDNN that shadows torch's own (an LD_LIBRARY_PATH entry: see GD307), or "
        f"reinstall cuDNN {wanted} as the wheel of torch's CUDA major ({cudnn_wheel_name(11)} "
        f"or {cudnn_wheel_name(12)}: `python -c 'import torch; print(torch.version.cuda)'` "
        f"says which), version {spec}")
    if loaded and loaded[1] and "LD_LIBRARY_PATH" in loaded[1].found_by:
        fix = _unset_fix(env, loaded[1].lib_dir)
    return failed(f"{V.torch_name(env)} was compiled against cuDNN {wanted} but runs "
                  f"cuDNN {runtime}: it needs {built[0]}.x with minor ≥ {built[1]}", fix,
                  evidence)


@check("GD310", "cudnn-known-bad-release", "no cuDNN release with a known defect",
       Layer.CUDNN, Severity.WARNING, "every copy's version, the known-bad table", reads={"cudnn"})
def check_known_bad(env: Environment, tables: Tables) -> Finding:
    """Some cuDNN releases have a published defect (wrong results, crashes on some GPUs); the
    compat table lists them with their source. Upgrade the copies that are one of them.

    Fix: upgrade to the release the table names.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/release-notes.html
    """
    versions = {v: i for i in _installs(env) if (v := _version(i))}
    if not versions:
        return _none(env) if not _installs(env) else skipped("no cuDNN version could be read")
    bad = {v: why for v in versions if (why := tables.known_bad_cudnn(v))}
    if not bad:
        return passed(f"no known defect in cuDNN {', '.join(sorted(versions))}")
    v, why = next(iter(bad.items()))
    i = versions[v]
    newer = tables.newest_cudnn().version
    return warned(f"cuDNN {v} in {_where(i)} has a known defect: {why}",
                  f"replace cuDNN {v} with another release (newest: {newer}); "
                  + _reinstall(i, newer, env), tuple((k, w) for k, w in bad.items()))


CHECKS: tuple[Check, ...] = (
    check_cuda_build,
    check_torch_cudnn,
    check_known_bad,
)

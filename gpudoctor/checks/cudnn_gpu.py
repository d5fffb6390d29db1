"""cuDNN against the GPUs (GD311): does the cuDNN in use support every GPU here.

NVIDIA's cuDNN support matrix gives each release, and where it differs each CUDA build, a
range of compute capabilities (`compat_tables/gpu.toml` `[[cudnn_support]]`): cuDNN 7.6 stops
at Turing (sm_75), 8.9.7 and the CUDA 12.0-12.6 builds of 9.x at Hopper (sm_90), 9.11+ drops
Maxwell and Pascal. A GPU outside the range is not supported by that release or build.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import Check, check, failed, passed, skipped, warned
from gpudoctor.compat import machine
from gpudoctor.compat.rules import CUDNN_GPU_FLOOR, NVCC_ARCHS, Ruling, cudnn_supports_gpu
from gpudoctor.model import CudnnFacts, Environment, Finding, Layer, Reason, Severity, Unavailable
from gpudoctor.versions import format_cudnn_version, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import CudnnSupport, Tables
    from gpudoctor.compat.machine import SeenGpu

RECOMMEND = "`gpudoctor recommend` names a torch wheel and a cuDNN tarball that fit this machine"


# a toolkit's versioned directory ("/usr/local/cuda-10.1/targets/x86_64-linux/lib"): a cuDNN
# copied into it is the build for that CUDA (the tarball's install steps copy it there)
_TOOLKIT_DIR = re.compile(r"/cuda-(\d{1,2}\.\d{1,2})(?:/|$)")


def _in_use(env: Environment, tables: Tables
            ) -> tuple[list[tuple[str, str, str | None, str]], str]:
    """The cuDNN copies to judge, as (what, version, CUDA it runs with, where the version was
    read when not from the copy itself): the one torch runs
    when a CUDA torch imported (in a report that does not print it, the one its wheel ships,
    where the tables know the wheel), else every copy found on the system; and why there is
    none."""
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.cuda, str) and isinstance(rt.cudnn_version, int) \
            and rt.cudnn_version > 0:
        return [("torch's cuDNN", format_cudnn_version(rt.cudnn_version), rt.cuda, "")], ""
    if rt is not None and isinstance(rt.cuda, str) and isinstance(rt.cudnn_version, Unavailable) \
            and rt.cudnn_version.reason is Reason.NOT_REPORTED \
            and not (isinstance(env.cudnn, CudnnFacts) and env.cudnn.installs):
        shipped = machine.torch_built_cudnn(env, tables)
        if shipped is not None:
            return [("torch's cuDNN", shipped[0], rt.cuda,
                     f"the report does not print it; the one its wheel ships: {shipped[1]}")], ""
    if not isinstance(env.cudnn, CudnnFacts) or not env.cudnn.installs:
        return [], V.reason_of(env.cudnn) if isinstance(env.cudnn, Unavailable) else \
            "no cuDNN found"
    toolkit = V.toolkit_version(env)
    out = []
    for i in env.cudnn.installs:
        version = next((v for v in (i.library_version, i.header_version) if isinstance(v, str)),
                       None)
        if version:
            cuda = toolkit if i.in_use or not isinstance(i.cuda_build, str) else i.cuda_build
            beside = _TOOLKIT_DIR.search(i.lib_dir)
            if not i.in_use and not isinstance(i.cuda_build, str) and beside:
                cuda = beside[1]  # a copy inside /usr/local/cuda-10.1: that toolkit's build
            out.append((f"cuDNN in {i.lib_dir}", version, cuda, ""))
    return out, "no cuDNN copy's version could be read"


def _range(support: CudnnSupport, cuda: str | None) -> str:
    build = f"its CUDA {support.cuda} builds" if support.cuda else "the release"
    return (f"{support.range_text()} for {build}"
            + (f" (runs with CUDA {cuda})" if cuda else "") + f", {support.status}")


def _said(tables: Tables, version: str, cuda: str | None,
          rulings: list[tuple[SeenGpu, Ruling]]) -> str:
    """The evidence line of one copy: the support row that decided (its range, build and
    status), else what each rule said."""
    row = tables.cudnn_gpu_support(version, cuda) if any(r.by_row for _, r in rulings) else None
    said = [_range(row, cuda)] if row is not None else []
    return "; ".join(dict.fromkeys([*said, *(r.cited for _, r in rulings if not r.by_row)]))


@check("GD311", "cudnn-supports-gpu", "the cuDNN in use supports every GPU", Layer.CUDNN,
       Severity.ERROR, "torch's or the system's cuDNN, the GPUs, the cuDNN support table",
       reads={"cudnn", "torch", "nvml", "toolkits"})
def check_cudnn_supports_gpu(env: Environment, tables: Tables) -> Finding:
    """Each cuDNN release (and, where NVIDIA's support matrix differs by build, each of its
    CUDA builds) supports a range of compute capabilities: cuDNN 8.9.7 stops at sm_90, so an
    RTX 5090 (sm_120) is not supported by it; the CUDA 12.0-12.6 builds of 9.7-9.10 neither.
    The cuDNN judged is the one torch runs (torch.backends.cudnn.version(), with torch's CUDA
    picking the build's row; in a pasted report that does not print it, the one torch's wheel
    ships, where the tables know the wheel) when a CUDA torch imported, else every copy on
    the system. FAIL
    for torch's cuDNN, WARN for a system copy (what a build against the toolkit would use).

    Rules before rows (`gpudoctor.compat.rules.cudnn_supports_gpu`): the support matrix's row
    of the release decides where the tables hold one (an open-ended row speaks for its own
    major only: a cuDNN 10 is not judged by a 9.x row), and a GPU of the row's newest major
    at a later minor runs the code it has (binary compatibility: cuDNN 8.5's sm_86 code on an
    RTX 4090, sm_89); where they do not, a build whose
    CUDA's compiler cannot target the GPU (the arch rule), or a GPU below the floor of the
    newest recorded release of its major (cuDNN drops GPUs oldest first), is unsupported, and
    the finding names the rule; anything else stays unknown and the check says so.

    Fix: install a torch wheel whose cuDNN supports the GPU (`gpudoctor recommend` names
    one); for a system copy, a cuDNN release that does (`gpudoctor compat gpu sm_XY` lists
    them; `gpudoctor install-cudnn` installs it).

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html,
    https://docs.nvidia.com/deeplearning/cudnn/archives/index.html
    """
    gpus = [g for g in machine.seen_gpus(env, tables) if isinstance(g.cc, str)]
    if not gpus:
        return skipped("no GPU with a known compute capability was seen")
    copies, why = _in_use(env, tables)
    if not copies:
        return skipped(why)
    evidence = [(f"GPU {g.index}", f"{g.name}, {sm_of(str(g.cc))} ({g.source})") for g in gpus]
    judged = []
    for what, version, cuda, read in copies:
        rulings = [(g, cudnn_supports_gpu(tables, version, str(g.cc), cuda)) for g in gpus]
        evidence.append((f"{what} {version}", _said(tables, version, cuda, rulings)))
        if read:
            evidence.append((f"{what} {version}", read))
        judged.append((what, version, rulings))
    for what, version, rulings in judged:
        outside = [(g, r) for g, r in rulings if r.verdict == "no"]
        if not outside:
            continue
        names = ", ".join(dict.fromkeys(f"{g.name} ({sm_of(str(g.cc))})" for g, _ in outside))
        sm = sm_of(str(outside[0][0].cc))
        message = (f"{what} {version} does not support {names}: "
                   + "; ".join(dict.fromkeys(r.cited for _, r in outside)))
        if what == "torch's cuDNN":
            return failed(message, f"install a torch wheel whose cuDNN supports {sm}: {RECOMMEND}",
                          tuple(evidence))
        return warned(message, f"install a cuDNN release that supports {sm} (`gpudoctor compat "
                      f"gpu {sm}` lists them) with `gpudoctor install-cudnn`", tuple(evidence))
    ok, unknown = [], []
    for what, version, rulings in judged:
        yes = [g for g, r in rulings if r.verdict == "yes"]
        if yes:
            ok.append(f"{what} {version} supports " + (
                "every GPU here" if len(yes) == len(rulings) else
                ", ".join(dict.fromkeys(f"{g.name} ({sm_of(str(g.cc))})" for g in yes))))
        unknown += [_unknown(r) for _, r in rulings if r.verdict != "yes"]
    said = "; ".join(dict.fromkeys(unknown))
    if not ok:
        return skipped(said, tuple(evidence))
    return passed("; ".join(ok) + (f" ({said})" if said else ""), tuple(evidence))


def _unknown(ruling: Ruling) -> str:
    """Why a copy could not be judged for a GPU, with the rules that were asked."""
    if ruling.by_row or "do not record" not in ruling.why:
        return ruling.why
    return (f"{ruling.why}: no support-matrix row, and neither the {NVCC_ARCHS.name} rule nor "
            f"the {CUDNN_GPU_FLOOR.name} rule rules the GPU out")


CHECKS: tuple[Check, ...] = (check_cudnn_supports_gpu,)

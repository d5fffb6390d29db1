"""cuDNN checks (GD3xx): is each copy placed right, and which one does PyTorch really use."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks import cudnn_files, cudnn_versions, mixed_loads
from gpudoctor.checks.base import Check, check, failed, passed, skipped, warned
from gpudoctor.checks.cudnn_files import chmod_line
from gpudoctor.compat.wheels import cuda_library_line, cudnn_wheel_line
from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    CudnnLibrary,
    Environment,
    Finding,
    HostFacts,
    Layer,
    Reason,
    Severity,
    Unavailable,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

_LIB = re.compile(r"^(libcudnn[a-z0-9_]*?)\.so(?:\.(\d+(?:\.\d+)*))?$")
_WHEELS = ("pip wheel", "torch bundled")


# --------------------------------------------------------------------------- helpers


def _installs(env: Environment) -> tuple[CudnnInstall, ...]:
    return env.cudnn.installs if isinstance(env.cudnn, CudnnFacts) else ()


def _none(env: Environment, full: bool = False) -> Finding:
    """SKIP for "no cuDNN at all": GD301 says where it looked, the others point at GD301."""
    if isinstance(env.cudnn, Unavailable) and full:
        return skipped(V.reason_of(env.cudnn))
    return skipped("no cuDNN found" + ("" if full else " (see GD301)"))


def _names_only(env: Environment) -> Finding | None:
    """SKIP where every copy is known by its files' names only (a pasted collect_env lists
    them): their modes, links and sub-libraries are not in the report."""
    if _installs(env) and not any(i.libraries or i.headers for i in _installs(env)):
        return skipped("the report names cuDNN's files only (collect_env's list): their modes, "
                       "links and sub-libraries are not in it")
    return None


def _where(i: CudnnInstall) -> str:
    return i.prefix or i.lib_dir or i.include_dir or i.origin


def _header_dir(i: CudnnInstall) -> str:
    """Where the headers are: a system cuDNN's are not beside its libraries (Debian and Ubuntu:
    /usr/include/x86_64-linux-gnu, the libraries in /usr/lib/x86_64-linux-gnu)."""
    return i.prefix or (i.header.rsplit("/", 1)[0] if i.header else None) or i.include_dir \
        or _where(i)


def _split(name: str) -> tuple[str, str | None] | None:
    m = _LIB.match(name)
    return (m.group(1), m.group(2)) if m else None


def _version(i: CudnnInstall) -> str | None:
    for v in (i.library_version, i.header_version, *cudnn_versions.file_versions(i)[-1:]):
        if isinstance(v, str):
            return v
    return None


def _major(v: str | None) -> int | None:
    return int(v.split(".")[0]) if v and v.split(".")[0].isdigit() else None


def _reinstall(i: CudnnInstall, version: str | None, env: Environment) -> str:
    v = f"cuDNN {version}" if version else "cuDNN"
    if i.prefix:
        return (f"reinstall {v} into {i.prefix} from its tarball (TARBALL, downloaded from "
                "NVIDIA): gpudoctor install-cudnn --tarball TARBALL --prefix "
                f"{shlex.quote(i.prefix)}")
    if i.origin.startswith("pip wheel") and isinstance(i.cuda_build, str):
        return cudnn_wheel_line(i.cuda_build, version, V.interpreter(env))
    return f"reinstall {v} in {_where(i)} from one package or tarball"


def _state(v: str | Unavailable) -> str:
    return v if isinstance(v, str) else f"✗ {v.message}"


def _loaded_by_torch(env: Environment) -> tuple[str, CudnnInstall | None] | None:
    """The libcudnn file torch mapped, and the copy it belongs to."""
    rt = V.torch_runtime(env)
    mapped = rt.mapped_libraries if rt and isinstance(rt.mapped_libraries, tuple) else ()
    paths = [p for p in mapped if "/libcudnn" in p]
    if not paths:
        return None
    path = sorted(paths, key=len)[0]
    folder = path.rsplit("/", 1)[0]
    owner = next((i for i in _installs(env) if folder in (i.real_lib_dir, i.lib_dir)), None)
    return path, owner


# --------------------------------------------------------------------------- placement


@check("GD301", "cudnn-headers", "cuDNN headers present and readable", Layer.CUDNN,
       Severity.ERROR, "cudnn_version.h / cudnn.h of the toolkit and system copies",
       reads={"cudnn"})
def check_headers(env: Environment, tables: Tables) -> Finding:
    """A cuDNN copied into a CUDA toolkit (or installed by the distribution) needs its headers
    next to it: `cudnn_version.h` (v8+, also Debian's `cudnn_version_v8.h`) or `cudnn.h` (v7)
    holds the version, and builds of PyTorch, TensorFlow or your own code read it. A header
    this user cannot read, or one without the CUDNN_MAJOR/MINOR/PATCHLEVEL macros, fails.

    Fix: copy `include/cudnn*.h` from the same cuDNN tarball into the prefix's include directory and
    `chmod a+r` them, or let `gpudoctor install-cudnn --tarball FILE` do the whole install.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/installation/linux.html
    """
    placed = [i for i in _installs(env) if i.prefix or i.origin == "system"]
    if not placed:
        return _none(env, full=True) if not _installs(env) else skipped(
            "no cuDNN in a CUDA toolkit or /usr/include; headers are only needed to compile "
            "against cuDNN")
    evidence = tuple((i.header or f"{_where(i)} (no header)", _state(i.header_version))
                     for i in placed)
    bad = [(i, v) for i in placed if isinstance(v := i.header_version, Unavailable)]
    if not bad:
        return passed(", ".join(f"cuDNN {i.header_version} headers in {_header_dir(i)}"
                                for i in placed), evidence)
    i, v = bad[0]
    if v.reason is Reason.PERMISSION_DENIED:
        fix = chmod_line("a+r", [f"{shlex.quote(i.include_dir or _where(i))}/cudnn*.h"])
    else:
        fix = _reinstall(i, _version(i), env)
    return failed("; ".join(f"{_where(i)}: {v.message}" for i, v in bad), fix, evidence)


@check("GD302", "cudnn-header-matches-library", "cuDNN header matches its library",
       Layer.CUDNN, Severity.ERROR, "header macros, cudnnGetVersion(), library file names",
       reads={"cudnn"})
def check_header_matches_library(env: Environment, tables: Tables) -> Finding:
    """The version in the header must be the version of the library next to it. The library's
    own version comes from `cudnnGetVersion()` (called in a child process: a broken cuDNN can
    abort the process that loads it) and is cross-checked with the real files' names
    (`libcudnn.so.8.9.7`; two of them when one release was copied over another). A mismatch
    (`cudnn_version.h` of 8.5.0 beside 9.1.0 libraries) means two cuDNN releases were copied
    over each other: code compiled against the header calls a library that is not the one it
    expects. Both versions are named; the fix reinstalls the libraries' release whole."""
    evidence: list[tuple[str, str]] = []
    bad: list[tuple[CudnnInstall, str, str | None]] = []
    for i in _installs(env):
        said = cudnn_versions.readings(i)
        if sum(len(v) for v in said.values()) < 2:
            continue
        evidence.append((_where(i), cudnn_versions.describe(said, "")))
        if cudnn_versions.disagree(said):
            bad.append((i, f"{_where(i)}: {cudnn_versions.describe(said)}",
                        cudnn_versions.library_side(said)))
    if not evidence:
        why = next((i.library_version.message for i in _installs(env)
                    if isinstance(i.library_version, Unavailable)), "nothing to compare")
        return _none(env) if not _installs(env) else skipped(why)
    if not bad:
        return passed("header and library versions agree in every copy", tuple(evidence))
    i, _, lib = bad[0]
    return failed("; ".join(text for _, text, _ in bad) + ": two cuDNN releases were copied "
                  "over each other", _reinstall(i, lib, env), tuple(evidence))


@check("GD303", "cudnn-files-readable", "cuDNN files readable by everyone", Layer.CUDNN,
       Severity.ERROR, "mode bits of libcudnn* and cudnn*.h", reads={"cudnn"})
def check_readable(env: Environment, tables: Tables) -> Finding:
    """NVIDIA's install steps end with `chmod a+r`: a library or header that only its owner
    can read works for root and fails for every other user, usually as "libcudnn.so.8: cannot
    open shared object file" or a cuDNN silently not found by PyTorch.

    A cuDNN file that is world-writable, setuid or setgid fails too: any user can replace the
    code every CUDA program on the machine loads (as root, for a program root runs), and a
    setuid/setgid bit on a library has no use but to be abused. `gpudoctor install-cudnn`
    writes every file 0o644, whatever the tarball says.

    Fix: the `sudo chmod` lines the finding prints (`a+r`; `ug-s,go-w`), on exactly the files
    it names.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/installation/linux.html
    """
    if not _installs(env):
        return _none(env)
    if (names := _names_only(env)) is not None:
        return names
    unreadable: list[CudnnLibrary] = []
    private: list[CudnnLibrary] = []
    dangerous: list[CudnnLibrary] = []
    dirs: list[str] = []
    for i in _installs(env):
        dangerous.extend(f for f in (*cudnn_files.real_entries(i.libraries),
                                     *cudnn_files.real_entries(i.headers))
                         if cudnn_files.unsafe(f))
        for f in (*i.libraries, *i.headers):
            if f.mode < 0 or f.world_readable:
                continue
            (private if f.readable else unreadable).append(f)
            folder = shlex.quote(f.path.rsplit("/", 1)[0])
            glob = f"{folder}/{'libcudnn*' if f.name.startswith('lib') else 'cudnn*.h'}"
            if glob not in dirs:
                dirs.append(glob)
    if not dirs and not dangerous:
        return passed("every cuDNN library and header is world-readable (a+r), and none is "
                      "world-writable, setuid or setgid")
    files = dangerous + unreadable + private
    evidence = tuple((f.path, f"mode {f.mode:o}") for f in files[:20])
    fixes = ([chmod_line("a+r", dirs)] if dirs else []) + (
        [chmod_line(cudnn_files.SAFE_CHMOD, cudnn_files.quoted([f.path for f in dangerous]))]
        if dangerous else [])
    fix = " && ".join(fixes)
    if dangerous:
        f = dangerous[0]
        return failed(f"{len(dangerous)} cuDNN file(s) have unsafe modes, e.g. {f.path} is "
                      f"{cudnn_files.unsafe(f)} (mode {f.mode:o}): other users can replace "
                      "or abuse what every CUDA program loads", fix, evidence)
    msg = f"{len(files)} cuDNN file(s) are not readable by everyone, e.g. {files[0].path}"
    if unreadable:
        return failed(msg + "; this user cannot read them either", fix, evidence)
    return warned(msg + " (mode " + f"{files[0].mode:o}): other users cannot load cuDNN", fix,
                  evidence)


@check("GD304", "cudnn-symlinks-intact", "cuDNN SONAME symlinks intact", Layer.CUDNN,
       Severity.WARNING, "symlink targets of libcudnn*", reads={"cudnn"})
def check_symlinks(env: Environment, tables: Tables) -> Finding:
    """A tarball ships `libcudnn.so -> libcudnn.so.8 -> libcudnn.so.8.9.7`. Plain `cp` (without
    `-P`) turns the links into full copies: it wastes space, `ldconfig` warns "is not a
    symbolic link", and a later upgrade leaves the stale copy in front. A dangling link or a
    missing `libX.so.N` means the loader cannot find the library by its SONAME. (pip wheels
    ship only the `libX.so.N` files and are fine.)

    Fix: recreate the links with the `ln -sf` lines the finding prints, or reinstall with `cp -P`
    (or `gpudoctor install-cudnn`), which keeps them.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/installation/linux.html
    """
    if not _installs(env):
        return _none(env)
    if (names := _names_only(env)) is not None:
        return names
    copies: list[str] = []
    broken: list[str] = []
    cmds: dict[str, list[str]] = {}  # lib dir → ln commands run in it
    for i in _installs(env):
        by_base: dict[str, dict[str, CudnnLibrary]] = {}
        for lib in i.libraries:
            parts = _split(lib.name)
            if parts:
                by_base.setdefault(parts[0], {})[parts[1] or ""] = lib
        for base, files in sorted(by_base.items()):
            real = max((s for s, f in files.items() if s.count(".") >= 2
                        and f.symlink_target is None), key=len, default=None)
            if real is None:
                continue
            soname = real.split(".")[0]
            for suffix, target in ((soname, real), ("", soname)):
                f = files.get(suffix)
                name = f"{base}.so" + (f".{suffix}" if suffix else "")
                if f is None and suffix:
                    broken.append(f"{i.lib_dir}/{name} is missing")
                elif f is not None and f.size < 0:
                    broken.append(f"{f.path} -> {f.symlink_target} dangles")
                elif f is not None and f.symlink_target is None:
                    copies.append(f.path)
                else:
                    continue
                cmds.setdefault(i.lib_dir, []).append(
                    f"sudo ln -sf -- {shlex.quote(f'{base}.so.{target}')} {shlex.quote(name)}")
    if not cmds:
        return passed("every libcudnn SONAME link points at its real file")
    evidence = tuple((p, "full copy, not a symlink") for p in copies) + tuple(
        (b, "broken") for b in broken)
    fix = " && ".join(f"cd -- {shlex.quote(d)} && " + " && ".join(c) for d, c in cmds.items())
    if broken:
        return failed("; ".join(broken), fix, evidence)
    return warned(f"{len(copies)} libcudnn file(s) are copies where symlinks belong (`cp` "
                  f"without -P), e.g. {copies[0]}; ldconfig reports them as 'is not a symbolic "
                  "link'", fix, evidence)


@check("GD305", "cudnn-sublibraries-complete", "every cuDNN sub-library present, one version",
       Layer.CUDNN, Severity.ERROR, "libcudnn*.so.N against the layout table, their ELF headers",
       reads={"cudnn", "host"})
def check_sublibraries(env: Environment, tables: Tables) -> Finding:
    """cuDNN 8 and 9 are split into sub-libraries (v8: ops/cnn/adv x infer/train; v9: graph,
    engines_precompiled, engines_runtime_compiled, heuristic, ops, cnn, adv) that are loaded
    on first use. One missing, or one of another version (copied over an older install), fails
    at run time with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or "could not load library".

    A file by the right name is not enough: each library must be an ELF shared object (not a
    text file, not a program: an executable, or a position-independent one with an
    interpreter), built for this machine, and whole (a copy cut short by a full disk or an
    interrupted download ends before the section headers its ELF header points at).

    Fix: reinstall the release whole from one tarball (`gpudoctor install-cudnn --tarball FILE`), so
    every sub-library is there and of one version.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/installation/linux.html
    """
    if not _installs(env):
        return _none(env)
    if (names := _names_only(env)) is not None:
        return names
    problems: list[tuple[CudnnInstall, str]] = []
    machine = cudnn_files.host_machine(env)
    for i in _installs(env):
        problems += [(i, p) for p in cudnn_files.library_problems(i, machine)]
        present = {lib.name for lib in i.libraries if lib.size >= 0}
        if not present and i.prefix:
            problems.append((i, f"{_where(i)} has cuDNN headers but no libcudnn library"))
        majors = {int(p[1]) for n in present if (p := _split(n)) and p[1] and p[1].isdigit()}
        for major in sorted(majors):
            layout = tables.cudnn_layout(major)
            missing = [s for s in layout.libraries if s not in present] if layout else []
            if missing:
                problems.append((i, f"{i.lib_dir} lacks {', '.join(missing)}"))
            versions = {".".join(p[1].split(".")[:3]) for n in present if (p := _split(n))
                        and p[1] and p[1].startswith(f"{major}.") and p[1].count(".") >= 2}
            if len(versions) > 1:
                problems.append((i, f"{i.lib_dir} mixes cuDNN {', '.join(sorted(versions))}"))
    if not problems:
        return passed("every cuDNN copy has all its sub-libraries, each at one version and a "
                      "shared library" + (f" for {machine}" if machine else ""))
    i = problems[0][0]
    return failed("; ".join(p for _, p in problems), _reinstall(i, _version(i), env),
                  tuple((_where(i), p) for i, p in problems))


@check("GD306", "cudnn-loads", "cuDNN loads, its dependencies found", Layer.CUDNN,
       Severity.ERROR, "ldd of every libcudnn library, cudnnGetVersion() in a child",
       reads={"cudnn"})
def check_loads(env: Environment, tables: Tables) -> Finding:
    """cuDNN links CUDA libraries (cuBLAS, cuBLASLt, NVRTC) of the CUDA major it was built for.
    When `ldd` prints "libcublas.so.11 => not found", the first convolution aborts or fails:
    the cuDNN is the build for another CUDA, or that CUDA's libraries are not on the loader
    path. A library that crashes or cannot be loaded at all (a truncated file, a wrong
    architecture) fails here too: the main library and every sub-library is loaded (with
    ctypes, in a child process) and what the loader said is shown.

    Fix: install the cuDNN build for the CUDA major whose libraries are on the loader path, or put
    that CUDA's lib64 on LD_LIBRARY_PATH; `ldd` on the library shows what is missing.

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/reference/support-matrix.html
    """
    if not _installs(env):
        return _none(env)
    evidence = tuple((_where(i), _deps_state(i.missing_deps)) for i in _installs(env))
    bad = [f"{_where(i)}: {', '.join(i.missing_deps)} not found" for i in _installs(env)
           if isinstance(i.missing_deps, tuple) and i.missing_deps]
    missing = " ".join(d for i in _installs(env) if isinstance(i.missing_deps, tuple)
                       for d in i.missing_deps)
    broken = [(i, cudnn_files.load_problems(i)) for i in _installs(env)]
    broken = [(i, found) for i, found in broken if found]
    # a library the loader refused is named by its own load (the main one among them)
    bad += [f"{_where(i)}: {v.message}" + (f" ({v.detail.splitlines()[-1]})" if v.detail else "")
            for i in _installs(env) if isinstance(v := i.library_version, Unavailable)
            and v.reason in _LOAD_FAILURES and not i.missing_deps
            and not (v.reason is Reason.NOT_INSTALLED and any(i is j for j, _ in broken))]
    bad += [text for _, found in broken for text in found]
    if not bad:
        if all(isinstance(i.missing_deps, Unavailable) for i in _installs(env)):
            return skipped(V.reason_of(_installs(env)[0].missing_deps))
        return passed("every cuDNN copy loads; ldd resolves all its dependencies", evidence)
    majors = sorted(set(re.findall(r"lib(?:cublas|cublasLt|nvrtc)\.so\.(\d+)", missing)))
    fix = (f"install CUDA {majors[0]}'s libraries (e.g. `"
           f"{cuda_library_line('cublas', majors[0], V.interpreter(env))}`) and put their "
           "directory on LD_LIBRARY_PATH, or install the cuDNN build for the CUDA you have"
           ) if majors else (
        "install the libraries named and put their directory on LD_LIBRARY_PATH" if missing
        else "its library is damaged or built for another machine: "
        + _reinstall(broken[0][0], _version(broken[0][0]), env) if broken
        else "reinstall that cuDNN: its library is damaged or built for another machine")
    return failed("; ".join(bad), fix, evidence)


_LOAD_FAILURES = (Reason.CRASHED, Reason.NOT_INSTALLED, Reason.TIMEOUT)


def _deps_state(deps: tuple[str, ...] | Unavailable) -> str:
    if isinstance(deps, Unavailable):
        return f"✗ {deps.message}"
    return f"not found: {', '.join(deps)}" if deps else "all found"


# --------------------------------------------------------------------------- which copy


@check("GD307", "cudnn-copies", "which cuDNN copy is used", Layer.CUDNN, Severity.WARNING,
       "every cuDNN copy found, and the libcudnn file torch mapped",
       reads={"cudnn", "torch", "host"})
def check_copies(env: Environment, tables: Tables) -> Finding:
    """Lists every cuDNN copy (CUDA toolkit, system, LD_LIBRARY_PATH, ldconfig, pip wheel,
    conda) and marks the one PyTorch really loaded (from its /proc/self/maps). A copy on
    LD_LIBRARY_PATH is searched before the cuDNN wheel PyTorch was installed with, and
    shadows it: torch then runs, or fails, with a cuDNN it was not built for.

    A mixed load fails: the parts of one cuDNN (or cuBLAS) that torch's process mapped from
    different directories or versions, e.g. `libcudnn.so.9` from the wheel and
    `libcudnn_graph.so.9.0.0` from an older cuDNN on LD_LIBRARY_PATH. Each file is named with
    its directory and version, and the fix names the LD_LIBRARY_PATH entry to drop."""
    mixed = mixed_loads.find(env)
    if mixed is not None:
        return failed(mixed.message, mixed.fix, mixed.evidence)
    installs = _installs(env)
    if not installs:
        return _none(env)
    loaded = _loaded_by_torch(env)
    owner = loaded[1] if loaded else None
    evidence = tuple(
        (i.lib_dir or i.include_dir or i.origin,
         f"cuDNN {_version(i) or '?'}, {i.origin}; found by {', '.join(i.found_by)}"
         + (" ← loaded by torch" if i is owner else ""))
        for i in installs
    )
    if loaded and owner is None:
        evidence += ((loaded[0], "loaded by torch; not among the copies found"),)
    wheels = [i for i in installs if i.origin.startswith(_WHEELS)]
    on_path = [i for i in installs if "LD_LIBRARY_PATH" in i.found_by and i not in wheels]
    shadow = owner if owner in on_path else None
    if shadow is None and loaded is None and wheels:
        shadow = next((i for i in on_path if _version(i) != _version(wheels[0])), None)
    if shadow is not None and wheels:
        verb = "shadows" if loaded else "may shadow"
        return warned(
            f"cuDNN {_version(shadow)} on LD_LIBRARY_PATH ({shadow.lib_dir}) {verb} the cuDNN "
            f"{_version(wheels[0])} PyTorch was installed with ({wheels[0].lib_dir})",
            _unset_fix(env, shadow.lib_dir), evidence)
    where = f"; torch loads {loaded[0]}" if loaded else ""
    return passed(f"{len(installs)} cuDNN cop{'y' if len(installs) == 1 else 'ies'} found"
                  f"{where}", evidence)


def _unset_fix(env: Environment, folder: str) -> str:
    current = env.host.getenv("LD_LIBRARY_PATH") if isinstance(env.host, HostFacts) else None
    if not isinstance(current, str):
        return f"remove {folder} from LD_LIBRARY_PATH"
    kept = ":".join(p for p in current.split(":") if p and p.rstrip("/") != folder.rstrip("/"))
    return f"export LD_LIBRARY_PATH={shlex.quote(kept)}" if kept else "unset LD_LIBRARY_PATH"


# --------------------------------------------------------------------------- versions


CHECKS: tuple[Check, ...] = (
    check_headers,
    check_header_matches_library,
    check_readable,
    check_symlinks,
    check_sublibraries,
    check_loads,
    check_copies,
)

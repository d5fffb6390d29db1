"""Mixed loads: the parts of one library family that torch's process mapped from different
directories or versions (GD307). Pure functions over the Environment, no I/O.

The real case: torch loads `libcudnn.so.9` from its wheel by full path, and cuDNN then opens
its sub-libraries by SONAME, which the loader finds first on `LD_LIBRARY_PATH`:
`libcudnn_graph.so.9` of an older cuDNN 9.0.0. The paths come from /proc/self/maps of torch's
process (`TorchRuntime.mapped_libraries`, symlinks resolved); a file's version from its name
(`libcudnn_graph.so.9.0.0`), else from the cuDNN copy found in that directory.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from gpudoctor import views as V
from gpudoctor.model import CudnnFacts, CudnnInstall, Environment, HostFacts

# family name, file name prefix; the loader keeps one SONAME per major apart from another
FAMILIES = (("cuDNN", "libcudnn"), ("cuBLAS", "libcublas"))
_SONAME = re.compile(r"^(lib[A-Za-z_]+)\.so\.(\d+)((?:\.\d+)*)$")
_OWN = ("/site-packages/", "/dist-packages/")  # torch's own wheels live there


@dataclass(frozen=True, slots=True)
class Mixed:
    """One family loaded from several directories or versions."""

    message: str
    fix: str
    evidence: tuple[tuple[str, str], ...]


def _installs(env: Environment) -> tuple[CudnnInstall, ...]:
    return env.cudnn.installs if isinstance(env.cudnn, CudnnFacts) else ()


def _copy_version(env: Environment, folder: str) -> str | None:
    for i in _installs(env):
        if folder in (i.real_lib_dir, i.lib_dir):
            for v in (i.library_version, i.header_version):
                if isinstance(v, str):
                    return v
    return None


def file_version(env: Environment, path: str) -> str | None:
    """X.Y.Z of a mapped library: its name's suffix, else the copy in its directory."""
    m = _SONAME.match(posixpath.basename(path))
    if m and m.group(3).count(".") >= 2:
        return m.group(2) + m.group(3)
    return _copy_version(env, posixpath.dirname(path))


def find(env: Environment) -> Mixed | None:
    """The first family (and SONAME major) torch mapped from more than one directory or
    version, with the LD_LIBRARY_PATH entry to drop; None when every family is whole."""
    rt = V.torch_runtime(env)
    mapped = rt.mapped_libraries if rt and isinstance(rt.mapped_libraries, tuple) else ()
    groups: dict[tuple[str, str], list[str]] = {}
    for path in mapped:
        m = _SONAME.match(posixpath.basename(path))
        family = next((f for f, prefix in FAMILIES if m and m.group(1).startswith(prefix)), None)
        if m and family:
            groups.setdefault((family, m.group(2)), []).append(path)
    for (family, _), paths in groups.items():
        folders = list(dict.fromkeys(posixpath.dirname(p) for p in paths))
        versions = {v for p in paths if (v := file_version(env, p))}
        if len(folders) > 1 or len(versions) > 1:
            return _mixed(env, family, paths, folders)
    return None


def _mixed(env: Environment, family: str, paths: list[str], folders: list[str]) -> Mixed:
    def where(folder: str) -> str:
        files = [p for p in paths if posixpath.dirname(p) == folder]
        vs = sorted({v for p in files if (v := file_version(env, p))})
        names = ", ".join(posixpath.basename(p) for p in files)
        return f"{names} from {folder} ({family} {' / '.join(vs) if vs else 'version unknown'})"

    # torch's own copy stays; with none among them, the directory of the first file mapped
    keep = next((f for f in folders if any(o in f + "/" for o in _OWN)), folders[0])
    drop = [f for f in folders if f != keep]
    message = (f"torch's process loaded {family} from {len(folders)} places: "
               + "; ".join(where(f) for f in folders)
               + f". The parts of one {family} must come from one copy "
               + ("(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, crashes or wrong results)"
                  if family == "cuDNN" else "(undefined symbols, crashes)"))
    evidence = tuple((p, file_version(env, p) or "version unknown") for p in paths)
    return Mixed(message, _fix(env, family, keep, drop), evidence)


def _fix(env: Environment, family: str, keep: str, drop: list[str]) -> str:
    host = env.host if isinstance(env.host, HostFacts) else None
    value = host.getenv("LD_LIBRARY_PATH") if host else None
    entries = [e for e in re.split(r"[:;]", value) if e] if isinstance(value, str) else []
    real = dict(host.ld_library_path_real) if host else {}
    bad = [e for e in entries if posixpath.normpath(real.get(e, e)) in drop
           or posixpath.normpath(e) in drop]
    keep_text = f"so that every part comes from {keep}"
    if bad:
        kept = [e for e in entries if e not in bad]
        line = (f"export LD_LIBRARY_PATH={shlex.quote(':'.join(kept))}" if kept
                else "unset LD_LIBRARY_PATH")
        return (f"drop {', '.join(bad)} from LD_LIBRARY_PATH ({keep_text}): {line}")
    preload = host.getenv("LD_PRELOAD") if host else None
    if isinstance(preload, str) and preload and any(d in preload for d in drop):
        return f"remove the {family} in {', '.join(drop)} from LD_PRELOAD ({keep_text})"
    return (f"take the {family} in {', '.join(drop)} off the loader's path (the ldconfig cache: "
            f"`ldconfig -p | grep {family.lower()}`, or the package that installed it), "
            f"{keep_text}")


"""The CUDA toolkits on disk (`probe_toolkits` → `ToolkitsFacts`).

Toolkits are looked for in this order, each recorded with how it was found: `--cuda-home`,
`CUDA_HOME`, `CUDA_PATH`, `nvcc` on `PATH`, `/usr/local/cuda`, `/usr/local/cuda-*` (newest
first), `/opt/cuda`. The same directory reached twice (a symlink) is listed once, under the
first way it was found. The first toolkit found is the one in use. What `--cuda-home`,
`CUDA_HOME` and `CUDA_PATH` name is recorded whatever it is (`ToolkitsFacts.named`: missing, a file,
empty, not a toolkit): builds of CUDA extensions read CUDA_HOME even when it is no toolkit.

Each toolkit's version is read every way that applies: `version.json` (major.minor only: the
third field is sometimes a date), `version.txt` (≤ 11.0), the `nvidia_cuda_runtime` dist-info of
a toolkit assembled from pip wheels, `include/cuda.h` `CUDA_VERSION`, `nvcc --version` and
`cudaRuntimeGetVersion` of its libcudart (works without a driver). A reading that fails is kept
as `Unavailable` (garbage JSON → ERROR, unreadable → PERMISSION_DENIED, nvcc exit ≠ 0 → ERROR).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path

from gpudoctor import childproc
from gpudoctor.model import (
    NamedRoot,
    Reason,
    ToolkitFacts,
    ToolkitsFacts,
    Unavailable,
    VersionReading,
)
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.native import read_version
from gpudoctor.versions import decode_cuda_version

logger = logging.getLogger(__name__)

NVCC_TIMEOUT = 15.0  # seconds for `nvcc --version`
_PREFERENCE = ("version.json", "version.txt", "dist-info", "cuda.h", "nvcc", "libcudart")


NAMED = ("--cuda-home", "CUDA_HOME", "CUDA_PATH")  # what the user names; the rest is searched
# what building CUDA code needs of a toolkit: a toolkit with only version.json (a runtime-only
# container image) is found, but torch.utils.cpp_extension cannot build with it
BUILD_PARTS = ("bin/nvcc", "include/cuda_runtime.h")


def probe_toolkits(deps: Deps) -> ToolkitsFacts | Unavailable:
    """Every toolkit found, with all its version readings, and what the named roots are."""
    seen: set[str] = set()
    toolkits: list[ToolkitFacts] = []
    named: list[NamedRoot] = []
    for root, found_by in candidate_roots(deps):
        if found_by in NAMED:
            named.append(NamedRoot(root, found_by, *describe_root(Path(root))))
        try:
            real = os.path.realpath(root)
        except OSError:
            continue
        if real in seen or not _looks_like_toolkit(Path(root)):
            continue
        seen.add(real)
        toolkits.append(_toolkit(Path(root), found_by, deps, in_use=not toolkits))
    if not toolkits and not named:
        return Unavailable(
            Reason.NOT_INSTALLED,
            "no CUDA toolkit found (looked at --cuda-home, CUDA_HOME, CUDA_PATH, nvcc on PATH, "
            "/usr/local/cuda, /usr/local/cuda-*, /opt/cuda)",
        )
    return ToolkitsFacts(toolkits=tuple(toolkits), named=tuple(named))


def candidate_roots(deps: Deps) -> list[tuple[str, str]]:
    """(directory, how it was found) in search order; not yet filtered or de-duplicated."""
    out: list[tuple[str, str]] = []
    if deps.cuda_home:
        out.append((deps.cuda_home, "--cuda-home"))
    out.extend((deps.environ[v], v) for v in ("CUDA_HOME", "CUDA_PATH") if deps.environ.get(v))
    nvcc = shutil.which("nvcc", path=deps.environ.get("PATH", ""))
    if nvcc:
        out.append((_nvcc_root(Path(os.path.realpath(nvcc))), "nvcc on PATH"))
    out.append((str(deps.path("/usr/local/cuda")), "/usr/local/cuda"))
    versioned = sorted(
        deps.path("/usr/local").glob("cuda-*"), key=lambda p: _version_key(p.name), reverse=True
    )
    out.extend((str(p), "/usr/local/cuda-*") for p in versioned)
    out.append((str(deps.path("/opt/cuda")), "/opt/cuda"))
    return out


def _nvcc_root(nvcc: Path) -> str:
    """The toolkit an nvcc belongs to; follows a wrapper script's `exec /x/bin/nvcc`."""
    root = nvcc.parent.parent
    if _looks_like_toolkit(root):
        return str(root)
    try:
        head = nvcc.read_bytes()[:4096]
    except OSError:
        return str(root)
    if head.startswith(b"#!"):
        m = re.search(rb"(/[\w.+/-]+)/bin/nvcc\b", head)
        if m:
            return m.group(1).decode(errors="replace")
    return str(root)


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", name))


def _looks_like_toolkit(root: Path) -> bool:
    return any(
        (root / p).exists()
        for p in ("version.json", "version.txt", "include/cuda.h", "dist-info")
    )


def lacks(root: Path) -> tuple[str, ...]:
    """The parts of BUILD_PARTS a toolkit lacks (headers may also sit in targets/*/include)."""
    out = []
    for part in BUILD_PARTS:
        if (root / part).exists():
            continue
        if part.startswith("include/") and any(root.glob(f"targets/*/{part}")):
            continue
        out.append(part)
    return tuple(out)


def describe_root(root: Path) -> tuple[str, tuple[str, ...]]:
    """What a directory the user named as the toolkit is (`NamedRoot.kind`), and for a toolkit
    the build parts it lacks: "missing", "file", "unreadable", "empty", "not-a-toolkit" (none
    of version.json, version.txt, include/cuda.h, dist-info, bin/nvcc) or "toolkit"."""
    try:
        if not root.exists():  # a dangling symlink too
            return "missing", ()
        if not root.is_dir():
            return "file", ()
        with os.scandir(root) as entries:
            empty = next(entries, None) is None
    except PermissionError:
        return "unreadable", ()
    except OSError:
        return "missing", ()
    if empty:
        return "empty", ()
    if not _looks_like_toolkit(root) and not (root / "bin" / "nvcc").exists():
        return "not-a-toolkit", ()
    return "toolkit", lacks(root)


def _toolkit(root: Path, found_by: str, deps: Deps, in_use: bool) -> ToolkitFacts:
    readings = [
        r
        for r in (
            _read_version_json(root),
            _read_version_txt(root),
            _read_dist_info(root),
            _read_cuda_h(root),
            _read_nvcc(root, deps),
            _read_cudart(root, deps),
        )
        if r is not None
    ]
    best: str | Unavailable = Unavailable(
        Reason.ERROR, f"no readable version information under {root}"
    )
    for method in _PREFERENCE:
        r = next((r for r in readings if r.method == method), None)
        if r is not None and isinstance(r.value, str):
            best = r.value
            break
    nvcc = root / "bin" / "nvcc"
    return ToolkitFacts(
        root=str(root),
        found_by=found_by,
        version=best,
        readings=tuple(readings),
        nvcc=str(nvcc) if nvcc.exists() else None,
        pip_assembled=(root / "dist-info").is_dir() and not (root / "version.json").exists(),
        in_use=in_use,
        lacks=lacks(root),
    )


def _read_text(path: Path) -> str | Unavailable:
    try:
        return path.read_text(errors="replace")
    except PermissionError as e:
        return Unavailable(Reason.PERMISSION_DENIED, f"{path} is not readable", detail=repr(e))
    except OSError as e:
        return Unavailable(Reason.ERROR, f"{path} could not be read", detail=repr(e))


def _major_minor(text: str) -> str | None:
    m = re.match(r"^\s*(\d+)\.(\d+)", text)
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _read_version_json(root: Path) -> VersionReading | None:
    path = root / "version.json"
    if not path.exists():
        return None
    text = _read_text(path)
    if isinstance(text, Unavailable):
        return VersionReading("version.json", str(path), text)
    try:
        raw = json.loads(text)["cuda"]["version"]
        value: str | Unavailable = _major_minor(str(raw)) or Unavailable(
            Reason.ERROR, f"{path}: cuda.version {raw!r} is not a version"
        )
    except (ValueError, KeyError, TypeError) as e:
        value = Unavailable(Reason.ERROR, f"{path} is not a CUDA version.json", detail=repr(e))
    return VersionReading("version.json", str(path), value)


def _read_version_txt(root: Path) -> VersionReading | None:
    path = root / "version.txt"
    if not path.exists():
        return None
    text = _read_text(path)
    if isinstance(text, Unavailable):
        return VersionReading("version.txt", str(path), text)
    m = re.search(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)?)", text)
    value: str | Unavailable = m.group(1) if m else Unavailable(
        Reason.ERROR, f"{path} has no 'CUDA Version X.Y' line"
    )
    return VersionReading("version.txt", str(path), value)


def _read_dist_info(root: Path) -> VersionReading | None:
    folder = root / "dist-info"
    if not folder.is_dir():
        return None
    for d in sorted(folder.glob("nvidia_cuda_runtime*-*.dist-info")):
        m = re.search(r"-(\d+\.\d+)[.\d]*\.dist-info$", d.name)
        if m:
            return VersionReading("dist-info", str(d), _major_minor(m.group(1)) or m.group(1))
    return VersionReading(
        "dist-info", str(folder),
        Unavailable(Reason.NOT_INSTALLED, f"{folder} has no nvidia_cuda_runtime dist-info"),
    )


def _read_cuda_h(root: Path) -> VersionReading | None:
    path = root / "include" / "cuda.h"
    if not path.exists():
        return None
    text = _read_text(path)
    if isinstance(text, Unavailable):
        return VersionReading("cuda.h", str(path), text)
    m = re.search(r"^\s*#\s*define\s+CUDA_VERSION\s+(\d+)\s*$", text, re.MULTILINE)
    value: str | Unavailable = decode_cuda_version(int(m.group(1))) if m else Unavailable(
        Reason.ERROR, f"{path} has no '#define CUDA_VERSION <int>'"
    )
    return VersionReading("cuda.h", str(path), value)


def _read_nvcc(root: Path, deps: Deps) -> VersionReading | None:
    nvcc = root / "bin" / "nvcc"
    if not nvcc.exists():
        return None
    try:
        result = childproc.run([str(nvcc), "--version"], NVCC_TIMEOUT, deps.child_env())
    except childproc.ChildTimeout:
        return VersionReading(
            "nvcc", str(nvcc),
            Unavailable(Reason.TIMEOUT, f"`{nvcc} --version` did not finish in {NVCC_TIMEOUT:g} s"),
        )
    except OSError as e:
        return VersionReading(
            "nvcc", str(nvcc), Unavailable(Reason.ERROR, f"{nvcc} cannot run", detail=repr(e))
        )
    m = re.search(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)", result.stdout)
    if result.returncode != 0 or not m:
        return VersionReading(
            "nvcc", str(nvcc),
            Unavailable(
                Reason.ERROR,
                f"`{nvcc} --version` exited {result.returncode} without a release line",
                detail=(result.stderr or result.stdout).strip()[-500:],
            ),
        )
    return VersionReading("nvcc", str(nvcc), m.group(2))


def _read_cudart(root: Path, deps: Deps) -> VersionReading | None:
    libs = [
        p
        for d in ("lib64", "lib", "targets/x86_64-linux/lib")
        for p in sorted((root / d).glob("libcudart.so.*"))
    ]
    if not libs:
        return None
    lib = libs[0]
    v = read_version(str(lib), "cudaRuntimeGetVersion", env=deps.child_env())
    value = decode_cuda_version(v) if isinstance(v, int) else v
    return VersionReading("libcudart", str(lib), value)

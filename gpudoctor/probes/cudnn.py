"""Every cuDNN copy on the system: where it is, its files, and what each part says it is.

Copies are looked for, in this order, each recorded with every way it was reached
(`CudnnInstall.found_by`): the CUDA toolkit prefixes (`candidate_roots`: `--cuda-home`,
`CUDA_HOME`, …; the first that exists is the one in use), the distribution's headers
(`/usr/include/<triplet>/cudnn_version_v*.h`, `/usr/include/cudnn*.h`) with the libraries in
`/usr/lib/<triplet>` (the machine's multiarch triplet, `gpudoctor.linux`), the `LD_LIBRARY_PATH`
directories, the loader cache
(`ldconfig -p`), the `nvidia/cudnn` wheel and `torch/lib` in the site-packages of `Deps.python`,
and `$CONDA_PREFIX`. The same directory reached twice is one copy.

For each copy: every `libcudnn*` and `cudnn*.h` file (symlink target, size, mode, readable;
for a shared library what its ELF headers say and whether it loads: `probes.cudnn_files`),
the header's version (the three MAJOR/MINOR/PATCHLEVEL macros of `cudnn_version.h`, else
`cudnn.h`), the library's own version (`cudnnGetVersion`, asked by the child that loads
the libraries, else in a child of its own: `gpudoctor.probes.native`), the dependencies `ldd`
cannot resolve, and the CUDA build (a `nvidia_cudnn_cuNN` dist-info, gpudoctor's install
manifest, the CUDA libraries it links).

Mapping: a header that cannot be read → PERMISSION_DENIED / ERROR; one without the macros →
ERROR; no `libcudnn.so*` → NOT_INSTALLED; `ldd` missing → NOT_INSTALLED, hanging → TIMEOUT;
the loading errors of `read_version` are kept as they are. No copy at all → NOT_INSTALLED.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar, cast

from gpudoctor import childproc
from gpudoctor.linux import include_dirs, multiarch
from gpudoctor.model import CudnnFacts, CudnnInstall, Reason, Unavailable
from gpudoctor.probes.cudnn_files import file_facts, library_facts
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.native import read_version
from gpudoctor.probes.toolkit import candidate_roots
from gpudoctor.versions import format_cudnn_version as decode_version

logger = logging.getLogger(__name__)

MANIFEST = ".gpudoctor/cudnn/manifest.json"  # written by `gpudoctor install-cudnn`
_LIB = re.compile(r"^(libcudnn[a-z0-9_]*?)(?:_static(?:_v\d+)?\.a|\.so(?:\.(\d+(?:\.\d+)*))?)$")
_CUDA_LIB = re.compile(r"\b(?:libcublas|libcublasLt|libcudart|libnvrtc)\.so\.(\d+)")
# run as the patient runs (its site module, PYTHONPATH, user site): with -S a venv's python
# reports the base interpreter's site-packages, and the venv's own nvidia-* wheels are missed
_SITE_CHILD = (
    "import json, site, sysconfig; p = sysconfig.get_paths(); "
    "s = getattr(site, 'getsitepackages', list)(); "
    "print(json.dumps([p['purelib'], p['platlib']] + list(s) + [site.getusersitepackages()]))"
)


def split_library_name(name: str) -> tuple[str, str | None] | None:
    """"libcudnn_ops.so.9.1.0" → ("libcudnn_ops", "9.1.0"); ("libcudnn", None) for the bare
    .so; None for anything that is not a cuDNN shared library (static archives included)."""
    m = _LIB.match(name)
    if not m or name.endswith(".a"):
        return None
    return m.group(1), m.group(2)


def parse_version_header(text: str) -> str | None:
    """The version a cudnn_version.h / cudnn.h defines, from its MAJOR/MINOR/PATCHLEVEL."""
    parts = []
    for macro in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(rf"^\s*#\s*define\s+{macro}\s+(\d+)\b", text, re.MULTILINE)
        if not m:
            return None
        parts.append(str(int(m.group(1))))
    return ".".join(parts)


# --------------------------------------------------------------------------- discovery


@dataclass
class _Place:
    lib_dir: Path | None
    include_dirs: list[Path]
    origin: str
    found_by: list[str]
    prefix: str | None = None
    in_use: bool = False
    extra_ld_path: list[str] = field(default_factory=list)  # where its deps live (pip wheels)
    dist_info: Path | None = None  # site-packages with the nvidia_cudnn_cu* dist-info


def _has_libs(d: Path | None) -> bool:
    try:
        return d is not None and d.is_dir() and any(d.glob("libcudnn*"))
    except OSError:
        return False


def _has_headers(d: Path) -> bool:
    try:
        return d.is_dir() and any(d.glob("cudnn*.h"))
    except OSError:
        return False


def _real(p: Path) -> str:
    return os.path.realpath(p)


class _Places:
    """Places in search order, merged by the real path of their library (else include) dir."""

    def __init__(self) -> None:
        self.items: list[_Place] = []
        self._by_key: dict[str, _Place] = {}

    def add(self, place: _Place) -> None:
        if not _has_libs(place.lib_dir):
            place.lib_dir = None
        place.include_dirs = [d for d in place.include_dirs if _has_headers(d)]
        if place.lib_dir is None and not place.include_dirs:
            return
        key = _real(place.lib_dir) if place.lib_dir else _real(place.include_dirs[0])
        seen = self._by_key.get(key)
        if seen is None:
            self._by_key[key] = place
            self.items.append(place)
            return
        seen.found_by.extend(s for s in place.found_by if s not in seen.found_by)
        if not seen.include_dirs:
            seen.include_dirs = place.include_dirs
        seen.extra_ld_path.extend(place.extra_ld_path)
        seen.dist_info = seen.dist_info or place.dist_info


def _toolkit_places(deps: Deps, places: _Places, only: str | None = None) -> None:
    roots = candidate_roots(deps) if only is None else [(only, "--cuda-home")]
    seen: dict[str, _Place] = {}
    for root, found_by in roots:
        path = Path(root)
        if not path.is_dir():
            continue
        if _real(path) in seen:  # the same toolkit reached again (a symlink)
            seen[_real(path)].found_by.append(found_by)
            continue
        lib = next((path / d for d in ("lib64", "lib") if (path / d).is_dir()), None)
        # the toolkit's own CUDA libraries (cuBLAS) sit next to the cuDNN it holds
        place = _Place(lib, [path / "include"], f"toolkit {root}", [found_by],
                       prefix=root, in_use=not seen, extra_ld_path=[str(lib)] if lib else [])
        seen[_real(path)] = place
        places.add(place)


def _system_places(deps: Deps, places: _Places) -> None:
    include = [deps.path(d) for d in include_dirs(deps.machine)]
    places.add(_Place(deps.path(f"/usr/lib/{multiarch(deps.machine)}"), include, "system",
                      ["system headers"]))


def _ld_library_path_places(deps: Deps, places: _Places) -> None:
    for entry in deps.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if entry:
            d = Path(entry)
            places.add(_Place(d, [d.parent / "include"], "LD_LIBRARY_PATH", ["LD_LIBRARY_PATH"]))


def ldconfig_dirs(deps: Deps) -> list[Path] | Unavailable:
    """Directories of the libcudnn entries of the loader cache (`ldconfig -p`)."""
    cache = deps.path("/etc/ld.so.cache")
    if not cache.exists():
        return []
    exe = shutil.which("ldconfig", path=deps.environ.get("PATH", "") + ":/sbin:/usr/sbin")
    if exe is None:
        return Unavailable(Reason.NOT_INSTALLED, "ldconfig is not installed")
    try:
        result = childproc.run([exe, "-p", "-C", str(cache)], 5.0, deps.child_env())
    except childproc.ChildTimeout:
        return Unavailable(Reason.TIMEOUT, "`ldconfig -p` hung")
    except OSError as e:
        return Unavailable(Reason.ERROR, "ldconfig cannot run", detail=repr(e))
    dirs: list[Path] = []
    for m in re.finditer(r"^\s*libcudnn\S*\s.*=>\s*(\S+)\s*$", result.stdout, re.MULTILINE):
        d = Path(m.group(1)).parent
        if d not in dirs:
            dirs.append(d)
    return dirs


def _ldconfig_places(deps: Deps, places: _Places) -> None:
    dirs = ldconfig_dirs(deps)
    if isinstance(dirs, Unavailable):
        logger.debug("ldconfig: %s", dirs.message)
        return
    for d in dirs:
        places.add(_Place(d, [d.parent / "include"], "ldconfig", ["ldconfig"]))


def site_packages(deps: Deps) -> list[Path]:
    """The site-packages directories of `Deps.python` (asked in a tiny child unless it is us)."""
    if deps.python == sys.executable:
        import site
        import sysconfig

        p = sysconfig.get_paths()
        raw = [p["purelib"], p["platlib"], site.getusersitepackages()]
    else:
        try:
            result = childproc.run([deps.python, "-c", _SITE_CHILD], 10.0,
                                    deps.child_env())
            raw = json.loads(result.stdout.strip().splitlines()[-1])
        except (childproc.ChildTimeout, OSError, ValueError, IndexError) as e:
            logger.debug("site-packages of %s: %r", deps.python, e)
            return []
    out: list[Path] = []
    for s in raw:
        if isinstance(s, str) and Path(s) not in out:
            out.append(Path(s))
    return out


def _python_places(deps: Deps, places: _Places) -> None:
    for site in site_packages(deps):
        nvidia = site / "nvidia"
        deps_dirs = [str(p) for p in sorted(nvidia.glob("*/lib"))] if nvidia.is_dir() else []
        wheel = nvidia / "cudnn"
        places.add(_Place(wheel / "lib", [wheel / "include"], f"pip wheel {wheel}",
                          ["pip wheel"], extra_ld_path=deps_dirs, dist_info=site))
        torch_lib = site / "torch" / "lib"
        places.add(_Place(torch_lib, [site / "torch" / "include"], f"torch bundled {torch_lib}",
                          ["torch bundled"], extra_ld_path=[str(torch_lib), *deps_dirs]))


def _conda_places(deps: Deps, places: _Places) -> None:
    prefix = deps.environ.get("CONDA_PREFIX")
    if prefix:
        p = Path(prefix)
        places.add(_Place(p / "lib", [p / "include"], f"conda {prefix}", ["conda"]))


# --------------------------------------------------------------------------- facts


def _files(d: Path | None, pattern: str) -> list[Path]:
    if d is None:
        return []
    try:
        return sorted(p for p in d.glob(pattern) if p.is_symlink() or p.is_file())
    except OSError:
        return []


def _version_header(place: _Place) -> Path | None:
    for d in place.include_dirs:
        versioned = sorted(d.glob("cudnn_version_v*.h"), key=lambda p: _num(p.name))
        for name in ("cudnn_version.h", *(p.name for p in reversed(versioned)), "cudnn.h"):
            if (d / name).exists():
                return d / name
    return None


def _num(name: str) -> int:
    m = re.search(r"(\d+)", name)
    return int(m.group(1)) if m else 0


def read_header_version(header: Path) -> str | Unavailable:
    """The version a header defines; cudnn.h that only includes cudnn_version.h says so."""
    try:
        text = header.read_text(errors="replace")
    except PermissionError as e:
        return Unavailable(Reason.PERMISSION_DENIED, f"{header} is not readable", detail=repr(e))
    except OSError as e:
        return Unavailable(Reason.ERROR, f"{header} could not be read", detail=repr(e))
    version = parse_version_header(text)
    if version:
        return version
    if "cudnn_version.h" in text:
        return Unavailable(Reason.NOT_INSTALLED,
                           f"{header} includes cudnn_version.h, which is not next to it")
    return Unavailable(Reason.ERROR, f"{header} defines no CUDNN_MAJOR/MINOR/PATCHLEVEL")


def _main_library(libs: list[Path]) -> Path | None:
    """libcudnn.so.<highest major>, else the first libcudnn.so*."""
    best: tuple[int, Path] | None = None
    fallback = None
    for p in libs:
        parts = split_library_name(p.name)
        if parts is None or parts[0] != "libcudnn":
            continue
        fallback = fallback or p
        if parts[1] and parts[1].isdigit() and (best is None or int(parts[1]) > best[0]):
            best = (int(parts[1]), p)
    return best[1] if best else fallback


def _child_env(deps: Deps, place: _Place) -> dict[str, str]:
    env = deps.child_env()
    if place.extra_ld_path:
        old = env.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = ":".join([*place.extra_ld_path, *([old] if old else [])])
    return env


def run_ldd(paths: list[Path], env: dict[str, str]) -> str | Unavailable:
    """`ldd` of the given libraries, all in one run."""
    if not paths:
        return ""
    exe = shutil.which("ldd", path=env.get("PATH", "") + ":/usr/bin:/bin")
    if exe is None:
        return Unavailable(Reason.NOT_INSTALLED, "ldd is not installed")
    try:
        result = childproc.run([exe, *map(str, paths)], 15.0, env)
    except childproc.ChildTimeout:
        return Unavailable(Reason.TIMEOUT, "ldd hung")
    except OSError as e:
        return Unavailable(Reason.ERROR, "ldd cannot run", detail=repr(e))
    return result.stdout


def missing_from_ldd(output: str) -> tuple[str, ...]:
    """The sonames ldd printed as `=> not found`, in order, once each."""
    found: list[str] = []
    for m in re.finditer(r"^\s*(\S+)\s*=>\s*not found", output, re.MULTILINE):
        if m.group(1) not in found:
            found.append(m.group(1))
    return tuple(found)


def cuda_from_ldd(output: str) -> str | None:
    """The CUDA major of the CUDA libraries ldd lists (libcublas.so.11 → "11")."""
    majors = sorted({m.group(1) for m in _CUDA_LIB.finditer(output)}, key=int)
    return majors[-1] if len(majors) == 1 else None


def _cuda_build(place: _Place, ldd: str | Unavailable) -> tuple[str | Unavailable, str | None]:
    if place.prefix:
        manifest = Path(place.prefix) / MANIFEST
        try:
            build = json.loads(manifest.read_text()).get("cuda_build")
            if isinstance(build, str) and build:
                return build, f"gpudoctor manifest {manifest}"
        except (OSError, ValueError, AttributeError):
            pass
    if place.dist_info is not None:
        for d in sorted(place.dist_info.glob("nvidia_cudnn_cu*.dist-info")):
            m = re.match(r"nvidia_cudnn_cu(\d+)-", d.name)
            if m:
                return m.group(1), f"dist-info {d.name}"
    if isinstance(ldd, str) and (major := cuda_from_ldd(ldd)):
        return major, "linked CUDA libraries (ldd)"
    return Unavailable(Reason.NOT_SUPPORTED,
                       "the CUDA build cannot be told: the libraries link no CUDA library by "
                       "version and no package metadata names it"), None


def _install(place: _Place, deps: Deps) -> CudnnInstall:
    lib_files = _files(place.lib_dir, "libcudnn*")
    shared = [p for p in lib_files if split_library_name(p.name)]
    headers = [p for d in place.include_dirs for p in _files(d, "cudnn*.h")]
    header = _version_header(place)
    env = _child_env(deps, place)
    main = _main_library(shared)
    real: dict[str, Path] = {}
    for p in shared:
        if p.exists():
            real.setdefault(_real(p), p)
    # the children (ldd, and the one that loads every library and asks libcudnn its version)
    # run at the same time
    ldd_future = _Background(lambda: run_ldd(list(real.values()), env))
    # the child that loads every library asks the main one its version too (one child less);
    # where it could not, a child of its own asks, and says why
    libraries, read = library_facts(lib_files, shared, env, main)
    if main is None:
        lib_version: str | Unavailable = Unavailable(
            Reason.NOT_INSTALLED, f"no libcudnn.so* in {place.lib_dir or 'this copy'}")
    else:
        raw = read if read is not None else read_version(
            str(main), "cudnnGetVersion", returns_size_t=True, env=env)
        lib_version = decode_version(raw) if isinstance(raw, int) else raw
    ldd = ldd_future.result()
    cuda_build, cuda_from = _cuda_build(place, ldd)
    return CudnnInstall(
        origin=place.origin,
        lib_dir=str(place.lib_dir) if place.lib_dir else "",
        header=str(header) if header else None,
        header_version=read_header_version(header) if header else Unavailable(
            Reason.NOT_INSTALLED, "no cudnn_version.h or cudnn.h next to this copy"),
        libraries=libraries,
        library_version=lib_version,
        missing_deps=missing_from_ldd(ldd) if isinstance(ldd, str) else ldd,
        cuda_build=cuda_build,
        found_by=tuple(place.found_by),
        prefix=place.prefix,
        in_use=place.in_use,
        include_dir=str(place.include_dirs[0]) if place.include_dirs else None,
        headers=tuple(file_facts(p) for p in headers),
        cuda_build_from=cuda_from,
        real_lib_dir=_real(place.lib_dir) if place.lib_dir else "",
    )


def _collect(places: _Places, deps: Deps) -> CudnnFacts | Unavailable:
    if not places.items:
        return Unavailable(
            Reason.NOT_INSTALLED,
            "no cuDNN found (looked in the CUDA toolkits, /usr/include, LD_LIBRARY_PATH, "
            "ldconfig -p, site-packages/nvidia/cudnn, torch/lib and $CONDA_PREFIX)",
        )
    installs = _map_bounded(lambda p: _install(p, deps), places.items, 8)
    return CudnnFacts(installs=tuple(installs))


# threading rather than concurrent.futures: its import (~3 ms) was on every start-up's path
_T = TypeVar("_T")
_I = TypeVar("_I")


class _Background(Generic[_T]):
    """`fn()` running in a daemon thread; `result()` waits for it and returns its value or
    raises what it raised (a future without the executor)."""

    def __init__(self, fn: Callable[[], _T]) -> None:
        self._value: _T | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True,
                                        name="gpudoctor-cudnn")
        self.thread.start()

    def _run(self, fn: Callable[[], _T]) -> None:
        try:
            self._value = fn()
        except BaseException as e:  # noqa: BLE001 - raised again by result(), in the caller
            self._error = e

    def result(self) -> _T:
        self.thread.join()
        if self._error is not None:
            raise self._error
        return cast("_T", self._value)


def _map_bounded(fn: Callable[[_I], _T], items: Sequence[_I], limit: int) -> list[_T]:
    """`[fn(i) for i in items]` computed by at most `limit` threads at once; after every
    thread has ended, the first failed worker's exception is raised."""
    done: dict[int, _T] = {}
    todo = iter(enumerate(items))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                job = next(todo, None)
            if job is None:
                return
            done[job[0]] = fn(job[1])

    workers = [_Background(work) for _ in range(min(limit, len(items)))]
    for w in workers:
        w.thread.join()
    for w in workers:
        w.result()
    return [done[i] for i in range(len(items))]


def probe_cudnn(deps: Deps) -> CudnnFacts | Unavailable:
    """Every cuDNN copy found, in search order (see the module docstring)."""
    places = _Places()
    _toolkit_places(deps, places)
    _system_places(deps, places)
    _ld_library_path_places(deps, places)
    _ldconfig_places(deps, places)
    _python_places(deps, places)
    _conda_places(deps, places)
    return _collect(places, deps)


def probe_cudnn_at(prefix: str, deps: Deps) -> CudnnFacts | Unavailable:
    """The cuDNN copy in one toolkit prefix only (what `install-cudnn` verifies)."""
    places = _Places()
    _toolkit_places(deps, places, only=prefix)
    return _collect(places, deps)

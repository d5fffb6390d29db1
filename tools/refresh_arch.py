"""A torch wheel's arch list read from its libraries, without installing or importing it.

A CUDA build of torch records the compute capabilities its kernels were compiled for
(TORCH_CUDA_ARCH_LIST) three times in its libraries; this module reads all three:

1. the flag string `torch.cuda.get_arch_list()` returns (`torch._C._cuda_getArchFlags()`, the
   CUDA_ARCH_FLAGS definition): a NUL-terminated "sm_37 sm_50 ... [compute_XY]" in
   torch/lib/libtorch_python.so, in releases that have `get_arch_list()`;
2. the build's NVCC architecture flags (`torch.__config__.show()`): "-gencode;arch=compute_37,
   code=sm_37;..." in the library that holds the CUDA kernels (libtorch_cuda.so from 1.5 on,
   libtorch.so before); `code=sm_XY` is SASS, `code=compute_XY` is PTX;
3. the fatbins themselves: the kind (ELF or PTX) and arch of every entry of the fat binaries in
   torch's own libraries, the listing `cuobjdump --list-elf --list-ptx` prints, read here from
   the fatbin headers (CUDA 13's cuobjdump refuses a library that holds sm_37 cubins).

The arch list is record 1 where the wheel has it, else record 2, in `get_arch_list()`'s form.
The others must agree with it: 1 and 2 name the same archs, and every arch of the list has ELF
entries (and a "+PTX" one PTX entries) in 3; else the wheel is not read (`FetchError`). Record
3 alone is never the arch list: statically linked libraries (MAGMA, cuDNN 7) bring SASS for
archs that torch's own kernels were not compiled for.
"""

from __future__ import annotations

import mmap
import re
import shutil
import struct
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.refresh_registry import FetchError

# torch's own libraries: the vendored CUDA libraries beside them (libcudart-*, libnvrtc-*,
# libcudnn*) are NVIDIA's, compiled for their own archs.
OWN_LIBRARY = re.compile(r"torch/lib/lib(?:torch|c10|caffe2)[\w.-]*\.so(?:\.\d+)*")
FLAG = rb"(?:sm|compute)_\d{2,3}[a-z]?"
FLAG_STRING = re.compile(rb"\x00(" + FLAG + rb"(?: " + FLAG + rb")*)\x00")
GENCODE = re.compile(rb"arch=compute_(\d{2,3}[a-z]?),code=(sm|compute)_(\d{2,3}[a-z]?)")
FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
_CONTAINER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries
_ENTRY = struct.Struct("<HHIQIIHHI")  # kind, -, header size, size, -, -, minor, major, arch
ELF, PTX = 2, 1
MAX_STRING = 1 << 16  # a build-settings string is a few KB


@dataclass(frozen=True, slots=True)
class LibraryRecords:
    """What one library holds: flag strings, gencode flag sets, fatbin entries by (kind, arch)."""

    flags: tuple[tuple[str, ...], ...]
    gencode: tuple[tuple[str, ...], ...]
    fatbin: Counter[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class ArchRead:
    """A wheel's arch list as `get_arch_list()` returns it, and one sentence on how it was read."""

    flags: tuple[str, ...]
    how: str


def gencode_flags(text: bytes) -> tuple[str, ...]:
    """`-gencode;arch=compute_37,code=sm_37;...` as get_arch_list() writes it: (sm_37, ...)."""
    seen: dict[str, None] = {}
    for match in GENCODE.finditer(text):
        seen[f"{match[2].decode()}_{match[3].decode()}"] = None
    return tuple(seen)


def _strings_around(data: mmap.mmap | bytes, needle: bytes) -> Iterator[bytes]:
    """Each NUL-terminated string of `data` that contains `needle` (at most MAX_STRING long)."""
    at = data.find(needle)
    while at != -1:
        low = max(0, at - MAX_STRING)
        nul = data.rfind(b"\x00", low, at)
        start = nul + 1 if nul != -1 else low
        end = data.find(b"\x00", at, at + MAX_STRING)
        end = end if end != -1 else min(len(data), at + MAX_STRING)
        yield bytes(data[start:end])
        at = data.find(needle, max(end, at + 1))


def fatbin_entries(data: mmap.mmap | bytes) -> Counter[tuple[int, int]]:
    """(kind, arch) -> count over the fat binaries in `data` (kind 2 ELF, 1 PTX; arch 70)."""
    found: Counter[tuple[int, int]] = Counter()
    at = data.find(FATBIN_MAGIC)
    while at != -1 and at + _CONTAINER.size <= len(data):
        _, version, header, size = _CONTAINER.unpack_from(data, at)
        nxt = at + 4
        if version == 1 and header == _CONTAINER.size:
            entry, end = at + header, min(at + header + size, len(data))
            while entry + _ENTRY.size <= end:
                kind, _, head, body, _, _, _, _, arch = _ENTRY.unpack_from(data, entry)
                if kind not in (ELF, PTX) or head < _ENTRY.size or entry + head + body > end:
                    break
                found[kind, arch] += 1
                entry += head + body
            nxt = max(nxt, end)
        at = data.find(FATBIN_MAGIC, nxt)
    return found


def read_library(data: mmap.mmap | bytes) -> LibraryRecords:
    """The three records in one library's bytes."""
    flags = {tuple(m[1].decode().split()) for m in FLAG_STRING.finditer(data)}
    gencode = {g for text in _strings_around(data, b",code=") if (g := gencode_flags(text))}
    return LibraryRecords(tuple(sorted(flags)), tuple(sorted(gencode)), fatbin_entries(data))


def _arch(flag: str) -> int:
    return int(re.sub(r"\D", "", flag.split("_", 1)[1]))


def _one(found: dict[str, set[tuple[str, ...]]], what: str, wheel: str
         ) -> tuple[tuple[str, ...], list[str]] | None:
    """The one value of a record across the libraries (and where), None if none has it."""
    values = {v for vs in found.values() for v in vs}
    if len(values) > 1:
        raise FetchError(wheel, f"the libraries hold {len(values)} different {what}: "
                                + "; ".join(" ".join(v) for v in sorted(values)))
    if not values:
        return None
    return next(iter(values)), sorted(lib for lib, vs in found.items() if vs)


def _fatbin_check(flags: tuple[str, ...], fatbin: Counter[tuple[int, int]], wheel: str) -> str:
    """Raise unless every SASS arch of `flags` has ELF entries (a compute_XY, PTX); describe."""
    elf = {arch for kind, arch in fatbin if kind == ELF}
    ptx = {arch for kind, arch in fatbin if kind == PTX}
    for flag in flags:
        kind, have = ("PTX", ptx) if flag.startswith("compute_") else ("ELF", elf)
        if _arch(flag) not in have:
            raise FetchError(wheel, f"{flag} is in the arch list, but no fatbin of torch's "
                                    f"libraries holds {kind} for it")
    listed = {_arch(f) for f in flags if f.startswith("sm_")}
    extra = sorted(elf - listed)
    text = (f"the fatbins of torch's libraries hold {sum(fatbin.values())} entries, ELF for "
            f"{', '.join(f'sm_{a}' for a in sorted(elf))}")
    text += f" and PTX for {', '.join(f'compute_{a}' for a in sorted(ptx))}" if ptx else \
        " and no PTX"
    if extra:
        text += (f" (the SASS for {', '.join(f'sm_{a}' for a in extra)} in "
                 f"{sum(fatbin[ELF, a] for a in extra)} entries beside torch's own kernels)")
    return text


def read_arch(wheel: Path, scratch: Path) -> ArchRead:
    """The arch list of the CUDA wheel at `wheel`; each library is unpacked into `scratch`."""
    flags: dict[str, set[tuple[str, ...]]] = {}
    gencode: dict[str, set[tuple[str, ...]]] = {}
    fatbin: Counter[tuple[int, int]] = Counter()
    try:
        with zipfile.ZipFile(wheel) as archive:
            for name in (n for n in archive.namelist() if OWN_LIBRARY.fullmatch(n)):
                records = _library(archive, name, scratch)
                flags[name], gencode[name] = set(records.flags), set(records.gencode)
                fatbin.update(records.fatbin)
    except (OSError, zipfile.BadZipFile) as exc:
        raise FetchError(str(wheel), f"not a readable wheel: {exc}") from exc
    string = _one(flags, "get_arch_list() flag strings", wheel.name)
    build = _one(gencode, "sets of NVCC architecture flags", wheel.name)
    if string is None and build is None:
        raise FetchError(wheel.name, "no arch flag string and no NVCC architecture flags in "
                                     "torch's libraries (a CPU build?)")
    parts = []
    if string is not None:
        parts.append(f"the flag string torch.cuda.get_arch_list() returns, read in "
                     f"{', '.join(string[1])} ({' '.join(string[0])})")
    if build is not None:
        if string is not None and set(build[0]) != set(string[0]):
            raise FetchError(wheel.name, f"get_arch_list()'s string ({' '.join(string[0])}) and "
                                         f"the NVCC architecture flags ({' '.join(build[0])}) "
                                         "disagree")
        said = "agreeing with " if string is not None else ""
        parts.append(f"{said}the build's NVCC architecture flags (torch.__config__.show()), read "
                     f"in {', '.join(build[1])} ({' '.join(build[0])})")
    chosen = string[0] if string is not None else build[0] if build is not None else ()
    parts.append(_fatbin_check(chosen, fatbin, wheel.name))
    return ArchRead(chosen, "; ".join(parts))


def _library(archive: zipfile.ZipFile, name: str, scratch: Path) -> LibraryRecords:
    """Unpack one member into `scratch`, read it through a memory map, delete it."""
    path = scratch / Path(name).name
    try:
        with archive.open(name) as source, path.open("wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        if path.stat().st_size == 0:
            return LibraryRecords((), (), Counter())
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                   access=mmap.ACCESS_READ) as data:
            return read_library(data)
    finally:
        path.unlink(missing_ok=True)

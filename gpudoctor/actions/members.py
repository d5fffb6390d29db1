"""What one member of a cuDNN tarball may be, judged from its tar header and first bytes.

Pure functions (no I/O): `actions.tarball` calls them for each member before it reads (or
hands on) the member's data, so a refused member is never written anywhere.

The size bounds come from real cuDNN files: the largest shared library in NVIDIA's PyPI wheels
is `libcudnn_cnn_infer.so.8` of 8.9.2.26 (647,553,136 bytes; 9.1.0.70's largest is
`libcudnn_engines_precompiled.so.9`, 569,645,536; 9.28.1.4's `libcudnn_engines_precompiled.so.9`,
260,072,128); the static archives in the tarballs are larger (`libcudnn_cnn_infer_static.a` of
an 8.x for Jetson is 1.1 GB); the largest header is 9.28.1.4's `cudnn_graph.h` (253,191 bytes).
`MAX_MEMBER` (4 GiB) leaves over 3x headroom above those, `MAX_HEADER` (4 MiB) over 15x, and
`MAX_TOTAL` (16 GiB) about 4x over a whole 8.9 tarball with its static archives (~4 GB
unpacked). A real tarball expands about 3x (8.9.7's .tar.xz: 861 MB); `MAX_RATIO` is 100x.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import PurePosixPath

from gpudoctor import elf

DOWNLOAD = "https://developer.nvidia.com/cudnn-downloads"
MAX_HEADER = 4 << 20  # bytes in one header member
MAX_MEMBER = 4 << 30  # bytes in any other member
MAX_TOTAL = 16 << 30  # bytes in all members together
MAX_RATIO = 100  # decompressed / compressed bytes, judged once RATIO_FROM bytes came out
RATIO_FROM = 16 << 20  # (so a bomb puts at most this much into the staging directory)
HEAD = elf.HEAD  # bytes of a library read to judge it: its ELF and program headers
_FIX = f"download the cuDNN tarball again from {DOWNLOAD}"


class ArchiveError(Exception):
    """The tarball is refused; `message` names the member, `fix` says what to do."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def clean(name: str) -> str:
    """A member name without leading "./" and trailing "/"."""
    while name.startswith("./"):
        name = name[2:]
    return name.rstrip("/")


def refuse_unsafe(info: tarfile.TarInfo, name: str) -> None:
    """Refuse absolute paths, `..`, hard links, devices, FIFOs and links out."""
    if info.name.startswith("/") or not name:
        raise ArchiveError(f"refused: member {info.name!r} has an absolute path")
    if ".." in PurePosixPath(name).parts:
        raise ArchiveError(f"refused: member {name!r} climbs out of the archive with '..'")
    if info.islnk():
        raise ArchiveError(f"refused: member {name!r} is a hard link (to {info.linkname!r}); "
                           "cuDNN tarballs contain none")
    if info.ischr() or info.isblk() or info.isfifo():
        what = "a character device" if info.ischr() else "a block device" if info.isblk() \
            else "a FIFO"
        raise ArchiveError(f"refused: member {name!r} is {what}")
    if not (info.isreg() or info.isdir() or info.issym()):
        raise ArchiveError(f"refused: member {name!r} has an unsupported type {info.type!r}")
    if info.issym():
        t = info.linkname
        if not t or t.startswith("/") or "/" in t or t in (".", ".."):
            raise ArchiveError(f"refused: symlink {name!r} points outside its directory "
                               f"({t!r})")


def bound(info: tarfile.TarInfo, name: str, role: str, total: int, path: str) -> int:
    """Refuse, from its tar header, a member larger than any real cuDNN file, one that takes
    the archive past MAX_TOTAL, or a sparse one (tar would write its holes out); the new
    total."""
    size = info.size
    limit, what = (MAX_HEADER, "header") if role == "header" else (MAX_MEMBER, "file")
    if size > limit:
        raise ArchiveError(f"refused: member {name!r} is {size_text(size)}, larger than any "
                           f"real cuDNN {what} (the bound is {size_text(limit)})", _FIX)
    total += size
    if total > MAX_TOTAL:
        raise ArchiveError(f"refused: {path} unpacks to more than {size_text(MAX_TOTAL)} "
                           f"(reached at member {name!r}); a real cuDNN tarball unpacks to a "
                           "few GB", _FIX)
    if info.issparse() or info.type == tarfile.GNUTYPE_SPARSE:
        raise ArchiveError(f"refused: member {name!r} is a sparse file; cuDNN tarballs contain "
                           "none", _FIX)
    return total


def refuse_bomb(path: str, compressed: int, expanded: int) -> None:
    """Refuse a compressed stream that has expanded more than MAX_RATIO times."""
    if expanded > RATIO_FROM and expanded > MAX_RATIO * compressed:
        raise ArchiveError(
            f"refused: {path} is a decompression bomb: {size_text(compressed)} expanded to "
            f"over {size_text(expanded)} (a real cuDNN tarball expands about 3x)", _FIX)


def library_machine(name: str, head: bytes, size: int, machine: str | None = None) -> str | None:
    """Refuse a `lib/libcudnn*` file that is not what its name says, from its first bytes
    (`head`: at least min(size, HEAD) of them) and its size: `*.so*` must be an ELF shared
    object (not a program: no PT_INTERP, as a PIE has) whose headers fit in the member, built
    for `machine` when one is given (None: any machine, `--force`); `*.a` an ar archive. The
    ELF machine of a shared library ("x86_64", "aarch64", …); None for a static one."""
    base = PurePosixPath(name).name
    if re.search(r"\.so(\.|$)", base):
        found = elf.parse(head, size)
        if isinstance(found, elf.NotElf):
            raise ArchiveError(f"refused: member {name!r} is not a shared library ({found.why})",
                               _FIX)
        problem = elf.library_problem(found, size)
        if problem is not None:
            raise ArchiveError(f"refused: member {name!r} is {problem}", _FIX)
        if machine is not None and found.machine != machine:
            raise ArchiveError(
                f"refused: member {name!r} is built for {found.machine}; this machine is "
                f"{machine}", f"download the linux-{machine} tarball from {DOWNLOAD}, or pass "
                "--force")
        return found.machine
    if base.endswith(".a"):
        if not head.startswith(b"!<arch>\n"):
            raise ArchiveError(f"refused: member {name!r} is not a static library (it has no "
                               "ar header)", _FIX)
        return None
    raise ArchiveError(f"refused: member {name!r} is neither a shared library (.so) nor a "
                       "static one (.a)", _FIX)


def role(name: str) -> str:
    """"header" (`include/cudnn*.h`), "library" (`lib*/libcudnn*`) or "other"."""
    p = PurePosixPath(name)
    if len(p.parts) > 3:
        return "other"
    if p.parent.name == "include" and re.fullmatch(r"cudnn[\w.-]*\.h", p.name):
        return "header"
    if p.parent.name in ("lib", "lib64") and p.name.startswith("libcudnn"):
        return "library"
    return "other"


def size_text(n: int) -> str:
    """Bytes as "4.0 GiB", "12.3 MiB", "512 bytes"."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"

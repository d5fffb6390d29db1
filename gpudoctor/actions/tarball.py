"""Read a cuDNN tarball in one streaming pass, validating every member before its data is used.

Both of NVIDIA's layouts are understood: the legacy `cudnn-<cuda>-linux-x64-v<ver>.tgz`
(`cuda/include`, `cuda/lib64`) and `cudnn-linux-x86_64-<ver>_cuda<N>-archive.tar.xz`
(`<stem>/include`, `<stem>/lib`). The compression is told from the first bytes, not the name.

A member is refused, by name, when it has an absolute path or a `..` component, is a hard link,
a device, a FIFO or a sparse file, is a symlink pointing anywhere but at a sibling member,
appears twice, is an empty header or library, is larger than any real cuDNN file (its tar
header is judged before its data is read), or is a "library" that is not one: `*.so*` must be
an ELF shared object (ET_DYN without a PT_INTERP header: a position-independent program is
refused), whole (its headers lie inside the member) and, when asked, built for this machine;
`*.a` an `ar` archive (`gpudoctor.elf` reads the headers). The archive is refused when it is
truncated (inside a member, or without its end-of-archive blocks), is not a tar, unpacks to
more than a real cuDNN does (summed from the headers, and counted while decompressing: a
stream that expands more than `members.MAX_RATIO` times is a decompression bomb), or holds no
cuDNN (no `include/cudnn*.h` and `lib/libcudnn*`, or no version header). The rules and their
bounds are in `actions.members`.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import lzma
import os
import re
import shlex
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import IO, Any, Protocol

from gpudoctor.actions import members
from gpudoctor.actions.members import DOWNLOAD, MAX_HEADER, ArchiveError
from gpudoctor.probes.cudnn import parse_version_header

__all__ = ["DOWNLOAD", "Archive", "ArchiveError", "FileSlice", "Member", "Progress", "Readable",
           "Replay", "Sink", "SinkError", "detect_compression", "read_archive"]
_BLOCK = 1 << 20
_HEADER_NAMES = ("cudnn_version.h", "cudnn.h")  # where the version macros are (v8+, v7)


class SinkError(Exception):
    """The sink could not write a member; `error` is its OSError."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class Member:
    """One member of the archive, as it will be installed (or skipped)."""

    name: str  # path inside the archive, without a leading "./"
    role: str  # "header", "library" or "other" (not installed)
    kind: str  # "file", "symlink" or "dir"
    size: int
    mode: int  # permission bits in the archive
    mtime: int
    target: str | None = None  # symlink target: a sibling's file name
    machine: str | None = None  # a shared library's ELF machine: "x86_64", "aarch64", …

    @property
    def basename(self) -> str:
        """The file name the member is installed under."""
        return PurePosixPath(self.name).name


@dataclass(frozen=True, slots=True)
class Archive:
    """What a full pass over the tarball established."""

    path: str
    compression: str  # "gzip", "xz", "bzip2" or "none"
    layout: str  # "legacy (cuda/include, cuda/lib64)" or "archive (<dir>/include, <dir>/lib)"
    members: tuple[Member, ...]
    include_dir: str  # inside the archive
    lib_dir: str
    version: str  # from the archive's own header
    version_header: str  # the member it was read from
    name_version: str | None  # what the file name says, e.g. "7.6.5.32"
    cuda_build: str | None  # "10.1", "12"
    cuda_build_from: str | None
    header_bodies: tuple[tuple[str, bytes], ...] = ()  # member name → bytes (headers are small)

    def body(self, m: Member) -> bytes | None:
        """The bytes of a header member, when they were kept."""
        return next((b for n, b in self.header_bodies if n == m.name), None)

    @property
    def installable(self) -> tuple[Member, ...]:
        """The headers and libraries, in archive order."""
        return tuple(m for m in self.members if m.role != "other")


# The sink receives each header/library member; for a file, a stream of its data (it may leave
# it unread). Progress receives (bytes of the tarball read, tarball size).
class Readable(Protocol):
    """What a sink reads a member's data from."""

    def read(self, size: int = -1, /) -> bytes:
        """Up to size bytes; all that is left when negative."""
        ...


Sink = Callable[[Member, Readable | None], None]
Progress = Callable[[int, int], None]


class _Counter:
    """A read-only stream that counts what passes through it; with `source` (the compressed
    stream's counter), it stops a stream that expands more than MAX_RATIO times."""

    def __init__(self, raw: IO[bytes], progress: Progress | None = None, total: int = 0,
                 source: _Counter | None = None, path: str = "") -> None:
        self.raw, self.count, self.progress, self.total = raw, 0, progress, total
        self.source, self.path = source, path
        self._last = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        if self.progress and (self.count - self._last >= 8 * _BLOCK or not data):
            self._last = self.count
            self.progress(self.count, self.total)
        if self.source is not None:
            members.refuse_bomb(self.path, self.source.count, self.count)
        return data

    def readable(self) -> bool:
        return True


def detect_compression(head: bytes) -> str:
    """"gzip", "xz", "bzip2", "zstd", "none" (a plain tar) or "unknown", from the magic bytes."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"BZh"):
        return "bzip2"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "none"
    return "unknown"


def _decompressor(kind: str, raw: Any) -> Any:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(raw)
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    return raw


def read_archive(path: str, sink: Sink | None = None, progress: Progress | None = None,
                 machine: str | None = None) -> Archive:
    """One pass over the tarball: validate, hand installable members to `sink`, and describe it.
    With `machine` ("x86_64"), a shared library built for another is refused, before its bytes
    reach the sink.

    Raises ArchiveError (never anything else for a bad archive; OSError for an unreadable file).
    """
    with open(path, "rb") as f:
        head = f.read(512)
        f.seek(0)
        kind = detect_compression(head)
        if kind == "zstd":
            raise ArchiveError(f"{path} is zstd-compressed, which gpudoctor cannot unpack",
                               f"unpack it first: zstd -d -- {shlex.quote(path)}, then pass "
                               "the .tar")
        if kind == "unknown":
            raise ArchiveError(f"{path} is not a tar archive (gzip, xz, bzip2 or plain tar)",
                               f"download the cuDNN tarball again from {DOWNLOAD}")
        size = f.seek(0, 2)
        f.seek(0)
        scan = _Scan(path, sink, machine)
        try:
            if kind == "none":
                end, total = _read_plain(f, scan, progress, size)
            else:
                end, total = _read_stream(f, kind, scan, progress, size)
        except EOFError:  # the compressed stream stops early
            raise _truncated(path, scan.current, inside=True) from None
        except tarfile.ReadError as e:
            if "end of data" in str(e) or "truncated" in str(e):
                raise _truncated(path, scan.current, inside=True) from None
            raise ArchiveError(f"{path} is not a readable tar archive ({e})"
                               + (f" after member {scan.current!r}" if scan.current else ""),
                               f"download the cuDNN tarball again from {DOWNLOAD}") from None
        except (zlib.error, lzma.LZMAError, OSError, tarfile.TarError) as e:
            raise ArchiveError(f"{path} is corrupt ({e}) near member {scan.current!r}",
                               f"download it again from {DOWNLOAD}") from None
        if total - end < 1024:  # two zero blocks end every complete tar
            raise _truncated(path, scan.current, inside=False)
        if progress:
            progress(size, size)
    return scan.finish(kind)


def _read_stream(f: IO[bytes], kind: str, scan: _Scan, progress: Progress | None,
                 size: int) -> tuple[int, int]:
    """A compressed tar, decompressed once, in order; (end of the last member, bytes in all)."""
    compressed = _Counter(f, progress, size)
    data = _Counter(_decompressor(kind, compressed), source=compressed, path=scan.path)
    with tarfile.open(fileobj=data, mode="r|", bufsize=_BLOCK) as tf:  # type: ignore[call-overload]
        for info in tf:
            scan.member(info, tf.extractfile(info) if info.isreg() else None)
        end = tf.offset
    while data.read(_BLOCK):
        pass
    return end, data.count


def _read_plain(f: IO[bytes], scan: _Scan, progress: Progress | None,
                size: int) -> tuple[int, int]:
    """An uncompressed tar: members' data are copied straight from the file (copy_file_range)."""
    done = [0]

    def advance(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], size)

    with tarfile.open(fileobj=f, mode="r:") as tf:
        for info in tf:
            stream = FileSlice(f.fileno(), info.offset_data, info.size, advance)
            scan.member(info, stream if info.isreg() else None)
        return tf.offset, size


class FileSlice:
    """A member's bytes inside an uncompressed tar: readable, or copied by the kernel."""

    def __init__(self, fd: int, offset: int, size: int, advance: Callable[[int], None]) -> None:
        self.fd, self.pos, self.left, self.advance = fd, offset, size, advance

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that is left when negative)."""
        data = self.peek(self.left if size < 0 else size)
        self._moved(len(data))
        return data

    def peek(self, size: int) -> bytes:
        """The next `size` bytes (at most what is left), without moving."""
        n = min(size, self.left)
        data = os.pread(self.fd, n, self.pos)
        if len(data) < n:
            raise tarfile.ReadError("unexpected end of data")
        return data

    def copy_to(self, out: int) -> None:
        """Copy what is left into the file descriptor `out`, in the kernel where it can."""
        while self.left:
            try:
                n = os.copy_file_range(self.fd, out, min(self.left, 1 << 30), self.pos)
            except OSError as e:
                if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                while self.left:
                    os.write(out, self.read(min(self.left, _BLOCK)))
                return
            if n == 0:
                raise tarfile.ReadError("unexpected end of data")
            self._moved(n)

    def _moved(self, n: int) -> None:
        self.pos += n
        self.left -= n
        self.advance(n)


def _truncated(path: str, member: str | None, inside: bool) -> ArchiveError:
    if member is None:
        where = "before its first member"
    elif inside:
        where = f"inside member {member!r}"
    else:
        where = f"after member {member!r}, without the end-of-archive blocks"
    return ArchiveError(f"refused: {path} is truncated: it ends {where}",
                        f"download it again from {DOWNLOAD} (check its size or checksum)")


class _Scan:
    """Per-member validation and classification during the pass."""

    def __init__(self, path: str, sink: Sink | None, machine: str | None = None) -> None:
        self.path, self.sink, self.machine = path, sink, machine
        self.members: list[Member] = []
        self.names: set[str] = set()
        self.current: str | None = None
        self.headers: dict[str, bytes] = {}
        self.total = 0

    def member(self, info: tarfile.TarInfo, stream: Readable | None) -> None:
        name = members.clean(info.name)
        self.current = name or info.name
        members.refuse_unsafe(info, name)
        if name in self.names:
            raise ArchiveError(f"refused: member {name!r} appears twice in {self.path}")
        self.names.add(name)
        kind = "dir" if info.isdir() else "symlink" if info.issym() else "file"
        role = members.role(name) if kind != "dir" else "other"
        self.total = members.bound(info, name, role, self.total, self.path)
        if kind == "file" and role != "other" and info.size == 0:
            raise ArchiveError(f"refused: member {name!r} is an empty file",
                               f"download the tarball again from {DOWNLOAD}")
        machine = None
        if kind == "file" and role == "library" and stream is not None:
            if isinstance(stream, FileSlice):
                head = stream.peek(members.HEAD)
            else:
                head = stream.read(members.HEAD)
                stream = Replay(head, stream)
            machine = members.library_machine(name, head, info.size, self.machine)
        m = Member(name, role, kind, info.size if kind == "file" else 0, info.mode & 0o7777,
                   int(info.mtime), info.linkname if kind == "symlink" else None, machine)
        self.members.append(m)
        if role == "other":
            return
        if stream is not None and role == "header" and m.size <= MAX_HEADER:
            body = stream.read()
            self.headers[name] = body
            stream = Replay(body)
        if self.sink is not None:
            try:
                self.sink(m, stream)
            except OSError as e:  # writing failed, not reading: the caller's error to report
                if isinstance(e, gzip.BadGzipFile):
                    raise
                raise SinkError(e) from e

    def finish(self, compression: str) -> Archive:
        inst = [m for m in self.members if m.role != "other"]
        if not any(m.role == "library" for m in inst) or not any(m.role == "header" for m in inst):
            raise ArchiveError(
                f"refused: {self.path} is not a cuDNN archive: it needs include/cudnn*.h and "
                "lib/libcudnn* (or cuda/lib64/libcudnn*) members",
                f"download cuDNN for Linux x86_64 from {DOWNLOAD}")
        dirs = {r: {str(PurePosixPath(m.name).parent) for m in inst if m.role == r}
                for r in ("header", "library")}
        for role, found in dirs.items():
            if len(found) > 1:
                raise ArchiveError(f"refused: {self.path} holds {role}s in several directories "
                                   f"({', '.join(sorted(found))})")
        _check_links(inst)
        version, header = self._version()
        include, lib = dirs["header"].pop(), dirs["library"].pop()
        top = include.split("/")[0] if "/" in include else None
        name = PurePosixPath(self.path).name
        name_version = _name_version(name)
        cuda, cuda_from = _cuda_from_names(top, name)
        legacy = lib.endswith("lib64")
        return Archive(
            path=self.path, compression=compression,
            layout="legacy (cuda/include, cuda/lib64)" if legacy
            else "archive (<dir>/include, <dir>/lib)",
            members=tuple(self.members), include_dir=include, lib_dir=lib, version=version,
            version_header=header, name_version=name_version, cuda_build=cuda,
            cuda_build_from=cuda_from, header_bodies=tuple(self.headers.items()),
        )

    def _version(self) -> tuple[str, str]:
        for wanted in _HEADER_NAMES:
            for name, body in self.headers.items():
                if PurePosixPath(name).name == wanted:
                    version = parse_version_header(body.decode("utf-8", "replace"))
                    if version:
                        return version, name
                    if wanted == "cudnn.h":
                        break
        raise ArchiveError(f"refused: {self.path} has no cudnn_version.h or cudnn.h defining "
                           "CUDNN_MAJOR/MINOR/PATCHLEVEL: its version cannot be read",
                           f"download cuDNN from {DOWNLOAD}")


def _check_links(installable: list[Member]) -> None:
    """Every installed symlink must lead, within its directory, to an installed file."""
    by_name = {m.name: m for m in installable}
    for m in installable:
        hop, seen = m, {m.name}
        while hop.kind == "symlink":
            nxt = by_name.get(str(PurePosixPath(hop.name).parent / (hop.target or "")))
            if nxt is None:
                raise ArchiveError(f"refused: symlink {m.name!r} points at {hop.target!r}, "
                                   "which is not an installed file of the archive")
            if nxt.name in seen:
                raise ArchiveError(f"refused: symlink {m.name!r} is part of a loop")
            seen.add(nxt.name)
            hop = nxt


class Replay:
    """Bytes already read (a header's, in memory; a library's first few), offered to the sink as
    a stream again, followed by what is left of `rest`."""

    def __init__(self, body: bytes, rest: Readable | None = None) -> None:
        self.body, self.pos, self.rest = body, 0, rest

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that is left when negative)."""
        if self.rest is not None and self.pos >= len(self.body):
            return self.rest.read(size)
        end = len(self.body) if size < 0 else self.pos + size
        chunk, self.pos = self.body[self.pos:end], min(end, len(self.body))
        if self.rest is not None and (size < 0 or len(chunk) < size):
            chunk += self.rest.read(-1 if size < 0 else size - len(chunk))
        return chunk

    @property
    def whole(self) -> bytes | None:
        """All of the member's bytes, when they are all in memory (a header's)."""
        return self.body if self.rest is None else None


def _name_version(name: str) -> str | None:
    m = re.search(r"-v(\d+(?:\.\d+){1,3})\.t|-(\d+(?:\.\d+){2,3})_cuda", name)
    return (m.group(1) or m.group(2)) if m else None


def _cuda_from_names(top: str | None, name: str) -> tuple[str | None, str | None]:
    for text, where in ((top or "", "the archive's directory name"), (name, "the file name")):
        m = re.search(r"_cuda(\d+(?:\.\d+)?)-archive", text) or re.match(
            r"cudnn-(\d+\.\d+)-linux", text)
        if m:
            return m.group(1), f"{where} {text}"
    return None, None

"""Reading an input file (a snapshot, a pasted report) without trusting it.

Every input path of the CLI reads through `read_input`: at most `limit` bytes, a regular file
larger than that refused before a byte is read (a 2 GB sparse file), a stream (`/dev/zero`, a
FIFO, stdin) cut at `limit + 1` bytes and refused, and anything that is not UTF-8 text refused.
Each refusal is an `InputError` whose message is one line naming the input; the CLI prints it
and exits 2.

Nothing here can hang. A path is opened non-blocking (a FIFO with no writer would block
`open` forever), then looked at: a regular file is read; with `regular_only` (the files
`fleet` finds in a directory, or is given) anything else is refused as what it is ("a FIFO
(pipe)"); otherwise a stream the user named (`explain <(…)`, `--from-report /dev/fd/3`) is
read with a deadline of STREAM_SECONDS as well as the byte bound. Stdin ('-') is read to its
end: it is what the user piped in or is typing.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time

SNAPSHOT_LIMIT = 16 << 20  # 16 MiB: a real snapshot is ~10 KiB, a pasted issue body ~100 KiB
STREAM_SECONDS = 60.0  # a named stream (a FIFO, `<(gh issue view …)`) must end within this


class InputError(ValueError):
    """An input that cannot be used; `str(e)` is one line naming the input and the reason."""


def mib(n: int) -> str:
    """'16 MiB', '1.5 MiB', '512 bytes'."""
    if n < 1 << 20:
        return f"{n} bytes"
    return f"{n / (1 << 20):.3g} MiB"


def read_input(path_or_dash: str, limit: int, regular_only: bool = False) -> str:
    """The text of a file, or of stdin for '-', at most `limit` bytes, UTF-8 (a BOM is dropped).

    Raises `InputError` for a missing, unreadable or oversized input, a directory, a closed
    stdin, bytes that are not UTF-8, a stream that does not end within STREAM_SECONDS, or
    with `regular_only` anything but a regular file. Never reads more than `limit + 1` bytes.
    """
    name = "stdin" if path_or_dash == "-" else path_or_dash
    data = _read_stdin(limit) if path_or_dash == "-" else _read_path(path_or_dash, limit,
                                                                     regular_only)
    if len(data) > limit:
        raise InputError(f"{name}: larger than {mib(limit)}, the most gpudoctor reads "
                         "(is it the right file?)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 text (byte {e.start} is {data[e.start]:#04x})"
                         ) from None
    if not text.strip():
        raise InputError(f"{name}: empty")
    return text


def _read_stdin(limit: int) -> bytes:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None) if stream is not None else None
    if buffer is None:
        raise InputError("stdin: closed (pipe the report in, or give a file name)")
    try:
        data: bytes = buffer.read(limit + 1)
    except OSError as e:
        raise InputError(f"stdin: cannot read: {e.strerror or e}") from None
    return data


def _read_path(path: str, limit: int, regular_only: bool) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: is a directory, not a file")
        if stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                raise InputError(f"{path}: {mib(st.st_size)}, larger than {mib(limit)}, the "
                                 "most gpudoctor reads (is it the right file?)")
            os.set_blocking(fd, True)
            return _read_fd(fd, path, limit, None)
        if regular_only:
            raise InputError(f"{path}: {kind(st.st_mode)}, not a regular file")
        return _read_fd(fd, path, limit, time.monotonic() + STREAM_SECONDS)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _read_fd(fd: int, path: str, limit: int, deadline: float | None) -> bytes:
    """Up to `limit + 1` bytes, to the end; a stream (`deadline`) is waited on with select,
    and one that has not ended by the deadline is refused."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise InputError(f"{path}: no end of input within {STREAM_SECONDS:g} s (a "
                                 "stream whose writer never finishes?)")
        try:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        except BlockingIOError:  # select said readable, a racing reader took it
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def kind(mode: int) -> str:
    """'a FIFO (pipe)', 'a character device', … for a file that is not regular."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"

"""Reading an input file (a snapshot, a pasted report) without trusting it.

Every input path of the CLI reads through `read_input`: at most `limit` bytes, a regular file
larger than that refused before a byte is read (a 2 GB sparse file), a stream (`/dev/zero`, a
FIFO, stdin) cut at `limit + 1` bytes and refused, and anything that is not UTF-8 text refused.
Each refusal is an `InputError` whose message is one line naming the input; the CLI prints it
and exits 2.
"""

from __future__ import annotations

import os
import stat
import sys

SNAPSHOT_LIMIT = 16 << 20  # 16 MiB: a real snapshot is ~10 KiB, a pasted issue body ~100 KiB


class InputError(ValueError):
    """An input that cannot be used; `str(e)` is one line naming the input and the reason."""


def mib(n: int) -> str:
    """'16 MiB', '1.5 MiB', '512 bytes'."""
    if n < 1 << 20:
        return f"{n} bytes"
    return f"{n / (1 << 20):.3g} MiB"


def read_input(path_or_dash: str, limit: int) -> str:
    """The text of a file, or of stdin for '-', at most `limit` bytes, UTF-8 (a BOM is dropped).

    Raises `InputError` for a missing, unreadable or oversized input, a directory, a closed
    stdin, or bytes that are not UTF-8. Never reads more than `limit + 1` bytes.
    """
    name = "stdin" if path_or_dash == "-" else path_or_dash
    data = _read_stdin(limit) if path_or_dash == "-" else _read_path(path_or_dash, limit)
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


def _read_path(path: str, limit: int) -> bytes:
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; fstat needs the open file
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror or e}") from None
    with f:
        try:
            st = os.fstat(f.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise InputError(f"{path}: is a directory, not a file")
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                raise InputError(f"{path}: {mib(st.st_size)}, larger than {mib(limit)}, the most "
                                 "gpudoctor reads (is it the right file?)")
            data: bytes = f.read(limit + 1)
        except OSError as e:
            raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    return data

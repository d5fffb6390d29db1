"""Writing what the renderers made: the report to stdout or a file, messages to stderr.

The report is written whole or the command exits 2 with a one-line reason: a closed stdout
(`>&-`), a full device (`> /dev/full`), an unwritable `-o FILE`. A reader that goes away
(`| head -1`) ends the command quietly, also with exit 2: the report was not delivered whole.
Text a stream cannot encode (`PYTHONIOENCODING=ascii`) falls back to ASCII glyphs
(`gpudoctor.renderers.encoding`); a file is always UTF-8.

This module is the one writer of the command line: the report (`deliver`, `write_output`),
every message on stderr (`say`) and gpudoctor's own CI workflow commands (`announce`) go
through it, and it disarms what CI runners read as commands (`::add-mask::` at a line's start,
`##[…]` anywhere; `gpudoctor.renderers.runners`) in every format, to stdout, stderr and files
alike, so that no command can print a string from outside that its runner then obeys.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

import typer

from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers.encoding import fit
from gpudoctor.renderers.interface import OutputFormat, clean
from gpudoctor.renderers.runners import disarm


class OutputError(Exception):
    """The report could not be written whole; `quiet` when the reader closed the pipe."""

    def __init__(self, message: str, quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet


def say(*lines: str) -> None:
    """A message on stderr, one argument a line: each with its control characters and line
    breaks escaped (a line break in a file name or an exception's text starts no line),
    runner commands disarmed, in what stderr can encode; a closed or full stderr loses it
    rather than failing the command."""
    _to_stderr(disarm("".join(clean(line) + "\n" for line in lines)))


def announce(commands: str) -> None:
    """gpudoctor's own CI workflow commands (`::error title=…::…`, one a line) on stderr: their
    leading `::command::` stays, the rest of each line is disarmed like any output."""
    _to_stderr(disarm(commands, own=True))


def _to_stderr(text: str) -> None:
    stream = sys.stderr
    if stream is None or not text:
        return
    text = fit(text, OutputFormat.TEXT, getattr(stream, "encoding", None) or "utf-8")
    with contextlib.suppress(OSError, ValueError):
        stream.write(text)
        stream.flush()


def deliver(text: str, output: str, fmt: OutputFormat) -> None:
    """Write a report rendered as `fmt` to stdout ('-') or a file; on failure say why
    (nothing, for a closed pipe) and exit 2."""
    try:
        write_output(text, output, fmt)
    except OutputError as e:
        if not e.quiet:
            say(f"gpudoctor: error: {e}")
        raise typer.Exit(ExitCode.USAGE) from None


def write_output(text: str, output: str, fmt: OutputFormat = OutputFormat.TEXT) -> None:
    """Write `text` whole to stdout ('-') or to the file `output`, or raise OutputError."""
    text = disarm(text, fmt)
    if output == "-":
        _write_stdout(text, fmt)
        return
    data = fit(text, fmt, "utf-8").encode("utf-8", errors="backslashreplace")
    try:
        _write_file(data, Path(output))
    except OSError as e:
        raise OutputError(f"cannot write {output}: {e.strerror or e}") from None


def _write_stdout(text: str, fmt: OutputFormat) -> None:
    stream = sys.stdout
    if stream is None:
        raise OutputError("stdout is closed, so the report cannot be written "
                          "(write it to a file with -o FILE)")
    encoding = getattr(stream, "encoding", None) or "utf-8"
    text = fit(text, fmt, encoding)
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text)
            stream.flush()
        else:
            stream.flush()
            _write_all(buffer, text.encode(encoding, errors="backslashreplace"))
    except BrokenPipeError:
        stdout_to_devnull()
        raise OutputError("stdout: the reader closed the pipe", quiet=True) from None
    except (OSError, ValueError) as e:  # ValueError: "I/O operation on closed file"
        stdout_to_devnull()
        why = getattr(e, "strerror", None) or str(e)
        raise OutputError(f"cannot write the report to stdout: {why}") from None


def _write_all(buffer: BinaryIO, data: bytes) -> None:
    """Write every byte of `data`, or raise. An unbuffered stdout (`python -u`,
    PYTHONUNBUFFERED=1) is the raw file, whose `write` returns a short count instead of raising
    when the reader closes the pipe part-way (the kernel reports the bytes the pipe took; the
    next write gets EPIPE): so the rest is written until all is taken or a write fails. A
    non-blocking stdout that is full (None, BlockingIOError) is waited on."""
    view = memoryview(data)
    while view:
        try:
            n: int | None = buffer.write(view)
        except BlockingIOError as e:
            view = view[e.characters_written:]
            _wait_writable(buffer, e)
            continue
        if n is None:  # a raw non-blocking file that is full; or a writer that returns nothing
            if not _nonblocking(buffer):
                break
            _wait_writable(buffer, BlockingIOError(errno.EAGAIN, "the stream would block"))
            continue
        if n <= 0:
            raise OSError(errno.EIO, "the stream took none of the report")
        view = view[n:]
    while not _flushed(buffer):  # what a buffered stdout still holds
        pass


def _flushed(buffer: BinaryIO) -> bool:
    try:
        buffer.flush()
    except BlockingIOError as e:
        _wait_writable(buffer, e)
        return False
    return True


def _nonblocking(buffer: BinaryIO) -> bool:
    try:
        return not os.get_blocking(buffer.fileno())
    except (OSError, ValueError, AttributeError):
        return False


def _wait_writable(buffer: BinaryIO, e: OSError) -> None:
    """Block until the file under `buffer` can take more (a full non-blocking pipe), or
    raise `e` where there is no file to wait on."""
    try:
        fd = buffer.fileno()
    except (OSError, ValueError, AttributeError):
        raise e from None
    select.select([], [fd], [])


def stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null, so that what is left in stdout's buffer is dropped at exit
    instead of failing again (the recipe of Python's signal module documentation)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _write_file(data: bytes, target: Path) -> None:
    """A report file is written whole or not at all: a temporary file beside it, then a rename,
    so a full disk never leaves half a JSON file.

    `-o FILE` where FILE is a symbolic link is refused (OSError ELOOP, exit 2 naming where it
    points) rather than replaced by a file or written through: a link planted where a report
    goes (`sudo gpudoctor … -o /tmp/r.json`, /tmp/r.json → /etc/…) must not be followed, and
    silently replacing a link the user made is no better; they name the real file instead.
    A link to what is not a regular file (`-o /dev/stdout`, a device, a FIFO) is written
    through, as that thing itself is: opened without following a swap to a regular file
    (checked after opening, before a byte is written), and a FIFO with no reader is an error
    at once (non-blocking open), never a hang."""
    try:
        link = os.readlink(target)
    except OSError:
        link = None
    if link is not None and (not target.exists() or target.is_file()):
        raise OSError(errno.ELOOP, f"a symbolic link (to {link}); write to the file it names "
                      "instead")
    if target.exists() and not target.is_file():
        _write_through(data, target)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        os.fchmod(fd, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_through(data: bytes, target: Path) -> None:
    """Write into a device or FIFO (`/dev/null`, `/dev/stdout`); never into a regular file that
    took its place, and never wait for a FIFO's reader."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a FIFO that no process reads") from None
        raise
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EEXIST, "replaced by a regular file while being opened")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

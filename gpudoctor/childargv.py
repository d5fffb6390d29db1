"""A Python child's argv with its program on stdin rather than in the process table.

`python [flags] -c SOURCE args…` puts SOURCE (the torch probe's or the smoke test's whole
program, kilobytes of it) in the process table, where `ps` shows it to every user of the machine
and an argv length limit applies. The child runner (`gpudoctor.childproc`) starts such a child
as `python [flags] - args…` and writes SOURCE to its stdin: Python reads the program to its
end, then runs it, with sys.path[0] '' and sys.argv[1:] as before. A leaf: the standard
library only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import IO

# Python's options that come before `-c`; those of them that take a value
_PY_FLAGS = frozenset(("-b", "-bb", "-B", "-d", "-E", "-i", "-I", "-O", "-OO", "-P", "-q",
                       "-R", "-s", "-S", "-u", "-v", "-x"))
_PY_VALUED = frozenset(("-W", "-X"))


def by_stdin(argv: Sequence[str], stdin: str | None) -> tuple[list[str], str | None]:
    """`[python, flags…, "-c", SOURCE, args…]` → `([python, flags…, "-", args…], SOURCE)`: the
    program on stdin, not in the process table. Anything else (a child that is given stdin
    text of its own, a program that is not run with `-c`) is left as it is."""
    argv = list(argv)
    if stdin is not None:
        return argv, stdin
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-c" and i + 1 < len(argv):
            return [*argv[:i], "-", *argv[i + 2:]], argv[i + 1]
        if arg in _PY_VALUED:
            i += 2
        elif arg in _PY_FLAGS:
            i += 1
        else:
            break
    return argv, None


def feed_now(stdin: IO[bytes], data: bytes) -> bytes:
    """Write what the pipe takes of `data` without waiting (a program fits a pipe's buffer),
    closing it when all went; return the rest, for the runner to feed while it waits."""
    try:
        os.set_blocking(stdin.fileno(), False)
        while data:
            data = data[os.write(stdin.fileno(), data):]
    except (BlockingIOError, InterruptedError):
        return data
    except OSError:  # the child is gone already (EPIPE): the runner reports what it said
        data = b""
    with contextlib.suppress(OSError):
        stdin.close()
    return data

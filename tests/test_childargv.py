"""`gpudoctor.childargv`: a Python child's program moves from `-c SOURCE` in its argv (which the
process table shows every user) to its stdin, and only a Python's `-c` does; the runner feeds it
to the pipe without waiting (the children themselves: tests/hostile/test_process_table.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from gpudoctor.childargv import by_stdin, feed_now

PY = sys.executable


def test_the_program_moves_to_stdin_and_anything_else_stays() -> None:
    # moved unchanged from tests/hostile/test_process_table.py's run-the-same test
    program = "import sys; print(sys.argv[1:], repr(sys.path[0]))"
    assert by_stdin([PY, "-c", program], None) == ([PY, "-"], program)
    assert by_stdin([PY, "-W", "ignore", "-c", program], None) == (
        [PY, "-W", "ignore", "-"], program)
    assert by_stdin([PY, "-c", program], "input") == ([PY, "-c", program], "input")
    assert by_stdin(["nvcc", "--version"], None) == (["nvcc", "--version"], None)
    assert by_stdin([PY, "script.py", "-c", "x"], None) == ([PY, "script.py", "-c", "x"], None)


@pytest.mark.parametrize(("argv", "moved"), [
    ([PY, "-I", "-S", "-c", "src", "a", "-c", "b"], [PY, "-I", "-S", "-", "a", "-c", "b"]),
    ([PY, "-X", "utf8", "-u", "-c", "src"], [PY, "-X", "utf8", "-u", "-"]),
    ([PY, "-W", "-c", "-c", "src"], [PY, "-W", "-c", "-"]),  # -W's value is "-c"
])
def test_flags_before_dash_c_are_kept_and_the_arguments_after_it(argv: list[str],
                                                                  moved: list[str]) -> None:
    assert by_stdin(argv, None) == (moved, "src")


@pytest.mark.parametrize("argv", [
    [PY, "-c"],  # no program after -c: Python's own usage error, left to it
    [PY, "--unknown", "-c", "src"],  # an option it does not know: stops the walk
    [PY, "-m", "pip", "-c", "src"],
    [PY],
])
def test_what_is_not_a_dash_c_program_is_left_alone(argv: list[str]) -> None:
    assert by_stdin(argv, None) == (argv, None)


Pipe = tuple[int, Any]  # the reading end's descriptor, the writing end as the runner holds it


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    r, w = os.pipe()
    writer = os.fdopen(w, "wb", buffering=0)
    yield r, writer
    writer.close()
    os.close(r)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_program_the_pipe_holds_goes_at_once_and_the_pipe_is_closed(pipe: Pipe) -> None:
    r, writer = pipe
    assert feed_now(writer, b"print('hi')\n") == b""
    assert writer.closed  # the child reads to its end: Python then runs the program
    assert _read_all(r) == b"print('hi')\n"


def test_what_the_pipe_does_not_take_is_returned_for_later(pipe: Pipe) -> None:
    r, writer = pipe
    data = b"x = 1\n" * 200_000  # 1.2 MB: far more than a pipe's buffer
    rest = feed_now(writer, data)
    assert 0 < len(rest) < len(data)
    assert not writer.closed  # the runner writes the rest while it waits
    assert os.read(r, len(data)) + rest == data  # what went, then what is left, in order


def test_a_child_that_is_gone_leaves_nothing_to_feed() -> None:
    r, w = os.pipe()
    os.close(r)  # the child exited before reading its program: EPIPE, not an exception
    writer = os.fdopen(w, "wb", buffering=0)
    assert feed_now(writer, b"print('hi')\n") == b""
    assert writer.closed

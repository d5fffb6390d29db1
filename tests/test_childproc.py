"""The child-process runner, with real children: process groups, deadlines, bounded output.

Signals and the CLI's exit paths are tested end to end in tests/hostile/test_signals.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpudoctor import childproc

PY = sys.executable


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (it is dead; its parent has not reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2:].split()[0] in ("Z", "X")


def _wait_gone(pid: int, within: float = 5.0) -> bool:
    until = time.monotonic() + within
    while not _gone(pid):
        if time.monotonic() > until:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.subprocess
def test_captures_both_streams_and_the_exit_code() -> None:
    r = childproc.run([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); "
                       "sys.exit(3)"], 30)
    assert (r.returncode, r.stdout, r.stderr, r.notes) == (3, "out\n", "err\n", ())
    assert r.argv[0] == PY


@pytest.mark.subprocess
def test_killed_by_a_signal_is_a_negative_code() -> None:
    r = childproc.run([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGABRT)"], 30)
    assert r.returncode == -signal.SIGABRT


@pytest.mark.subprocess
def test_stdin_is_fed_whole() -> None:
    text = "line\n" * 100_000  # larger than a pipe's buffer
    assert childproc.run(["cat"], 30, stdin=text).stdout == text


@pytest.mark.subprocess
def test_stdin_is_empty_by_default() -> None:
    assert childproc.run([PY, "-c", "import sys; print(repr(sys.stdin.read()))"],
                         30).stdout == "''\n"


@pytest.mark.subprocess
def test_env_is_passed() -> None:
    r = childproc.run([PY, "-c", "import os; print(os.environ['GD_TEST'])"], 30,
                      {**os.environ, "GD_TEST": "x y"})
    assert r.stdout == "x y\n"


@pytest.mark.subprocess
def test_own_session_and_process_group() -> None:
    r = childproc.run([PY, "-c", "import os; print(os.getpid(), os.getpgid(0), os.getsid(0))"],
                      30)
    pid, pgid, sid = map(int, r.stdout.split())
    assert pid == pgid == sid
    assert pgid != os.getpgid(0)


@pytest.mark.subprocess
def test_missing_program() -> None:
    with pytest.raises(FileNotFoundError):
        childproc.run(["/nonexistent/gpudoctor-test"], 30)


@pytest.mark.subprocess
def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(PermissionError):
        childproc.run([str(script)], 30)


@pytest.mark.slow
def test_deadline_kills_the_whole_group(tmp_path: Path) -> None:
    """The child starts a grandchild and both sleep: at the deadline both are gone, and what
    the child printed before is kept."""
    with pytest.raises(childproc.ChildTimeout) as caught:
        childproc.run(["sh", "-c", "sleep 300 & echo $!; sleep 300"], 1.0)
    result = caught.value.result
    grandchild = int(result.stdout.split()[0])
    assert result.returncode == -signal.SIGKILL
    assert caught.value.timeout == 1.0
    assert "did not finish within 1 s" in str(caught.value)
    assert _wait_gone(grandchild)


@pytest.mark.subprocess
def test_grandchild_left_behind_is_killed_when_the_child_exits() -> None:
    """A child that exits while its grandchild still holds the pipes: the call returns (it
    does not wait for the deadline) and the grandchild is killed."""
    r = childproc.run(["sh", "-c", "sleep 300 & echo $!"], 60)
    assert r.returncode == 0
    assert _wait_gone(int(r.stdout.split()[0]))


@pytest.mark.subprocess
def test_flood_is_cut_with_a_note() -> None:
    r = childproc.run([PY, "-c", "import sys; sys.stdout.write('a' * 5000 + 'b' * 10**6 + "
                       "'c' * 5000)"], 60, limit=10_000)
    assert r.returncode == 0
    assert r.stdout.startswith("a" * 5000)
    assert r.stdout.endswith("c" * 5000)
    assert "b" not in r.stdout.replace("bytes", "")
    assert "[gpudoctor: output cut:" in r.stdout
    assert len(r.notes) == 1
    assert r.notes[0].startswith("stdout cut:")
    assert r.stderr == ""


@pytest.mark.slow
@pytest.mark.subprocess
def test_flood_of_100_mb_keeps_memory_bounded() -> None:
    """`python -c "print('x' * 10**8)"` under the default bound: the runner keeps 4 MiB and
    its process never holds the 100 MB (the peak RSS of a separate interpreter running it:
    VmHWM, which exec resets, unlike ru_maxrss that keeps the forking pytest's)."""
    probe = (
        "import json, sys\n"
        "from gpudoctor import childproc\n"
        "r = childproc.run([sys.executable, '-c', \"print('x' * 10**8)\"], 120)\n"
        "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "print(json.dumps({'len': len(r.stdout), 'notes': r.notes, 'rc': r.returncode,\n"
        "                  'rss_kib': int(hwm.split()[1])}))\n"
    )
    out = subprocess.run([PY, "-c", probe], capture_output=True, text=True, timeout=300,
                         check=True)
    data = json.loads(out.stdout)
    assert data["rc"] == 0
    assert childproc.DEFAULT_LIMIT <= data["len"] <= childproc.DEFAULT_LIMIT + 200
    assert data["notes"][0].startswith("stdout cut:")
    assert data["rss_kib"] * 1024 < 10**8 / 2  # far below what the child printed


@pytest.mark.slow
@pytest.mark.subprocess
def test_lines_reach_the_callback_as_they_come() -> None:
    seen: list[tuple[str, int]] = []
    r = childproc.run(
        [PY, "-c", "import time\nfor i in range(3):\n    print(i, flush=True)\n"
         "    time.sleep(0.05)\nprint('tail', end='')"],
        30, on_line=lambda line: seen.append((line, len(childproc.live()))))
    assert [line for line, _ in seen] == ["0", "1", "2", "tail"]
    assert all(n >= 1 for _, n in seen[:3])  # delivered while the child was still live
    assert r.stdout == "0\n1\n2\ntail"


@pytest.mark.subprocess
def test_a_line_longer_than_the_bound_is_dropped_from_the_callback() -> None:
    seen: list[str] = []
    childproc.run([PY, "-c", "print('short'); print('x' * 50000); print('after')"], 30,
                  limit=1000, on_line=seen.append)
    assert seen == ["short", "after"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_registry_holds_a_child_until_it_is_finished() -> None:
    child = childproc.start([PY, "-c", "import time; time.sleep(0.2)"])
    assert child.pid in childproc.live()
    assert child.finish(30).returncode == 0
    assert child.pid not in childproc.live()


@pytest.mark.subprocess
def test_a_callback_that_raises_kills_the_child() -> None:
    def boom(line: str) -> None:
        raise RuntimeError(line)

    child = childproc.start(["sh", "-c", "echo go; sleep 300"], on_line=boom)
    with pytest.raises(RuntimeError, match="go"):
        child.finish(60)
    assert child.pid not in childproc.live()
    assert _wait_gone(child.pid)


def test_interrupted_message_and_exit_status() -> None:
    assert (childproc.Interrupted(signal.SIGINT).message,
            childproc.Interrupted(signal.SIGINT).exit_code) == ("interrupted", 130)
    term = childproc.Interrupted(signal.SIGTERM)
    assert (term.message, term.exit_code) == ("interrupted by SIGTERM", 143)
    assert isinstance(term, KeyboardInterrupt)
    custom = childproc.Interrupted(signal.SIGINT, "installed; interrupted", exit_code=0)
    assert (str(custom), custom.exit_code) == ("installed; interrupted", 0)
    assert childproc.interrupted() is None  # constructing one records nothing

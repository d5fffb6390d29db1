"""The children's programs are not in the process table (issue 18, Found 7).

`ps` shows every user of the machine each process's argv. gpudoctor's Python children (the
torch probe, the smoke test, the `--python` answer check) used to carry their whole program
there (`python -c "<8-20 KiB of source>"`); the child runner now passes it on stdin
(`python -`, `gpudoctor.childargv`). Each test catches a real child while it runs (its
`import torch` hangs, by `proctable.hanging_python`) and reads /proc/PID/cmdline.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
import runner

from gpudoctor.childproc import run
from tests.hostile.proctable import PY, descendants, hanging_python, wait_for

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

# a line of each child's program that no argv of gpudoctor's own holds
SOURCES = ("Child-process half of the PyTorch probe", "Child-process half of `gpudoctor "
           "smoke-test`", "import torch", "GPUDOCTOR-PYTHON")


@pytest.mark.parametrize("args", [["check"], ["smoke-test", "--device", "cpu"]],
                         ids=["torch-probe", "smoke-test"])
def test_no_child_shows_its_program_in_ps(tmp_path: Path, args: list[str]) -> None:
    hang = hanging_python(tmp_path)
    proc = runner.popen(*args, "--python", str(hang))
    try:
        assert wait_for(lambda: any(p.cmdline.startswith("sleep 600")
                                    for p in descendants(proc.pid)), 120), "no child hung"
        children = [p for p in descendants(proc.pid) if not p.cmdline.startswith("sleep")]
        assert children
        for p in children:
            assert not any(s in p.cmdline for s in SOURCES), p.cmdline[:200]
            assert len(p.cmdline) < 1000, p.cmdline[:200]  # argv: the interpreter and a config
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 130


def test_the_program_runs_the_same_from_stdin() -> None:
    """argv after the program and sys.path[0] are what `-c` gives (which argvs are rewritten:
    tests/test_childargv.py)."""
    program = "import sys; print(sys.argv[1:], repr(sys.path[0]))"
    for flags in ([], ["-I", "-S"]):
        argv = [PY, *flags, "-c", program, "a", "b c"]
        r = run(argv, 30)
        direct = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
        assert r.stdout == direct.stdout, r.stderr
        assert r.argv == tuple(argv)  # what the caller asked for
    big = "x = 1\n" * 100_000  # far more than a pipe holds: fed while the runner waits
    assert run([PY, "-c", big + "print('done')"], 60).stdout == "done\n"

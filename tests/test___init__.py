"""gpudoctor/__init__.py: run as `python -m gpudoctor`, the package notes signals from its own
import on (a Ctrl-C in importlib's module-lock callback, between the package and __main__, was
swallowed by Python and the command ran on to exit 0: tests/hostile/test_signals.py's
test_ctrl_c_milliseconds_after_exec, under load); imported as a library it changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

_KILL = ("import os, signal, time, sys; sys.orig_argv = {argv!r}; import gpudoctor; "
         "os.kill(os.getpid(), signal.SIGINT); time.sleep(0.05); print(gpudoctor._CAUGHT)")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", _KILL.format(argv=argv)], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


@pytest.mark.slow
@pytest.mark.subprocess
def test_run_as_the_program_a_sigint_is_noted_not_raised() -> None:
    done = _run([sys.executable, "-X", "importtime", "-m", "gpudoctor", "check"])
    assert done.returncode == 0 and done.stdout.strip() == "[2]", done.stderr


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [["python", "-m", "gpudoctor.probes.child"],
                                  ["python", "-m", "pytest"], ["python", "script.py"]])
def test_imported_otherwise_the_signals_are_pythons(argv: list[str]) -> None:
    done = _run(argv)
    assert done.returncode != 0 and "KeyboardInterrupt" in done.stderr

"""What every probe receives: the outside world as parameters with real defaults.

Tests replace the parts that cannot exist here (a driver, a GPU) at the lowest level: `root`
points /proc, /dev and /etc at a prepared tree, `environ` is a plain dict, `python` another
interpreter. Probes read nothing from the machine except through these.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TORCH_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished child process."""

    returncode: int  # negative: killed by that signal
    stdout: str
    stderr: str


class ProbeTimeout(Exception):
    """A child process ran past its timeout and was killed."""

    def __init__(self, argv: Sequence[str], timeout: float, stdout: str, stderr: str) -> None:
        super().__init__(f"{argv[0]} did not finish within {timeout:g} s")
        self.timeout = timeout
        self.stdout = stdout  # what it printed before it was killed
        self.stderr = stderr


def start(
    argv: Sequence[str], env: Mapping[str, str] | None = None, stdin: bool = False
) -> subprocess.Popen[str]:
    """Start argv (never through a shell) in its own process group, output captured.

    Raises `FileNotFoundError` / `PermissionError` when argv[0] cannot be executed.
    """
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        text=True,
        errors="replace",
        start_new_session=True,
    )


def finish(
    proc: subprocess.Popen[str], timeout: float, stdin: str | None = None
) -> RunResult:
    """Wait for a started child; after `timeout` seconds kill its group, raise `ProbeTimeout`."""
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = _kill_group(proc)
        raise ProbeTimeout(proc.args if isinstance(proc.args, list) else [str(proc.args)],
                           timeout, out, err) from None
    return RunResult(proc.returncode, out, err)


def run(
    argv: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
) -> RunResult:
    """Run argv and capture its output: `start` then `finish`."""
    return finish(start(argv, env, stdin is not None), timeout, stdin)


def _kill_group(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    out, err = proc.communicate()
    return out or "", err or ""


@dataclass(frozen=True, slots=True)
class Deps:
    """The world a probe may look at."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: Path = Path("/")  # prefix for /proc, /dev, /etc, /usr/local, /opt
    python: str = sys.executable  # interpreter whose torch is probed
    cuda_home: str | None = None  # --cuda-home
    torch_timeout: float = DEFAULT_TORCH_TIMEOUT
    no_torch: bool = False

    def path(self, absolute: str) -> Path:
        """A system path under `root`."""
        return self.root / absolute.lstrip("/")

    def child_env(self) -> dict[str, str]:
        """Environment for child processes: ours, with output unbuffered and no user site noise."""
        env = dict(self.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("PYTHONSTARTUP", None)
        return env

"""The one way the tests run the gpudoctor command line (`from runner import gpudoctor`).

- `gpudoctor(*args)`: `python -m gpudoctor ARGS` in a new process, as a user runs it;
- `popen(*args)`: the same, started and left running (the signal and process-table tests);
- `invoke(*args)`: the Typer app in this process (Click's CliRunner), for speed.

All three start from one clean environment (`environment`): the caller's, without gpudoctor's
own settings (GPUDOCTOR_*), the fake libraries' knobs (FAKE_*), a CI runner's markers
(GITHUB_*), the loader path and PYTHONPATH; this checkout importable; no colour. What a test
passes in `env` goes on top (a value of None removes the variable), so a test states
everything it depends on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARGV = (sys.executable, "-m", "gpudoctor")

_DROPPED_PREFIXES = ("GPUDOCTOR_", "FAKE_", "GITHUB_")
_DROPPED = ("LD_LIBRARY_PATH", "PYTHONPATH")

Env = Mapping[str, "str | None"]


def environment(env: Env | None = None, *, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of a gpudoctor run: the clean base, less the variables starting with a
    prefix of `drop`, then `env` (None: unset)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(_DROPPED_PREFIXES + drop) and k not in _DROPPED}
    base.update(PYTHONPATH=str(ROOT), NO_COLOR="1")
    for key, value in (env or {}).items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def gpudoctor(*args: str, input: str | bytes | None = None, env: Env | None = None,
              drop: tuple[str, ...] = (), cwd: Path | str = ROOT, timeout: float = 180,
              text: bool = True, **extra: Any) -> subprocess.CompletedProcess[Any]:
    """`python -m gpudoctor ARGS` in a new process fed `input`, its output captured (text
    unless `text=False`); `extra` goes to subprocess.run (e.g. preexec_fn, stdout, stdin)."""
    if input is not None:
        extra["input"] = input
    if "stdout" not in extra and "stderr" not in extra:
        extra["capture_output"] = True
    elif "stderr" not in extra:
        extra["stderr"] = subprocess.PIPE
    return subprocess.run([*ARGV, *args], env=environment(env, drop=drop), cwd=cwd,
                          timeout=timeout, text=text, check=False, **extra)


def popen(*args: str, env: Env | None = None, drop: tuple[str, ...] = (),
          cwd: Path | str = ROOT, text: bool = True, **extra: Any) -> subprocess.Popen[Any]:
    """`python -m gpudoctor ARGS` started, stdout and stderr piped (as text unless
    `text=False`; `extra` may give other streams)."""
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **extra}
    return subprocess.Popen([*ARGV, *args], env=environment(env, drop=drop), cwd=cwd,
                            text=text, **streams)


def invoke(*args: str, input: str | None = None, env: Env | None = None,
           app: Any = None) -> Any:
    """The Typer app (gpudoctor's, or `app`) in this process with the same clean environment:
    the CliRunner's Result."""
    from typer.testing import CliRunner

    if app is None:
        import gpudoctor.cli

        app = gpudoctor.cli.app
    wanted = environment(env)
    changes: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
    changes.update(wanted)
    return CliRunner().invoke(app, list(args), input=input, env=changes)

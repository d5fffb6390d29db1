"""The torch probe's child, started before the rest of gpudoctor is imported.

`import torch` is the slowest fact `check` gathers (1-2 s); typer, rich, the model and the
probes take ~0.15 s more to import. The entry point calls `prestart` first thing, so the two
overlap, and `probe_torch` then `take`s the running child instead of starting its own. This
module imports only the child runner: anything heavier here delays the start it exists for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gpudoctor import childproc

CHILD_SOURCE_PATH = os.path.join(os.path.dirname(__file__), "_torch_child.py")

_Key = tuple[str, tuple[tuple[str, str], ...]]
# A child started early, keyed by the interpreter and environment it was given.
_PRESTARTED: dict[_Key, childproc.Child] = {}
_SOURCE: list[str] = []


def child_source() -> str:
    """The child's program text (`_torch_child.py`), given as `python -c SOURCE`: the child
    runner passes it on the child's stdin (`python -`), out of the process table
    (`gpudoctor.childargv`)."""
    if not _SOURCE:
        with open(CHILD_SOURCE_PATH, encoding="utf-8") as f:
            _SOURCE.append(f.read())
    return _SOURCE[0]


def child_argv(python: str) -> list[str]:
    """The torch child's argv under `python`."""
    return [python, "-c", child_source()]


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """Environment for child processes: ours, with output unbuffered and no user site noise."""
    env = dict(environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


def _key(python: str, env: Mapping[str, str]) -> _Key:
    return python, tuple(sorted(env.items()))


def prestart(python: str, environ: Mapping[str, str]) -> None:
    """Start the torch child under `python` with `environ` now, for `take` to collect later.

    A child nobody takes is killed at exit (the runner kills every child still live then).
    """
    env = child_env(environ)
    try:
        _PRESTARTED[_key(python, env)] = childproc.start(child_argv(python), env)
    except OSError:
        return  # probe_torch will meet the same error and report it


def take(python: str, env: Mapping[str, str]) -> childproc.Child:
    """The child prestarted with exactly this interpreter and environment, else a new one."""
    found = _PRESTARTED.pop(_key(python, env), None)
    if found is not None:
        return found
    return childproc.start(child_argv(python), env)

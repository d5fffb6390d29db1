"""The process table, read from /proc, for the tests that send real signals.

Every child gpudoctor starts runs in a session (and process group) of its own; these helpers
find them under a gpudoctor process and say whether anything of their groups is left alive.
A zombie is dead (only its exit status waits for its parent, which is init once gpudoctor has
gone), so it does not count as left behind.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Proc:
    """One /proc entry."""

    pid: int
    state: str  # "R", "S", "Z", …
    ppid: int
    pgrp: int
    sid: int
    cmdline: str


def table() -> dict[int, Proc]:
    """Every process visible now."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        found[int(name)] = Proc(int(name), fields[0], int(fields[1]), int(fields[2]),
                                int(fields[3]), cmd.decode(errors="replace").strip())
    return found


def descendants(root: int) -> list[Proc]:
    """The processes below `root`, children first."""
    procs = table()
    out: list[Proc] = []
    frontier = [root]
    while frontier:
        kids = [p for p in procs.values() if p.ppid in frontier]
        out += kids
        frontier = [p.pid for p in kids]
    return out


def alive_in(groups: set[int]) -> list[Proc]:
    """Processes of those process groups that are not zombies."""
    return [p for p in table().values() if p.pgrp in groups and p.state not in ("Z", "X")]


def wait_for(condition: Callable[[], object], within: float = 30.0) -> bool:
    """Poll `condition` until it is true or `within` seconds have passed."""
    until = time.monotonic() + within
    while not condition():
        if time.monotonic() > until:
            return False
        time.sleep(0.01)
    return True


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler installed for `signum` (/proc/PID/status SigCgt)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) & (1 << (signum - 1)))


def env() -> dict[str, str]:
    """The test's environment without gpudoctor's own variables (they would change options)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("GPUDOCTOR_", "FAKE_"))}


# the start of a fake interpreter: its program, from stdin when it is run as `python - …` (the
# child runner passes a `-c` program so, out of `ps`), else from its arguments
READ_PROGRAM = ('#!/bin/sh\nprog=""\nfor a in "$@"; do\n'
                '  if [ "$a" = "-" ]; then prog=$(cat); break; fi\ndone\n')


def run_program(python: str) -> str:
    """The end of a fake interpreter: run the real one on the program it was given."""
    return (f'if [ -n "$prog" ]; then printf \'%s\\n\' "$prog" | exec "{python}" "$@"; fi\n'
            f'exec "{python}" "$@"\n')


def hanging_python(directory: Path) -> Path:
    """An interpreter whose `import torch` hangs, as on a wedged driver: a shell wrapper that
    runs the real interpreter for everything else (`--python` is validated by running it), but
    sleeps, in a grandchild of gpudoctor's child, when its program imports torch."""
    script = directory / "python"
    script.write_text(READ_PROGRAM + 'case "$prog $*" in\n  *"import torch"*) sleep 600 ;;\n'
                      'esac\n' + run_program(PY))
    script.chmod(0o755)
    return script

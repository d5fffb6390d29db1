"""Timing one run of a command, shared by the benchmark scripts in this folder."""

from __future__ import annotations

import subprocess
import sys
import time


def time_once(argv: list[str], cwd: str | None = None) -> float:
    """Wall seconds of one run (stdout discarded); exit 0 or 1 both count as done, any other
    status ends the benchmark with the command's last words. `cwd`: where it runs (`python -m
    gpudoctor` imports the gpudoctor found there first: how a benchmark times another tree)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                          cwd=cwd)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed

"""Shared by the renderer tests: the recorded environments, judged, and the console the CLI
renders for when stdout is not a terminal."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Report
from gpudoctor.snapshot import loads

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "envs").glob("*.json"))


def report(name: str) -> Report:
    """The recorded environment `name` (tests/fixtures/envs/NAME.json), judged by every check."""
    env = loads((FIXTURES[0].parent / f"{name}.json").read_text())
    return run_checks(env, load_tables())


def console(width: int = 100) -> Console:
    return Console(file=io.StringIO(), width=width, legacy_windows=False, no_color=True)

"""Shared by the renderer tests: the recorded environments, judged, and the console the CLI
renders for when stdout is not a terminal."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Report, Status
from gpudoctor.snapshot import loads

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "envs").glob("*.json"))


def report(name: str) -> Report:
    """The recorded environment `name` (tests/fixtures/envs/NAME.json), judged by every check."""
    env = loads((FIXTURES[0].parent / f"{name}.json").read_text())
    return run_checks(env, load_tables())


def console(width: int = 100) -> Console:
    return Console(file=io.StringIO(), width=width, legacy_windows=False, no_color=True)


# a string carrying terminal escapes, a bidi override, a C1 CSI and rich markup
HOSTILE = "GPU\x1b]0;pwned\x07\x1b[2J\u202e\x9b31m [red]red[/red] [/] [bold"


def hostile_report() -> Report:
    """A failing report whose message, fix and evidence all carry hostile text."""
    r = run_checks(loads((FIXTURES[0].parent / "pascal-gpu-cu130-torch.json").read_text()),
                   load_tables())
    results = tuple(
        dataclasses.replace(x, finding=dataclasses.replace(
            x.finding, message=f"{x.finding.message} {HOSTILE}",
            fix=f"run `{HOSTILE}`" if x.finding.status is Status.FAIL else x.finding.fix,
            evidence=(*x.finding.evidence, (HOSTILE, HOSTILE))))
        for x in r.results)
    return dataclasses.replace(r, results=results, notes=(HOSTILE,))


# the header's three "CUDA versions" rows, and what one says when its probe was not run
SHOWN = "not gathered (no selected check reads it)"
DRIVER, TORCH, TOOLKIT = ("Driver (max CUDA it runs)", "PyTorch (CUDA it was built with)",
                          "CUDA toolkit (nvcc, for building)")

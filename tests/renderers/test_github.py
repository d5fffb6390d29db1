"""`gpudoctor.renderers.github`: GitHub Actions' workflow commands (escaped as GitHub's toolkit
does), one per failure, warning and note, and the job summary (the Markdown report).
(The CLI under GitHub Actions: tests/ci/test_github.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Report, Status
from gpudoctor.renderers.github import (
    escape_data,
    escape_property,
    step_summary,
    workflow_commands,
)
from gpudoctor.snapshot import loads
from tests.ci.cikit import GPU_LESS, H100


def test_escaping_follows_githubs_toolkit() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("GD101 a:b,c%") == "GD101 a%3Ab%2Cc%25"
    assert escape_data("\x1b[31mred") == "\\x1b[31mred"  # no terminal escapes reach the log


def _report(path: Path) -> Report:
    return run_checks(loads(path.read_text()), load_tables(), REGISTRY)


def test_one_command_per_failure_warning_and_note() -> None:
    report = _report(GPU_LESS)
    text = workflow_commands(report)
    lines = text.splitlines()
    shown = [r for r in report.results if r.finding.status in (Status.FAIL, Status.WARN)]
    assert len(lines) == len(shown) and shown
    for line, r in zip(lines, shown, strict=True):
        kind = line[2:line.index(" ")]
        assert kind == ("error" if r.finding.status is Status.FAIL else
                        "notice" if r.severity.name == "INFO" else "warning")
        assert line.startswith(f"::{kind} title={r.check_id} {r.slug}::")
        assert "\n" not in line and "\r" not in line


def test_a_hostile_message_stays_one_command() -> None:
    report = _report(GPU_LESS)
    r = next(r for r in report.results if r.finding.status is Status.WARN)
    evil = dataclasses.replace(r, finding=dataclasses.replace(
        r.finding, message="line1\n::error::forged%0A\r", fix="a, b: c"))
    text = workflow_commands(dataclasses.replace(report, results=(evil,)))
    assert text.count("\n") == 1 and text.startswith("::notice title=")  # one command:
    assert "line1%0A::error::forged%250A%0D%0Afix: a, b: c" in text  # the runner reads
    # commands only at the start of a line


def test_summary_is_the_markdown_report() -> None:
    summary = step_summary(_report(H100))
    assert summary.startswith("## gpudoctor ") and "| `GD101`" in summary

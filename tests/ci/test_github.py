"""GitHub Actions: workflow commands (escaped as GitHub's toolkit does) on stderr, stdout left
to the report, and the Markdown summary appended to $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from runner import gpudoctor

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

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


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


@pytest.mark.slow
def test_cli_under_github_actions(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    p = gpudoctor("check", "--from-snapshot", str(GPU_LESS), "--format", "json",
                  "--require", "gpus>=1", env=env)
    assert p.returncode == 1
    json.loads(p.stdout)  # stdout is still the report, nothing else
    assert "::error title=GD601 require-gpus::" in p.stderr
    assert "::error title=GD101 driver-present::" in p.stderr
    text = summary.read_text()
    assert text.startswith("# earlier step\n## gpudoctor ")  # appended, never truncated
    gpudoctor("check", "--from-snapshot", str(GPU_LESS), env=env)
    assert summary.read_text().count("## gpudoctor ") == 2


@pytest.mark.slow
def test_cli_without_github_actions_writes_no_commands(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    p = gpudoctor("check", "--from-snapshot", str(GPU_LESS),
                  env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert "::" not in p.stderr and not summary.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_summary_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        _unwritable_summary(locked / "summary.md")
    finally:
        locked.chmod(0o700)


@pytest.mark.slow
def test_a_summary_path_that_is_a_directory_is_a_warning(tmp_path: Path) -> None:
    _unwritable_summary(tmp_path)  # root cannot append to a directory either


def _unwritable_summary(path: Path) -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(path)}
    p = gpudoctor("check", "--from-snapshot", str(H100), env=env)
    assert p.returncode == 0, p.stderr
    assert f"gpudoctor: warning: cannot append the job summary to {path}" in p.stderr
    assert "Traceback" not in p.stderr

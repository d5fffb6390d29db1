"""GitHub Actions: workflow commands (escaped as GitHub's toolkit does) on stderr, stdout left
to the report, and the Markdown summary appended to $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner import gpudoctor

from tests.ci.cikit import GPU_LESS, H100

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


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

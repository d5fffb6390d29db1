"""`gpudoctor.cli.ci`: `check` in a CI job or on a node. `--require` parsed (a malformed one a
usage error naming it) and its checks always selected; under GitHub Actions the workflow
commands on stderr and the job summary appended; `--npd`'s one status line and exit code.
(Each through the real CLI: tests/ci/.)"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import typer

from gpudoctor.checks import run_checks
from gpudoctor.checks.requirements import KIND_CHECKS
from gpudoctor.cli import ci
from gpudoctor.compat import load_tables
from gpudoctor.model import GpuFacts, NvmlFacts, Report, Status
from gpudoctor.renderers.github import step_summary, workflow_commands
from tests.renderers.render_kit import report


def test_requirements_are_parsed_and_a_malformed_one_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert ci.requirements(None) == ()
    reqs = ci.requirements(["gpus>=8,driver>=535", "cuda>=12.1"])
    assert [(r.kind, r.op, r.value) for r in reqs] == [
        ("gpus", ">=", "8"), ("driver", ">=", "535"), ("cuda", ">=", "12.1")]
    with pytest.raises(typer.Exit) as e:
        ci.requirements(["gpus>>8"])
    assert e.value.exit_code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("gpudoctor: error: ") and "gpus>>8" in err[0]


def test_a_selection_gains_the_checks_of_the_kinds_required() -> None:
    reqs = ci.requirements(["gpus>=8", "driver>=535", "gpus>=2"])
    assert ci.with_required(["host"], reqs) == ["host", KIND_CHECKS["gpus"], KIND_CHECKS["driver"]]
    assert ci.with_required([], reqs) == []  # no selection: every check, those included
    assert ci.with_required(["GD101"], ()) == ["GD101"]


def test_outside_github_actions_nothing_is_announced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    ci.github_actions(report("pascal-gpu-cu130-torch"))
    assert capsys.readouterr() == ("", "") and not summary.exists()


def test_under_github_actions_commands_and_the_summary_appended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    r = report("pascal-gpu-cu130-torch")
    summary = tmp_path / "summary.md"
    summary.write_text("# an earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    ci.github_actions(r)
    out, err = capsys.readouterr()
    assert out == "" and err == workflow_commands(r)
    assert err.count("\n::error ") + err.startswith("::error ") == r.count(Status.FAIL)
    assert summary.read_text() == "# an earlier step\n" + step_summary(r)


def test_an_unwritable_summary_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a directory
    ci.github_actions(report("h100-healthy"))
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        f"gpudoctor: warning: cannot append the job summary to {tmp_path}: ")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    ci.github_actions(report("h100-healthy"))  # no summary file: the commands alone
    assert "warning" not in capsys.readouterr().err


def persistence_off() -> Report:
    """The healthy H100 server with persistence mode off: one warning (GD108), no failure."""
    r = report("h100-healthy")
    nvml = r.environment.nvml
    assert isinstance(nvml, NvmlFacts) and isinstance(nvml.gpus[0], GpuFacts)
    gpus = tuple(dataclasses.replace(g, persistence_mode=False) if isinstance(g, GpuFacts) else g
                 for g in nvml.gpus)
    env = dataclasses.replace(r.environment, nvml=dataclasses.replace(nvml, gpus=gpus))
    return run_checks(env, load_tables())


@pytest.mark.parametrize(("fixture", "strict", "code", "start"), [
    ("h100-healthy", False, 0, "OK: "),
    ("pascal-gpu-cu130-torch", False, 1, "GD"),
    ("persistence-off", False, 0, "OK: "),
    ("persistence-off", True, 1, "GD108 "),
])
def test_npd_one_line_and_the_exit_code(fixture: str, strict: bool, code: int, start: str,
                                        capfd: pytest.CaptureFixture[str]) -> None:
    r = persistence_off() if fixture == "persistence-off" else report(fixture)
    with pytest.raises(typer.Exit) as e:
        ci.npd(r, strict)
    assert e.value.exit_code == code
    out, err = capfd.readouterr()
    assert out.count("\n") == 1 and out.startswith(start) and err == ""


def test_npd_whose_stdout_is_closed_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """NPD reads an exit code other than 0 and 1 as Unknown: a line that cannot be written."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone: EPIPE
    with open(write, "w", encoding="utf-8") as stream:
        monkeypatch.setattr("sys.stdout", stream)
        with pytest.raises(typer.Exit) as e:
            ci.npd(report("h100-healthy"), strict=False)
        monkeypatch.undo()
    assert e.value.exit_code == 2

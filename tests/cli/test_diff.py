"""`gpudoctor.cli.diff`: two snapshots or reports compared; exit 1 when a difference changes a
verdict, 0 when none does, 2 for both inputs on stdin or an unreadable one; the summary on
stderr. (`gpudoctor diff` through the CLI, stdin and pasted reports: tests/fleet/test_diff.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from gpudoctor.cli import diff as command
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import FIXTURES

HEALTHY = str(FIXTURES[0].parent / "h100-healthy.json")
OLD_DRIVER = str(FIXTURES[0].parent / "old-driver-new-torch.json")


def run(a: str, b: str, fmt: OutputFormat = OutputFormat.TEXT, output: str = "-") -> int:
    with pytest.raises(typer.Exit) as e:
        command.diff(a, b, fmt, output)
    return int(e.value.exit_code)


def test_a_changed_verdict_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(HEALTHY, OLD_DRIVER) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[:2] == [f"A {HEALTHY}", f"B {OLD_DRIVER}"]
    assert "Verdicts that change" in out.splitlines()
    (line,) = err.splitlines()
    assert line.startswith("gpudoctor: ") and "verdicts change" in line


def test_the_same_machine_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(HEALTHY, HEALTHY, OutputFormat.JSON) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert (data["a"], data["b"], data["facts"], data["verdicts"]) == (HEALTHY, HEALTHY, [], [])
    assert err.startswith("gpudoctor: 0 facts differ")


def test_facts_that_differ_without_a_changed_verdict_exit_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    renamed = tmp_path / "node7.json"
    data = json.loads(Path(HEALTHY).read_text())
    data["environment"]["host"]["hostname"] = "node7"
    renamed.write_text(json.dumps(data))
    assert run(HEALTHY, str(renamed), OutputFormat.JSON) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["fact"] for f in data["facts"]] == ["host name"] and data["verdicts"] == []


def test_markdown_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "diff.md"
    assert run(HEALTHY, OLD_DRIVER, OutputFormat.MARKDOWN, str(target)) == 1
    assert target.read_text(encoding="utf-8").startswith("## gpudoctor ")
    out, err = capsys.readouterr()
    assert out == "" and err.rstrip("\n").endswith(f"; report written to {target}")


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("-", "-") == 2
    assert capsys.readouterr().err == (
        "gpudoctor: error: only one of A and B can be '-' (stdin)\n")
    assert run(HEALTHY, str(tmp_path / "missing.json")) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("gpudoctor: error: cannot read ")

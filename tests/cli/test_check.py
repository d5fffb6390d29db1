"""`gpudoctor.cli.check`: the order of `check`'s steps, in this process on recorded machines. A
pasted report is judged without probing; otherwise only the probes the selected checks read
run; `--require` travels to the checks and selects its own; the smoke test runs only when a
selected check reads it, and a note suggests it where CUDA works; `--npd` answers in one line
with the report only in a file; the exit code is the policy's. (The command in real processes
on this machine: tests/cli/test_check_cli.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from runner import invoke

from gpudoctor.checks import REGISTRY
from gpudoctor.cli import common
from gpudoctor.model import Environment
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES

ENVS = FIXTURES[0].parent
H100, PASCAL = str(ENVS / "h100-healthy.json"), str(ENVS / "pascal-gpu-cu130-torch.json")
SMOKE_NOTE = "CUDA works: prove it trains with `gpudoctor check --smoke`"


def findings(stdout: str) -> dict[str, str]:
    return {f["id"]: f["status"] for f in json.loads(stdout)["findings"]}


@pytest.fixture(name="probed")
def probed_fixture(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    """This machine is the recorded H100 server: `common.environment` answers with it and
    records the fields asked for."""
    fields: list[frozenset[str]] = []

    def environment(cuda_home: object, python: str, timeout: float, no_torch: bool,
                    wanted: frozenset[str] | None = None) -> Environment:
        fields.append(frozenset(wanted or ()))
        return loads(Path(H100).read_text())

    monkeypatch.setattr(common, "environment", environment)
    return fields


@pytest.fixture(name="smoked")
def smoked_fixture(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The smoke test stood in for: the interpreters it was run under (none, here)."""
    runs: list[str] = []

    def with_smoke(env: Environment, python: str, timeout: float) -> Environment:
        runs.append(python)
        return env

    monkeypatch.setattr(common, "with_smoke", with_smoke)
    return runs


def test_exit_code_and_report_of_a_pasted_report() -> None:
    r = invoke("check", "--from-snapshot", PASCAL, "--format", "json")
    assert r.exit_code == 1 and findings(r.stdout)["GD404"] == "fail"
    r = invoke("check", "--from-snapshot", H100)
    assert r.exit_code == 0 and r.stderr.startswith("gpudoctor: ")


def test_only_the_selected_checks_facts_are_probed(probed: list[frozenset[str]],
                                                   smoked: list[str]) -> None:
    r = invoke("check", "GD302", "--format", "json")
    assert r.exit_code in (0, 1), r.stderr
    assert list(findings(r.stdout)) == ["GD302"]
    gd302 = next(c for c in REGISTRY if c.id == "GD302")
    assert probed == [gd302.reads]
    r = invoke("check", "GD302", "--smoke")  # no selected check reads the smoke test
    assert r.exit_code in (0, 1) and probed[1] == gd302.reads | {"torch"}
    assert smoked == []
    r = invoke("check", "GD450", "--smoke")  # one does: it runs, under this interpreter
    assert r.exit_code in (0, 1) and smoked == [sys.executable]


def test_where_cuda_works_a_note_suggests_the_smoke_test(probed: list[frozenset[str]],
                                                          smoked: list[str]) -> None:
    r = invoke("check", "--format", "json")
    assert json.loads(r.stdout)["notes"][0].startswith(SMOKE_NOTE)
    no_driver = str(ENVS / "no-driver-cuda-torch.json")
    r = invoke("check", "--from-snapshot", no_driver, "--format", "json")
    assert json.loads(r.stdout)["notes"] == []  # torch sees no CUDA device there


def test_requirements_are_judged_even_outside_the_selection() -> None:
    r = invoke("check", "host", "--require", "gpus>=8", "--from-snapshot", H100, "--format",
               "json")
    assert r.exit_code == 1
    found = findings(r.stdout)
    assert found["GD601"] == "fail" and "GD101" not in found
    assert invoke("check", "host", "--require", "gpus>=1", "--from-snapshot", H100).exit_code == 0


def test_strict_fails_a_warning(tmp_path: Path) -> None:
    text = Path(H100).read_text()
    assert text.count('"persistence_mode": true') == 1
    warned = tmp_path / "persistence-off.json"
    warned.write_text(text.replace('"persistence_mode": true', '"persistence_mode": false'))
    assert invoke("check", "--from-snapshot", str(warned)).exit_code == 0
    assert invoke("check", "--from-snapshot", str(warned), "--strict").exit_code == 1


def test_npd_one_line_and_the_report_in_the_file(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    r = invoke("check", "--npd", "--from-snapshot", PASCAL, "-f", "json", "-o", str(report))
    assert r.exit_code == 1
    assert r.stdout.count("\n") == 1 and r.stdout.startswith("GD")
    assert findings(report.read_text())["GD404"] == "fail"
    r = invoke("check", "--npd", "--from-snapshot", H100)
    assert (r.exit_code, r.stdout[:4]) == (0, "OK: ")


def test_github_actions_annotations(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    r = invoke("check", "--from-snapshot", PASCAL, env={
        "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1
    assert any(line.startswith("::error title=GD404 ") for line in r.stderr.splitlines())
    assert summary.read_text().startswith("## gpudoctor ")

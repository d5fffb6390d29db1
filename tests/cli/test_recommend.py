"""`gpudoctor recommend` reads what `check` reads (issue 22, item 1: one reader entry)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner import invoke

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INPUTS = sorted([*(FIXTURES / "envs").glob("*.json"),
                 *(p for p in (FIXTURES / "reports").iterdir()
                   if p.name not in ("README.md", "index.toml"))])


@pytest.mark.slow
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_reads_what_check_reads(path: Path) -> None:
    """The same file never makes check exit 0 and recommend exit 2: both read it through
    `gpudoctor.reports.read.read_inputs`. (Before, recommend --from-snapshot read snapshots alone:
    exit 2 'not a usable gpudoctor snapshot: not JSON' on each of the 60 pasted reports.)"""
    checked = invoke("check", "--from-report", str(path), "--format", "json")
    for option in ("--from-report", "--from-snapshot"):
        rec = invoke("recommend", option, str(path), "--format", "json")
        if checked.exit_code == 2:  # nothing recognised in it: both say so, the same way
            assert rec.exit_code == 2 and rec.stderr == checked.stderr
            continue
        assert checked.exit_code in (0, 1), checked.output
        assert rec.exit_code in (0, 1), rec.output
        data = json.loads(rec.stdout)
        assert rec.exit_code == (0 if data["torch"] else 1)
        assert data["driver"] == _driver(json.loads(checked.stdout)["environment"])


def _driver(env: dict[str, object]) -> str | None:
    nvml = env["nvml"]
    version = nvml.get("driver_version") if isinstance(nvml, dict) else None
    return version if isinstance(version, str) else None


@pytest.mark.slow
def test_reports_merge_and_stdin(tmp_path: Path) -> None:
    smi = FIXTURES / "reports" / "nvidia_smi-k8s-v100s-450-device-plugin.txt"
    env = FIXTURES / "reports" / "collect_env-h100-cu126-healthy.txt"
    both = invoke("recommend", "--from-report", str(env), "--from-report", str(smi), "-f",
                  "json")
    assert both.exit_code in (0, 1), both.output
    piped = invoke("recommend", "--from-report", "-", "-f", "json", input=env.read_text())
    assert piped.exit_code in (0, 1) and json.loads(piped.stdout)["gpus"]


def test_probe_options_with_a_report_are_a_usage_error() -> None:
    r = invoke("recommend", "--from-report", str(INPUTS[0]), "--no-torch")
    assert r.exit_code == 2
    assert "--no-torch cannot be used with --from-report / --from-snapshot" in r.stderr


def test_an_unreadable_report_is_a_usage_error(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("nothing here\n")
    r = invoke("recommend", "--from-report", str(notes))
    assert r.exit_code == 2 and "no report recognised" in r.stderr

"""`gpudoctor diff` through the CLI: exit codes, formats, usage errors, stdin (what it compares,
facts layer by layer and the verdicts that change: tests/test_diff.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runner
from runner import invoke

from gpudoctor.compat import load_tables
from gpudoctor.diff import diff_environments
from gpudoctor.renderers.diff import render_markdown
from gpudoctor.snapshot import loads

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "tests" / "fixtures" / "envs"
HEALTHY, OLD_DRIVER = ENVS / "h100-healthy.json", ENVS / "old-driver-new-torch.json"


def env(path: Path):  # type: ignore[no-untyped-def]
    return loads(path.read_text())


@pytest.mark.slow
def test_cli_exit_codes_and_formats(tmp_path: Path) -> None:
    r = invoke("diff", str(HEALTHY), str(HEALTHY))
    assert r.exit_code == 0, r.output
    assert "0 facts differ" in r.stderr
    r = invoke("diff", str(HEALTHY), str(OLD_DRIVER), "--format", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["command"] == "diff" and data["a"] == str(HEALTHY)
    assert {"id": "GD103"}.items() <= next(v for v in data["verdicts"]
                                           if v["id"] == "GD103").items()
    assert data["summary"]["verdicts_changed"] == len(data["verdicts"]) > 0
    out = tmp_path / "d.md"
    r = invoke("diff", str(HEALTHY), str(OLD_DRIVER), "-f", "markdown",
               "-o", str(out))
    assert r.exit_code == 1
    md = out.read_text()
    assert "### Driver & GPUs" in md and "| driver version |" in md
    assert md == render_markdown(diff_environments(env(HEALTHY), env(OLD_DRIVER),
                                                   load_tables()), str(HEALTHY), str(OLD_DRIVER))


@pytest.mark.parametrize(("args", "needle"), [
    (["-", "-"], "only one of A and B"),
    (["/nonexistent.json", str(HEALTHY)], "/nonexistent.json: no such file"),
    ([str(HEALTHY)], "Missing argument"),
])
def test_usage_errors(args: list[str], needle: str) -> None:
    r = invoke("diff", *args)
    assert r.exit_code == 2
    assert needle in r.stderr


@pytest.mark.slow
def test_stdin_and_a_pasted_report_against_a_snapshot() -> None:
    """A snapshot piped in against a collect_env paste: the real subprocess, real streams."""
    paste = next((ROOT / "tests" / "fixtures" / "reports").rglob("*collect_env*"), None)
    if paste is None:
        pytest.skip("no collect_env report among the fixtures")
    p = runner.gpudoctor("diff", "-", str(paste), "-f", "json", input=HEALTHY.read_text(),
                         timeout=60)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["a"] == "stdin"

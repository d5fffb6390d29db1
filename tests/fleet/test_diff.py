"""`gpudoctor diff`: facts layer by layer and the verdicts that change, on recorded machines."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import runner
from rich.console import Console
from runner import invoke

from gpudoctor.compat import load_tables
from gpudoctor.diff import diff_environments, stack_facts
from gpudoctor.model import HostFacts, Layer, Status
from gpudoctor.renderers.diff import render_markdown, render_text
from gpudoctor.snapshot import loads

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "tests" / "fixtures" / "envs"
HEALTHY, OLD_DRIVER = ENVS / "h100-healthy.json", ENVS / "old-driver-new-torch.json"


def env(path: Path):  # type: ignore[no-untyped-def]
    return loads(path.read_text())


def test_same_environment_has_no_difference() -> None:
    d = diff_environments(env(HEALTHY), env(HEALTHY), load_tables())
    assert d.facts == () and d.verdicts == ()
    assert d.compared == len(list(stack_facts(env(HEALTHY))))
    assert not d.verdict_changed


@pytest.mark.slow
def test_old_driver_changes_driver_facts_and_verdicts() -> None:
    a, b = env(HEALTHY), env(OLD_DRIVER)
    d = diff_environments(a, b, load_tables())
    by_name = {c.name: c for c in d.facts}
    assert by_name["driver version"].a == a.nvml.driver_version  # type: ignore[union-attr]
    assert by_name["driver version"].b == b.nvml.driver_version  # type: ignore[union-attr]
    assert by_name["driver version"].layer is Layer.DRIVER
    layers = [c.layer for c in d.facts]
    assert layers == sorted(layers, key=list(Layer).index)  # layer by layer
    changed = {v.check_id: v for v in d.verdicts}
    assert changed["GD103"].a is Status.PASS and changed["GD103"].b is Status.FAIL
    assert b.nvml.driver_version in changed["GD103"].b_message  # type: ignore[union-attr]
    assert d.verdict_changed


def test_host_only_difference_changes_no_verdict() -> None:
    a = env(HEALTHY)
    assert isinstance(a.host, HostFacts)
    b = dataclasses.replace(a, host=dataclasses.replace(
        a.host, hostname="node7", kernel="6.8.0-31-generic",
        env=(*a.host.env, ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"))))
    d = diff_environments(a, b, load_tables())
    assert {c.name: (c.a, c.b) for c in d.facts} == {
        "host name": ("unavailable (not-supported)", "node7"),
        "kernel": (a.host.kernel, "6.8.0-31-generic"),
        "PYTORCH_CUDA_ALLOC_CONF": ("(not set)", "expandable_segments:True")}
    assert d.verdicts == ()
    text = render_text(d, "a.json", "b.json", Console(width=100, color_system=None))
    assert f"kernel: {a.host.kernel}  →  6.8.0-31-generic" in text
    assert "Verdicts that change" not in text


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

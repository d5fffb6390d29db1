"""`gpudoctor.diff`: facts layer by layer and the verdicts that change, on recorded machines
(the `gpudoctor diff` command: tests/fleet/test_diff.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rich.console import Console

from gpudoctor.compat import load_tables
from gpudoctor.diff import diff_environments, shown, stack_facts
from gpudoctor.model import HostFacts, Layer, Reason, Status, Unavailable
from gpudoctor.renderers.diff import render_text
from gpudoctor.snapshot import loads

# the mark these tests had in tests/fleet/test_diff.py (whose CLI tests start gpudoctor)
pytestmark = pytest.mark.subprocess

ENVS = Path(__file__).resolve().parent / "fixtures" / "envs"
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


@pytest.mark.parametrize(("value", "text"), [
    (Unavailable(Reason.TIMEOUT, "NVML did not answer"), "unavailable (timeout)"),
    (None, "(none)"), ("", "(none)"), ((), "(none)"),
    (True, "yes"), (False, "no"), (0, "0"),  # a zero is a value, not "(none)"
    (("sm_80", "sm_90"), "sm_80 sm_90"), ("580.65.06", "580.65.06"),
])
def test_a_fact_is_shown_as_text(value: object, text: str) -> None:
    # new: how each kind of fact reads in the comparison
    assert shown(value) == text

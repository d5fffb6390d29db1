"""torch's cuDNN version is shown as people write it (92000 → 9.20.0, as GD309 and GD311 say it)
wherever a person reads it: `fleet`, `diff`, the CLI (GD405's and GD452's own tests are in
tests/checks/test_pytorch.py and test_smoke.py).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from runner import gpudoctor

import tests.checks.envbuilder as B
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.diff import stack_facts
from gpudoctor.fleet import FACTS, key_facts
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import dumps, to_data
from tests.checks.test_pytorch import with_runtime

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_fleet_and_diff_show_the_version() -> None:
    env = B.env()  # torch's cuDNN 92000
    facts = dict(zip(FACTS, key_facts(to_data(env)), strict=True))
    assert facts["torch cuDNN"] == "9.20.0", facts
    shown = {name: text for _, name, text in stack_facts(env)}
    assert shown["torch's cuDNN"] == "9.20.0", shown
    no_cudnn = with_runtime(env, cudnn_version=None)  # a torch without cuDNN: unchanged
    assert dict(zip(FACTS, key_facts(to_data(no_cudnn)), strict=True))["torch cuDNN"] == "-"


@pytest.mark.slow
def test_fleet_cli_prints_the_version(tmp_path: Path) -> None:
    """`fleet -v` over two reports the real `check --format json` renderer wrote."""
    for name in ("node1", "node2"):
        env = dataclasses.replace(B.env(), host=B.host(hostname=name))
        text = JsonRenderer().render(run_checks(env, load_tables(), REGISTRY))
        (tmp_path / f"{name}.json").write_text(text)
    p = gpudoctor("fleet", str(tmp_path), "-v")
    assert p.returncode in (0, 1), p.stderr
    assert "9.20.0" in p.stdout and "92000" not in p.stdout, p.stdout
    data = json.loads(gpudoctor("fleet", str(tmp_path), "--format", "json").stdout)
    assert {n["facts"]["torch cuDNN"] for n in data["nodes"]} == {"9.20.0"}, data


# --------------------------------------------------------------------------- GD404, no arch list


@pytest.mark.slow
def test_snapshot_through_the_cli(tmp_path: Path) -> None:
    """A saved snapshot with an empty arch list and CUDA available, judged by the real CLI."""
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(with_runtime(B.env(), arch_list=())))
    p = gpudoctor("check", "--from-snapshot", str(snap), "GD404", "GD405", "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    found = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
    assert found["GD404"]["status"] == "skip", found["GD404"]
    assert found["GD404"]["message"].startswith("CUDA is available but torch reported no arch")
    assert found["GD405"]["message"] == "cuDNN 9.20.0 ran a convolution", found["GD405"]

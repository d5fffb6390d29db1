"""torch's cuDNN version is shown as people write it (92000 → 9.20.0, as GD309 and GD311 say it)
wherever a person reads it: GD405, GD452, `fleet`, `diff`, the smoke-test header. And GD404's
reason for skipping on an empty arch list follows what torch said of CUDA.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from runner import gpudoctor

import tests.checks.envbuilder as B
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.checks.smoke import cudnn_text
from gpudoctor.compat import load_tables
from gpudoctor.diff import stack_facts
from gpudoctor.fleet import FACTS, key_facts
from gpudoctor.model import Environment, Finding, Status, TorchFacts, TorchRuntime
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import dumps, to_data
from tests.smoke_kit import finding, report

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

REPO_ROOT = Path(__file__).resolve().parents[2]




def with_runtime(env: Environment, **changes: object) -> Environment:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    rt = dataclasses.replace(env.torch.runtime, **changes)  # type: ignore[arg-type]
    return dataclasses.replace(env, torch=dataclasses.replace(env.torch, runtime=rt))


def judged(env: Environment, check_id: str) -> Finding:
    results = run_checks(env, load_tables(), REGISTRY).results
    return next(r.finding for r in results if r.check_id == check_id)


@pytest.mark.parametrize(("raw", "shown"), [(92000, "9.20.0"), (90100, "9.1.0"),
                                             (8907, "8.9.7")])
def test_gd405_names_cudnn_as_a_version(raw: int, shown: str) -> None:
    f = judged(with_runtime(B.env(), cudnn_version=raw), "GD405")
    assert f.status is Status.PASS, f
    assert f.message == f"cuDNN {shown} ran a convolution", f.message


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


def test_smoke_cudnn_used_names_the_version() -> None:
    f = finding(report(), "smoke-cudnn-used")  # the child said 90100
    assert f.status is Status.PASS, f
    assert f.message.startswith("cuDNN 9.1.0 ran the convolutions"), f.message
    assert cudnn_text(None) == "?"


# --------------------------------------------------------------------------- GD404, no arch list


def test_gd404_empty_arch_list_with_cuda_available() -> None:
    env = with_runtime(B.env(), arch_list=())  # CUDA available, an H100 visible
    f = judged(env, "GD404")
    assert f.status is Status.SKIP, f
    assert f.message.startswith("CUDA is available but torch reported no arch list"), f.message
    assert "GD403" not in f.message and "cannot judge" in f.message


def test_gd404_empty_arch_list_without_cuda_points_at_gd403() -> None:
    env = with_runtime(B.env(), arch_list=(), cuda_available=False,
                       cuda_init_error="RuntimeError: No CUDA GPUs are available")
    f = judged(env, "GD404")
    assert f.status is Status.SKIP, f
    assert "CUDA is not available: see GD403" in f.message, f.message


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

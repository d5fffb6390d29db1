"""`check --require` through the CLI: its usage errors, GPUDOCTOR_REQUIRE, and snapshots old
and new (the parsing: tests/test_requirements.py; the checks GD601-GD607:
tests/checks/test_requirements.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from runner import gpudoctor

from gpudoctor.model import NvmlFacts
from gpudoctor.requirements import parse_requirements
from gpudoctor.snapshot import dumps, loads
from tests.checks.test_requirements import h100, with_cudnn
from tests.ci.cikit import GPU_LESS, H100

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


def test_requirements_round_trip_through_a_snapshot_and_old_ones_load() -> None:
    env = dataclasses.replace(h100(), requirements=parse_requirements(["gpus>=8,arch>=8.0"]))
    assert loads(dumps(env)) == env
    data = json.loads(dumps(h100()))
    del data["environment"]["requirements"]
    assert loads(json.dumps(data)).requirements == ()


# --------------------------------------------------------------------------- the CLI


@pytest.mark.slow
def test_cli_malformed_requirement_is_a_usage_error_naming_it() -> None:
    p = gpudoctor("check", "--from-snapshot", str(H100), "--require", "gpus>=8,vram>=8")
    assert p.returncode == 2, p.stderr
    assert "'vram>=8'" in p.stderr and "Traceback" not in p.stderr
    assert p.stdout == ""


@pytest.mark.slow
def test_cli_requirements_from_the_environment_and_options_fail_with_the_value() -> None:
    env = h100()
    assert isinstance(env.nvml, NvmlFacts)
    n = len(env.nvml.gpus)
    p = gpudoctor("check", "--from-snapshot", str(H100), "--format", "json",
                  "--require", f"gpus>={n + 1}", env={"GPUDOCTOR_REQUIRE": "torch>=1.0 arch>=7.0"})
    assert p.returncode == 1, p.stderr
    found = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
    assert found["GD601"]["status"] == "fail"
    assert found["GD601"]["message"].startswith(f"requirement gpus>={n + 1}: {n} GPU")
    assert found["GD605"]["status"] == "skip"  # the command line wins over the variable
    p = gpudoctor("check", "--from-snapshot", str(H100), "--format", "json",
                  env={"GPUDOCTOR_REQUIRE": "torch>=1.0 arch>=7.0"})
    found = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
    assert found["GD605"]["status"] == "pass" and found["GD606"]["status"] == "pass"
    assert found["GD601"]["status"] == "skip"
    p = gpudoctor("check", "--from-snapshot", str(H100), env={"GPUDOCTOR_REQUIRE": "gpus>=x"})
    assert p.returncode == 2 and "'gpus>=x'" in p.stderr


@pytest.mark.slow
def test_cli_a_selection_still_judges_the_requirements() -> None:
    p = gpudoctor("check", "host", "--from-snapshot", str(GPU_LESS), "--format", "json",
                  "--require", "gpus>=1")
    ids = [f["id"] for f in json.loads(p.stdout)["findings"]]
    assert "GD601" in ids and "GD602" not in ids and "GD101" not in ids
    assert p.returncode == 1


@pytest.mark.slow
def test_cli_a_gpu_less_machine_here_fails_a_gpu_requirement() -> None:
    """This machine, probed for real (no driver here; on a GPU machine, ask for more GPUs
    than any has): the requirement fails with the measured count."""
    p = gpudoctor("check", "requirements", "--require", "gpus>=100000", "--no-torch",
                  "--format", "json")
    assert p.returncode == 1, p.stderr
    found = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
    assert found["GD601"]["status"] == "fail"
    assert found["GD601"]["message"].startswith("requirement gpus>=100000: ")


# --------------------------------------------------------------------------- hostile values
# issue 18, Found 5: a value that is not ASCII digits, or past any real machine, is a usage
# error naming the requirement (it was an internal error, exit 3)


@pytest.mark.slow
@pytest.mark.parametrize(("req", "named"), [
    ("gpus>=²", "'gpus>=²'"), ("gpus>=٣", "'gpus>=٣'"), ("cuda>=١٢", "'cuda>=١٢'"),
    ("gpus>=99999999999999999999", "whole number of GPUs"),
    ("gpu-memory>=" + "9" * 400 + "GiB", "--require 'gpu-memory>="),
    ("gpu-memory>=99999999999999999999GiB", "more memory than any GPU has"),
    ("driver>=" + "9" * 5000, "--require 'driver>=999"),
    ("arch>=sm_99999999999999999999", "not a compute capability"),
    ("torch>=2.4.1234567890", "at most 4 parts of at most 9 digits"),
])
def test_hostile_values_are_usage_errors(req: str, named: str) -> None:
    p = gpudoctor("check", "--from-snapshot", str(H100), "--require", req)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("gpudoctor: error: --require ") and named in p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    assert len(p.stderr) < 400  # a 5000-digit value is named, not echoed whole


@pytest.mark.slow
def test_cudnn_exact_build_through_the_cli(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(with_cudnn(h100(), "9.26.0.51")))
    p = gpudoctor("check", "--from-snapshot", str(snap), "--require", "cudnn==9.26.0.51")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cuDNN 9.26.0.51" in p.stdout
    snap.write_text(dumps(with_cudnn(h100(), None)))
    p = gpudoctor("check", "--from-snapshot", str(snap), "--require", "cudnn==9.26.0.51")
    assert p.returncode == 0, p.stdout + p.stderr

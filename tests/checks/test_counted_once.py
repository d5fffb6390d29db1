"""One cause, counted once: a driver too old for torch's CUDA fails GD103, and GD403 (which sees
`torch.cuda.is_available()` False for that very reason) skips "… see GD103", keeping torch's
reason as evidence. GD403 still fails for every other reason, and when the driver's state is
not known. Judged on the real report corpus and on recorded environments.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.checks.envbuilder import SCENARIOS, not_reported, nvml

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import Environment, HostFacts, LibcudaFacts, Status
from gpudoctor.reports import read_reports

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
INDEX: list[dict[str, Any]] = [
    e for e in tomllib.loads((REPORTS / "index.toml").read_text(encoding="utf-8"))["report"]
    if e.get("recognised", True)]


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def verdicts(env: Environment, tables: Tables) -> dict[str, Any]:
    return {str(r.check_id): r.finding for r in run_checks(env, tables).results}


@pytest.fixture(scope="module")
def corpus(tables: Tables) -> dict[str, dict[str, Any]]:
    return {e["file"]: verdicts(read_reports(
        [(e["file"], (REPORTS / e["file"]).read_text(encoding="utf-8"))]), tables)
        for e in INDEX}


@pytest.mark.slow
def test_no_report_fails_both_gd103_and_gd403(corpus: dict[str, dict[str, Any]]) -> None:
    both = [name for name, got in corpus.items()
            if got["GD103"].status is Status.FAIL and got["GD403"].status is Status.FAIL]
    assert not both, both


@pytest.mark.slow
def test_gd403_points_at_gd103_where_the_driver_is_too_old(
        corpus: dict[str, dict[str, Any]]) -> None:
    too_old = {name: got for name, got in corpus.items()
               if got["GD103"].status is Status.FAIL and got["GD403"].status is Status.SKIP
               and "see GD103" in got["GD403"].message}
    assert too_old, "the corpus holds driver-too-old reports: GD403 must skip on them"
    for name, got in too_old.items():
        f = got["GD403"]
        assert f.message.startswith("torch.cuda.is_available() is False: "), name
        assert got["GD103"].message in f.message, name  # GD103's own words, not a copy
        assert f.fix is None and dict(f.evidence).get("torch.cuda.init()"), name


def test_old_driver_scenario_skips_with_torchs_reason(tables: Tables) -> None:
    got = verdicts(SCENARIOS["old-driver-new-torch"], tables)
    assert got["GD103"].status is Status.FAIL
    f = got["GD403"]
    assert f.status is Status.SKIP and f.message.endswith("see GD103"), f
    assert "too old (found version 12020)" in dict(f.evidence)["torch.cuda.init()"]


def test_new_enough_driver_still_fails_gd403(tables: Tables) -> None:
    """The same machine with a driver that runs torch's CUDA 13.0: GD103 passes, so whatever
    keeps CUDA from torch is GD403's to report."""
    base = SCENARIOS["old-driver-new-torch"]
    env = dataclasses.replace(base, nvml=nvml("580.65.06", 13000, *base.nvml.gpus),  # type: ignore[union-attr]
                              libcuda=LibcudaFacts("libcuda.so.1", 13000, "580.65.06"))
    got = verdicts(env, tables)
    assert got["GD103"].status is Status.PASS
    assert got["GD403"].status is Status.FAIL, got["GD403"]


def test_visible_devices_hiding_every_gpu_still_fails(tables: Tables) -> None:
    """CUDA_VISIBLE_DEVICES="" hides every GPU: its own cause, even beside an old driver."""
    base = SCENARIOS["old-driver-new-torch"]
    assert isinstance(base.host, HostFacts)
    host = dataclasses.replace(base.host, env=(("CUDA_VISIBLE_DEVICES", ""),))
    got = verdicts(dataclasses.replace(base, host=host), tables)
    assert got["GD103"].status is Status.FAIL
    assert got["GD403"].status is Status.FAIL
    assert "CUDA_VISIBLE_DEVICES" in (got["GD403"].fix or "")


def test_unknown_driver_state_still_fails(tables: Tables) -> None:
    """A report without the driver's view: GD103 cannot judge, GD403 fails and asks for it."""
    base = SCENARIOS["old-driver-new-torch"]
    env = dataclasses.replace(base, nvml=not_reported("nvidia-smi"),
                              libcuda=not_reported("libcuda"))
    got = verdicts(env, tables)
    assert got["GD103"].status is Status.SKIP
    assert got["GD403"].status is Status.FAIL and "nvidia-smi" in (got["GD403"].fix or "")

"""Every recorded environment through every check: the verdicts a user would get."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
from gpudoctor.policy import Verdict, exit_code, verdict
from gpudoctor.snapshot import loads

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "envs").glob("*.json"))

# scenario → {check id: expected status}; what is not listed is only required not to crash.
EXPECTED: dict[str, dict[str, Status]] = {
    "h100-healthy": {
        "GD101": Status.PASS, "GD102": Status.PASS, "GD103": Status.PASS, "GD104": Status.PASS,
        "GD201": Status.PASS, "GD202": Status.PASS, "GD203": Status.PASS, "GD401": Status.PASS,
        "GD402": Status.PASS, "GD403": Status.PASS, "GD404": Status.PASS, "GD405": Status.PASS,
        "GD406": Status.PASS, "GD501": Status.PASS, "GD502": Status.PASS, "GD503": Status.PASS,
        "GD504": Status.PASS,
    },
    # one cause, counted once: the driver too old for torch's CUDA (GD103); GD403 skips
    "old-driver-new-torch": {
        "GD101": Status.PASS, "GD103": Status.FAIL, "GD104": Status.PASS, "GD203": Status.WARN,
        "GD403": Status.SKIP,
    },
    "cpu-torch-on-gpu-machine": {
        "GD101": Status.PASS, "GD402": Status.FAIL, "GD403": Status.SKIP, "GD201": Status.SKIP,
    },
    "pascal-gpu-cu130-torch": {"GD404": Status.FAIL, "GD103": Status.PASS},
    "visible-devices-hide-all": {"GD501": Status.FAIL, "GD403": Status.FAIL},
    "visible-devices-bad-index": {"GD501": Status.FAIL},
    # one cause, counted once: the driver (GD101); GD403 skips "(see GD101)"
    "driver-lib-mismatch": {"GD101": Status.FAIL, "GD102": Status.SKIP, "GD403": Status.SKIP},
    "driver-lib-mismatch-versions": {"GD101": Status.FAIL, "GD403": Status.SKIP},
    "no-driver-cuda-torch": {"GD101": Status.FAIL, "GD403": Status.SKIP, "GD502": Status.SKIP},
    "wsl-libcuda-only": {"GD101": Status.PASS, "GD103": Status.PASS, "GD502": Status.PASS},
    "container-no-gpus-flag": {"GD101": Status.FAIL, "GD403": Status.SKIP, "GD502": Status.SKIP,
                               "GD504": Status.WARN},
    # no GPU anywhere: nothing failed or warned that cannot be fixed there, notes only
    "gpu-less-ci-cuda-torch": {"GD101": Status.WARN, "GD402": Status.PASS, "GD403": Status.SKIP,
                               "GD502": Status.SKIP, "GD406": Status.PASS},
    "gpu-less-build-host-cpu-torch": {"GD101": Status.WARN, "GD402": Status.WARN,
                                      "GD403": Status.SKIP},
    "torch-import-crash": {"GD401": Status.FAIL, "GD403": Status.SKIP},
    "lost-gpu": {"GD102": Status.FAIL},
    # recorded with `gpudoctor snapshot` on the CI machine: no driver, the CPU torch 2.13.0
    # wheel, a CUDA 13.0 toolkit assembled from nvidia-* wheels behind an nvcc wrapper script
    "real-ci-no-driver-cpu-torch": {
        "GD101": Status.WARN, "GD201": Status.PASS, "GD202": Status.PASS, "GD401": Status.PASS,
        "GD402": Status.WARN, "GD403": Status.SKIP, "GD502": Status.SKIP,
    },
}


# scenario → the check ids whose WARN is a note (INFO severity): `--strict` lets them pass
NOTES: dict[str, set[str]] = {
    "gpu-less-ci-cuda-torch": {"GD101"},
    "gpu-less-build-host-cpu-torch": {"GD101", "GD402"},
    "real-ci-no-driver-cpu-torch": {"GD101", "GD402"},
}


def test_every_scenario_has_a_fixture() -> None:
    names = {p.stem for p in FIXTURES}
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    env = loads(path.read_text())
    report = run_checks(env, load_tables(), REGISTRY)
    assert len(report.results) == len(REGISTRY)
    got = {r.check_id: r.finding for r in report.results}
    for check_id, status in EXPECTED.get(path.stem, {}).items():
        assert got[check_id].status is status, (check_id, got[check_id])
    for f in got.values():
        assert f.message, f
        if f.status in (Status.FAIL, Status.WARN):
            assert f.fix, f"{f.check_id} says {f.status} without a fix: {f.message}"
    notes = {r.check_id for r in report.results if verdict(r) is Verdict.NOTE}
    assert NOTES.get(path.stem, set()) <= notes, notes
    if path.stem in NOTES:  # a GPU-less machine: exit 0, with --strict too
        assert exit_code(report, strict=True) == 0, [
            (r.check_id, r.finding.message) for r in report.results
            if r.finding.status in (Status.FAIL, Status.WARN) and verdict(r) is not Verdict.NOTE]


def test_fix_names_exact_command() -> None:
    tables = load_tables()
    env = loads((FIXTURES[0].parent / "cpu-torch-on-gpu-machine.json").read_text())
    f = {r.check_id: r.finding for r in run_checks(env, tables).results}["GD402"]
    # driver 550.54.15 runs CUDA 12.x by minor-version compatibility: the newest 12.x variant
    assert f.fix is not None and "--index-url https://download.pytorch.org/whl/cu12" in f.fix
    assert f.fix.startswith("/usr/bin/python3 -m pip install")  # the interpreter diagnosed


def test_old_driver_names_minimum_and_alternative() -> None:
    env = loads((FIXTURES[0].parent / "old-driver-new-torch.json").read_text())
    f = {r.check_id: r.finding for r in run_checks(env, load_tables()).results}["GD103"]
    assert "535.104.05" in f.message and "580.65.06" in f.message
    # the alternative is a wheel the driver runs in full (12.x only by minor-version
    # compatibility, which GD103 would warn about): CUDA ≤ 12.2, the driver's own
    assert f.fix is not None and re.search(r"whl/cu1(1\d|2[0-2])\b", f.fix), f.fix

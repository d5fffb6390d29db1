"""Facts a pasted report lacks (Unavailable(NOT_REPORTED)) make the checks that read them SKIP
with "not in the report": never a crash, never a pass or a failure on a guess."""

from __future__ import annotations

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Reason, Status, Unavailable
from tests.checks.envbuilder import env, gpu, nvml, reported_env, reported_gpu, reported_torch

TABLES = load_tables()
NO_DRIVER_LINE = None  # collect_env's "Nvidia driver version: Could not collect"


def _findings(e: object) -> dict[str, object]:
    report = run_checks(e, TABLES, REGISTRY)  # type: ignore[arg-type]
    return {r.check_id: r.finding for r in report.results}


REPORTS = {
    "gpu-names-only": reported_env(reported_torch("2.8.0+cu126", "12.6"),
                                   reported_gpu("NVIDIA GeForce RTX 4090")),
    "cuda-not-available": reported_env(reported_torch("2.8.0+cu126", "12.6", available=False),
                                       reported_gpu("NVIDIA A100-SXM4-80GB")),
    "no-driver-line": reported_env(reported_torch("2.8.0+cu126", "12.6", available=False),
                                   driver=NO_DRIVER_LINE),
    "cpu-build-no-driver-line": reported_env(reported_torch("2.8.0+cpu", None, available=False),
                                             driver=NO_DRIVER_LINE),
    "unknown-product": reported_env(reported_torch("2.8.0+cu126", "12.6"),
                                    reported_gpu("NVIDIA GeForce RTX 3050")),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_check_runs_on_a_report(name: str) -> None:
    for check_id, f in _findings(REPORTS[name]).items():
        assert f.message, check_id  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_missing_driver_facts_are_never_read_as_no_driver(name: str) -> None:
    found = _findings(REPORTS[name])
    for check_id, f in found.items():
        text = f"{f.message} {f.fix or ''}"  # type: ignore[attr-defined]
        assert "no NVIDIA GPU or driver" not in text, (check_id, text)
        assert "a CI runner" not in text, (check_id, text)


def test_unknown_driver_skips_gd101_and_cpu_build_is_not_passed() -> None:
    found = _findings(REPORTS["cpu-build-no-driver-line"])
    assert found["GD101"].status is Status.SKIP  # type: ignore[attr-defined]
    assert "not in the report" in found["GD101"].message  # type: ignore[attr-defined]
    assert found["GD402"].status is Status.SKIP  # type: ignore[attr-defined]
    assert "not in the report" in found["GD402"].message  # type: ignore[attr-defined]


def test_gd102_evidence_shows_only_what_is_known() -> None:
    e = env(nvml=nvml("550.54.15", 12040, reported_gpu("NVIDIA GeForce RTX 4090"), gpu("H100", 1)))
    f = _findings(e)["GD102"]
    evidence = dict(f.evidence)  # type: ignore[attr-defined]
    assert evidence["GPU 0"] == "NVIDIA GeForce RTX 4090"
    assert "sm_90" in evidence["GPU 1"] and "GiB" in evidence["GPU 1"]


def test_not_reported_is_its_own_reason() -> None:
    u = Unavailable(Reason.NOT_REPORTED, "x is not in the report")
    assert str(u.reason) == "not-reported"

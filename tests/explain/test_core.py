"""Confirming and ranking: which environment is checked, and what each state means."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.version import Version

from gpudoctor.compat import load_tables
from gpudoctor.explain import State, explain
from gpudoctor.explain.core import _diagnose
from gpudoctor.model import CheckId, Environment, Finding, Layer, Result, Severity, Status
from gpudoctor.reports.read import read_reports

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"
TABLES = load_tables()
SM120 = REPORTS / "collect_env-rtx5090d-cu126-sm120-missing.txt"
HEALTHY = REPORTS / "collect_env-a100-80gb-pcie-cu117-ecc-issue.txt"  # GD404 passes
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def report(path: Path) -> tuple[Environment, str]:
    return read_reports([(path.name, path.read_text())]), path.name


def test_a_report_in_the_text_confirms_the_cause_and_names_the_fix() -> None:
    expl = explain(SM120.read_text(), TABLES, probe=None)
    best = expl.diagnoses[0]
    assert best.state is State.CONFIRMED
    assert best.match.signature.id == "torch-arch-not-in-build"
    assert "GD404" in best.why and "sm_120" in best.why
    assert "pip install" in best.fix  # the install line comes from gpudoctor.compat.advice
    assert expl.checked_against.startswith("the report in the text")


def test_from_report_confirms_a_bare_error_and_ranks_confirmed_first() -> None:
    text = NO_KERNEL + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    expl = explain(text, TABLES, report=report(SM120), probe=None)
    states = [(d.match.signature.id, d.state) for d in expl.diagnoses]
    assert states[0] == ("no-kernel-image", State.CONFIRMED)
    assert ("cuda-out-of-memory", State.MATCHED) in states
    assert expl.checked_against == SM120.name


def test_checks_that_pass_mean_not_confirmed() -> None:
    expl = explain(NO_KERNEL, TABLES, report=report(HEALTHY), probe=None)
    (d,) = expl.diagnoses
    assert d.state is State.NOT_CONFIRMED
    assert "GD404" in d.why and "pass" in d.why


def test_without_an_environment_nothing_is_confirmed() -> None:
    expl = explain(NO_KERNEL, TABLES, probe=None)
    (d,) = expl.diagnoses
    assert d.state is State.UNCHECKED
    assert "--no-probe" in expl.checked_against
    assert "gpudoctor recommend" in d.fix  # no machine: no install line is guessed


def test_probe_gathers_only_the_facts_the_confirming_checks_read() -> None:
    asked: list[frozenset[str]] = []

    def probe(fields: frozenset[str]) -> Environment:
        asked.append(fields)
        return report(SM120)[0]

    expl = explain(NO_KERNEL, TABLES, probe=probe)
    assert expl.checked_against == "this machine"
    assert expl.diagnoses[0].state is State.CONFIRMED
    (fields,) = asked
    assert "torch" in fields and "smoke" not in fields


def test_unknown_text_is_not_found_and_probes_nothing() -> None:
    def probe(fields: frozenset[str]) -> Environment:
        raise AssertionError("probed for an unknown text")

    expl = explain("ValueError: too many values to unpack", TABLES, probe=probe)
    assert not expl.found and expl.diagnoses == ()


def test_text_only_signatures_do_not_probe() -> None:
    def probe(fields: frozenset[str]) -> Environment:
        raise AssertionError("probed although no check confirms this error")

    expl = explain("RuntimeError: CUDA error: device-side assert triggered", TABLES, probe=probe)
    assert expl.diagnoses[0].state is State.MATCHED


def test_driver_too_old_against_two_real_reports() -> None:
    text = "RuntimeError: The NVIDIA driver on your system is too old (found version 10000)."
    old = explain(text, TABLES, report=report(
        REPORTS / "collect_env-titanxp-cu101-driver410-too-old.txt"), probe=None).diagnoses[0]
    assert old.state is State.CONFIRMED and "410.48" in old.why
    assert [c.meaning for c in old.match.captures] == ["CUDA 10.0"]
    fine = explain(text, TABLES, report=report(
        REPORTS / "collect_env-rtx4090-cu121-driver535-compat.txt"), probe=None).diagnoses[0]
    assert fine.state is State.NOT_CONFIRMED and "GD103" in fine.why


def _result(cid: str, status: Status, severity: Severity = Severity.ERROR,
            own: Severity | None = None) -> Result:
    return Result(CheckId(cid), "slug", "title", Layer.DRIVER, severity,
                  Finding(status, f"{cid} says so", severity=own))


def _no_driver_match():  # type: ignore[no-untyped-def]
    (m,) = explain("RuntimeError: Found no NVIDIA driver on your system.", TABLES,
                   probe=None).diagnoses
    return m.match


@pytest.mark.parametrize("results", [
    [_result("GD101", Status.SKIP), _result("GD502", Status.SKIP)],
    [_result("GD101", Status.WARN, own=Severity.INFO), _result("GD502", Status.SKIP)],
    [_result("GD101", Status.WARN, severity=Severity.INFO)],
])
def test_a_note_or_a_skip_is_never_evidence_against_a_cause(results: list[Result]) -> None:
    d = _diagnose(_no_driver_match(), {r.check_id: r for r in results}, True, "this machine", "")
    assert d.state is State.UNCHECKED
    assert "does not show" not in d.why and "pass" not in d.why


def test_only_a_pass_is_evidence_against_and_a_fail_confirms() -> None:
    m = _no_driver_match()
    passed = _diagnose(m, {"GD101": _result("GD101", Status.PASS),
                           "GD502": _result("GD502", Status.WARN, own=Severity.INFO)},
                       True, "this machine", "")
    assert passed.state is State.NOT_CONFIRMED and passed.why.startswith("GD101 passes")
    failed = _diagnose(m, {"GD101": _result("GD101", Status.FAIL)}, True, "this machine", "")
    assert failed.state is State.CONFIRMED


def _cuda_of_pick(fix: str) -> str:
    """The CUDA of the torch build an install line names (`torch==1.12.1+cu113`, or a plain
    pin: that release's PyPI default)."""
    m = re.search(r"torch==([\d.]+)(?:\+(cu\d+))?", fix)
    assert m, fix
    rel = TABLES.torch_release(m[1])
    assert rel is not None
    variant = rel.variant(m[2] or rel.pypi_default or "")
    assert variant is not None, fix
    return variant.cuda


@pytest.mark.parametrize("env_report", [None, "collect_env-rtx4090-cu121-driver535-compat.txt"])
def test_driver_too_old_fix_names_a_build_the_stated_driver_runs(env_report: str | None) -> None:
    """"found version 11040": the driver runs CUDA 11.4, so the line must name a build of CUDA
    11.4 or older, whatever the machine checked has (an RTX 4090 with driver 535 here)."""
    text = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
    rep = report(REPORTS / env_report) if env_report else None
    d = explain(text, TABLES, report=rep, probe=None).diagnoses[0]
    assert d.match.signature.id == "driver-too-old-for-torch"
    assert Version(_cuda_of_pick(d.general_fix)) <= Version("11.4")
    assert "11.4" in d.general_fix

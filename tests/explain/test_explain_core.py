"""Confirming and ranking: which environment is checked, and what each state means."""

from __future__ import annotations

from pathlib import Path

from gpudoctor.compat import load_tables
from gpudoctor.explain import State, explain
from gpudoctor.model import Environment
from gpudoctor.reports import read_reports

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

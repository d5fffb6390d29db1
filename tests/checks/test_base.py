"""`gpudoctor.checks.base`: the `check` decorator, `Check` and the Finding constructors."""

from __future__ import annotations

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.checks.base import (
    Check,
    check,
    failed,
    noted,
    passed,
    skipped,
    unavailable_reason,
    warned,
)
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    ENVIRONMENT_FIELDS,
    Environment,
    Finding,
    Layer,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from tests.checks.envbuilder import env

EVIDENCE = (("driver", "580.65.06"),)


def _probe(e: Environment, tables: Tables) -> Finding:
    """The probe check's docs page: it reads the host only
    and always warns.
    """
    return warned("something is off", "do this")


def test_the_decorator_makes_a_check_that_runs_its_function() -> None:
    made = check("GD999", "probe-check", "a probe", Layer.HOST, Severity.WARNING, "host facts",
                 reads=("host",))(_probe)
    assert isinstance(made, Check)
    assert (made.id, made.slug, made.title, made.layer, made.severity, made.needs) == (
        "GD999", "probe-check", "a probe", Layer.HOST, Severity.WARNING, "host facts")
    assert made.reads == frozenset({"host"})
    assert made.doc == ("The probe check's docs page: it reads the host only\n"
                        "    and always warns.")
    assert made.run(env(), load_tables()) == Finding(Status.WARN, "something is off", "do this")


def test_a_check_that_declares_nothing_reads_every_field() -> None:
    made = check("GD999", "probe-check", "a probe", Layer.HOST, Severity.INFO, "all")(_probe)
    assert made.reads == ENVIRONMENT_FIELDS


def test_a_field_the_environment_lacks_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"GD999: \['hots'\] are not Environment fields"):
        check("GD999", "probe-check", "a probe", Layer.HOST, Severity.INFO, "host",
              reads=("host", "hots"))


def test_a_function_without_a_docstring_has_an_empty_doc() -> None:
    def bare(e: Environment, tables: Tables) -> Finding:
        return passed("ok")

    made = check("GD999", "bare", "bare", Layer.HOST, Severity.INFO, "nothing", reads=())(bare)
    assert made.doc == "" and made.reads == frozenset()


@pytest.mark.parametrize(("finding", "status", "fix", "severity"), [
    (passed("all good", EVIDENCE), Status.PASS, None, None),
    (warned("off", "do this", EVIDENCE), Status.WARN, "do this", None),
    (noted("worth knowing", "maybe this", EVIDENCE), Status.WARN, "maybe this", Severity.INFO),
    (failed("broken", "fix that", EVIDENCE), Status.FAIL, "fix that", None),
    (skipped("not here", EVIDENCE), Status.SKIP, None, None),
], ids=["passed", "warned", "noted", "failed", "skipped"])
def test_each_constructor_gives_its_status(finding: Finding, status: Status, fix: str | None,
                                           severity: Severity | None) -> None:
    assert finding.status is status
    assert finding.fix == fix and finding.severity is severity
    assert finding.evidence == EVIDENCE and finding.check_id == ""


def test_a_note_is_shown_at_info_severity_whatever_the_checks_severity() -> None:
    """`noted` is a WARN that the runner reports at INFO (what lets `--strict` pass it);
    `warned` keeps the check's own severity."""
    def note(e: Environment, tables: Tables) -> Finding:
        return noted("worth knowing", None)

    made = [check(f"GD99{i}", f"c{i}", "c", Layer.HOST, Severity.ERROR, "n", reads=())(fn)
            for i, fn in enumerate((note, _probe))]
    results = run_checks(env(), load_tables(), made).results
    assert [(r.check_id, r.severity, r.finding.status) for r in results] == [
        ("GD990", Severity.INFO, Status.WARN), ("GD991", Severity.ERROR, Status.WARN)]


def test_unavailable_reason_quotes_the_facts_message() -> None:
    fact = Unavailable(Reason.NOT_INSTALLED, "libnvidia-ml.so.1 not found")
    assert unavailable_reason("NVML", fact) == "NVML unavailable: libnvidia-ml.so.1 not found"
    assert unavailable_reason("torch", "no module named torch") == (
        "torch unavailable: no module named torch")

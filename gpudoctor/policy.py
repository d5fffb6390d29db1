"""The verdict policy: what a result means to the person reading it and to the exit code.

A check finds PASS, WARN, FAIL or SKIP; its severity (the check's, or the finding's own where
it differs) says how much a WARN weighs. This module is the one place that turns the two into
a verdict, and the verdicts into `--strict` failures and an exit code:

- a FAIL is a failure: exit 1;
- a WARN is a warning; with `--strict` a warning fails too (exit 1);
- a WARN of INFO severity is a note: it informs and never fails, `--strict` or not
  (no driver on a machine that has no GPU, a torch newer than the tables);
- a PASS passes, a SKIP says why the check could not judge.

Renderers only display a verdict (a glyph, a word, a JUnit element); the CLI only exits with
`exit_code`; fleet counts warnings as the policy says, from a report's JSON too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from gpudoctor.exitcodes import ExitCode
from gpudoctor.model import Report, Result, Severity, Status
from gpudoctor.model_base import StrEnum


class Verdict(StrEnum):
    """What a result comes to."""

    PASS = "pass"
    NOTE = "note"
    WARNING = "warning"
    FAILURE = "failure"
    SKIP = "skip"


# how bad a verdict is, for the heading of a group of results (a note weighs as nothing)
_RANK = {Verdict.SKIP: 0, Verdict.PASS: 1, Verdict.WARNING: 2, Verdict.FAILURE: 3}


def verdict_of(status: Status | str, severity: Severity | str | None) -> Verdict:
    """The verdict of a status and the result's (resolved) severity, given as the model's
    enums or as a JSON report writes them ("warn", "info")."""
    status = Status(status)
    if status is Status.FAIL:
        return Verdict.FAILURE
    if status is Status.PASS:
        return Verdict.PASS
    if status is Status.SKIP:
        return Verdict.SKIP
    if isinstance(severity, str):
        severity = Severity[severity.upper()]
    return Verdict.NOTE if severity is Severity.INFO else Verdict.WARNING


def verdict(result: Result) -> Verdict:
    """The verdict of one result (its severity is already resolved: the finding's own, else
    the check's)."""
    return verdict_of(result.finding.status, result.severity)


def fails(result: Result, strict: bool) -> bool:
    """Whether the result makes the run fail: a failure, or with --strict a warning."""
    v = verdict(result)
    return v is Verdict.FAILURE or (strict and v is Verdict.WARNING)


def problems(results: Iterable[Result], strict: bool) -> tuple[Result, ...]:
    """The results that make the exit code 1: the failures first, then (with --strict) the
    warnings."""
    results = tuple(results)
    return (tuple(r for r in results if verdict(r) is Verdict.FAILURE)
            + tuple(r for r in results if strict and verdict(r) is Verdict.WARNING))


def exit_code(report: Report, strict: bool) -> ExitCode:
    """0 no failure; 1 a failure, or with --strict a warning (notes never fail)."""
    return ExitCode.FAILURE if problems(report.results, strict) else ExitCode.OK


def advisory(report: Report) -> Report:
    """The report with each failure turned into a warning: the checks after a completed
    `install-cudnn` advise (the install stands; what they found is for the user to act on)."""
    return replace(report, results=tuple(
        replace(r, finding=replace(r.finding, status=Status.WARN))
        if r.finding.status is Status.FAIL else r for r in report.results))


def failed(results: Iterable[Result]) -> bool:
    """Whether any result is a failure (the smoke test's passed/failed line)."""
    return any(verdict(r) is Verdict.FAILURE for r in results)


def counts(results: Iterable[Result]) -> Counter[Verdict]:
    """How many results come to each verdict."""
    return Counter(verdict(r) for r in results)


def worst(results: Iterable[Result]) -> Verdict:
    """The worst verdict of a group, notes aside (they weigh as nothing); PASS for a group of
    notes alone, or none."""
    return max((v for v in map(verdict, results) if v is not Verdict.NOTE), key=_RANK.__getitem__,
               default=Verdict.PASS)

"""The `Check` type, the `check` decorator and the Finding constructors.

A check is a pure function `(Environment, Tables) -> Finding`: no I/O, no pynvml, no torch,
no rich. Its docstring is its docs page. `Check` lives here, not in the model: its function
reads the compat tables, which sit above the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpudoctor.model import (
    ENVIRONMENT_FIELDS,
    CheckId,
    Environment,
    Finding,
    Layer,
    Severity,
    Status,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

CheckFn = Callable[[Environment, "Tables"], Finding]
Evidence = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Check:
    """One registered check: a pure function of (Environment, Tables)."""

    id: CheckId
    slug: str
    title: str
    layer: Layer
    severity: Severity  # applied to non-pass findings in renderers
    needs: str  # the facts it reads, for `gpudoctor checks`
    run: CheckFn = field(repr=False, compare=False)
    # the Environment fields `run` reads: `probes.collect` runs only the probes of the selected
    # checks (with a hanging torch, `check host` never waits for it)
    reads: frozenset[str] = ENVIRONMENT_FIELDS

    @property
    def doc(self) -> str:
        """The check's docs page: its function's docstring."""
        return (self.run.__doc__ or "").strip()


def check(
    id: str, slug: str, title: str, layer: Layer, severity: Severity, needs: str,
    *, reads: Iterable[str] | None = None,
) -> Callable[[CheckFn], Check]:
    """Turn a check function into a `Check` (the module lists them in its CHECKS tuple).

    `reads`: the Environment fields the function reads, itself or through `gpudoctor.views`
    helpers (e.g. `driver_present` reads nvml and libcuda); only their probes run when just
    this check is selected. None: every field. `tests/checks/test_checks.py` catches a
    field read but not declared.
    """
    read = ENVIRONMENT_FIELDS if reads is None else frozenset(reads)
    if read - ENVIRONMENT_FIELDS:
        raise ValueError(f"{id}: {sorted(read - ENVIRONMENT_FIELDS)} are not Environment fields")

    def wrap(fn: CheckFn) -> Check:
        return Check(CheckId(id), slug, title, layer, severity, needs, fn, read)

    return wrap


def passed(message: str, evidence: Evidence = ()) -> Finding:
    """All good."""
    return Finding(Status.PASS, message, None, evidence)


def warned(message: str, fix: str | None, evidence: Evidence = ()) -> Finding:
    """Works, but something is off."""
    return Finding(Status.WARN, message, fix, evidence)


def noted(message: str, fix: str | None, evidence: Evidence = ()) -> Finding:
    """Worth knowing, nothing to fix here (a WARN of INFO severity: renderers show a note,
    `--strict` lets it pass), e.g. a CUDA build of torch on a machine with no GPU."""
    return Finding(Status.WARN, message, fix, evidence, severity=Severity.INFO)


def failed(message: str, fix: str | None, evidence: Evidence = ()) -> Finding:
    """Broken: the user must act."""
    return Finding(Status.FAIL, message, fix, evidence)


def skipped(message: str, evidence: Evidence = ()) -> Finding:
    """Not applicable here, or an input is unavailable; the message says which."""
    return Finding(Status.SKIP, message, None, evidence)


def unavailable_reason(what: str, fact: object) -> str:
    """'<what> unavailable: <message>' for SKIP findings."""
    return f"{what} unavailable: {getattr(fact, 'message', fact)}"

"""Helpers for writing checks: the `check` decorator and Finding constructors.

A check is a pure function `(Environment, Tables) -> Finding`: no I/O, no pynvml, no torch,
no rich. Its docstring is its docs page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpudoctor.model import Check, CheckId, Environment, Finding, Layer, Severity, Status

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

CheckFn = Callable[[Environment, "Tables"], Finding]
Evidence = tuple[tuple[str, str], ...]


def check(
    id: str, slug: str, title: str, layer: Layer, severity: Severity, needs: str
) -> Callable[[CheckFn], Check]:
    """Turn a check function into a `Check` (the module lists them in its CHECKS tuple)."""

    def wrap(fn: CheckFn) -> Check:
        return Check(CheckId(id), slug, title, layer, severity, needs, fn)

    return wrap


def passed(message: str, evidence: Evidence = ()) -> Finding:
    """All good."""
    return Finding(Status.PASS, message, None, evidence)


def warned(message: str, fix: str | None, evidence: Evidence = ()) -> Finding:
    """Works, but something is off."""
    return Finding(Status.WARN, message, fix, evidence)


def failed(message: str, fix: str | None, evidence: Evidence = ()) -> Finding:
    """Broken: the user must act."""
    return Finding(Status.FAIL, message, fix, evidence)


def skipped(message: str, evidence: Evidence = ()) -> Finding:
    """Not applicable here, or an input is unavailable; the message says which."""
    return Finding(Status.SKIP, message, None, evidence)


def unavailable_reason(what: str, fact: object) -> str:
    """'<what> unavailable: <message>' for SKIP findings."""
    return f"{what} unavailable: {getattr(fact, 'message', fact)}"

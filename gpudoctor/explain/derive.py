"""Diagnoses derived from what a text names, not from a known wording: the grammar.

`derive(text, lowered, tables)` runs every scanner over the (focused) text: error codes by name,
by number in a CUDA context and by the message the library prints (`errcodes`, with the
bindings' spellings of `bindings`); the dynamic loader's failures (`loader`); kernel, NCCL and
container-stack log lines (`logs`); out-of-memory numbers (`oom`); the module tools' failures
and the driver's versions (`kernel`); the compiler chain's refusals (`build`). Each finding is
a Match of a signature made for it (`found.derived`), carrying the cause class the
enumerations give the entity, what it means, and the checks that would confirm it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.explain.build import build_matches
from gpudoctor.explain.errcodes import code_matches
from gpudoctor.explain.found import Match
from gpudoctor.explain.kernel import kernel_matches
from gpudoctor.explain.loader import loader_matches
from gpudoctor.explain.logs import log_matches
from gpudoctor.explain.oom import oom_matches

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


def derive(text: str, lowered: str, tables: Tables) -> list[Match]:
    """Every derived diagnosis of the text (see the module), in the order found."""
    out: list[Match] = []
    out += loader_matches(text, lowered)
    out += log_matches(text, lowered, tables)
    out += oom_matches(text, lowered)
    out += kernel_matches(text, lowered)
    out += build_matches(text, lowered, tables)
    out += code_matches(text, lowered)
    return out

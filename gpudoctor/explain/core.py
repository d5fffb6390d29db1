"""From a pasted error to its cause: match the knowledge base, then confirm on a machine.

`explain(text, ...)` finds every known signature in the text and every entity its grammar
decodes (`match`, `derive`), then runs the checks each one names (`confirm`) against one
environment: a report given with `--from-report`, else the environment facts found in the same
text (a `collect_env` or `nvidia-smi` block, read by `gpudoctor.reports`), else this machine
(the CLI's `probe`, which gathers only the facts those checks read), else none (`--no-probe`).
A diagnosis whose check fails or warns is *confirmed*; whose checks pass is *not confirmed*
(the cause is likely elsewhere); whose checks could not judge (they skipped, or only noted
something) is *unchecked*: a note or a skip is never evidence against a cause. Diagnoses are
ranked: confirmed first, then by the signature's priority (a specific cause before the symptoms
it produces), then by how much of the text they explain; a confirmed symptom (priority below 0)
ranks as unchecked where its own line names a cause that is not refuted.

A fix that installs PyTorch (`{torch_install}`) comes from the compat layer's one advice
function (`gpudoctor.compat.advice`); where the text itself states the driver's CUDA ("driver
too old (found version 11040)"), the advice is for that driver, so the line it prints is a
build the driver can run.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from enum import Enum
from typing import TYPE_CHECKING

from gpudoctor import __version__
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat.advice import install_fix
from gpudoctor.explain.focus import WHOLE
from gpudoctor.explain.found import Match
from gpudoctor.explain.kb import KnowledgeBase, load
from gpudoctor.explain.match import find_matches
from gpudoctor.model import (
    Environment,
    LibcudaFacts,
    NvmlFacts,
    Result,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.interface import not_reported
from gpudoctor.reports.issue_body import find_blocks
from gpudoctor.reports.read import ReportError, read_reports

if TYPE_CHECKING:
    from gpudoctor.checks.base import Check
    from gpudoctor.compat import Tables

REPORT_SCOPE = 256 << 10  # of a large text, this much of its head and end is read for a report
NO_INSTALL_LINE = ("`gpudoctor recommend` prints the install line that fits the machine "
                   "(nothing was probed here)")


class State(str, Enum):
    """How a matched signature stands against the environment checked."""

    CONFIRMED = "confirmed"  # a confirming check fails or warns: this cause applies
    MATCHED = "matched"  # no check can confirm this kind of error: the text alone says it
    UNCHECKED = "unchecked"  # the checks could not judge (facts missing, nothing probed)
    NOT_CONFIRMED = "not-confirmed"  # the confirming checks pass: the cause is likely elsewhere

    def __str__(self) -> str:
        return self.value


_RANK = {State.CONFIRMED: 0, State.MATCHED: 1, State.UNCHECKED: 1, State.NOT_CONFIRMED: 2}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """One matched signature, what it means here, and what to do."""

    match: Match
    state: State
    cause: str  # the signature's cause, its captures filled in
    why: str  # why the state: the failing check's finding, or why nothing could be confirmed
    fix: str  # the confirming check's own fix when confirmed, else the signature's fix
    general_fix: str  # the signature's fix
    results: tuple[Result, ...]  # the confirming checks' results


@dataclass(frozen=True, slots=True)
class Explanation:
    """Every diagnosis, best first, and what they were checked against."""

    diagnoses: tuple[Diagnosis, ...]
    checked_against: str  # "this machine", "the report in the text (…)", "nothing (--no-probe)"

    @property
    def found(self) -> bool:
        """Whether any known error was recognised."""
        return bool(self.diagnoses)


Probe = Callable[[frozenset[str]], Environment]


def explain(text: str, tables: Tables, *, kb: KnowledgeBase | None = None,
            report: tuple[Environment, str] | None = None, probe: Probe | None = None,
            text_name: str = "the pasted text") -> Explanation:
    """The diagnoses of `text` (see the module). `report`: an environment given with its
    description (`--from-report`); `probe`: gathers this machine's facts of the given fields,
    used when neither `report` nor the text states an environment (None: `--no-probe`)."""
    kb = kb or load()
    matches = find_matches(text, kb, tables)
    if not matches:
        return Explanation((), "nothing: no known error in the text")
    checks = _confirming(matches)
    env, where = _environment(text, text_name, report, probe, checks)
    results: dict[str, Result] = {}
    if env is not None and checks:
        results = {r.check_id: r for r in run_checks(env, tables, checks).results}
    diagnoses = [_diagnose(m, results, env is not None, where, _install_line(env, tables, m))
                  for m in matches]
    order = {m.signature.id: i for i, m in enumerate(matches)}
    # a symptom that a check confirms (CUDA does not initialise) is no evidence against the
    # cause its own line names (error 802: the Fabric Manager): it ranks as unchecked
    causes = {d.match.line for d in diagnoses
              if d.match.signature.priority >= 0 and d.state is not State.NOT_CONFIRMED}

    def rank(d: Diagnosis) -> int:
        symptom = d.state is State.CONFIRMED and d.match.signature.priority < 0
        return _RANK[State.UNCHECKED] if symptom and d.match.line in causes else _RANK[d.state]

    diagnoses.sort(key=lambda d: (rank(d), -d.match.signature.priority,
                                  -d.match.specificity, order[d.match.signature.id]))
    return Explanation(tuple(diagnoses), where)


def _confirming(matches: Iterable[Match]) -> tuple[Check, ...]:
    wanted = {cid for m in matches for cid in m.signature.confirm}
    return tuple(c for c in REGISTRY if c.id in wanted)


def _environment(text: str, text_name: str, report: tuple[Environment, str] | None,
                 probe: Probe | None,
                 checks: tuple[Check, ...]) -> tuple[Environment | None, str]:
    if report is not None:
        return report
    # a report block (collect_env, nvidia-smi, a snapshot) states the machine the error came
    # from; the error lines alone do not, and the machine to check is then this one. A large
    # log is searched for one at its head and its end (where an issue body or a script that
    # prints the environment puts it), not through its whole length
    if len(text) > WHOLE:
        text = text[:REPORT_SCOPE] + "\n" + text[-REPORT_SCOPE:]
    if find_blocks(text):
        try:
            env = read_reports([(text_name, text)])
        except ReportError:
            pass
        else:
            return env, f"the report in the text ({'; '.join(env.sources) or text_name})"
    if not checks:
        return None, "nothing: no check confirms these errors"
    if probe is None:
        return None, "nothing: --no-probe"
    fields = frozenset[str]().union(*(c.reads for c in checks))
    return probe(fields), "this machine"


def _install_line(env: Environment | None, tables: Tables, m: Match) -> str:
    if "torch_install" not in _fields(m):
        return ""
    stated = next((c for c in m.captures if c.kind == "cuda-int" and c.raw.isdigit()), None)
    if stated is not None:  # the text states what the driver runs: advise for that driver
        return install_fix(_with_driver_cuda(env, int(stated.raw)), tables)
    return NO_INSTALL_LINE if env is None else install_fix(env, tables)


def _with_driver_cuda(env: Environment | None, cuda: int) -> Environment:
    """`env` (or an environment of nothing else) whose driver runs CUDA `cuda` (11040): what an
    error text states of the driver it ran on, and nothing more."""
    said = "the driver's version is not in the error text (only the CUDA it runs)"
    libcuda = LibcudaFacts("(stated by the error text)", cuda, not_reported(said))
    if env is None:
        gone = not_reported("not in the error text")
        return Environment(__version__, datetime.now(timezone.utc).isoformat(timespec="seconds"),
                           gone, gone, libcuda, gone, gone, gone, sources=("the error text",))
    nvml = env.nvml
    if isinstance(nvml, NvmlFacts):
        nvml = replace(nvml, driver_version=not_reported(said), cuda_driver_version=cuda)
    elif not isinstance(nvml, Unavailable):
        nvml = not_reported(said)
    return replace(env, nvml=nvml, libcuda=libcuda)


def _fields(m: Match) -> set[str]:
    sig = m.signature
    return {name for _, name, _, _ in string.Formatter().parse(sig.cause + sig.fix) if name}


def _fill(template: str, m: Match, install: str) -> str:
    values = {"torch_install": install}
    for c in m.captures:
        values[c.name] = c.raw
        values[f"{c.name}_decoded"] = c.meaning or c.raw
        values[f"{c.name}_action"] = c.action or "see the sources"
    return template.format_map(values)


def _diagnose(m: Match, results: dict[str, Result], have_env: bool, where: str,
              install: str) -> Diagnosis:
    sig = m.signature
    cause, general = _fill(sig.cause, m, install), _fill(sig.fix, m, install)
    own = tuple(results[cid] for cid in sig.confirm if cid in results)
    # a FAIL confirms, else a warning; a note (a WARN of an INFO check) does not
    failing = [r for r in own if r.finding.status is Status.FAIL] or [
        r for r in own if r.finding.status is Status.WARN
        and (r.finding.severity or r.severity) is not Severity.INFO]
    passed = [r for r in own if r.finding.status is Status.PASS]
    if not sig.confirm:
        state = State.MATCHED
        why = "no check can confirm this kind of error on a machine: the text alone says it"
    elif failing:
        r = failing[0]
        state = State.CONFIRMED
        why = f"{r.check_id} {r.title} on {where}: {r.finding.message}"
        return Diagnosis(m, state, cause, why, r.finding.fix or general, general, own)
    elif not have_env:
        state, why = State.UNCHECKED, f"not checked ({where})"
    elif passed:
        state = State.NOT_CONFIRMED  # a check that judged it passed: evidence against
        names = ", ".join(r.check_id for r in passed)
        why = (f"{names} pass{'es' if len(passed) == 1 else ''} on {where}: this cause does not "
               "show there (was the error raised on another machine or in another "
               "environment?)")
    else:  # every check skipped or only noted something: no evidence either way
        state = State.UNCHECKED
        skipped = "; ".join(f"{r.check_id} {r.finding.status.value}: {r.finding.message}"
                            for r in own) or where
        why = f"{where} could not confirm it ({skipped})"
    return Diagnosis(m, state, cause, why, general, general, own)

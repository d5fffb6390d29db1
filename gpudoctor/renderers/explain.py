"""`gpudoctor explain` as text, JSON or Markdown.

Every string that came from the pasted text (the matched excerpt, the captured values) is shown
with its control characters escaped, as everywhere else, and after a label of gpudoctor's own
(`matched`, `decoded:`, `·`): the rule of `gpudoctor.renderers.console` (no string from
outside begins a line; a wrapped line goes on behind `┆`). The fix line never wraps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from gpudoctor import __version__, schemas
from gpudoctor.renderers.console import Line, print_lines
from gpudoctor.renderers.interface import clean, finding_dict
from gpudoctor.renderers.json import dumps
from gpudoctor.renderers.markdown import cell, code

if TYPE_CHECKING:
    from rich.console import Console

    from gpudoctor.explain import Diagnosis, Explanation

_STYLE = {"confirmed": "bold red", "matched": "yellow", "unchecked": "yellow",
          "not-confirmed": "dim"}
_LABEL = {"confirmed": "confirmed", "matched": "matched", "unchecked": "unchecked",
          "not-confirmed": "not confirmed"}
UNKNOWN = ("no known error found in the text: gpudoctor's knowledge base does not hold it. "
           "Run `gpudoctor check` to check every layer of this machine.")


def summary(expl: Explanation) -> str:
    """The one line for stderr: how many known errors, how many confirmed, against what."""
    if not expl.found:
        return "gpudoctor: no known error in the text; run `gpudoctor check`"
    n = len(expl.diagnoses)
    confirmed = sum(1 for d in expl.diagnoses if d.state.value == "confirmed")
    return (f"gpudoctor: {n} known error{'s' if n != 1 else ''}, {confirmed} confirmed "
            f"(checked against {expl.checked_against})")


def explain_text(expl: Explanation, console: Console, verbose: bool = False) -> str:
    """The diagnoses, best first: state, signature, the matched text, decoded numbers, cause,
    why, and the fix on a line of its own; `verbose` adds the checks' evidence and sources."""
    if not expl.found:
        return print_lines(console, [Text(UNKNOWN)])
    lines: list[Line | Text] = [Text.assemble(("checked against: ", "bold"),
                                              clean(expl.checked_against))]
    for i, d in enumerate(expl.diagnoses, 1):
        lines.append(Text(""))
        lines += _diagnosis_lines(i, d, verbose)
    return print_lines(console, lines)


def _diagnosis_lines(i: int, d: Diagnosis, verbose: bool) -> list[Line | Text]:
    sig, state = d.match.signature, d.state.value
    lines: list[Line | Text] = [Text.assemble(
        f"{i}. ", (f"[{_LABEL[state]}] ", _STYLE[state]), (sig.title, "bold"), " ",
        (f"({sig.id})", "dim"))]
    excerpt = clean(d.match.excerpt)
    lines.append(Text.assemble("   ", ("matched", "dim"), f" (line {d.match.line}): ", excerpt))
    lines += [Text.assemble("   ", ("decoded: ", "dim"), clean(f"{c.raw} → {c.meaning}"))
              for c in d.match.captures if c.meaning]
    lines.append(Text.assemble("   ", ("cause: ", "bold"), clean(d.cause)))
    lines.append(Text.assemble("   ", ("why: ", "bold"), clean(d.why)))
    # one line: a fix is written so, and a line break in it came from a report (a path)
    lines.append((Text.assemble("   ", ("→ fix: ", "bold"), clean(d.fix)), False))
    if verbose:
        if d.fix != d.general_fix:
            lines.append((Text.assemble("   ", ("  or: ", "dim"), clean(d.general_fix)), False))
        for r in d.results:
            lines.append((Text(clean(f"   · {r.check_id} {r.finding.status.value}: "
                                     f"{r.finding.message}"), style="dim"), True))
            lines += [(Text(clean(f"       · {k}: {v}"), style="dim"), True)
                      for k, v in r.finding.evidence]
        lines += [(Text(f"   source: {url}", style="dim"), False) for url in sig.sources]
    return lines


def _diagnosis_dict(d: Diagnosis) -> dict[str, Any]:
    sig = d.match.signature
    return {
        "id": sig.id,
        "title": sig.title,
        "family": sig.family,
        "cause_class": sig.cause_class,
        "state": d.state.value,
        "line": d.match.line,
        "matched": d.match.excerpt,
        "decoded": [{"name": c.name, "kind": c.kind, "value": c.raw, "meaning": c.meaning}
                    for c in d.match.captures],
        "cause": d.cause,
        "why": d.why,
        "fix": d.fix,
        "general_fix": d.general_fix,
        "checks": [finding_dict(r) for r in d.results],
        "sources": list(sig.sources),
    }


def explain_json(expl: Explanation) -> str:
    """The explanation as JSON: every diagnosis, best first, with the confirming checks'
    findings in the same shape as `check --format json`."""
    return dumps({
        "schema_version": schemas.version(schemas.EXPLAIN),
        "gpudoctor_version": __version__,
        "command": "explain",
        "found": expl.found,
        "checked_against": expl.checked_against,
        "diagnoses": [_diagnosis_dict(d) for d in expl.diagnoses],
        "note": None if expl.found else UNKNOWN,
    })


def explain_markdown(expl: Explanation) -> str:
    """The explanation as Markdown, for a bug report or an issue reply."""
    lines = [f"## gpudoctor {__version__} explain", ""]
    if not expl.found:
        return "\n".join([*lines, cell(UNKNOWN), ""])
    lines += [f"Checked against: {cell(expl.checked_against)}", ""]
    for i, d in enumerate(expl.diagnoses, 1):
        sig = d.match.signature
        lines += [f"### {i}. {cell(sig.title)} (`{sig.id}`): {_LABEL[d.state.value]}", ""]
        lines.append(f"- **matched** (line {d.match.line}): {code(d.match.excerpt)}")
        lines += [f"- {code(c.raw)} → {cell(c.meaning)}" for c in d.match.captures
                  if c.meaning]
        lines += [f"- **cause**: {cell(d.cause)}", f"- **why**: {cell(d.why)}",
                  f"- **fix**: {cell(d.fix)}"]
        lines.append("- **sources**: " + ", ".join(sig.sources))  # the knowledge base's own
        lines.append("")
    return "\n".join(lines)


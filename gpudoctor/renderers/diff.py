"""`gpudoctor diff`: the facts that differ, layer by layer, and the verdicts that change; as
text (rich), JSON or Markdown.

A fact's name can come from a report (an environment variable, a wheel, a cuDNN directory), so
each fact line starts with `·`: the rule of `gpudoctor.renderers.console`, no string from
outside begins a line."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from gpudoctor import __version__, schemas
from gpudoctor.diff import Diff, FactChange
from gpudoctor.model import Layer, Status
from gpudoctor.renderers.console import SYMBOLS, Line, print_lines
from gpudoctor.renderers.interface import clean, tally
from gpudoctor.renderers.json import dumps
from gpudoctor.renderers.markdown import cell


def summary(d: Diff) -> str:
    """'3 facts differ, 1 verdict changes' (the stderr line and the reports' last line)."""
    n, v = len(d.facts), len(d.verdicts)
    return (f"{n} fact{'s' if n != 1 else ''} differ{'s' if n == 1 else ''} "
            f"(of {d.compared}), {v} verdict{'s' if v != 1 else ''} "
            f"change{'s' if v == 1 else ''}")


def _by_layer(d: Diff) -> list[tuple[Layer, list[FactChange]]]:
    return [(layer, [c for c in d.facts if c.layer is layer]) for layer in Layer
            if any(c.layer is layer for c in d.facts)]


def render_text(d: Diff, a: str, b: str, console: Console) -> str:
    """The differences for `console`: one block per layer, `name: A → B`, then the verdicts."""
    out: list[Line] = [(Text.assemble(("A ", "bold"), clean(a)), False),
                       (Text.assemble(("B ", "bold"), clean(b)), False), (Text(""), False)]
    if not d.facts:
        out.append((Text("no fact differs"), True))
    for layer, changes in _by_layer(d):
        out.append((Text(layer.heading, style="bold"), False))
        out += [(Text.assemble("    · ", (clean(c.name), "bold"), ": ", clean(c.a),
                               ("  →  ", "cyan"), clean(c.b)), True) for c in changes]
        out.append((Text(""), False))
    if d.verdicts:
        out.append((Text("Verdicts that change", style="bold"), False))
        for v in d.verdicts:
            (sa, ca), (sb, cb) = SYMBOLS[v.a], SYMBOLS[v.b]
            out.append((Text.assemble("    ", (sa, ca), (" → ", "cyan"), (sb, cb), " ",
                                      (v.check_id, "dim"), " ", clean(v.title)), True))
            out.append((Text(f"      A: {clean(v.a_message)}"), True))
            out.append((Text(f"      B: {clean(v.b_message)}"), True))
        out.append((Text(""), False))
    out.append((Text(f"A: {tally(d.a_report)}; B: {tally(d.b_report)}", style="dim"), True))
    return print_lines(console, out)


def to_dict(d: Diff, a: str, b: str) -> dict[str, Any]:
    """The diff as JSON-ready data, in a stable key order."""
    return {
        "schema_version": schemas.version(schemas.DIFF),
        "gpudoctor_version": __version__,
        "command": "diff",
        "a": a,
        "b": b,
        "summary": {"facts_compared": d.compared, "facts_differ": len(d.facts),
                    "verdicts_changed": len(d.verdicts),
                    "a": {s.value: d.a_report.count(s) for s in Status},
                    "b": {s.value: d.b_report.count(s) for s in Status}},
        "facts": [{"layer": c.layer.value, "fact": c.name, "a": c.a, "b": c.b}
                  for c in d.facts],
        "verdicts": [{"id": v.check_id, "slug": v.slug, "title": v.title,
                      "layer": v.layer.value,
                      "a": {"status": v.a.value, "message": v.a_message},
                      "b": {"status": v.b.value, "message": v.b_message}}
                     for v in d.verdicts],
    }


def render_json(d: Diff, a: str, b: str) -> str:
    """The diff as JSON text."""
    return dumps(to_dict(d, a, b))


_MARK = {"pass": "✅", "warn": "⚠️", "fail": "❌", "skip": "➖"}


def render_markdown(d: Diff, a: str, b: str) -> str:
    """The diff as Markdown: one table per layer, then the verdicts."""
    lines = [f"## gpudoctor {__version__} diff", "", f"- **A**: {cell(a)}", f"- **B**: {cell(b)}"]
    for layer, changes in _by_layer(d):
        lines += ["", f"### {layer.heading}", "", "| fact | A | B |", "|---|---|---|"]
        lines += [f"| {cell(c.name)} | {cell(c.a)} | {cell(c.b)} |" for c in changes]
    if d.verdicts:
        lines += ["", "### Verdicts that change", "", "| check | A | B |", "|---|---|---|"]
        lines += [f"| `{v.check_id}` {cell(v.title)} | {_MARK[v.a.value]} {cell(v.a_message)} | "
                  f"{_MARK[v.b.value]} {cell(v.b_message)} |" for v in d.verdicts]
    lines += ["", f"**{summary(d)}**", ""]
    return "\n".join(lines)

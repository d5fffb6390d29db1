"""`gpudoctor fleet`: the majority of each fact, the nodes that deviate or fail, named; as text
(rich), JSON or Markdown. The full nodes × facts table comes with `-v` in text, always in JSON,
and folded in Markdown."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpudoctor import __version__
from gpudoctor.fleet import FACTS, Fleet
from gpudoctor.model import SCHEMA_VERSION, Status
from gpudoctor.renderers.console import SYMBOLS, Line, print_lines
from gpudoctor.renderers.interface import clean
from gpudoctor.renderers.json import dumps
from gpudoctor.renderers.markdown import cell


def summary(f: Fleet) -> str:
    """'1000 nodes: 3 failing, 5 deviating, 2 unreadable'."""
    n = len(f.nodes)
    parts = [f"{len(f.failing)} failing", f"{len(f.deviating)} deviating"]
    if f.unreadable:
        parts.append(f"{len(f.unreadable)} unreadable")
    return f"{n} node{'s' if n != 1 else ''}: " + ", ".join(parts)


def render_text(f: Fleet, console: Console, verbose: bool = False) -> str:
    """The view for `console`: each fact's majority and deviants, then failing and unreadable
    reports; with `verbose` first the nodes × facts table."""
    head = ""
    if verbose and f.nodes:
        with console.capture() as cap:
            console.print(_table(f), markup=False, highlight=False, emoji=False)
        head = "".join(line.rstrip(" ") + "\n" for line in cap.get().splitlines()) + "\n"
    total = len(f.nodes)
    width = max(len(s.fact) for s in f.facts) + 2 if f.facts else 0
    out: list[Line] = []
    for s in f.facts:
        out.append((Text.assemble((s.fact.ljust(width), "bold"), clean(s.majority),
                                  (f"  ({s.count} of {total})", "dim")), True))
        for value, names in s.deviants:
            out.append((Text.assemble(" " * width, ("≠ ", "yellow"), clean(value), ": ",
                                      clean(", ".join(names))), True))
    sym, style = SYMBOLS[Status.FAIL]
    if f.failing:
        out += [(Text(""), False), (Text("Failing nodes", style="bold"), False)]
        out += [(Text.assemble("    ", (sym, style), " ", clean(n.name), ": ",
                               (" ".join(n.failed), "bold")), True) for n in f.failing]
    if f.unreadable:
        out += [(Text(""), False), (Text("Unreadable reports", style="bold"), False)]
        out += [(Text.assemble("    ", (sym, style), " ", clean(u.path), ": ", clean(u.reason)),
                 True) for u in f.unreadable]
    out += [(Text(""), False), (Text(summary(f), style="bold"), True)]
    return head + print_lines(console, out)


def _table(f: Fleet) -> Table:
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for name in ("node", *FACTS, "failing"):
        table.add_column(name, no_wrap=True)
    majority = {s.fact: s.majority for s in f.facts}
    for n in f.nodes:
        cells = [Text(clean(v), style="" if v == majority.get(k) else "yellow")
                 for k, v in zip(FACTS, n.facts, strict=True)]
        table.add_row(Text(clean(n.name)), *cells, Text(" ".join(n.failed), style="red"))
    return table


def to_dict(f: Fleet) -> dict[str, Any]:
    """The view as JSON-ready data, in a stable key order."""
    return {
        "schema_version": SCHEMA_VERSION,
        "gpudoctor_version": __version__,
        "command": "fleet",
        "summary": {"nodes": len(f.nodes), "failing": len(f.failing),
                    "deviating": len(f.deviating), "unreadable": len(f.unreadable)},
        "facts": [{"fact": s.fact, "majority": s.majority, "count": s.count,
                   "deviants": [{"value": v, "nodes": list(ns)} for v, ns in s.deviants]}
                  for s in f.facts],
        "failing": [{"node": n.name, "path": n.path, "checks": list(n.failed)}
                    for n in f.failing],
        "unreadable": [{"path": u.path, "reason": u.reason} for u in f.unreadable],
        "nodes": [{"node": n.name, "path": n.path,
                   "facts": dict(zip(FACTS, n.facts, strict=True)),
                   "failed": list(n.failed), "warned": list(n.warned)} for n in f.nodes],
    }


def render_json(f: Fleet) -> str:
    """The view as JSON text."""
    return dumps(to_dict(f))


def render_markdown(f: Fleet) -> str:
    """The view as Markdown: the facts table, failing nodes, unreadable reports, and the
    nodes × facts table folded in a <details> block."""
    total = len(f.nodes)
    lines = [f"## gpudoctor {__version__} fleet: {cell(summary(f))}", "",
             "| fact | majority | nodes | deviating |", "|---|---|---|---|"]
    for s in f.facts:
        dev = "<br>".join(f"{cell(v)}: {cell(', '.join(ns))}" for v, ns in s.deviants)
        lines.append(f"| {cell(s.fact)} | {cell(s.majority)} | {s.count}/{total} | {dev} |")
    if f.failing:
        lines += ["", "### Failing nodes", "", "| node | failing checks |", "|---|---|"]
        lines += [f"| {cell(n.name)} | {cell(' '.join(n.failed))} |" for n in f.failing]
    if f.unreadable:
        lines += ["", "### Unreadable reports", ""]
        lines += [f"- `{cell(u.path)}`: {cell(u.reason)}" for u in f.unreadable]
    if f.nodes:
        lines += ["", "<details><summary>every node</summary>", "",
                  "| node | " + " | ".join(FACTS) + " | failing |",
                  "|---" * (len(FACTS) + 2) + "|"]
        lines += [f"| {cell(n.name)} | " + " | ".join(cell(v) for v in n.facts)
                  + f" | {cell(' '.join(n.failed))} |" for n in f.nodes]
        lines += ["", "</details>"]
    lines.append("")
    return "\n".join(lines)

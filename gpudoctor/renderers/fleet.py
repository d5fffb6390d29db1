"""`gpudoctor fleet`: the majority of each fact, the nodes that deviate or fail, named; as text
(rich), JSON or Markdown. The full nodes × facts table comes with `-v` in text, always in JSON,
and folded in Markdown.

Node names, paths and facts come from the reports read; the text follows the rule of
`gpudoctor.renderers.console` (no string from outside begins a line): each row of the nodes ×
facts table starts with the node's status glyph (✗ failing, ≠ deviating, ✓), and no cell
wraps."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from gpudoctor import __version__, schemas
from gpudoctor.fleet import FACTS, Fleet
from gpudoctor.model import Status
from gpudoctor.renderers.console import SYMBOLS, Line, print_lines
from gpudoctor.renderers.interface import clean
from gpudoctor.renderers.json import dumps
from gpudoctor.renderers.markdown import cell, code


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
        head = print_lines(console, [(line, False) for line in _table(f)]) + "\n"
    total = len(f.nodes)
    width = max(len(s.fact) for s in f.summaries) + 2 if f.summaries else 0
    out: list[Line] = []
    for s in f.summaries:
        out.append((Text.assemble((s.fact.ljust(width), "bold"), clean(s.majority),
                                  (f"  ({s.count} of {total})", "dim")), True))
        for value, names in s.deviants:
            out.append((Text.assemble(" " * width, ("≠ ", "yellow"), clean(value), ": ",
                                      clean(", ".join(names))), True))
    sym, style = SYMBOLS[Status.FAIL]
    if f.failing:
        out += [(Text(""), False), (Text("Failing nodes", style="bold"), False)]
        out += [(Text.assemble("    ", (sym, style), " ", clean(n.name), ": ",
                               (clean(" ".join(n.failed)), "bold")), True) for n in f.failing]
    if f.unreadable:
        out += [(Text(""), False), (Text("Unreadable reports", style="bold"), False)]
        out += [(Text.assemble("    ", (sym, style), " ", clean(u.path), ": ", clean(u.reason)),
                 True) for u in f.unreadable]
    out += [(Text(""), False), (Text(summary(f), style="bold"), True)]
    return head + print_lines(console, out)


CELL = 40  # columns a cell of the nodes × facts table shows at most ("…" marks a cut)


def _table(f: Fleet) -> list[Text]:
    """The nodes × facts table, one line a node, each starting with its status glyph (✗
    failing, ≠ deviating, ✓); every column as wide as its widest cell (at most CELL), so no
    column is ever dropped or wrapped, whatever the console's width."""
    majority = {s.fact: s.majority for s in f.summaries}
    deviating = set(f.deviating)
    rows = [[Text(""), *(Text(h, style="bold") for h in ("node", *FACTS, "failing"))]]
    for n in f.nodes:
        sym, style = (SYMBOLS[Status.FAIL] if n.failed else ("≠", "yellow")
                      if n.name in deviating else SYMBOLS[Status.PASS])
        rows.append([Text(sym, style=style), Text(clean(n.name)),
                     *(Text(clean(v), style="" if v == majority.get(k) else "yellow")
                       for k, v in zip(FACTS, n.key_facts, strict=True)),
                     Text(clean(" ".join(n.failed)), style="red")])
    for row in rows:
        for item in row:
            item.truncate(CELL, overflow="ellipsis")
    widths = [max(row[i].cell_len for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        line = Text()
        for item, width in zip(row, widths, strict=True):
            line.append_text(item)
            line.append(" " * (width - item.cell_len + 2))
        line.rstrip()
        lines.append(line)
    return lines


def to_dict(f: Fleet) -> dict[str, Any]:
    """The view as JSON-ready data, in a stable key order."""
    return {
        "schema_version": schemas.version(schemas.FLEET),
        "gpudoctor_version": __version__,
        "command": "fleet",
        "summary": {"nodes": len(f.nodes), "failing": len(f.failing),
                    "deviating": len(f.deviating), "unreadable": len(f.unreadable)},
        "facts": [{"fact": s.fact, "majority": s.majority, "count": s.count,
                   "deviants": [{"value": v, "nodes": list(ns)} for v, ns in s.deviants]}
                  for s in f.summaries],
        "failing": [{"node": n.name, "path": n.path, "checks": list(n.failed)}
                    for n in f.failing],
        "unreadable": [{"path": u.path, "reason": u.reason} for u in f.unreadable],
        "nodes": [{"node": n.name, "path": n.path,
                   "facts": dict(zip(FACTS, n.key_facts, strict=True)),
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
    for s in f.summaries:
        dev = "<br>".join(f"{cell(v)}: {cell(', '.join(ns))}" for v, ns in s.deviants)
        lines.append(f"| {cell(s.fact)} | {cell(s.majority)} | {s.count}/{total} | {dev} |")
    if f.failing:
        lines += ["", "### Failing nodes", "", "| node | failing checks |", "|---|---|"]
        lines += [f"| {cell(n.name)} | {cell(' '.join(n.failed))} |" for n in f.failing]
    if f.unreadable:
        lines += ["", "### Unreadable reports", ""]
        lines += [f"- {code(u.path)}: {cell(u.reason)}" for u in f.unreadable]
    if f.nodes:
        lines += ["", "<details><summary>every node</summary>", "",
                  "| node | " + " | ".join(FACTS) + " | failing |",
                  "|---" * (len(FACTS) + 2) + "|"]
        lines += [f"| {cell(n.name)} | " + " | ".join(cell(v) for v in n.key_facts)
                  + f" | {cell(' '.join(n.failed))} |" for n in f.nodes]
        lines += ["", "</details>"]
    lines.append("")
    return "\n".join(lines)

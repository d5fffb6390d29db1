"""The check catalogue: `gpudoctor checks` (a table, JSON), one check's page
(`gpudoctor checks GD404`), and docs/checks.md (Markdown, one anchored section per check).

A check's docstring is its documentation: what it checks and why it matters, then, where the
docstring has them, `Fix:` and `Sources:` paragraphs.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from gpudoctor.renderers.interface import DOCS_PATH, docs_url
from gpudoctor.renderers.json import dumps

GENERATED = ("<!-- generated from gpudoctor's check registry by "
             "`gpudoctor checks --format markdown -o docs/checks.md`; do not edit by hand -->")


@dataclass(frozen=True, slots=True)
class CheckDoc:
    """What the catalogue shows of one check."""

    id: str
    slug: str
    title: str
    layer: str  # the heading the report groups it under: "Driver & GPUs"
    severity: str  # "error", "warning", "info"
    needs: str  # the facts it reads
    doc: str  # its docstring


def _paragraphs(doc: str) -> list[str]:
    """The docstring's paragraphs, each joined onto one line."""
    text = inspect.cleandoc(doc)
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def catalog_text(docs: tuple[CheckDoc, ...]) -> str:
    """A table: id, slug, layer, title; no padding after the last column."""
    rows = [("id", "slug", "layer", "title")] + [(d.id, d.slug, d.layer, d.title) for d in docs]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3]
             for r in rows]
    lines.append("")
    lines.append("`gpudoctor checks ID` prints a check's documentation; "
                 f"all of them: {DOCS_PATH}")
    return "\n".join(lines) + "\n"


def catalog_json(docs: tuple[CheckDoc, ...]) -> str:
    """Every check as a JSON object, its docstring and docs link included."""
    return dumps([{"id": d.id, "slug": d.slug, "title": d.title, "layer": d.layer,
                   "severity": d.severity, "needs": d.needs, "doc": inspect.cleandoc(d.doc),
                   "docs_url": docs_url(d.id)} for d in docs])


def check_page(d: CheckDoc) -> str:
    """One check's documentation as text, paragraphs unwrapped (the terminal wraps them)."""
    lines = [f"{d.id} {d.slug}: {d.title}",
             f"layer: {d.layer}; severity: {d.severity}; reads: {d.needs}", ""]
    for p in _paragraphs(d.doc):
        lines += [p, ""]
    lines.append(f"docs: {docs_url(d.id)}")
    return "\n".join(lines) + "\n"


def catalog_markdown(docs: tuple[CheckDoc, ...]) -> str:
    """docs/checks.md: an index table, then one section per check anchored at its id in lower
    case (`docs/checks.md#gd404`, the findings' `docs_url`)."""
    lines = [GENERATED, "", "# gpudoctor checks", "",
             "Each check is a pure function of the facts gpudoctor gathered; its docstring is "
             "this page. `gpudoctor checks ID` prints one section in a terminal.", "",
             "| id | slug | layer | title |", "| --- | --- | --- | --- |"]
    lines += [f"| [{d.id}](#{d.id.lower()}) | `{d.slug}` | {d.layer} | {_md(d.title)} |"
              for d in docs]
    for d in docs:
        lines += ["", f'<a id="{d.id.lower()}"></a>', "", f"## {d.id} `{d.slug}`", "",
                  f"**{_md(d.title)}** — layer: {d.layer}; severity: {d.severity}; "
                  f"reads: {_md(d.needs)}", ""]
        for p in _paragraphs(d.doc):
            lines += [p, ""]
        lines.pop()
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")

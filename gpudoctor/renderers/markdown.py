"""Markdown, for pasting into a bug report, and GitHub's job summary (`renderers.github`).

Every string from outside (a snapshot, a pasted report, a file name) goes through `cell` (or
`code` inside a code span), which escapes what Markdown and HTML would act on: `&`, `<`, `>`
become entities, so no tag (`<img src=…>`, `<details>`, `<!--` hiding the rest) and no
autolink in angle brackets is made; the punctuation that opens emphasis, links, images, code,
tables, headings, lists or strikethrough gets a backslash; a line break becomes `<br>`, the
only HTML in a cell, gpudoctor's own. What the reader sees is the string, character for
character.
"""

from __future__ import annotations

import re

from gpudoctor import __version__
from gpudoctor.model import Layer, Report
from gpudoctor.policy import Verdict, verdict
from gpudoctor.renderers.interface import DOCS_PATH, clean, cuda_versions, tally

_MARK = {Verdict.PASS: "✅", Verdict.NOTE: "ℹ️", Verdict.WARNING: "⚠️", Verdict.FAILURE: "❌",
         Verdict.SKIP: "➖"}


# the ASCII punctuation that opens Markdown inside a line (CommonMark lets a backslash escape
# any of it): emphasis, code, links and images (`(` after an escaped `]` opens nothing),
# tables, strikethrough, math (`$`). What acts only at a line's start (`#`, `-`, `+`, `1.`)
# never reaches one: a cell always follows text of gpudoctor's own.
_MARKDOWN = re.compile(r"([\\`*_\[\]!|~$])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def cell(text: str) -> str:
    """`text` shown as it is in Markdown text or a table cell: control characters escaped,
    HTML's `& < >` as entities, Markdown's punctuation backslash-escaped, a line break as
    `<br>`."""
    text = clean(text, newlines=True)
    text = "".join(_HTML.get(c, c) for c in text) if any(c in text for c in "&<>") else text
    return _MARKDOWN.sub(r"\\\1", text).replace("\n", "<br>")


def code(text: str, table: bool = False) -> str:
    """`text` as a code span, whole: a fence of more backticks than any run in it, control
    characters and line breaks escaped; in a table cell `|` escaped too (GFM splits the row
    first)."""
    text = clean(text)
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class MarkdownRenderer:
    """A heading, the three CUDA versions, one table per layer, the tally."""

    def render(self, report: Report) -> str:
        """The report as Markdown."""
        lines = [f"## gpudoctor {__version__} report", ""]
        lines += [f"- **{label}**: {cell(value)}" for label, value in
                  cuda_versions(report.environment)]
        for layer in Layer:
            results = [r for r in report.results if r.layer is layer]
            if not results:
                continue
            lines += ["", f"### {layer.heading}", "", "| | check | finding | fix |",
                      "|---|---|---|---|"]
            for r in results:
                mark = _MARK[verdict(r)]
                lines.append(
                    f"| {mark} | `{r.check_id}` {cell(r.title)} | {cell(r.finding.message)} | "
                    f"{cell(r.finding.fix or '')} |"
                )
        lines += ["", f"**{tally(report)}**", ""]
        lines += [f"_{cell(n)}_" for n in report.notes]
        lines += [f"Each check is documented in gpudoctor's `{DOCS_PATH}`; "
                  "`gpudoctor checks GD404` prints one.", ""]
        return "\n".join(lines)

"""Markdown, for pasting into a bug report."""

from __future__ import annotations

from gpudoctor import __version__
from gpudoctor.model import Layer, Report, Status
from gpudoctor.renderers.interface import DOCS_PATH, clean, cuda_versions, is_info, tally

_MARK = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "➖"}


def cell(text: str) -> str:
    """`text` safe inside a table cell: control characters escaped, `|` and line breaks too."""
    return clean(text, newlines=True).replace("|", "\\|").replace("\n", "<br>")


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
                mark = "ℹ️" if is_info(r) else _MARK[r.finding.status]
                lines.append(
                    f"| {mark} | `{r.check_id}` {cell(r.title)} | {cell(r.finding.message)} | "
                    f"{cell(r.finding.fix or '')} |"
                )
        lines += ["", f"**{tally(report)}**", ""]
        lines += [f"_{cell(n)}_" for n in report.notes]
        lines += [f"Each check is documented in gpudoctor's `{DOCS_PATH}`; "
                  "`gpudoctor checks GD404` prints one.", ""]
        return "\n".join(lines)

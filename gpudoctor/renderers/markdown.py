"""Markdown, for pasting into a bug report."""

from __future__ import annotations

from gpudoctor import __version__
from gpudoctor.model import Layer, Report, Status
from gpudoctor.renderers.interface import cuda_versions, is_info, tally

_MARK = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "➖"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class MarkdownRenderer:
    """A heading, the three CUDA versions, one table per layer, the tally."""

    def render(self, report: Report) -> str:
        """The report as Markdown."""
        lines = [f"## gpudoctor {__version__} report", ""]
        lines += [f"- **{label}**: {_cell(value)}" for label, value in
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
                    f"| {mark} | `{r.check_id}` {_cell(r.title)} | {_cell(r.finding.message)} | "
                    f"{_cell(r.finding.fix or '')} |"
                )
        lines += ["", f"**{tally(report)}**", "", *(f"_{n}_" for n in report.notes)]
        return "\n".join(lines)

"""Rich text, grouped by layer (flutter-doctor style)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpudoctor.model import Layer, Report, Result, Status
from gpudoctor.renderers.interface import cuda_versions, is_info, tally

SYMBOLS = {
    Status.PASS: ("✓", "green"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "bold red"),
    Status.SKIP: ("–", "dim"),
}


class ConsoleRenderer:
    """Builds rich renderables; `render` prints them into a string for the CLI to write."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose

    def renderable(self, report: Report) -> RenderableType:
        """The report as one rich renderable."""
        parts: list[RenderableType] = [self._versions(report)]
        for layer in Layer:
            results = [r for r in report.results if r.layer is layer]
            if results:
                parts.append(self._layer(layer, results))
        parts.append(Text(tally(report), style="bold"))
        parts.extend(Text(note, style="dim") for note in report.notes)
        return Group(*parts)

    def render(self, report: Report) -> str:
        """The report as text (ANSI colour only when the console has it)."""
        with self.console.capture() as cap:
            self.console.print(self.renderable(report))
        return cap.get()

    def _versions(self, report: Report) -> RenderableType:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for label, value in cuda_versions(report.environment):
            table.add_row(label, value)
        return Group(table, Text(""))

    def _layer(self, layer: Layer, results: list[Result]) -> RenderableType:
        worst = max((r.finding.status for r in results if not is_info(r)),
                    key=_rank, default=Status.PASS)
        sym, style = SYMBOLS[worst]
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=3)  # indent
        grid.add_column(width=1)  # symbol
        grid.add_column(no_wrap=True, style="dim")  # id
        grid.add_column(ratio=1)  # title, message, fix, evidence: wraps under itself
        for r in results:
            grid.add_row("", *self._result(r))
        heading = Text.assemble((f"[{sym}] ", style), (layer.heading, "bold"))
        return Group(heading, grid, Text(""))

    def _result(self, r: Result) -> tuple[Text, str, Text]:
        f = r.finding
        sym, style = SYMBOLS[f.status]
        if is_info(r):
            sym, style = "i", "cyan"
        body = Text.assemble(
            (f"{r.title}: ", ""), (f.message, "" if f.status is not Status.SKIP else "dim"))
        if f.fix and f.status in (Status.FAIL, Status.WARN):
            body.append("\n→ fix: ", style="bold")
            body.append(f.fix)
        if self.verbose:
            for key, value in f.evidence:
                body.append(f"\n· {key}: {value}", style="dim")
        return Text(sym, style=style), r.check_id, body


def _rank(status: Status) -> int:
    return {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3}[status]

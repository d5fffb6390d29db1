"""Rich text, grouped by layer (flutter-doctor style).

Lines are built here, one `Text` each, and printed without rich's layout: a message wraps under
itself at the console's width, but a fix line (`→ fix: …`) and an evidence line are never
wrapped, so a command pastes whole; no line carries trailing padding. Every string that came
from the machine or a report is shown with its control characters escaped, and none is parsed
as rich markup. Nor can such a string start a line: a message, a fix, a title, a header value
shows a line break escaped (`\\n`), and the lines of a multi-line evidence value (a captured
stderr) are quoted behind a `│`; the report's only line breaks are the renderer's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from gpudoctor.model import Layer, Report, Result, Status
from gpudoctor.renderers.interface import clean, cuda_versions, is_info

SYMBOLS = {
    Status.PASS: ("✓", "green"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "bold red"),
    Status.SKIP: ("–", "dim"),
}
INFO_SYMBOL = ("i", "cyan")
INDENT = 4  # a result under its layer heading; its other lines 2 more
QUOTE = "│"  # before each further line of a multi-line evidence value

# a line and whether it may wrap at the console's width (fix and evidence lines never do)
Line = tuple[Text, bool]


class ConsoleRenderer:
    """`check`'s text report: the three CUDA versions, then each layer and its results, then
    the notes. The tally is the CLI's summary line on stderr, not part of the report."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose

    def lines(self, report: Report) -> list[Line]:
        """The report, line by line."""
        out: list[Line] = [(line, False) for line in version_lines(report)]
        out.append((Text(""), False))
        for layer in Layer:
            results = [r for r in report.results if r.layer is layer]
            if not results:
                continue
            worst = max((r.finding.status for r in results if not is_info(r)),
                        key=_rank, default=Status.PASS)
            sym, style = SYMBOLS[worst]
            out.append((Text.assemble((f"[{sym}] ", style), (layer.heading, "bold")), False))
            for r in results:
                out += result_lines(r, self.verbose, indent=INDENT)
            out.append((Text(""), False))
        out += [(Text(clean(note), style="dim"), True) for note in report.notes]
        if not out[-1][0].plain:
            out.pop()
        return out

    def render(self, report: Report) -> str:
        """The report as text (ANSI colour only when the console has it)."""
        return print_lines(self.console, self.lines(report))


def version_lines(report: Report) -> list[Text]:
    """'Driver (max CUDA it runs)   580.65.06, supports CUDA ≤ 13.0', and the other two."""
    rows = cuda_versions(report.environment)
    width = max(len(label) for label, _ in rows) + 2
    return [Text.assemble((label.ljust(width), "bold"), clean(value)) for label, value in rows]


def result_lines(r: Result, verbose: bool, indent: int = 0) -> list[Line]:
    """One result: `✓ GD101 title: message` (wrapping), then `→ fix: …` and, verbose, the
    evidence, each on a line of its own that never wraps. Shared by every command that shows
    findings (`check`, `smoke-test`, `install-cudnn`)."""
    f = r.finding
    sym, style = INFO_SYMBOL if is_info(r) else SYMBOLS[f.status]
    pad, hang = " " * indent, " " * (indent + 2)
    first = Text.assemble(pad, (sym, style), " ", (r.check_id, "dim"), " ", clean(r.title), ": ",
                          (clean(f.message), "dim" if f.status is Status.SKIP else ""))
    out: list[Line] = [(first, True)]
    if f.fix and f.status in (Status.FAIL, Status.WARN):
        out.append((Text.assemble(hang, ("→ fix: ", "bold"), clean(f.fix)), False))
    if verbose:
        for key, value in f.evidence:
            out += [(Text(line, style="dim"), False)
                    for line in evidence_lines(clean(key), value, hang)]
    return out


def evidence_lines(key: str, value: str, hang: str) -> list[str]:
    """`· key: value`; a multi-line value (a captured stderr, a traceback) goes on under it
    as a quoted block, each further line behind a `│`, so that no line of it can pass for one
    of the report's own (a forged `→ fix:` or `[✓]` line in someone's snapshot)."""
    first, *rest = clean(value, newlines=True).split("\n")
    return [f"{hang}· {key}: {first}".rstrip(), *(f"{hang}  {QUOTE} {line}".rstrip()
                                                  for line in rest)]


def print_lines(console: Console, lines: Iterable[Line | Text]) -> str:
    """Print lines into a string: wrapping ones at the console width with a hanging indent,
    the others as they are; never markup, never trailing spaces."""
    with console.capture() as cap:
        for item in lines:
            line, wraps = item if isinstance(item, tuple) else (item, True)
            for part in _wrap(console, line) if wraps else [line]:
                part.rstrip()
                console.print(part, soft_wrap=True, markup=False, highlight=False, emoji=False)
    return cap.get()


def _wrap(console: Console, line: Text) -> Sequence[Text]:
    """The line cut at the console width; the lines after the first indented two more than
    it (under the check id), each cut to fit too."""
    width = console.width
    if line.cell_len <= width:
        return [line]
    plain = line.plain
    hang = len(plain) - len(plain.lstrip(" ")) + 2
    first = line.wrap(console, width, overflow="fold")[0]
    start = len(first.plain)
    while start < len(plain) and plain[start] == " ":
        start += 1
    rest = line[start:]
    if not rest.plain:
        return [first]
    parts = rest.wrap(console, max(width - hang, 20), overflow="fold")
    return [first, *(Text.assemble(" " * hang, part) for part in parts)]


def _rank(status: Status) -> int:
    return {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3}[status]

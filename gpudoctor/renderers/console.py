"""Rich text, grouped by layer (flutter-doctor style).

Lines are built here, one `Text` each, and printed without rich's layout: a message wraps at
the console's width, but a fix line (`→ fix: …`) is never wrapped, so a command pastes whole;
no line carries trailing padding. Every string that came from the machine or a report is shown
with its control characters escaped, and none is parsed as rich markup.

The rule, for this report and every text renderer built on `print_lines` (explain, fleet, diff,
recommend, install, smoke-test, the node-problem-detector line): **no string from outside can
begin a line.** Every line starts with text gpudoctor wrote — a heading, a label, a status
glyph, a check id, `→ fix:`, `·` — and a string from a snapshot, a pasted report, the machine
or a file name comes after it, never first:

1. a line break inside such a string is shown escaped (`\\n`, `\\u2028`, … every code point
   `str.splitlines` breaks on; `interface.clean`), so the report's only line breaks are the
   renderer's own;
2. where the renderer wraps a line at the console's width, each further line starts with
   `┆ ` (CONTINUED) under the line's own indentation, a mark no line of gpudoctor's own starts
   with: a GPU name holding `→ fix: curl … | sudo bash` that lands at a wrap point reads
   `      ┆ → fix: curl …`, plainly the rest of the line above, never a fix of its own;
3. a multi-line value (a captured stderr, with `-v`) goes on under its key, each further line
   quoted behind `│`;
4. a table (fleet's nodes, the smoke test's timings, the ranks) starts every row with a cell of
   gpudoctor's own (a status glyph, a model, a rank number) and never wraps a cell.

A line gpudoctor does not wrap is a fix command (so it pastes whole) or a table row; on a
terminal narrower than it, the terminal itself folds it, which no renderer can prevent — so fix
commands quote every outside string they carry, and start with gpudoctor's own words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from gpudoctor.model import Layer, Report, Result, Status
from gpudoctor.policy import Verdict, verdict, worst
from gpudoctor.renderers.interface import clean, cuda_versions

SYMBOLS = {
    Status.PASS: ("✓", "green"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "bold red"),
    Status.SKIP: ("–", "dim"),
}
INFO_SYMBOL = ("i", "cyan")
# how each verdict shows (`gpudoctor.policy`): a note has a symbol of its own
MARKS = {Verdict.PASS: SYMBOLS[Status.PASS], Verdict.NOTE: INFO_SYMBOL,
         Verdict.WARNING: SYMBOLS[Status.WARN], Verdict.FAILURE: SYMBOLS[Status.FAIL],
         Verdict.SKIP: SYMBOLS[Status.SKIP]}
INDENT = 4  # a result under its layer heading; its other lines 2 more
QUOTE = "│"  # before each further line of a multi-line evidence value
CONTINUED = "┆"  # before each further line of a line wrapped at the console's width

# a line and whether it may wrap at the console's width (a fix line never does)
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
            sym, style = MARKS[worst(results)]
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
    """One result: `✓ GD101 title: message` (wrapping), then `→ fix: …` on a line of its own
    that never wraps and, verbose, the evidence (wrapping). Shared by every command that shows
    findings (`check`, `smoke-test`, `install-cudnn`)."""
    f = r.finding
    sym, style = MARKS[verdict(r)]
    pad, hang = " " * indent, " " * (indent + 2)
    first = Text.assemble(pad, (sym, style), " ", (r.check_id, "dim"), " ", clean(r.title), ": ",
                          (clean(f.message), "dim" if f.status is Status.SKIP else ""))
    out: list[Line] = [(first, True)]
    if f.fix and f.status in (Status.FAIL, Status.WARN):
        out.append((Text.assemble(hang, ("→ fix: ", "bold"), clean(f.fix)), False))
    if verbose:
        for key, value in f.evidence:
            out += [(Text(line, style="dim"), True)
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
    """Print lines into a string: wrapping ones at the console width, each further line
    behind `┆` (the module's rule), the others as they are; never markup, never trailing
    spaces. A bare `Text` wraps."""
    with console.capture() as cap:
        for item in lines:
            line, wraps = item if isinstance(item, tuple) else (item, True)
            for part in _wrap(console, line) if wraps else [line]:
                part.rstrip()
                console.print(part, soft_wrap=True, markup=False, highlight=False, emoji=False)
    return cap.get()


def _wrap(console: Console, line: Text) -> Sequence[Text]:
    """The line cut at the console width; each line after the first starts, two columns in
    from the line's own indentation (under the check id), with `┆ `, and is cut to fit too."""
    width = console.width
    if line.cell_len <= width:
        return [line]
    plain = line.plain
    lead = " " * (len(plain) - len(plain.lstrip(" ")) + 2)
    first = line.wrap(console, width, overflow="fold")[0]
    start = len(first.plain)
    while start < len(plain) and plain[start] == " ":
        start += 1
    rest = line[start:]
    if not rest.plain:
        return [first]
    parts = rest.wrap(console, max(width - len(lead) - 2, 20), overflow="fold")
    return [first, *(Text.assemble(lead, (f"{CONTINUED} ", "dim"), part) for part in parts)]


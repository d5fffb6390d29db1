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

import re
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
# by default a list of more than LONG items in a message shows its first SHOWN (-v: all)
LONG, SHOWN = 8, 5
PASSES = 3  # by default a layer's passes are a count where they are this many or more
MORE = "-v shows every check, its evidence and each list in full"
_ID = re.compile(r"([A-Z]+)(\d+)")
# a skip message's pointer to the check that says why, or its example: not its cause
_ASIDE = re.compile(r" \((?:see GD\d+|e\.g\. [^()]*)\)")

# a line and whether it may wrap at the console's width (a fix line never does)
Line = tuple[Text, bool]


class ConsoleRenderer:
    """`check`'s text report: the three CUDA versions, then each layer and its results, then
    the notes. The tally is the CLI's summary line on stderr, not part of the report."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose

    def lines(self, report: Report) -> list[Line]:
        """The report, line by line: every result with `-v`; else a layer's failures,
        warnings and notes in full, its passes as a count and its skips as one line."""
        out: list[Line] = [(line, False) for line in version_lines(report)]
        out.append((Text(""), False))
        collapsed = False
        for layer in Layer:
            results = [r for r in report.results if r.layer is layer]
            if not results:
                continue
            if self.verbose:
                out.append((heading(layer, results), False))
                for r in results:
                    out += result_lines(r, True, indent=INDENT)
                out.append((Text(""), False))
            else:  # a layer of a few lines: no blank line between layers
                out += glance_lines(layer, results, self.console.width)
                collapsed = collapsed or any(
                    verdict(r) in (Verdict.PASS, Verdict.SKIP) or r.finding.evidence
                    or cut_lists(r.finding.message) != r.finding.message for r in results)
        if not self.verbose and (report.notes or collapsed):
            out.append((Text(""), False))
        out += [(Text(clean(note), style="dim"), True) for note in report.notes]
        if collapsed:
            out.append((Text(MORE, style="dim"), False))
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


def heading(layer: Layer, results: Sequence[Result], tail: str = "") -> Text:
    """`[✓] cuDNN`, the mark of the layer's worst verdict; `tail` (": 8 passed") after it."""
    sym, style = MARKS[worst(results)]
    return Text.assemble((f"[{sym}] ", style), (layer.heading, "bold"), (clean(tail), "dim"))


def glance_lines(layer: Layer, results: Sequence[Result], width: int = 100) -> list[Line]:
    """A layer read at a glance: its failures, warnings and notes in full (each list in them
    cut, `cut_lists`); its passes as a count with their ids in the heading ("[✓] CUDA: 3
    passed (GD201-GD203)") where they are PASSES or more and nothing else of the layer is shown
    in full, else each on its line; its skips as one line of `width`, grouped by cause. The
    Requirements layer's passes always show: each answers what the user asked (`--require`)."""
    shown = [r for r in results if verdict(r) not in (Verdict.PASS, Verdict.SKIP)]
    passes = [r for r in results if verdict(r) is Verdict.PASS]
    skips = [r for r in results if verdict(r) is Verdict.SKIP]
    if shown or len(passes) < PASSES or layer is Layer.REQUIREMENTS:
        shown = [r for r in results if verdict(r) is not Verdict.SKIP]  # beside: context
    tail = (f": {len(passes)} passed ({id_ranges([r.check_id for r in passes])})"
            if passes and not shown else "")
    if not shown and not passes:  # nothing but skips: the heading says why
        top = heading(layer, results, ": ")
        return [(Text.assemble(top, skip_summary(skips, width - len(top.plain))), True)]
    out: list[Line] = [(heading(layer, results, tail), True)]
    for r in shown:
        out += result_lines(r, False, indent=INDENT, cut=True)
    if skips:
        sym, style = MARKS[Verdict.SKIP]
        out.append((Text.assemble(" " * INDENT, (sym, style), " ",
                                  skip_summary(skips, width - INDENT - 2)), True))
    return out


def skip_summary(skips: Sequence[Result], room: int | None = None) -> Text:
    """'12 skipped: the NVIDIA driver's libnvidia-ml.so.1 was not found (GD102, GD105-GD108,
    GD110-GD113); no NVIDIA GPU on the PCI bus (GD109)': each cause (`cause`) with the ids it
    skipped, the largest group first. Given `room` (the characters one line has), a layer's
    skips take one line where they can (`-v` names every cause): the causes that fit and the
    others counted ('; 3 other causes (GD103, GD104, GD109)'), the ids left out where they do
    not fit; the largest cause always shows."""
    groups: dict[str, list[str]] = {}
    for r in skips:
        groups.setdefault(cause(r.finding.message), []).append(r.check_id)
    place: dict[str, int] = {r.check_id: n for n, r in enumerate(skips)}
    ordered = sorted(_alike(groups).items(), key=lambda group: -len(group[1]))  # ties in order
    head = f"{len(skips)} skipped: "

    def ids_of(groups: Sequence[tuple[str, list[str]]]) -> str:
        return clean(id_ranges(sorted((i for _, ids in groups for i in ids),
                                      key=place.__getitem__)))

    def line(kept: int, ids: bool, other_ids: bool) -> str:
        parts = [clean(why) + (f" ({ids_of([(why, g)])})" if ids else "")
                 for why, g in ordered[:kept]]
        rest = ordered[kept:]
        if rest:
            parts.append(f"{len(rest)} other cause{'s' if len(rest) > 1 else ''}"
                         + (f" ({ids_of(rest)})" if other_ids else ""))
        return head + "; ".join(parts)

    candidates = [line(len(ordered), True, True)]
    if room is not None:
        candidates += [line(k, True, True) for k in range(len(ordered) - 1, 0, -1)]
        candidates += [line(k, True, False) for k in range(len(ordered) - 1, 0, -1)]
        candidates.append(line(1, False, False))
    fits = [c for c in candidates if room is None or len(c) <= room]
    return Text(fits[0] if fits else candidates[-1], style="dim")


def _alike(groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """Causes of three words or more that differ in one word, the same word each time, as
    one: 'no gpus requirement given' and 'no driver requirement given' read 'no gpus or driver
    requirement given'."""
    merged: list[tuple[list[str], list[str], list[str]]] = []  # words, the word's forms, ids
    at: list[int | None] = []  # where the forms differ
    for why, ids in groups.items():
        words = why.split(" ")
        for n, (first, forms, seen) in enumerate(merged):
            differ = [i for i, (a, b) in enumerate(zip(first, words, strict=False)) if a != b]
            if len(first) == len(words) > 2 and len(differ) == 1 and at[n] in (None, differ[0]):
                at[n] = differ[0]
                forms.append(words[differ[0]])
                seen += ids
                break
        else:
            merged.append((words, [], list(ids)))
            at.append(None)
    out: dict[str, list[str]] = {}
    for (words, forms, ids), i in zip(merged, at, strict=True):
        if i is not None:
            words = [*words[:i], _either([words[i], *forms]), *words[i + 1:]]
        out[" ".join(words)] = ids
    return out


def _either(words: Sequence[str]) -> str:
    """'gpus, driver or cuda'."""
    return f"{', '.join(words[:-1])} or {words[-1]}"


def cause(message: str) -> str:
    """A skip's cause: its message up to the first `: ` or `; ` outside parentheses, where a
    message goes on to the detail, less its pointers and examples (`(see GD101)`, `(e.g.
    check --require 'gpus>=8')`), every list in it cut; `-v` shows the whole message."""
    depth, lead = 0, message
    for i, c in enumerate(message):
        depth += (c == "(") - (c == ")")
        if depth <= 0 and c in ":;" and message[i + 1:i + 2] == " ":
            lead = message[:i]
            break
    return cut_lists(_ASIDE.sub("", lead).strip() or message)


def id_ranges(ids: Sequence[str]) -> str:
    """'GD102, GD105-GD108, GD110-GD113': three or more ids in a row as a range."""
    runs: list[list[str]] = []
    for check_id in ids:
        if runs and _follows(runs[-1][-1], check_id):
            runs[-1].append(check_id)
        else:
            runs.append([check_id])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(run) for run in runs)


def _follows(before: str, check_id: str) -> bool:
    a, b = _ID.fullmatch(before), _ID.fullmatch(check_id)
    return bool(a and b and a[1] == b[1] and int(b[2]) == int(a[2]) + 1)


def cut_lists(text: str) -> str:
    """`text` with each list of more than LONG items cut to its first SHOWN, a count and its
    last: 'LD_LIBRARY_PATH has 1000 entries that do not exist: /nope/0, /nope/1, /nope/2,
    /nope/3, /nope/4, … 994 more …, /nope/999'. A list is a run of `, `-separated items in a
    `; ` clause, or a run of such clauses; the last item stays whole, as what follows it on
    its clause (the rest of a sentence) cannot be told from it."""
    return _cut([_cut(clause.split(", "), ", ") for clause in text.split("; ")], "; ")


def _cut(items: Sequence[str], sep: str) -> str:
    if len(items) <= LONG:
        return sep.join(items)
    return sep.join([*items[:SHOWN], f"… {len(items) - SHOWN - 1} more …", items[-1]])


def result_lines(r: Result, verbose: bool, indent: int = 0, cut: bool = False) -> list[Line]:
    """One result: `✓ GD101 title: message` (wrapping), then `→ fix: …` on a line of its own
    that never wraps and, verbose, the evidence (wrapping). Shared by every command that shows
    findings (`check`, `smoke-test`, `install-cudnn`). With `cut`, each long list in the
    message shows its first items and a count (`cut_lists`)."""
    f = r.finding
    sym, style = MARKS[verdict(r)]
    pad, hang = " " * indent, " " * (indent + 2)
    message = cut_lists(f.message) if cut else f.message
    first = Text.assemble(pad, (sym, style), " ", (r.check_id, "dim"), " ", clean(r.title), ": ",
                          (clean(message), "dim" if f.status is Status.SKIP else ""))
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


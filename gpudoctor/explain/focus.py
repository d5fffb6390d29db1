"""The part of a large text worth reading: the lines around its errors, and its end.

A 16 MiB log is mostly progress lines. For a text larger than `WHOLE`, `focus` keeps its last
`TAIL` characters whole (a log's final error is at its end), and around each occurrence of a
`TRIGGERS` word (at most `MAX_HITS` of each, found with `str.find`: no regex runs over the
whole text) the line with `CONTEXT` lines either side; a smaller text is kept whole. Every
error wording gpudoctor knows sits on such a line or next to one: the frameworks' exception
names (RuntimeError, ImportError, OSError, AssertionError, OutOfMemoryError) hold "error",
the driver's lines "nvrm" or "xid", a C++ check "fail" or "fatal", Go's and Rust's "panic". A
test embeds every development text in a large log and checks that it is explained as it is
alone. The kept pieces are joined into one text, and each piece remembers where it came from,
so a match reports the line of the original text.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

WHOLE = 1 << 20  # up to this size the whole text is read
TAIL = 192 << 10
MAX_HITS = 512  # per trigger word
CONTEXT = 3  # lines kept either side of a trigger
TRIGGERS = ("error", "fail", "fatal", "abort", "exception", "traceback", "warn", "nvrm", "xid",
            "assert", "unable", "cannot", "could not", "not found", "not compatible", "too old",
            "timeout", "nccl", "cudnn", "symbolic link", "flag: --", "older than",
            "minimum required", "invalid __", "panic")


@dataclass(frozen=True, slots=True)
class Focused:
    """The kept text, and for each piece: its start in it, its start and line in the input."""

    text: str
    starts: tuple[int, ...]  # offsets in `text` where each piece begins
    origins: tuple[int, ...]  # the offset of each piece in the input
    lines: tuple[int, ...]  # the 1-based line of each piece's start in the input

    def origin(self, pos: int) -> tuple[int, int]:
        """(offset in the input, 1-based line in the input) of offset `pos` in `text`."""
        i = bisect.bisect_right(self.starts, pos) - 1
        start = self.starts[i]
        return (self.origins[i] + pos - start,
                self.lines[i] + self.text.count("\n", start, pos))


def focus(text: str, lowered: str) -> Focused:
    """The text to read (see the module); `lowered` is `text.lower()`, of the same length."""
    if len(text) <= WHOLE or len(lowered) != len(text):
        return Focused(text, (0,), (0,), (1,))
    tail = text.rfind("\n", 0, len(text) - TAIL) + 1
    spans: list[tuple[int, int]] = [(tail, len(text))]
    for word in TRIGGERS:
        pos = 0
        for _ in range(MAX_HITS):
            hit = lowered.find(word, pos, tail)
            if hit < 0:
                break
            lo = _line_start(text, hit, CONTEXT)
            hi = min(_line_end(text, hit, CONTEXT), tail)
            spans.append((lo, hi))
            pos = max(hi, hit + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    pieces, starts, origins, lines = [], [], [], []
    at, line, counted = 0, 1, 0
    for lo, hi in merged:
        line += text.count("\n", counted, lo)
        counted = lo
        starts.append(at)
        origins.append(lo)
        lines.append(line)
        pieces.append(text[lo:hi])
        at += hi - lo + 1
    return Focused("\n".join(pieces), tuple(starts), tuple(origins), tuple(lines))


def _line_start(text: str, pos: int, back: int) -> int:
    for _ in range(back + 1):
        pos = text.rfind("\n", 0, pos)
        if pos < 0:
            return 0
    return pos + 1


def _line_end(text: str, pos: int, ahead: int) -> int:
    for _ in range(ahead + 1):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return len(text)
        pos = nxt + 1
    return pos - 1

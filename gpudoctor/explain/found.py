"""What a scanner found, and the helpers every scanner builds its findings with.

A `Match` is one diagnosis before it is confirmed: a signature (from `signatures.toml`, or one
made for the finding by `derived`), the text it matched and what its captures decode to. The
scanners (`errcodes`, `loader`, `logs`, `oom`, `modules`, `programs`) read a text with `hits`
and `anchored`, both bounded, and report with `found`. A leaf of the package: it imports only
the vocabulary (`classes`), the knowledge base's types (`kb`) and the decoder (`decode`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.decode import Decoded
from gpudoctor.explain.kb import Signature

EXCERPT = 400  # characters of matched text kept for the report
MAX_HITS = 256  # per scanner: past that a token repeats too often to add anything
MAX_TRIES = 4096  # occurrences of a scanner's literal tried, at most (see `anchored`)


@dataclass(frozen=True, slots=True)
class Match:
    """Where a signature matched, what it captured, and what that means."""

    signature: Signature
    excerpt: str  # the matched text (at most EXCERPT characters)
    line: int  # 1-based line of the match in the input
    captures: tuple[Decoded, ...]
    start: int = 0  # offsets of the match in the text searched
    end: int = 0

    @property
    def specificity(self) -> int:
        """How much of the text the signature explains: longer, decoded matches rank higher."""
        return len(self.excerpt) + 40 * sum(1 for c in self.captures if c.raw)


def excerpt_of(matched: str) -> str:
    """The matched text as kept for the report."""
    return matched if len(matched) <= EXCERPT else matched[:EXCERPT - 1] + "…"


def derived(sid: str, title: str, family: str, cause_class: str, cause: str, fix: str,
            sources: Iterable[str], priority: int = 0,
            confirm: tuple[str, ...] | None = None) -> Signature:
    """A signature made for one finding: the text is final (braces escaped for `_fill`)."""
    cls = CAUSE_CLASSES[cause_class]
    return Signature(
        id=sid, title=title, family=family, patterns=(), needles=(), captures=(),
        cause=_escape(cause), fix=_escape(fix), confirm=cls.confirm if confirm is None
        else confirm, sources=tuple(sources), priority=priority, cause_class=cause_class)


def found(sig: Signature, m: re.Match[str] | tuple[int, int, str],
          captures: tuple[Decoded, ...] = ()) -> Match:
    """A Match of a derived signature at a regex match (or at (start, end, excerpt))."""
    if isinstance(m, tuple):
        start, end, text = m
    else:
        start, end, text = m.start(), m.end(), m.group(0)
    return Match(sig, excerpt_of(text.strip()), 0, captures, start, end)


def hits(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The pattern's matches, at most MAX_HITS."""
    for i, m in enumerate(pattern.finditer(text)):
        if i >= MAX_HITS:
            return
        yield m


def anchored(pattern: re.Pattern[str], text: str, lowered: str, needle: str,
             tries: int = MAX_TRIES) -> Iterator[re.Match[str]]:
    """The pattern's matches that begin at an occurrence of `needle` (lower-case, found in
    `lowered` with str.find), at most MAX_HITS of them after at most `tries` occurrences: a
    pattern that scans ahead of its literal costs a bounded amount per occurrence, and a text
    that repeats the literal endlessly costs no more than `tries` of them."""
    pos, count = 0, 0
    for _ in range(tries):
        at = lowered.find(needle, pos)
        if at < 0 or count >= MAX_HITS:
            return
        m = pattern.match(text, at)
        if m is None:
            pos = at + 1
            continue
        count += 1
        yield m
        pos = max(m.end(), at + 1)


def kebab(name: str) -> str:
    """`cudaErrorNoDevice` / `CUDA_ERROR_NO_DEVICE` → an id fragment."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).replace("_", "-")
    return re.sub(r"-+", "-", spaced).strip("-").lower()


def slug(text: str, words: int = 6) -> str:
    """A text's first words as an id fragment: "Bootstrap : no socket interface found" →
    "bootstrap-no-socket-interface-found"."""
    parts = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(parts[:words]) or "x"


def line_span(text: str, pos: int) -> tuple[int, int]:
    """Where the line of `text` that holds offset `pos` starts and ends (its newline not in it)."""
    hi = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, hi if hi >= 0 else len(text)


def line_of(text: str, pos: int) -> str:
    """The whole line of `text` that holds offset `pos`."""
    lo, hi = line_span(text, pos)
    return text[lo:hi]


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


_WRAP_LEAST = 60  # a line this long that ends inside a word may have been wrapped by a terminal


def unwrapped(text: str) -> tuple[str, list[int]]:
    """`text` with each hard wrap inside a word joined (a line of `_WRAP_LEAST` or more
    characters ending in a letter or digit, the next starting with one; or inside a number,
    after its decimal point: "CUDA version is 11." and "0 which …"), and where each
    removed line break was, in the joined text's offsets."""
    lines = text.split("\n")
    out: list[str] = []
    cuts: list[int] = []
    at = 0
    for i, line in enumerate(lines):
        out.append(line)
        at += len(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if i + 1 < len(lines):
            in_word = line[-1:].isalnum() and nxt[:1].isalnum()
            in_number = line[-1:] == "." and line[-2:-1].isdigit() and nxt[:1].isdigit()
            if len(line) >= _WRAP_LEAST and (in_word or in_number):
                cuts.append(at)
            else:
                out.append("\n")
                at += 1
    return "".join(out), cuts

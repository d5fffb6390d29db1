"""Finding known error signatures in a text of up to 16 MiB, in linear time.

Each pattern has a literal it cannot match without (its needle, `kb.needle_of`). The text is
lower-cased once; a needle is found with `str.find` (no regex); the pattern then runs only on a
bounded window around each hit, at most `MAX_WINDOWS` windows per pattern, and needles the
window already covers (with every match around them) are skipped. The regex work per pattern is
bounded whatever the text holds, and the patterns are written without nested quantifiers (a
test feeds them a large adversarial input).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.explain.decode import Decoded, decode

if TYPE_CHECKING:
    from gpudoctor.compat import Tables
    from gpudoctor.explain.kb import KnowledgeBase, Signature

BEFORE, AFTER = 2048, 4096  # a window: this much text either side of a needle
SPAN = 1024  # the most text a pattern matches either side of its needle (bounded quantifiers)
MAX_WINDOWS = 256  # per pattern; past that a needle repeats too often to be an error message
EXCERPT = 400  # characters of matched text kept for the report


@dataclass(frozen=True, slots=True)
class Match:
    """Where a signature matched, what it captured, and what that means."""

    signature: Signature
    excerpt: str  # the matched text (at most EXCERPT characters)
    line: int  # 1-based line of the match in the input
    captures: tuple[Decoded, ...]

    @property
    def specificity(self) -> int:
        """How much of the text the signature explains: longer, decoded matches rank higher."""
        return len(self.excerpt) + 40 * sum(1 for c in self.captures if c.raw)


def find_matches(text: str, kb: KnowledgeBase, tables: Tables) -> tuple[Match, ...]:
    """Every signature that matches `text`, each with its first match, in knowledge-base order."""
    lowered = text.lower()
    aligned = len(lowered) == len(text)  # lower() can change lengths outside ASCII
    found = []
    for sig in kb.signatures:
        for pattern, needle in zip(sig.patterns, sig.needles, strict=True):
            m = _search(pattern, needle, text, lowered) if aligned else pattern.search(text)
            if m is not None:
                found.append(_match(sig, m, text, tables, kb))
                break
    return tuple(found)


def _search(pattern: re.Pattern[str], needle: str, text: str,
            lowered: str) -> re.Match[str] | None:
    start, windows = 0, 0
    while windows < MAX_WINDOWS:
        hit = lowered.find(needle, start)
        if hit < 0:
            return None
        lo, hi = max(0, hit - BEFORE), min(len(text), hit + len(needle) + AFTER)
        m = pattern.search(text, lo, hi)
        if m is not None:
            return m
        # needles before hit + AFTER // 2 lie in this window with every match around them (a
        # match reaches at most SPAN characters either side of its needle): skip them
        start, windows = hit + AFTER // 2, windows + 1
    return None


def _match(sig: Signature, m: re.Match[str], text: str, tables: Tables,
           kb: KnowledgeBase) -> Match:
    captures = tuple(decode(name, sig.kind(name), value, tables, kb)
                     for name, value in m.groupdict().items() if value is not None)
    excerpt = m.group(0)
    if len(excerpt) > EXCERPT:
        excerpt = excerpt[:EXCERPT - 1] + "…"
    return Match(sig, excerpt, text.count("\n", 0, m.start()) + 1, captures)

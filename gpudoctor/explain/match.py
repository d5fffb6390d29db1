"""Finding what a text of up to 16 MiB says, in bounded time.

Two kinds of knowledge run over the text that `focus` keeps of it: the signatures of
`signatures.toml` (known wordings), and the grammar of `derive` (error codes, loader
failures, Xids, kernel and NCCL messages, out-of-memory numbers: entities decoded through the
enumerations). Each signature pattern has a literal it cannot match without (its needle,
`kb.needle_of`): the text is lower-cased once, a needle is found with `str.find` (no regex),
and the pattern then runs only on a bounded window around each hit, at most `MAX_WINDOWS`
windows per pattern; needles the window already covers (with every match around them) are
skipped. The patterns are written without nested quantifiers (a test feeds them a large
adversarial input). A derived diagnosis that only restates a text a signature explains (their
spans overlap) is dropped: the signature's wording is the more specific; so is a signature's
match inside another's of the same cause.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpudoctor.explain.decode import decode
from gpudoctor.explain.derive import derive
from gpudoctor.explain.focus import Focused, focus
from gpudoctor.explain.found import Match, excerpt_of, unwrapped
from gpudoctor.explain.logs import run_without_gpus, run_without_gpus_match

if TYPE_CHECKING:
    from gpudoctor.compat import Tables
    from gpudoctor.explain.kb import KnowledgeBase, Signature

BEFORE, AFTER = 2048, 4096  # a window: this much text either side of a needle
SPAN = 1024  # the most text a pattern matches either side of its needle (bounded quantifiers)
MAX_WINDOWS = 256  # per pattern; past that a needle repeats too often to be an error message
# the causes a container without GPUs shows as, and a program's words for finding no GPU where
# no signature names it (vLLM's "No platform detected", an app's "NVIDIA CUDA test failed")
_NO_GPU = frozenset({"no-gpu-visible", "no-driver", "cuda-init-failure"})
_NO_GPU_WORDS = re.compile(r"No platform detected|\bCUDA test failed|\bno (?:NVIDIA |CUDA )?GPUs? "
                           r"(?:(?:was|were) )?(?:found|detected|available)\b|\b(?:GPU|CUDA) is "
                           r"not available\b", re.IGNORECASE)


def find_matches(text: str, kb: KnowledgeBase, tables: Tables) -> tuple[Match, ...]:
    """Every signature that matches `text` (each with its first match, in knowledge-base
    order), then every derived diagnosis no signature match covers. Where nothing matches and
    a terminal (or a page's copy) hard-wrapped lines inside words ("Loaded runtime CuDNN l" /
    "ibrary: 7.4.1"), the text with those wraps joined is read instead, each match's line
    counted in the text as given."""
    matches = _find(text, kb, tables)
    if matches or "\n" not in text:
        return matches
    joined, cuts = unwrapped(text)
    if not cuts:
        return ()
    starts = [0] + [m.end() for m in re.finditer("\n", joined)]  # each line's offset

    def given(line: int) -> int:  # a joined line's line in the text as given
        return line + bisect.bisect_left(cuts, starts[min(line, len(starts)) - 1])

    return tuple(replace(m, line=given(m.line)) for m in _find(joined, kb, tables))


def _find(text: str, kb: KnowledgeBase, tables: Tables) -> tuple[Match, ...]:
    lowered_input = text.lower()
    focused = focus(text, lowered_input)
    body = focused.text
    lowered = body.lower() if body is not text else lowered_input
    aligned = len(lowered) == len(body)  # lower() can change lengths outside ASCII
    found = []
    for sig in kb.signatures:
        for pattern, needle in zip(sig.patterns, sig.needles, strict=True):
            m = _search(pattern, needle, body, lowered) if aligned else pattern.search(body)
            if m is not None:
                found.append(_match(sig, m, focused, tables))
                break
    found = [m for i, m in enumerate(found) if not any(_covers(o, m, j < i)
                                                       for j, o in enumerate(found) if j != i)]
    spans = [(m.start, m.end) for m in found]
    for d in derive(body, lowered if aligned else body.lower(), tables):
        if any(d.start < hi and lo < d.end for lo, hi in spans):
            continue
        found.append(_placed(d, focused))
    if (any(m.signature.cause_class in _NO_GPU for m in found) or _NO_GPU_WORDS.search(body)) \
            and (run := run_without_gpus(body)) is not None:
        # the program finds no GPU, and the text shows its container started without one
        found.append(_placed(run_without_gpus_match(run), focused))
    return tuple(found)


def _covers(other: Match, m: Match, earlier: bool) -> bool:
    """Whether `other`, a signature's match of the same cause, spans all of `m`'s text (the
    same span: the one earlier in the knowledge base stands): `m` restates it in fewer words
    ("not compiled with CUDA" inside "Torch not compiled with CUDA enabled")."""
    same_cause = other.signature.cause_class == m.signature.cause_class
    inside = other.start <= m.start and m.end <= other.end
    return same_cause and inside and ((other.start, other.end) != (m.start, m.end) or earlier)


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


def _match(sig: Signature, m: re.Match[str], focused: Focused, tables: Tables) -> Match:
    captures = tuple(decode(name, sig.kind(name), value, tables)
                     for name, value in m.groupdict().items() if value is not None)
    _, line = focused.origin(m.start())
    return Match(sig, excerpt_of(m.group(0)), line, captures, m.start(), m.end())


def _placed(d: Match, focused: Focused) -> Match:
    _, line = focused.origin(d.start)
    return Match(d.signature, d.excerpt, line, d.captures, d.start, d.end)

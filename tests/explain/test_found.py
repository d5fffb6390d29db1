"""A match found in a text: the scanners' bounded search for their literal (`anchored`), the
excerpt kept of it, its line, and the ids made from names and texts."""

from __future__ import annotations

import re

import pytest

from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.found import (
    EXCERPT,
    MAX_HITS,
    MAX_TRIES,
    anchored,
    derived,
    excerpt_of,
    found,
    hits,
    kebab,
    line_of,
    slug,
)


def test_a_scanner_tries_a_bounded_number_of_its_literals_occurrences() -> None:
    """A line that repeats "error" a hundred thousand times costs MAX_TRIES match attempts of a
    pattern that scans ahead of its literal, not one per occurrence (a 16 MiB line of
    'error: ' took seconds in the unbounded scan)."""
    tried: list[int] = []

    class Counting:
        def match(self, text: str, pos: int) -> None:
            tried.append(pos)

    text = "error: " * 100_000
    assert list(anchored(Counting(), text, text, "error")) == []  # type: ignore[arg-type]
    assert len(tried) == MAX_TRIES
    line = "x error: a error: b"
    found = list(anchored(re.compile(r"error: (\w)"), line, line, "error"))
    assert [m[1] for m in found] == ["a", "b"]


def test_anchored_stops_after_max_hits_matches() -> None:
    text = "error: a " * (MAX_HITS + 50)
    assert len(list(anchored(re.compile(r"error: (\w)"), text, text, "error"))) == MAX_HITS


def test_hits_yields_at_most_max_hits_matches_in_order() -> None:
    text = " ".join(f"n{i}" for i in range(MAX_HITS + 10))
    got = [m.group(0) for m in hits(re.compile(r"n\d+"), text)]
    assert got == [f"n{i}" for i in range(MAX_HITS)]


def test_an_excerpt_is_cut_to_its_limit_with_an_ellipsis() -> None:
    assert excerpt_of("short") == "short"
    assert excerpt_of("x" * EXCERPT) == "x" * EXCERPT
    cut = excerpt_of("y" * (EXCERPT + 1))
    assert len(cut) == EXCERPT and cut.endswith("…") and cut.startswith("y" * (EXCERPT - 1))


@pytest.mark.parametrize(("name", "fragment"), [
    ("cudaErrorNoDevice", "cuda-error-no-device"),
    ("CUDA_ERROR_NO_DEVICE", "cuda-error-no-device"),
    ("CUDNN_STATUS__BAD_PARAM_", "cudnn-status-bad-param"),
    ("nvmlInit_v2", "nvml-init-v2"),
])
def test_kebab_makes_an_id_fragment_of_either_spelling(name: str, fragment: str) -> None:
    assert kebab(name) == fragment


def test_slug_is_the_first_words_and_never_empty() -> None:
    assert slug("Bootstrap : no socket interface found") == "bootstrap-no-socket-interface-found"
    assert slug("One two three four five six seven eight") == "one-two-three-four-five-six"
    assert slug("A b c", words=2) == "a-b"
    assert slug("... : !!") == "x"


def test_line_of_is_the_whole_line_holding_the_offset() -> None:
    text = "first\nsecond line\nlast"
    assert line_of(text, 0) == "first"
    assert line_of(text, text.index("line")) == "second line"
    assert line_of(text, len(text) - 1) == "last"  # no newline after it


def test_a_derived_signature_takes_its_class_checks_and_escapes_its_braces() -> None:
    sig = derived("code-x", "A title", "cuda", "driver-too-old", "needs {CUDA}", "update {it}",
                  ["https://example.org/src"])
    assert sig.confirm == CAUSE_CLASSES["driver-too-old"].confirm and sig.confirm
    assert (sig.cause, sig.fix) == ("needs {{CUDA}}", "update {{it}}")
    assert sig.sources == ("https://example.org/src",) and sig.priority == 0
    assert derived("c", "t", "f", "driver-too-old", "c", "f", [], confirm=()).confirm == ()
    with pytest.raises(KeyError):
        derived("c", "t", "f", "no-such-class", "c", "f", [])


def test_found_keeps_the_span_and_the_stripped_excerpt() -> None:
    sig = derived("x", "t", "f", "no-driver", "c", "f", [])
    m = re.search(r" bad \w+ ", "a  bad thing here")
    assert m is not None
    at = found(sig, m)
    assert (at.excerpt, at.start, at.end, at.line) == ("bad thing", m.start(), m.end(), 0)
    assert found(sig, (3, 9, " given ")).excerpt == "given"
    assert found(sig, (0, 1, "z" * (EXCERPT + 5))).excerpt == excerpt_of("z" * (EXCERPT + 5))

"""Focusing: of a large text, the lines around its trigger words and its end are read."""

from __future__ import annotations

import pytest

from gpudoctor.explain.focus import CONTEXT, MAX_HITS, TAIL, WHOLE, focus
from tests.explain.explain_kit import NOISE


@pytest.mark.slow
def test_focus_keeps_the_trigger_lines_and_the_end_only() -> None:
    text = NOISE + "RuntimeError: something\n" + NOISE + "the last line\n"
    f = focus(text, text.lower())
    assert "RuntimeError: something" in f.text and f.text.endswith("the last line\n")
    assert len(f.text) < len(text) // 4


def test_a_text_up_to_whole_is_kept_whole_and_maps_to_itself() -> None:
    text = "x" * (WHOLE - 20) + "\nlast\n"
    f = focus(text, text.lower())
    assert f.text == text
    assert f.origin(len(text) - 3) == (len(text) - 3, 2)


def test_a_text_whose_lowered_form_differs_in_length_is_kept_whole() -> None:
    """'İ'.lower() is two characters: offsets in `lowered` would not be offsets in the text."""
    text = "İ error\n" + "quiet\n" * (WHOLE // 6 + 1)
    assert len(text.lower()) != len(text) and len(text) > WHOLE
    assert focus(text, text.lower()).text == text


def test_a_trigger_keeps_its_line_and_context_lines_either_side_and_their_origin() -> None:
    before = [f"before {n}" for n in range(CONTEXT + 2)]
    after = [f"after {n}" for n in range(CONTEXT + 2)]
    text = ("step ok\n" * 1000 + "\n".join([*before, "RuntimeError: boom", *after]) + "\n"
            + "step ok\n" * (WHOLE // 8))
    assert len(text) > WHOLE
    f = focus(text, text.lower())
    kept = f.text.split("\n")
    i = kept.index("RuntimeError: boom")
    assert kept[i - CONTEXT:i] == before[-CONTEXT:] and before[-CONTEXT - 1] not in f.text
    assert kept[i + 1:i + 1 + CONTEXT] == after[:CONTEXT] and after[CONTEXT] not in f.text
    offset, line = f.origin(f.text.index("RuntimeError: boom"))
    assert text[offset:offset + 18] == "RuntimeError: boom" and line == 1000 + len(before) + 1
    assert f.text.endswith(text[-TAIL // 2:])  # the end is kept whole
    assert len(f.text) < TAIL + 1000


def test_each_trigger_word_is_followed_at_most_max_hits_times() -> None:
    text = "".join("an error here\n" + "quiet line\n" * 10 for _ in range(MAX_HITS + 100))
    text += "pad line\n" * (WHOLE // 9)
    f = focus(text, text.lower())
    assert f.text[:len(f.text) - TAIL].count("an error here") <= MAX_HITS
    assert f.text.count("an error here") >= MAX_HITS

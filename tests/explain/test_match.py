"""Matching: captures filled, lines found, and no input makes it slow or quadratic."""

from __future__ import annotations

import re

import pytest

from gpudoctor.explain.focus import WHOLE
from gpudoctor.explain.match import AFTER, MAX_WINDOWS, SPAN, find_matches
from tests.explain.explain_kit import KB, NOISE, TABLES, one


def test_match_reports_the_line_and_case_does_not_matter() -> None:
    m = one("first line\nsecond\nRUNTIMEERROR: CUDA ERROR: NO KERNEL IMAGE IS AVAILABLE FOR "
            "EXECUTION ON THE DEVICE", "no-kernel-image")
    assert m.line == 3


def test_non_ascii_text_around_a_match_is_fine() -> None:
    # "İ".lower() is two characters: positions then differ, and matching falls back to regexes
    m = one("İİİ 报错：\nRuntimeError: CUDA error: device-side assert triggered",
            "device-side-assert")
    assert m.line == 2


def test_a_match_straddling_a_window_end_is_found() -> None:
    """The needle first occurs inside a near miss; the real error, a little later, runs past
    the end of the first window: the window around its own needle finds it."""
    near = "cuDNN version mismatch: PyTorch was compiled against nothing\n"
    pad = "x" * (AFTER - len(near) - 20) + "\n"
    text = near + pad + ("cuDNN version mismatch: PyTorch was compiled against 7102 but linked "
                         "against 7600")
    m = one(text, "cudnn-version-incompatible")
    assert [c.meaning for c in m.captures] == ["cuDNN 7.1.2", "cuDNN 7.6.0"]


def test_patterns_stay_within_their_span() -> None:
    for sig in KB.signatures:
        for p in sig.patterns:
            for bound in re.findall(r"\{(\d+),(\d+)\}", p.pattern):
                assert int(bound[1]) <= SPAN // 2, (sig.id, p.pattern)


def test_unknown_text_matches_nothing() -> None:
    assert find_matches("everything is fine, the model trained", KB, TABLES) == ()


@pytest.mark.slow
def test_large_adversarial_input_finishes() -> None:
    """16 MiB of near-misses of every needle: each pattern examines at most MAX_WINDOWS bounded
    windows, so this finishes in pytest's normal run (no timing assertion)."""
    near_misses = "".join(n[:-1] + "\u00a0" for s in KB.signatures for n in s.needles)
    junk = ("CUDA error: " * 50 + "(found version " + "9" * 300 + " " + "libcudnn" * 40
            + near_misses + "\n")
    text = (junk * (16 * 2**20 // len(junk) + 1))[:16 * 2**20]
    # the grammar may read the junk's real prefixes; and built-without-cuda reads a near-miss
    # of torch's needle rightly: "torch not compiled with cuda enable" states a build without
    # CUDA (its "not compiled with " lies inside torch's, paddle's and bitsandbytes' needles)
    known = {s.id for s in KB.signatures} - {"built-without-cuda"}
    assert [m for m in find_matches(text, KB, TABLES) if m.signature.id in known] == []
    # a real error after the junk is still found (the focus keeps the end of a large text)
    tail = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert "illegal-memory-access" in [m.signature.id for m in find_matches(text + tail, KB,
                                                                             TABLES)]
    assert MAX_WINDOWS > 0


@pytest.mark.slow
def test_an_error_in_the_middle_of_a_large_log_is_found_on_its_line() -> None:
    assert len(NOISE) > WHOLE
    half = NOISE.count("\n") // 2
    lines = NOISE.splitlines(keepends=True)
    text = "".join(lines[:half]) + ("ImportError: libcusparse.so.11: cannot open shared object "
                                    "file: No such file or directory\n") + "".join(lines[half:])
    (m,) = find_matches(text, KB, TABLES)
    assert m.signature.cause_class == "library-not-found"
    assert m.line == half + 1
    assert text.splitlines()[m.line - 1].startswith("ImportError: libcusparse.so.11")

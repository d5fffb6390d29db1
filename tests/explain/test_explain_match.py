"""Matching: numbers decoded, captures filled, and no input makes it slow or quadratic."""

from __future__ import annotations

import re

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain.focus import WHOLE, focus
from gpudoctor.explain.kb import load
from gpudoctor.explain.match import AFTER, MAX_WINDOWS, SPAN, find_matches

KB, TABLES = load(), load_tables()


def one(text: str, sig_id: str):  # type: ignore[no-untyped-def]
    found = {m.signature.id: m for m in find_matches(text, KB, TABLES)}
    assert sig_id in found, f"{sig_id} not in {sorted(found)}"
    return found[sig_id]


@pytest.mark.parametrize(("found", "meaning"), [("11040", "CUDA 11.4"), ("12020", "CUDA 12.2"),
                                                 ("9000", "CUDA 9.0")])
def test_driver_cuda_versions_decoded(found: str, meaning: str) -> None:
    m = one(f"RuntimeError: The NVIDIA driver on your system is too old (found version {found}).",
            "driver-too-old-for-torch")
    (c,) = m.captures
    assert (c.raw, c.meaning) == (found, meaning)


@pytest.mark.parametrize(("text", "built", "found"), [
    ("cuDNN version mismatch: PyTorch was compiled against 8907 but linked against 90100",
     "cuDNN 8.9.7", "cuDNN 9.1.0"),
    ("cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime "
     "version (8, 3, 3).", "cuDNN 8.5.0", "cuDNN 8.3.3"),
])
def test_cudnn_versions_decoded_in_both_encodings(text: str, built: str, found: str) -> None:
    m = one(text, "cudnn-version-incompatible")
    meanings = {c.name: c.meaning for c in m.captures}
    assert meanings == {"built": built, "found": found}


def test_sm_120_is_blackwell_rtx_50xx() -> None:
    m = one("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
            "current PyTorch installation.", "torch-arch-not-in-build")
    (c,) = m.captures
    assert c.raw == "sm_120"
    assert "12.0" in c.meaning and "Blackwell" in c.meaning


def test_compute_arch_of_nvcc_decoded() -> None:
    m = one("nvcc fatal   : Unsupported gpu architecture 'compute_86'", "nvcc-unsupported-arch")
    assert "8.6" in m.captures[0].meaning and "Ampere" in m.captures[0].meaning


def test_xid_numbers_have_their_documented_meaning() -> None:
    m = one("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus", "xid-79")
    assert "fallen off the bus" in m.captures[0].meaning
    m = one("NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE", "xid-48")
    assert "Double Bit ECC" in m.captures[0].meaning
    assert "reset the GPU" in m.captures[0].action
    m = one("NVRM: Xid (PCI:0000:3b:00): 161, something new", "xid-161")
    assert "Channel Retirement Failure" in m.captures[0].meaning


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
    known = {s.id for s in KB.signatures}  # the grammar may read the junk's real prefixes
    assert [m for m in find_matches(text, KB, TABLES) if m.signature.id in known] == []
    # a real error after the junk is still found (the focus keeps the end of a large text)
    tail = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert "illegal-memory-access" in [m.signature.id for m in find_matches(text + tail, KB,
                                                                             TABLES)]
    assert MAX_WINDOWS > 0


NOISE = "".join(f"2024-05-01 12:00:{i % 60:02d} INFO step {i} loss=0.{i % 97:02d} cuda:0 "
                f"mem {9000 + i % 5000}MiB\n" for i in range(40000))  # about 2.4 MiB


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


@pytest.mark.slow
def test_focus_keeps_the_trigger_lines_and_the_end_only() -> None:
    text = NOISE + "RuntimeError: something\n" + NOISE + "the last line\n"
    f = focus(text, text.lower())
    assert "RuntimeError: something" in f.text and f.text.endswith("the last line\n")
    assert len(f.text) < len(text) // 4

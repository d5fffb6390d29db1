"""gpudoctor.compat.rows: the row types of the compat tables and what each answers about
itself, on rows built here (the shipped rows are tested through `Tables` in test_compat.py)."""

from __future__ import annotations

import pytest

from gpudoctor.compat.rows import (
    _V,
    UNVERIFIED,
    CudaRelease,
    CudnnRelease,
    CudnnSupport,
    TorchRelease,
    TorchVariant,
    _newest,
    _within,
)

SRC = "https://example.org/the-primary-document"


def support(min_cc: str, max_cc: str, cuda: str | None = None) -> CudnnSupport:
    return CudnnSupport(first="9.7.0", last="9.10.2", cuda=cuda, min_cc=min_cc, max_cc=max_cc,
                        source=SRC, status="verified")


def cudnn(*builds: str, min_driver: tuple[tuple[str, str], ...] = ()) -> CudnnRelease:
    return CudnnRelease(version="9.1.0", cuda_builds=builds, min_driver=min_driver,
                        source=SRC, status="verified")


def test_a_cuda_release_belongs_to_its_minor() -> None:
    assert CudaRelease(version="12.4.1", label="12.4 Update 1", kind="update", source=SRC,
                       status="copy").minor == "12.4"
    assert CudaRelease(version="10.0.130", label="10.0 GA", kind="ga", source=SRC,
                       status="copy").minor == "10.0"


def test_a_torch_release_finds_its_variant_by_tag() -> None:
    cu121 = TorchVariant("cu121", "12.1", "https://download.pytorch.org/whl/cu121", None, None)
    cu118 = TorchVariant("cu118", "11.8", "https://download.pytorch.org/whl/cu118", None, None)
    rel = TorchRelease(version="2.1.0", variants=(cu118, cu121), install="index-url",
                       source=SRC, status="verified")
    assert rel.variant("cu121") is cu121 and rel.variant("cu118") is cu118
    assert rel.variant("cu124") is None and rel.variant("") is None


@pytest.mark.parametrize(("cc", "inside"), [
    ("5.0", True), ("8.6", True), ("sm_86", True), ("compute_90a", True), ("12.0", True),
    ("3.7", False), ("12.1", False), ("garbage", False), ("", False)])
def test_a_support_row_is_inclusive_at_both_ends(cc: str, inside: bool) -> None:
    assert support("5.0", "12.0").supports(cc) is inside


def test_a_support_row_says_its_range() -> None:
    assert support("5.0", "12.0").range_text() == (
        "compute capability 5.0-12.0 (sm_50 to sm_120)")


@pytest.mark.parametrize(("row_cuda", "asked", "covers"), [
    ("12.8-12.9", "12.8", True), ("12.8-12.9", "12.9.1", True), ("12.8-12.9", "12.6", False),
    ("12.8-12.9", "13.0", False), ("13", "13", True), ("13", " 13 ", True), ("13", "12", False),
    ("13", "13.1", True), ("10.2", "10.2", True), ("10.2", "10.1", False),
    ("12.8-12.9", "garbage", False), (None, "12.8", False), (None, "13", False)])
def test_a_support_row_covers_the_builds_it_names(row_cuda: str | None, asked: str,
                                                  covers: bool) -> None:
    assert support("7.5", "12.0", row_cuda).covers_cuda(asked) is covers


def test_a_cudnn_release_runs_with_the_cudas_of_its_builds() -> None:
    rel = cudnn("11.0-11.8", "12")
    assert [rel.supports_cuda(c) for c in ("11.0", "11.8.0", "12.4", "12.9", "10.2", "13.0",
                                           "x")] == [True, True, True, True, False, False, False]
    assert cudnn("10.1").supports_cuda("10.1.243") and not cudnn("10.1").supports_cuda("10.2")


def test_a_cudnn_release_states_a_driver_per_build() -> None:
    """The exact minor's row first, else the row for the whole major."""
    rel = cudnn("11.8", "12", min_driver=(("11.8", "520.61.05"), ("12", "525.60.13"),
                                          ("12.4", "550.54.14")))
    assert rel.min_driver_for("11.8") == "520.61.05"
    assert rel.min_driver_for("12.4") == "550.54.14"
    assert rel.min_driver_for("12.6") == "525.60.13"
    assert rel.min_driver_for("10.2") is None and rel.min_driver_for("garbage") is None


def test_newest_leaves_unverified_rows_out_unless_asked() -> None:
    def row(version: str, status: str) -> CudaRelease:
        return CudaRelease(version=version, label=version, kind="ga", source=SRC, status=status)

    rows = (row("12.9.0", "verified"), row("13.0.0", UNVERIFIED), row("12.10.0", "copy"))
    assert _newest(rows, lambda r: r.version, False).version == "12.10.0"  # not by string
    assert _newest(rows, lambda r: r.version, True).version == "13.0.0"
    only_unverified = (row("13.0.0", UNVERIFIED),)
    assert _newest(only_unverified, lambda r: r.version, False).version == "13.0.0"


def test_within_a_release_range() -> None:
    assert _within((9, 8, 0), "9.7.0", "9.10.2") and _within((9, 10, 2), "9.7.0", "9.10.2")
    assert not _within((9, 11, 0), "9.7.0", "9.10.2") and not _within((9, 6, 9), "9.7.0", None)
    assert _within((9, 99, 0), "9.7.0", None)  # no last: still current


def test_a_validated_version_parses_and_another_is_refused() -> None:
    assert _V("12.10") > _V("12.9")
    with pytest.raises(ValueError, match="not a version"):
        _V("r580")

"""Decoding: the numbers a matched text names (CUDA and cuDNN versions in their encodings,
sm_XY and compute_XY, Xids) get their documented meaning."""

from __future__ import annotations

import pytest

from gpudoctor.explain.decode import decode, parse_size
from tests.explain.explain_kit import TABLES, one


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


@pytest.mark.parametrize(("text", "size"), [
    ("2.50 MiB", 2.5 * 2**20), ("20.00 GiB", 20 * 2**30), ("1 KB", 1e3), (" 7 bytes ", 7.0),
    ("3gib", 3 * 2**30), ("512 B", 512.0), ("4 KiB", 4096.0), ("2 TB", 2e12),
])
def test_parse_size_reads_binary_and_decimal_units(text: str, size: float) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "GiB", "2.50 parsecs", "1.2.3 MiB", "9" * 70 + " MiB"])
def test_parse_size_refuses_what_is_not_a_size(text: str) -> None:
    assert parse_size(text) is None


def test_decode_keeps_the_raw_value_and_leaves_what_does_not_decode_without_meaning() -> None:
    d = decode("found", "cuda-int", " 12040 ", TABLES)
    assert (d.name, d.kind, d.raw, d.meaning) == ("found", "cuda-int", "12040", "CUDA 12.4")
    assert decode("found", "cuda-int", "twelve", TABLES).meaning == ""
    assert decode("v", "cudnn", "not a version", TABLES).meaning == ""
    assert decode("a", "arch", "sm_xyz", TABLES).meaning == ""
    assert decode("s", "size", "2.50 MiB", TABLES).meaning == ""  # under a GiB: no meaning
    assert decode("s", "size", "40 GiB", TABLES).meaning == "40.00 GiB"


def test_an_xid_newer_than_the_catalog_points_to_it() -> None:
    d = decode("xid", "xid", "9999", TABLES)
    assert d.meaning.startswith("Xid 9999: newer than") and "xid-errors" in d.action

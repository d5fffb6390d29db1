"""gpudoctor.compat.rules: the family rules decide where the tables hold no exact row, and say
which rule (or which row) decided, with its source."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables
from gpudoctor.compat.rules import (
    BACKWARD,
    BINARY_COMPAT,
    MINOR_VERSION,
    NVCC_ARCHS,
    RULES,
    arch_in_build,
    cudnn_runs_with_cuda,
    cudnn_supports_gpu,
    driver_for_cuda,
    driver_runs,
)


def test_every_rule_cites_a_primary_document() -> None:
    assert len({r.name for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.source.startswith("https://docs.nvidia.com/"), rule
        assert rule.text, rule


# --------------------------------------------------------------------------- arch

# (CUDA of the build, compute capability, verdict): NVIDIA's per-release nvcc arch lists,
# as the [[arch]] rows of gpu.toml give each compute capability's first and last toolkit
ARCH = [
    ("13.0", "6.1", "cannot"),  # GTX 1080: CUDA 13 compiles sm_75 and newer only
    ("13.2", "7.0", "cannot"),  # V100: 12.9 was the last toolkit for Volta
    ("13.0", "5.2", "cannot"),  # Maxwell
    ("14.0", "6.1", "cannot"),  # a CUDA past the tables: retired architectures stay retired
    ("12.0", "3.7", "cannot"),  # K80: 11.8 was the last
    ("11.0", "3.0", "cannot"),  # K10: 10.2 was the last
    ("13.0", "7.5", "sass"),
    ("12.9", "6.1", "sass"),
    ("12.8", "12.1", "sass"),  # sm_120 cubins run on sm_121
    ("11.7", "8.9", "sass"),  # 11.7 predates sm_89, but its sm_86 cubins run there
    ("12.6", "12.0", "ptx-only"),  # RTX 5090: no 12.x cubin before CUDA 12.8
    ("10.2", "8.6", "ptx-only"),
]


@pytest.mark.parametrize(("cuda", "cc", "verdict"), ARCH)
def test_the_arch_rule(tables: Tables, cuda: str, cc: str, verdict: str) -> None:
    ruling = arch_in_build(tables, cuda, cc)
    assert ruling.verdict == verdict, ruling
    assert ruling.rule.source in ruling.cited and "rule:" in ruling.cited
    if verdict == "cannot":
        assert ruling.rule is NVCC_ARCHS
        assert f"no CUDA {'.'.join(cuda.split('.')[:2])} build can hold code for" in ruling.why


def test_the_arch_rule_does_not_guess(tables: Tables) -> None:
    """A GPU the table has no row for, under a CUDA whose floor nothing proves it passed
    (CUDA 8 compiled sm_20; no row older than sm_30 says so): unknown, not "cannot"."""
    assert arch_in_build(tables, "8.0", "2.1").verdict in ("unknown", "sass")
    assert arch_in_build(tables, "twelve", "8.6").verdict == "unknown"
    assert arch_in_build(tables, "12.4", "sm_?").verdict == "unknown"


# --------------------------------------------------------------------------- driver

DRIVER = [
    ("580.65.06", "13.0", None, "full", True),  # the release notes' row
    ("580.65.06", "13.2", None, "mvc", False),  # below 13.2's driver, above the 13.x floor
    ("550.54.14", "12.6", None, "mvc", False),
    ("550.54.14", "12.4", None, "full", True),
    ("470.82.01", "12.1", None, "no", True),  # below the 12.x floor
    ("410.48", "10.1", None, "no", True),
    ("580.65.06", "13.9", None, "mvc", False),  # no row: the 13.x family floor decides
    ("575.57.08", "13.9", None, "no", False),
    ("700.10.01", "14.0", None, "unknown", False),  # no CUDA 14 floor is recorded
    ("535.104.05", "12.9", "12.9", "full", False),  # the driver reports it: backward compat
]


@pytest.mark.parametrize(("driver", "cuda", "reports", "verdict", "by_row"), DRIVER)
def test_the_driver_rule(tables: Tables, driver: str, cuda: str, reports: str | None,
                         verdict: str, by_row: bool) -> None:
    ruling = driver_for_cuda(tables, driver, cuda, reports)
    assert (ruling.verdict, ruling.by_row) == (verdict, by_row), ruling
    if verdict == "mvc":
        assert ruling.rule is MINOR_VERSION
        assert "minor-version-compatibility.html" in ruling.cited
    if reports:
        assert ruling.rule is BACKWARD
    assert driver_runs(tables, driver, cuda) == (verdict if verdict in ("full", "mvc") and not
                                                 reports else driver_runs(tables, driver, cuda))


def test_a_cuda_past_the_tables_says_so(tables: Tables) -> None:
    ruling = driver_for_cuda(tables, "580.65.06", "13.9")
    assert "newer than the bundled tables" in ruling.why and "13 floor" in ruling.why


# --------------------------------------------------------------------------- cuDNN


def test_cudnn_builds_per_major_from_cuda_11(tables: Tables) -> None:
    ruling = cudnn_runs_with_cuda(tables, "8.9.7", "11.4")
    assert ruling.verdict == "yes" and ruling.rule.name == "cudnn-build-per-major"
    # before CUDA 11 a build serves the minors it names: the table row decides
    old = cudnn_runs_with_cuda(tables, "7.6.5", "10.1")
    assert old.verdict == "yes" and old.by_row
    # a release the tables lack: the build at hand (its wheel's CUDA major) decides
    new = cudnn_runs_with_cuda(tables, "9.99.0", "12.4", build_major=12)
    assert new.verdict == "yes" and "not in the tables" in new.why
    assert cudnn_runs_with_cuda(tables, "9.99.0", "13.0", build_major=12).verdict == "no"
    assert cudnn_runs_with_cuda(tables, "9.99.0", "12.4").verdict == "unknown"


def test_cudnn_gpu_support_by_row_then_by_rule(tables: Tables) -> None:
    row = cudnn_supports_gpu(tables, "8.9.7", "8.9")
    assert row.verdict == "yes" and row.by_row
    assert cudnn_supports_gpu(tables, "8.9.7", "12.0").verdict == "no"  # stops at sm_90
    # a major past the tables: its CUDA 13 build cannot hold sm_61 code (the arch rule)
    ruling = cudnn_supports_gpu(tables, "10.0.0", "6.1", "13")
    assert ruling.verdict == "no" and ruling.rule is NVCC_ARCHS, ruling
    assert cudnn_supports_gpu(tables, "10.0.0", "9.0", "13").verdict == "unknown"


def test_a_later_minor_of_the_rows_newest_major_runs_its_code(tables: Tables) -> None:
    """cuDNN 8.5.0's newest code is sm_86: by binary compatibility it runs on an RTX 4060 Ti
    (sm_89; round 17's r37-007, torch 1.13.1+cu117), never on a Hopper (sm_90)."""
    ada = cudnn_supports_gpu(tables, "8.5.0.96", "8.9", "11.7")
    assert ada.verdict == "yes" and ada.rule is BINARY_COMPAT and not ada.by_row, ada
    assert "sm_86" in ada.cited and "sm_89" in ada.cited
    assert cudnn_supports_gpu(tables, "8.5.0.96", "9.0", "11.7").verdict == "no"
    assert cudnn_supports_gpu(tables, "8.5.0.96", "3.0", "11.7").verdict == "no"  # below

"""The error-code enumerations under gpudoctor/explain/codes/ are complete against NVIDIA's own
headers: each file's count is its number of codes, and every code a header on this machine
defines (the CUDA toolkit's, the nvidia-* wheels' beside torch) is in the shipped file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tools.extract_error_codes import ENUMS, OUT, collect, find_headers

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


def _shipped(stem: str) -> dict:
    return tomllib.loads((OUT / f"{stem}.toml").read_text(encoding="utf-8"))


def _local_header_dirs() -> list[Path]:
    dirs = sorted(Path("/usr/local").glob("cuda*/include"))
    for entry in sys.path:
        nvidia = Path(entry) / "nvidia"
        if nvidia.is_dir():
            dirs.append(nvidia)
    return [d for d in dirs if d.is_dir()]


@pytest.mark.parametrize("spec", ENUMS, ids=lambda s: s.stem)
def test_each_enumeration_is_well_formed(spec) -> None:
    data = _shipped(spec.stem)
    codes = data["code"]
    assert data["count"] == len(codes) > 0
    assert len({c["name"] for c in codes}) == len(codes), "a name twice"
    assert len({c["number"] for c in codes}) == len(codes), "a number twice"
    assert all(c["name"].startswith(spec.prefix) for c in codes)
    assert data["releases"], "no header release recorded"


def test_the_runtime_and_driver_enumerations_carry_the_printed_messages() -> None:
    runtime = {c["name"]: c for c in _shipped("cuda_runtime")["code"]}
    assert runtime["cudaErrorInsufficientDriver"]["number"] == 35
    assert runtime["cudaErrorInsufficientDriver"]["message"] == (
        "CUDA driver version is insufficient for CUDA runtime version")
    assert runtime["cudaErrorNoKernelImageForDevice"]["number"] == 209
    driver = {c["name"]: c for c in _shipped("cuda_driver")["code"]}
    assert driver["CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"]["number"] == 803
    assert driver["CUDA_ERROR_NO_DEVICE"]["message"] == "no CUDA-capable device is detected"
    # every driver code with a message has the doc comment of cuda.h too
    assert all(c["doc"] for c in driver.values())


@pytest.mark.parametrize("spec", ENUMS, ids=lambda s: s.stem)
def test_complete_against_the_headers_on_this_machine(spec) -> None:
    dirs = _local_header_dirs()
    if not find_headers(dirs, spec):
        pytest.skip(f"no {spec.header} on this machine")
    found, _ = collect(dirs, spec)
    if not found:
        pytest.skip(f"no {spec.header} here defines this enum (another major)")
    shipped = {c["name"]: c["number"] for c in _shipped(spec.stem)["code"]}
    missing = {c.name: c.number for c in found if shipped.get(c.name) != c.number}
    assert not missing, f"codes in the headers here but not shipped: {missing}"

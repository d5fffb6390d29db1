"""The error-code enumerations under gpudoctor/explain/codes/ are complete against NVIDIA's own
headers: each file's count is its number of codes, and every code a header on this machine
defines (the CUDA toolkit's, the nvidia-* wheels' beside torch, and the folders named in
GPUDOCTOR_SDK_HEADERS, colon-separated: checkouts of FFmpeg/nv-codec-headers and
NVIDIA/optix-dev) is in the shipped file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tools.extract_error_codes import ENUMS, OUT, collect, find_headers, parse, table_strings

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


def _shipped(stem: str) -> dict:
    return tomllib.loads((OUT / f"{stem}.toml").read_text(encoding="utf-8"))


def _local_header_dirs() -> list[Path]:
    dirs = sorted(Path("/usr/local").glob("cuda*/include"))
    dirs += [Path(p) for p in os.environ.get("GPUDOCTOR_SDK_HEADERS", "").split(":") if p]
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


def test_nvenc_is_every_nvencstatus_of_the_video_codec_sdk_headers() -> None:
    """NVENCSTATUS numbers its 27 values implicitly (NV_ENC_SUCCESS = 0 up to
    NV_ENC_ERR_NEED_MORE_OUTPUT = 26, new in SDK 12.1); FFmpeg's nvenc.c describes all but the
    newest."""
    data = _shipped("nvenc")
    codes = {c["name"]: c for c in data["code"]}
    assert data["count"] == len(codes) == 27
    assert sorted(c["number"] for c in codes.values()) == list(range(27))
    assert codes["NV_ENC_ERR_OUT_OF_MEMORY"]["number"] == 10
    assert codes["NV_ENC_ERR_OUT_OF_MEMORY"]["message"] == "out of memory"
    assert codes["NV_ENC_ERR_INVALID_VERSION"]["number"] == 15
    assert codes["NV_ENC_ERR_NO_ENCODE_DEVICE"]["message"] == "no encode device"
    assert "message" not in codes["NV_ENC_ERR_NEED_MORE_OUTPUT"]
    assert all(c["doc"].startswith("This indicates") for c in codes.values())
    assert data["releases"][0].startswith("nv-codec-headers-n13.0.19.0@e844e5b")


def test_optix_is_every_optixresult_of_every_optix_dev_release() -> None:
    data = _shipped("optix")
    codes = {c["name"]: c for c in data["code"]}
    assert data["count"] == len(codes) == 44
    assert {n: codes[n]["number"] for n in (
        "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION", "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH",
        "OPTIX_ERROR_LIBRARY_NOT_FOUND", "OPTIX_ERROR_DEVICE_OUT_OF_MEMORY",
        "OPTIX_ERROR_UNKNOWN")} == {
        "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION": 7801,
        "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH": 7802, "OPTIX_ERROR_LIBRARY_NOT_FOUND": 7804,
        "OPTIX_ERROR_DEVICE_OUT_OF_MEMORY": 7807, "OPTIX_ERROR_UNKNOWN": 7999}
    # OptiX 7.0-7.6's names of 7200 and 7400 (7.0-7.5) are kept as the codes' former names
    assert codes["OPTIX_ERROR_INVALID_INPUT"]["formerly"] == ["OPTIX_ERROR_INVALID_PTX"]
    assert codes["OPTIX_ERROR_NOT_COMPATIBLE"]["formerly"] == ["OPTIX_ERROR_ACCEL_NOT_COMPATIBLE"]
    assert codes["OPTIX_ERROR_LIBRARY_NOT_FOUND"]["message"] == "Library not found"
    assert len(data["releases"]) == 12  # v7.0.0 to v9.1.0


NVENC_HEADER = """
typedef enum _NVENCSTATUS
{
    /**
     * This indicates that API call returned with no errors.
     */
    NV_ENC_SUCCESS,

    /**
     * This indicates that no encode capable devices were detected.
     */
    NV_ENC_ERR_NO_ENCODE_DEVICE,

    /** A trailing one. */
    NV_ENC_ERR_UNSUPPORTED_DEVICE = 5,
    NV_ENC_ERR_LAST
} NVENCSTATUS;
"""


def test_the_extractor_numbers_implicit_enumerators_and_reads_ffmpegs_table(
        tmp_path: Path) -> None:
    spec = next(s for s in ENUMS if s.stem == "nvenc")
    codes = parse(NVENC_HEADER, spec)
    assert [(c.name, c.number) for c in codes] == [
        ("NV_ENC_SUCCESS", 0), ("NV_ENC_ERR_NO_ENCODE_DEVICE", 1),
        ("NV_ENC_ERR_UNSUPPORTED_DEVICE", 5), ("NV_ENC_ERR_LAST", 6)]
    assert codes[1].doc == "This indicates that no encode capable devices were detected."
    src = tmp_path / "FFmpeg@0123456789ab" / "libavcodec"
    src.mkdir(parents=True)
    (src / "nvenc.c").write_text(
        '    { NV_ENC_ERR_NO_ENCODE_DEVICE,         AVERROR(ENOENT),  "no encode device" },\n'
        '    { NV_ENC_ERR_UNSUPPORTED_DEVICE, AVERROR_BUFFER_TOO_SMALL, "unsupported device"},\n')
    assert table_strings([tmp_path], spec, codes) == "FFmpeg@0123456789ab/libavcodec/nvenc.c"
    assert [c.message for c in codes] == ["", "no encode device", "unsupported device", ""]


def test_a_number_an_older_release_names_otherwise_keeps_the_newest_name(tmp_path: Path) -> None:
    spec = next(s for s in ENUMS if s.stem == "optix")
    for release, name in (("optix-dev-v7.7.0@7b5c4e8", "OPTIX_ERROR_INVALID_INPUT"),
                          ("optix-dev-v7.0.0@8d47554", "OPTIX_ERROR_INVALID_PTX")):
        include = tmp_path / release / "include"
        include.mkdir(parents=True)
        (include / "optix_types.h").write_text(
            f"typedef enum OptixResult\n{{\n    OPTIX_SUCCESS = 0,\n    {name} = 7200,\n"
            "} OptixResult;\n")
    codes, releases = collect([tmp_path / "optix-dev-v7.7.0@7b5c4e8",
                               tmp_path / "optix-dev-v7.0.0@8d47554"], spec)
    assert releases == ["optix-dev-v7.7.0@7b5c4e8", "optix-dev-v7.0.0@8d47554"]
    assert [(c.name, c.number, c.formerly, c.found_in) for c in codes][1] == (
        "OPTIX_ERROR_INVALID_INPUT", 7200, ["OPTIX_ERROR_INVALID_PTX"], releases)


def test_a_code_no_library_here_describes_keeps_the_shipped_message(tmp_path: Path) -> None:
    """--keep-messages: the driver's messages come from libcuda.so.1, which a machine without
    the driver lacks; a re-run there keeps each code's shipped message (same name and number)
    and says so, and a code new in the headers has none rather than a made-up one."""
    from tools.extract_error_codes import Code, kept_messages

    shipped = tmp_path / "cuda_driver.toml"
    shipped.write_text('messages_from = "libcuda.so.1"\ncount = 2\n\n'
                       '[[code]]\nname = "CUDA_ERROR_NO_DEVICE"\nnumber = 100\n'
                       'message = "no CUDA-capable device is detected"\ndoc = "d"\n\n'
                       '[[code]]\nname = "CUDA_ERROR_RENAMED"\nnumber = 5\n'
                       'message = "old"\ndoc = "d"\n', encoding="utf-8")
    codes = [Code("CUDA_ERROR_NO_DEVICE", 100, "d"), Code("CUDA_ERROR_STREAM_DETACHED", 917, "d"),
             Code("CUDA_ERROR_RENAMED", 6, "d")]
    assert kept_messages(shipped, codes, "") == "libcuda.so.1 (kept from the shipped file)"
    assert [c.message for c in codes] == ["no CUDA-capable device is detected", "", ""]
    assert kept_messages(shipped, [Code("CUDA_ERROR_X", 1, "d")], "libcudart.so.13") == (
        "libcudart.so.13")

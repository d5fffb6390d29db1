"""One regression test per crash the reader fuzzing found (`tools/fuzz_readers.py`), each the
shrunk input through the real CLI: before the fix each was exit 3 with a traceback (or, for the
GPU names, seconds per report); now a result, or exit 2 naming the field."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from runner import ROOT as REPO_ROOT
from runner import gpudoctor

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ENVS = REPO_ROOT / "tests" / "fixtures" / "envs"


def snapshot(tmp_path: Path, edit: dict[tuple[str | int, ...], object],
             base: str = "h100-healthy") -> Path:
    data = json.loads((ENVS / f"{base}.json").read_text())
    for path, value in edit.items():
        target = data["environment"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    out = tmp_path / "snap.json"
    out.write_text(json.dumps(data))
    return out


def no_crash(p: object) -> None:
    err = getattr(p, "stderr", "")
    assert getattr(p, "returncode", None) in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err, err


def test_visible_devices_with_a_non_ascii_digit(tmp_path: Path) -> None:
    """GD501 read CUDA_VISIBLE_DEVICES="²" with `isdigit()` then `int()`: ValueError."""
    for value in ("²", "٣", "9" * 5000, "0,²"):
        snap = snapshot(tmp_path, {("host", "env"): [["CUDA_VISIBLE_DEVICES", value]]})
        p = gpudoctor("check", "--from-snapshot", str(snap), "--format", "json")
        no_crash(p)
        gd501 = next(f for f in json.loads(p.stdout)["findings"] if f["id"] == "GD501")
        assert gd501["status"] == "fail"  # not a GPU here


def test_a_version_of_5000_digits(tmp_path: Path) -> None:
    """A torch version past int()'s 4300-digit limit made packaging raise ValueError, not
    InvalidVersion (GD309 and the advice parse it)."""
    huge = "2." + "9" * 5000
    snap = snapshot(tmp_path, {("torch", "runtime", "version"): huge,
                               ("torch", "static", "version"): huge})
    for fmt in ("text", "json", "junit"):
        no_crash(gpudoctor("check", "--from-snapshot", str(snap), "--format", fmt))
    no_crash(gpudoctor("recommend", "--from-snapshot", str(snap)))


def test_nvidia_smi_cuda_version_with_a_superscript(tmp_path: Path) -> None:
    smi = (REPO_ROOT / "tests" / "fixtures" / "reports" /
           "nvidia_smi-k8s-v100s-450-device-plugin.txt").read_text()
    for odd in ("1².0", "9" * 5000 + ".0", "11.٠"):
        report = tmp_path / "smi.txt"
        report.write_text(smi.replace("CUDA Version: 11.0 ", f"CUDA Version: {odd} "))
        no_crash(gpudoctor("check", "--from-report", str(report)))


@pytest.mark.parametrize("dtype", ["float64", "", "→ fix: x"])
def test_smoke_fact_with_an_unknown_dtype(tmp_path: Path, dtype: str) -> None:
    """The smoke checks and the smoke-test renderer looked the dtype up in their tolerance
    tables: KeyError. The snapshot reader now refuses it, naming the field."""
    from gpudoctor.snapshot import dumps
    from tests.smoke_kit import env_with, report
    from tests.smoke_kit import run as config

    outcome = report(config("native"), config("cudnn"))
    text = dumps(env_with(outcome)).replace('"dtype": "float32"', json.dumps({"dtype": dtype})
                                            [1:-1])
    snap = tmp_path / "smoke.json"
    snap.write_text(text)
    p = gpudoctor("check", "--from-snapshot", str(snap))
    no_crash(p)
    assert p.returncode == 2 and "$.smoke.dtype" in p.stderr


def test_junit_with_a_lone_surrogate_in_an_unavailable_message(tmp_path: Path) -> None:
    """NVML's Unavailable message "\\ud800" (from the JSON escape) went into the JUnit XML as
    `&#55296;`, which no XML parser accepts."""
    snap = snapshot(tmp_path, {("nvml",): {"unavailable": "version-mismatch",
                                           "message": "\ud800", "detail": None}})
    p = gpudoctor("check", "--from-snapshot", str(snap), "--format", "junit")
    no_crash(p)
    ET.fromstring(p.stdout.encode())


def test_a_report_naming_many_gpus_is_read_promptly(tmp_path: Path) -> None:
    """A pasted collect_env naming 1000 GPUs (no compute capability: the name gives it)."""
    src = REPO_ROOT / "tests" / "fixtures" / "reports" / (
        "collect_env-2x-rtx3090-nightly-cu124-healthy.txt")
    names = ("NVIDIA GeForce RTX 3090", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB",
             "NVIDIA L4", "Quadro RTX 8000", "NVIDIA GeForce GTX 1080 Ti")
    gpus = "".join(f"GPU {i}: {names[i % len(names)]} #{i}\n" for i in range(1000))
    report = tmp_path / "collect_env.txt"
    report.write_text(src.read_text().replace(
        "GPU 0: NVIDIA GeForce RTX 3090\nGPU 1: NVIDIA GeForce RTX 3090\n", gpus))
    start = time.monotonic()
    no_crash(gpudoctor("check", "--from-report", str(report)))
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("line", [
    "ImportError: /home/u/anaconda3" + "9" * 100_000 + "char_traitsIcESaIcEEE",
    "libx.so" * 40_000, "x.dll" * 50_000, "libx.so: " * 30_000, "9" * 2_000_000 + " GiB",
])
def test_explain_a_long_line_promptly(tmp_path: Path, line: str) -> None:
    """explain's loader patterns backtracked quadratically (or worse: 97 s for 7 KB of
    'libx.so') on a long run without white space: the fuzzer's 'hang'. Each now starts only at a
    token's start and is bounded, so a pasted log of any shape is read in well under a second
    per megabyte."""
    log = tmp_path / "err.log"
    log.write_text(line + "\n")
    start = time.monotonic()
    no_crash(gpudoctor("explain", str(log), "--no-probe"))
    assert time.monotonic() - start < 20


def test_torch_warning_with_a_huge_compute_capability(tmp_path: Path) -> None:
    """torch's "with CUDA capability sm_N is not compatible" warning, N of 60,000 digits, in
    a pasted report: parse_cc's int() refused it (ValueError, exit 3)."""
    report = tmp_path / "issue.md"
    report.write_text("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_"
                      + "9" * 60_000 + " is not compatible with the current PyTorch "
                      "installation.\n")
    no_crash(gpudoctor("check", "--from-report", str(report)))
    no_crash(gpudoctor("explain", str(report), "--no-probe"))


def test_an_xml_report_with_an_undecodable_byte_in_argv() -> None:
    """`explain "$(cat log)"` whose text holds `nvidia-smi -q -x` and a byte that is not UTF-8:
    Python hands it over as a lone surrogate, which the XML parser could not be fed
    (UnicodeEncodeError, exit 3); the fuzzer found it with "\\ud800" in a pasted -q -x."""

    xml = next((REPO_ROOT / "tests" / "fixtures" / "reports").glob("nvidia_smi_xml*")).read_bytes()
    text = (b"CUDA error: no kernel image is available for execution on the device\n"
            + xml.replace(b"<driver_version>", b"\xff<driver_version>", 1))
    p = gpudoctor("explain", text, timeout=120, text=False)
    assert p.returncode in (0, 1), p.stderr
    assert b"Traceback" not in p.stderr and b"internal error" not in p.stderr
    assert b"nvidia-smi -q -x" in p.stderr  # the block was read, and confirmed against

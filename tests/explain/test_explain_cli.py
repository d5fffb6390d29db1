"""`gpudoctor explain` end to end: real subprocesses, real files, stdin, and the exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # gpudoctor in new processes: ~1 s each

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"
ERRORS = ROOT / "tests" / "fixtures" / "errors"
SM120 = REPORTS / "collect_env-rtx5090d-cu126-sm120-missing.txt"
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def gpudoctor(*args: str, stdin: str | None = None, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "NO_COLOR": "1", **(env or {})}
    e.pop("GPUDOCTOR_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "gpudoctor", "explain", *args],
                          capture_output=True, text=True, env=e, timeout=300, cwd=ROOT,
                          input=stdin, check=False)


def clean_exit(p: subprocess.CompletedProcess[str], code: int) -> None:
    assert p.returncode == code, p.stderr
    assert "Traceback" not in p.stdout + p.stderr


def test_text_argument_confirmed_against_a_report_file() -> None:
    p = gpudoctor(NO_KERNEL, "--from-report", str(SM120))
    clean_exit(p, 0)
    assert "[confirmed] no kernel image for this GPU" in p.stdout
    assert "GD404" in p.stdout and "→ fix:" in p.stdout and "pip install" in p.stdout
    assert "1 known error, 1 confirmed" in p.stderr


def test_a_file_holding_a_whole_report_is_confirmed_against_itself() -> None:
    p = gpudoctor(str(SM120), "--format", "json")
    clean_exit(p, 0)
    data = json.loads(p.stdout)
    assert data["command"] == "explain" and data["found"] is True
    best = data["diagnoses"][0]
    assert best["id"] == "torch-arch-not-in-build" and best["state"] == "confirmed"
    assert best["decoded"][0]["value"] == "sm_120"
    assert "Blackwell" in best["decoded"][0]["meaning"]
    assert any(c["id"] == "GD404" and c["status"] == "fail" for c in best["checks"])


def test_stdin_and_markdown() -> None:
    text = (ERRORS / "faster-rcnn-cudnn-mismatch-7102.txt").read_text()
    p = gpudoctor("-", "--format", "markdown", "--no-probe", stdin=text)
    clean_exit(p, 0)
    assert p.stdout.startswith("## gpudoctor")
    assert "cuDNN 7.1.2" in p.stdout and "cuDNN 7.6.0" in p.stdout


def test_unknown_text_exits_1_and_points_to_check() -> None:
    p = gpudoctor("ValueError: too many values to unpack", "--no-probe")
    clean_exit(p, 1)
    assert "gpudoctor check" in p.stdout and "gpudoctor check" in p.stderr


def test_usage_errors_exit_2() -> None:
    clean_exit(gpudoctor(), 2)
    clean_exit(gpudoctor(NO_KERNEL, "--format", "junit"), 2)
    p = gpudoctor(NO_KERNEL, "--from-report", "/nonexistent/report.txt")
    clean_exit(p, 2)
    assert "no such file" in p.stderr
    p = gpudoctor("-", stdin="")
    clean_exit(p, 2)


def test_input_is_bounded(tmp_path: Path) -> None:
    big = tmp_path / "huge.log"
    with big.open("wb") as f:
        f.truncate((16 << 20) + 1)
    p = gpudoctor(str(big))
    clean_exit(p, 2)
    assert "larger than 16 MiB" in p.stderr


def test_strings_from_the_input_are_escaped() -> None:
    hostile = "\x1b]0;pwned\x07Could not load library libcudnn_ops_infer.so.8\x1b[2J"
    for fmt in ("text", "markdown", "json"):
        p = gpudoctor(hostile, "--no-probe", "--format", fmt)
        clean_exit(p, 0)
        assert "\x1b" not in p.stdout and "\x07" not in p.stdout


def test_this_machine_is_probed_when_the_text_has_no_report() -> None:
    """A real probe of this machine (no GPU here): the cause cannot be confirmed, and says so."""
    p = gpudoctor(NO_KERNEL, "--format", "json", "--timeout", "120")
    clean_exit(p, 0)
    data = json.loads(p.stdout)
    assert data["checked_against"] == "this machine"
    assert data["diagnoses"][0]["state"] in {"unchecked", "confirmed", "not-confirmed"}
    assert {c["id"] for c in data["diagnoses"][0]["checks"]} == {"GD404"}

"""`check --npd`: the node-problem-detector custom-plugin contract (exit 0 OK, 1 NonOK,
2 Unknown; one status line that fits NPD's default max_output_length of 80 bytes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner import gpudoctor

from gpudoctor.renderers.npd import MAX_BYTES
from tests.ci.cikit import FIXTURES, GPU_LESS, H100

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_one_short_line_and_the_exit_code_of_check(path: Path) -> None:
    plain = gpudoctor("check", "--from-snapshot", str(path), "--format", "json")
    p = gpudoctor("check", "--npd", "--from-snapshot", str(path))
    assert p.returncode == plain.returncode in (0, 1)
    lines = p.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0].encode()) <= MAX_BYTES
    failed = [f for f in json.loads(plain.stdout)["findings"] if f["status"] == "fail"]
    if failed:
        assert lines[0].startswith(failed[0]["id"] + " ")
        assert (f"(+{len(failed) - 1} more)" in lines[0]) == (len(failed) > 1)
    else:
        assert lines[0].startswith("OK: ")


@pytest.mark.slow
def test_strict_makes_a_warning_a_problem() -> None:
    p = gpudoctor("check", "--npd", "--strict", "--from-snapshot", str(GPU_LESS),
                  "--require", "torch>=1.0")
    plain = gpudoctor("check", "--strict", "--from-snapshot", str(GPU_LESS))
    assert p.returncode == plain.returncode


@pytest.mark.slow
def test_usage_error_is_unknown_and_the_report_goes_to_the_file(tmp_path: Path) -> None:
    p = gpudoctor("check", "--npd", "--require", "gpus>>1")
    assert p.returncode == 2 and p.stdout == ""
    report = tmp_path / "r.json"
    p = gpudoctor("check", "--npd", "--from-snapshot", str(H100), "-f", "json",
                  "-o", str(report))
    assert p.returncode == 0 and p.stdout.startswith("OK: ")
    assert json.loads(report.read_text())["findings"]

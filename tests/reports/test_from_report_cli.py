"""`gpudoctor check --from-report FILE|-` as a maintainer runs it: a real subprocess, the issue
body on stdin, nothing on this machine probed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import runner

from tests.reports.report_excerpts import COLLECT_ENV_4090_CU117, TABLE_550_A10

# every test here takes over 0.1 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"
BODY = f"### Versions\n\n```\n{COLLECT_ENV_4090_CU117}```\n"


def gpudoctor(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return runner.gpudoctor(*args, input=stdin, timeout=120)


def test_issue_body_on_stdin() -> None:
    p = gpudoctor("check", "--from-report", "-", "--format", "json", stdin=BODY)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    data = json.loads(p.stdout)
    env = data["environment"]
    assert env["sources"] == ["collect_env (cut off) in stdin"]
    # nothing here was probed: of the host only the report's machine architecture (Python's
    # platform line) is in it, not this machine's; the toolkit is the nvcc collect_env ran
    # ("CUDA runtime version: 11.7.64") and cuDNN the files it listed
    assert env["libcuda"]["unavailable"] == "not-reported"
    assert env["host"]["machine"] == "x86_64"
    assert all(env["host"][k]["unavailable"] == "not-reported"
               for k in ("os_name", "kernel", "python_executable", "env", "dev_nodes"))
    (toolkit,) = env["toolkits"]["toolkits"]
    assert toolkit["version"] == "11.7" and "not in the report" in toolkit["root"]
    (cudnn,) = env["cudnn"]["installs"]
    assert cudnn["library_version"] == "8.0.5" and cudnn["libraries"] == []
    found = {f["id"]: f["status"] for f in data["findings"]}
    assert found["GD404"] == "pass"


def test_header_names_the_reports(tmp_path: Path) -> None:
    a, b = tmp_path / "collect_env.txt", tmp_path / "smi.txt"
    a.write_text(COLLECT_ENV_4090_CU117)
    b.write_text(TABLE_550_A10)
    p = gpudoctor("check", "--from-report", str(a), "--from-report", str(b))
    assert p.returncode in (0, 1), p.stderr
    assert f"collect_env (cut off) in {a}" in p.stdout and f"nvidia-smi in {b}" in p.stdout


def test_unrecognised_input_exits_2_with_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("the GPU is slow\n")
    p = gpudoctor("check", "--from-report", str(notes))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(notes) in lines[0] and "no report recognised" in lines[0]


def test_missing_file_exits_2() -> None:
    p = gpudoctor("check", "--from-report", "/nonexistent/report.txt")
    assert p.returncode == 2 and "/nonexistent/report.txt" in p.stderr
    assert "Traceback" not in p.stderr


def test_from_snapshot_is_an_alias() -> None:
    snap = ENVS / "lost-gpu.json"
    p = gpudoctor("check", "--from-snapshot", str(snap), "--format", "json")
    assert p.returncode == 1, p.stderr  # the lost GPU fails GD102, as before
    replayed = json.loads(p.stdout)["environment"]
    for key, value in json.loads(snap.read_text())["environment"].items():
        key = "toolkits" if key == "cuda" else key  # schema_version 1's name for the toolkits
        assert _as_recorded(replayed[key], value), key  # read exactly as recorded


def _as_recorded(replayed: object, recorded: object) -> bool:
    """`replayed` holds what was recorded; a field added to the model since is "not recorded"."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        added = set(replayed) - set(recorded)
        return set(recorded) <= set(replayed) and all(
            _as_recorded(replayed[k], v) for k, v in recorded.items()) and all(
            str(replayed[k].get("message", "")).startswith("not recorded") for k in added
            if isinstance(replayed[k], dict))
    if isinstance(recorded, list) and isinstance(replayed, list):
        return len(recorded) == len(replayed) and all(
            _as_recorded(a, b) for a, b in zip(replayed, recorded, strict=True))
    return replayed == recorded

"""`gpudoctor check` end to end: real subprocesses on this (GPU-less) machine, and replays."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import runner
from runner import invoke

from gpudoctor.compat import known_until

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "envs"


def gpudoctor(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> (
        subprocess.CompletedProcess[str]):
    return runner.gpudoctor(*args, env=env, timeout=timeout)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout, p.stderr


@pytest.mark.slow
def test_help_and_version() -> None:
    p = gpudoctor("--help")
    assert p.returncode == 0 and "examples:" in p.stdout and "check" in p.stdout
    p = gpudoctor("--version")
    assert p.returncode == 0 and p.stdout.startswith("gpudoctor 0.")
    until = known_until().isoformat()  # the tables' date: `refresh_compat.py --stamp` moves it
    assert p.stdout.rstrip().endswith(f"(compat tables known until {until})")


@pytest.mark.slow
def test_check_json_on_this_machine(torch_cuda: str | None) -> None:
    p = gpudoctor("check", "--format", "json")
    no_traceback(p)
    assert p.returncode in (0, 1)
    data = json.loads(p.stdout)
    assert data["environment"]["nvml"]["unavailable"] == "not-installed"
    assert data["environment"]["torch"]["runtime"]["cuda"] == torch_cuda  # whichever build
    assert p.returncode == (1 if data["summary"]["fail"] else 0)


@pytest.mark.slow
def test_check_text_no_torch(tmp_path: Path) -> None:
    p = gpudoctor("check", "--no-torch", "-v")
    no_traceback(p)
    assert p.returncode in (0, 1)
    assert "PyTorch (CUDA it was built with)" in p.stdout and "--no-torch" in p.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "--format", "yaml"], "yaml"),
        (["check", "--from-snapshot", "/nonexistent.json"], "cannot read"),
        (["check", "--python", "/no/such/python"], "--python"),
        (["frobnicate"], "No such command"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    p = gpudoctor(*args)
    no_traceback(p)
    assert p.returncode == 2 and needle in p.stderr


@pytest.mark.slow
def test_garbage_snapshot_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe garbage")
    p = gpudoctor("check", "--from-snapshot", str(bad))
    no_traceback(p)
    assert p.returncode == 2 and "not UTF-8" in p.stderr


@pytest.mark.slow
def test_replay_exit_codes_strict_only_skip() -> None:
    healthy = str(FIXTURES / "h100-healthy.json")
    r = invoke("check", "--from-snapshot", healthy)
    assert r.exit_code == 0, r.output
    r = invoke("check", "--from-snapshot", str(FIXTURES / "lost-gpu.json"))
    assert r.exit_code == 1
    shm = str(FIXTURES / "container-no-gpus-flag.json")
    r = invoke("check", "--from-snapshot", shm, "--only", "GD504")
    assert r.exit_code == 0 and "GD504" in r.output and "GD101" not in r.output
    r = invoke("check", "--from-snapshot", shm, "--only", "GD504", "--strict")
    assert r.exit_code == 1
    r = invoke("check", "GD999", "--from-snapshot", healthy)
    assert r.exit_code == 2 and "'GD999': no such check" in r.stderr


def test_output_file_and_junit(tmp_path: Path) -> None:
    out = tmp_path / "r.xml"
    r = invoke("check", "--from-snapshot", str(FIXTURES / "lost-gpu.json"),
               "--format", "junit", "-o", str(out))
    assert r.exit_code == 1 and out.read_text().startswith("<?xml")


@pytest.mark.slow
def test_snapshot_then_replay(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    p = gpudoctor("snapshot", "--no-torch", "-o", str(snap))
    assert p.returncode == 0, p.stderr
    p = gpudoctor("check", "--from-snapshot", str(snap), "--format", "json")
    no_traceback(p)
    assert json.loads(p.stdout)["environment"] == json.loads(snap.read_text())["environment"]


def broken_torch(tmp_path: Path, body: str) -> dict[str, str]:
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(body)
    return {"PYTHONPATH": str(tmp_path)}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("raise ImportError('libcudnn_cnn_infer.so.8: cannot open shared object file')",
         "libcudnn_cnn_infer.so.8"),
        ("import os\nos.abort()", "SIGABRT"),
        ("import time\ntime.sleep(600)", "did not finish within 3 s"),
    ],
    ids=["raises", "aborts", "hangs"],
)
def test_broken_torch_is_a_finding(tmp_path: Path, body: str, needle: str) -> None:
    p = gpudoctor("check", "--timeout", "3", "--only", "pytorch",
                  env=broken_torch(tmp_path, body))
    no_traceback(p)
    assert p.returncode == 1
    assert needle in p.stdout
    assert "GD401" in p.stdout


@pytest.mark.slow
def test_garbage_toolkit_files(tmp_path: Path) -> None:
    tk = tmp_path / "cuda"
    (tk / "include").mkdir(parents=True)
    (tk / "bin").mkdir()
    (tk / "version.json").write_text("{ garbage")
    (tk / "include" / "cuda.h").write_bytes(b"\x00\xff#define CUDA_VERSION banana\n")
    nvcc = tk / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'nvcc: fatal error' >&2\nexit 3\n")
    nvcc.chmod(0o755)
    missing = ":".join(str(tmp_path / f"gone{i}") for i in range(20))
    p = gpudoctor("check", "--no-torch", "--cuda-home", str(tk), "-v", "--format", "json",
                  env={"LD_LIBRARY_PATH": missing})
    no_traceback(p)
    data = json.loads(p.stdout)
    tk0 = data["environment"]["toolkits"]["toolkits"][0]
    assert tk0["found_by"] == "--cuda-home" and tk0["root"] == str(tk)
    assert tk0["version"]["unavailable"] == "error"
    gd202 = next(f for f in data["findings"] if f["id"] == "GD202")
    assert gd202["status"] == "warn" and "version.json" in gd202["message"]
    gd503 = next(f for f in data["findings"] if f["id"] == "GD503")
    assert gd503["status"] == "warn" and "20 entries" in gd503["message"]


def test_output_written_whole_with_usual_mode(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("old report")
    out.chmod(0o640)
    r = invoke("check", "--from-snapshot", str(FIXTURES / "lost-gpu.json"),
               "--format", "json", "-o", str(out))
    assert r.exit_code == 1
    assert json.loads(out.read_text())["summary"]["fail"] >= 1
    assert out.stat().st_mode & 0o777 == 0o640  # the file it replaced kept its mode
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left

"""`gpudoctor smoke-test` end to end on this (GPU-less) machine: the command run with CliRunner,
and `python -m gpudoctor` in a real process for the JSON's `environment`; the child is a real
subprocess with the real torch installed here (without torch, those tests skip)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import runner

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

FAST = ["--steps", "3", "--warmup", "1"]


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {"COLUMNS": "200", **(env or {})}  # no wrapping
    result = runner.invoke("smoke-test", *args, env=env)
    out, err = result.stdout, result.stderr
    assert "Traceback" not in out + err, out + err
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, out, err


@pytest.mark.slow
@pytest.mark.needs_torch
def test_cpu_text() -> None:
    code, out, _ = invoke("--device", "cpu", *FAST)
    assert code == 0, out
    assert "cpu:" in out
    assert "torch 2." in out
    for row in ("lenet", "convnet", "median", "spread", "(p90 - p10) / median"):
        assert row in out
    assert "GD450" in out
    assert "GD453" in out
    assert "CUDA devices only" in out
    assert "smoke test passed" in out
    assert "matmul:" in out
    assert "(CPU figure)" in out


@pytest.mark.slow
@pytest.mark.needs_torch
def test_cpu_json_to_file(tmp_path: Path) -> None:
    target = tmp_path / "smoke.json"
    code, out, err = invoke("--device", "CPU", "--model", "lenet", "--format", "json",
                            "-o", str(target), *FAST)
    assert code == 0
    assert out == ""
    assert f"report written to {target}" in err
    data = json.loads(target.read_text())
    assert data["command"] == "smoke-test"
    assert data["options"]["device"] == "cpu"
    assert data["summary"] == {"pass": 3, "warn": 0, "fail": 0, "skip": 3}
    assert [f["id"] for f in data["findings"]] == [f"GD45{i}" for i in range(6)]
    skipped = {f["slug"]: f["message"] for f in data["findings"] if f["status"] == "skip"}
    assert set(skipped) == {"smoke-cudnn-matches-native", "smoke-cudnn-used",
                            "smoke-cudnn-faster"}
    model = data["smoke"]["models"][0]
    run = model["configs"][0]
    assert model["model"] == "lenet"
    assert model["input"] == [32, 3, 32, 32]
    assert run["training_ok"]
    assert run["losses"][-1] < run["losses"][0]
    assert run["timing"]["median_ms"] > 0
    assert run["timing"]["steps"] == 3
    assert data["smoke"]["matmul"]["unit"] == "TFLOP/s"
    assert data["smoke"]["copy"]["value"] > 0
    assert data["thresholds"]["max_rel_diff"]["float32"] == 1e-3


@pytest.mark.slow
def test_cuda_without_cuda_exits_1_with_torchs_reason(torch_cuda: str | None) -> None:
    code, out, _ = invoke("--device", "cuda:0", "--model", "lenet", *FAST)
    assert code == 1
    # torch's own reason: a CPU build has no CUDA, a CUDA build finds no driver here
    reason = "Torch not compiled with CUDA enabled" if torch_cuda is None else "NVIDIA driver"
    assert reason in out
    assert "gpudoctor check" in out
    code, out, _ = invoke("--device", "cuda", "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data["summary"]["fail"] == 1
    assert data["smoke"]["failure"]["reason"] == (
        "not-supported" if torch_cuda is None else "driver-not-loaded")
    assert data["environment"]["smoke"] == data["smoke"]["failure"]  # judged on that failure


@pytest.mark.parametrize("device", ["cuda:x", "gpu", "cuda:-1"], ids=lambda d: f"<{d}>")
def test_malformed_device_is_a_usage_error(device: str) -> None:
    code, out, err = invoke("--device", device)
    assert code == 2
    assert "is not a device" in err
    assert out == ""


def test_other_usage_errors() -> None:
    assert invoke("--device", "cpu", "--format", "junit")[0] == 2
    assert invoke("--device", "cpu", "--steps", "0")[0] == 2
    assert invoke("--device", "cpu", "--python", "no-such-python-here")[0] == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "timeout", "needle"),
    [
        ("raise ImportError('libcudnn.so.9: cannot open shared object file')", "60",
         "`import torch` failed: ImportError: libcudnn.so.9"),
        ("import os\nos.abort()\n", "60", "crashed (SIGABRT)"),
        ("import time\ntime.sleep(600)\n", "2", "did not finish within 2 s"),
    ],
    ids=["raises", "aborts", "hangs"],
)
def test_broken_torch_exits_1(tmp_path: Path, body: str, timeout: str, needle: str) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(body)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    code, out, _ = invoke("--device", "cpu", "--timeout", timeout, env={"PYTHONPATH": path})
    assert code == 1
    assert needle in out
    assert "✗ GD454" in out


# --------------------------------------------------------------------------- one registry
# GD450-GD455 are ordinary checks: `gpudoctor checks` lists them, `check` selects, skips,
# writes and replays them like every other check.

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envs"
SMOKE_IDS = [f"GD45{i}" for i in range(6)]


def gpudoctor(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(*args, env={"COLUMNS": "200"})
    out, err = result.stdout, result.stderr
    assert "Traceback" not in out + err, out + err
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, out, err


def test_checks_lists_the_smoke_checks_once() -> None:
    code, out, _ = gpudoctor("checks", "--format", "json")
    assert code == 0
    rows = [r for r in json.loads(out) if r["id"] in SMOKE_IDS]
    assert [r["id"] for r in rows] == SMOKE_IDS
    assert rows[0]["slug"] == "smoke-training-correct"
    assert all(r["layer"].lower() == "pytorch" and "smoke" in r["needs"] and r["doc"]
               for r in rows)
    code, out, _ = gpudoctor("checks", "GD453")  # its documentation, like any check's
    assert code == 0
    assert "SLOWER_MARGIN" in out or "10%" in out


@pytest.mark.slow
def test_check_without_smoke_skips_them() -> None:
    snap = str(FIXTURES / "h100-healthy.json")
    code, out, _ = gpudoctor("check", "--from-snapshot", snap, "--format", "json")
    assert code == 0
    smoke = [f for f in json.loads(out)["findings"] if f["id"] in SMOKE_IDS]
    assert [f["id"] for f in smoke] == SMOKE_IDS
    assert {f["status"] for f in smoke} == {"skip"}
    assert smoke[0]["message"] == "the smoke test did not run (pass --smoke)"
    code, out, _ = gpudoctor("check", "--from-snapshot", snap, "--skip", "smoke-cudnn-used",
                             "--only", "pytorch")
    assert code == 0
    assert "GD451" in out and "GD452" not in out and "GD101" not in out


@pytest.mark.slow
@pytest.mark.needs_torch
def test_check_smoke_json_then_replay(tmp_path: Path) -> None:
    """`check --smoke` runs the smoke test here (on the CPU: no GPU), puts it in the
    environment it writes, and `check --from-snapshot` on that report gives the same smoke
    verdicts without running it again."""
    target = tmp_path / "report.json"
    only = ",".join(["smoke-training-correct", "smoke-device-usable", "GD455", "GD452"])
    code, _, _ = gpudoctor("check", "--smoke", "--only", only, "--format", "json",
                           "-o", str(target))
    data = json.loads(target.read_text())
    first = {f["id"]: f for f in data["findings"]}
    assert list(first) == ["GD450", "GD452", "GD454", "GD455"]
    assert code == (1 if data["summary"]["fail"] else 0)
    assert first["GD450"]["status"] == "pass", first["GD450"]
    assert first["GD454"]["status"] == "pass", first["GD454"]
    smoke = data["environment"]["smoke"]
    assert smoke["models"][0]["model"] == "lenet"
    assert smoke["device"]["name"] in ("cpu", "cuda:0")
    code, out, _ = gpudoctor("check", "--from-snapshot", str(target), "--format", "json")
    replayed = {f["id"]: f for f in json.loads(out)["findings"] if f["id"] in SMOKE_IDS}
    assert list(replayed) == SMOKE_IDS
    for check_id, f in first.items():
        assert replayed[check_id] == f


def test_smoke_runs_only_for_a_selected_smoke_check() -> None:
    code, out, _ = gpudoctor("check", "--smoke", "--only", "host", "--no-torch",
                             "--format", "json")
    data = json.loads(out)
    assert code == (1 if data["summary"]["fail"] else 0)
    assert data["environment"]["smoke"]["unavailable"] == "skipped"
    assert not [f for f in data["findings"] if f["id"] in SMOKE_IDS]


# --------------------------------------------------------------------------- the machine
# The JSON report says which machine it is about: `environment`, the Environment the verdicts
# were judged on, as `check --format json` writes it. Run as a user runs it: a real process.

NOT_PROBED = ("nvml", "libcuda", "toolkits", "torch", "cudnn")  # smoke-test gathers none of them


def real_gpudoctor(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`python -m gpudoctor ARGS` in a new process."""
    p = runner.gpudoctor(*args, env=env, timeout=300)
    assert "Traceback" not in p.stdout + p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def this_torch() -> str:
    """torch.__version__ of the torch installed here, asked of torch itself."""
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True, timeout=300, check=False)
    if p.returncode != 0:
        pytest.skip(f"torch does not import here: {p.stderr[-200:]}")
    return p.stdout.strip()


def assert_names_this_machine(environment: dict[str, Any]) -> None:
    host = environment["host"]
    assert host["hostname"] == socket.gethostname()
    assert host["python_executable"] == sys.executable
    assert host["kernel"] == os.uname().release
    for name in NOT_PROBED:
        assert environment[name]["unavailable"] == "skipped", environment[name]


@pytest.mark.slow
@pytest.mark.needs_torch
def test_json_environment_names_the_machine_and_replays(tmp_path: Path) -> None:
    target = tmp_path / "smoke.json"
    code, out, _ = real_gpudoctor("smoke-test", "--device", "cpu", "--model", "lenet",
                                  "--format", "json", "-o", str(target), *FAST)
    assert code == 0 and out == ""
    data = json.loads(target.read_text())
    assert list(data) == ["schema_version", "gpudoctor_version", "command", "options",
                          "summary", "findings", "thresholds", "smoke", "environment"]
    environment = data["environment"]
    assert environment["smoke"]["device"]["torch"] == this_torch()
    assert environment["smoke"]["device"] == data["smoke"]["device"]
    assert environment["gpudoctor_version"] == data["gpudoctor_version"]
    assert_names_this_machine(environment)
    # the report is a snapshot: `check` replays the same smoke verdicts from it
    code, out, _ = real_gpudoctor("check", "--from-snapshot", str(target), "--only",
                                  ",".join(SMOKE_IDS), "--format", "json")
    assert code == 0
    assert json.loads(out)["findings"] == data["findings"]


@pytest.mark.slow
@pytest.mark.needs_torch
def test_distributed_json_environment_names_the_machine(tmp_path: Path) -> None:
    """One rank, launched as torchrun would (its variables set), over gloo on the CPU: the
    environment holds what the ranks reported (host, device, torch), nothing else."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rank = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1"}
    target = tmp_path / "distributed.json"
    code, _, err = real_gpudoctor("smoke-test", "--distributed", "--device", "cpu", "--format",
                                  "json", "-o", str(target), env=rank)
    assert code == 0, err
    data = json.loads(target.read_text())
    assert list(data) == ["schema_version", "gpudoctor_version", "command", "options",
                          "summary", "findings", "distributed", "environment"]
    environment = data["environment"]
    assert environment["smoke"] == data["distributed"]
    assert environment["smoke"]["torch"] == this_torch()
    assert [r["host"] for r in environment["smoke"]["ranks"]] == [socket.gethostname()]
    for name in ("host", *NOT_PROBED):  # each rank's host is in the report
        assert environment[name]["unavailable"] == "skipped", environment[name]

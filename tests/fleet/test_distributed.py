"""`smoke-test --distributed` for real: torchrun starts two gpudoctor ranks that all-reduce
over gloo on the CPU (the torch installed in the venv), and a run in which rank 1 hangs."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from runner import invoke

from gpudoctor.actions.smoke import smoke_environment
from gpudoctor.snapshot import dumps, loads
from tests.checks.test_smoke import distributed_run as report
from tests.checks.test_smoke import rank_result as rank

torch_distributed = pytest.importorskip("torch.distributed", reason="torch is not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def torchrun(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
             device: str = "cpu") -> tuple[subprocess.CompletedProcess[str], str]:
    """Two ranks under the real torchrun; returns the run and the tag its processes carry."""
    tag = uuid.uuid4().hex
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
            "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
            "-m", "gpudoctor", "smoke-test", "--distributed", "--device", device, *args]
    full_env = {**os.environ, "GD_TEST_TAG": tag, "OMP_NUM_THREADS": "1", **(env or {})}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=full_env,
                       cwd=tmp_path, check=False)
    return p, tag


def tagged(tag: str) -> list[int]:
    """Processes still alive that carry the tag in their environment (ours: /proc is ours)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if f"GD_TEST_TAG={tag}".encode() in (d / "environ").read_bytes():
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def expected_sum(elements: int, world: int) -> int:
    """Rank r sends (r + 1) * (i % 7 + 1); the sum over ranks, over every element."""
    return sum(i % 7 + 1 for i in range(elements)) * sum(r + 1 for r in range(world))


@pytest.mark.slow
def test_two_cpu_ranks_over_gloo(tmp_path: Path) -> None:
    p, tag = torchrun(tmp_path, "--format", "json", "-o", "report.json")
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads((tmp_path / "report.json").read_text())
    d = data["distributed"]
    assert d["backend"] == "gloo" and d["world_size"] == 2
    assert [r["rank"] for r in d["ranks"]] == [0, 1]
    for r in d["ranks"]:
        assert r["state"] == "ok" and r["phase"] == "done"
        assert r["device_ok"] is True
        assert r["mismatches"] == 0
        assert r["sum"] == r["expected_sum"] == expected_sum(d["elements"], 2)
        assert r["busbw_gbs"] > 0 and r["algbw_gbs"] > 0
    gd456 = next(f for f in data["findings"] if f["id"] == "GD456")
    assert gd456["status"] == "pass"
    assert "rank 1 of 2: ok" in p.stderr  # the other rank says one line, writes no report
    assert not tagged(tag)


@pytest.mark.slow
def test_a_rank_that_hangs_is_named(tmp_path: Path) -> None:
    start = time.monotonic()
    p, tag = torchrun(tmp_path, "--timeout", "12", "-o", "report.txt",
                      env={"_GD_TEST_HANG_RANK": "1", "_GD_TEST_HANG_SECONDS": "600"})
    took = time.monotonic() - start
    assert p.returncode == 1, p.stderr[-3000:]
    text = (tmp_path / "report.txt").read_text()
    assert "✗ GD456" in text and "GD450" not in text  # only the distributed verdict
    finding = " ".join(text.split("GD456", 1)[1].split("→ fix")[0].replace("┆", " ").split())
    assert "rank 1 (" in finding
    assert "hung: stuck in the init phase: the other ranks reached allreduce" in finding
    assert "rank 0 (" not in finding  # it only waited for rank 1
    assert re.search(r"^ 0 .* waiting +allreduce *$", text, re.M)  # the ranks' table
    assert re.search(r"^ 1 .* hung +init *$", text, re.M)
    assert took < 100  # the 600 s sleep was cut short: the deadline, not the hang, ended it
    time.sleep(0.5)
    assert not tagged(tag), "processes outlived the run"


def test_distributed_outside_a_launcher_is_a_usage_error() -> None:
    env = dict.fromkeys(("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"), "")
    r = invoke("smoke-test", "--distributed", "--device", "cpu", env=env)
    assert r.exit_code == 2
    assert "RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set" in r.stderr
    assert "torchrun" in r.stderr


def test_distributed_report_round_trips_a_snapshot() -> None:
    env = smoke_environment(report(rank(0), rank(1, state="hung", phase="init", sum=None)))
    assert loads(dumps(env)) == env


@pytest.mark.slow
def test_ranks_whose_device_fails_are_named(tmp_path: Path) -> None:
    """`--device cuda` where torch sees no CUDA device (this GPU-less machine): every rank
    fails its device check, posts why, and rank 0 names each one; nothing hangs."""
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"
                            ], capture_output=True, text=True, timeout=120, check=False)
    if probe.stdout.strip() != "False":
        pytest.skip("torch sees a CUDA device here")
    p, tag = torchrun(tmp_path, "--timeout", "60", "--format", "json", "-o", "report.json",
                      device="cuda")
    assert p.returncode == 1, p.stderr[-3000:]
    d = json.loads((tmp_path / "report.json").read_text())["distributed"]
    assert [(r["rank"], r["state"], r["phase"]) for r in d["ranks"]] == [
        (0, "error", "device"), (1, "error", "device")]
    assert all("torch.cuda.is_available() is False" in r["error"] for r in d["ranks"])
    # rank 1 failed too, but exits 0 and leaves the status to rank 0: had it exited 1,
    # torchrun would have stopped rank 0, often before it wrote the report
    assert "rank 1 of 2: error" in p.stderr and "carries the exit status" in p.stderr
    assert "rank      : 0 (local_rank: 0)" in p.stderr and "<NO_OTHER_FAILURES>" in p.stderr
    assert not tagged(tag)


# ------------------------------------------------------------------------------ one rank


@pytest.mark.slow
def test_one_rank_claims_no_communication(tmp_path: Path) -> None:
    """One rank: the all-reduce moves nothing, so no bandwidth is measured and GD456 says
    communication was not exercised (a note), where it used to report the local copy's speed
    as bus bandwidth and pass."""
    tag = uuid.uuid4().hex
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "1",
            "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
            "-m", "gpudoctor", "smoke-test", "--distributed", "--device", "cpu",
            "--format", "json", "-o", "report.json"]
    env = {**os.environ, "GD_TEST_TAG": tag, "OMP_NUM_THREADS": "1"}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env,
                       cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads((tmp_path / "report.json").read_text())
    (r,) = data["distributed"]["ranks"]
    assert r["state"] == "ok" and r["sum"] == r["expected_sum"]
    assert r["algbw_gbs"] is None and r["busbw_gbs"] is None
    gd456 = next(f for f in data["findings"] if f["id"] == "GD456")
    assert gd456["status"] == "warn" and gd456["severity"] == "info"
    assert "communication was not exercised" in gd456["message"]
    assert not tagged(tag)

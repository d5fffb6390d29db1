"""`gpudoctor.cli.smoke`: smoke-test's options reach the run as one SmokeOptions, the JSON report
names its machine, the exit code is the verdicts', `--profile` is proven writable before the
run, and under `--distributed` a rank other than 0 says one line and exits 0. The child run is
stood in for here (a hand-built outcome): the real child on this machine is in
tests/cli/test_smoke_cli.py, a real torchrun in tests/fleet/test_distributed.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from runner import invoke

from gpudoctor.actions import distributed
from gpudoctor.actions.smoke import SmokeOptions
from gpudoctor.cli import smoke as command
from gpudoctor.model import Reason, SmokeFailure
from gpudoctor.model_smoke import DistributedRun, RankResult
from tests.smoke_kit import report

BROKEN = SmokeFailure(Reason.ERROR, "import torch failed: libcudnn.so.9 not found",
                      "reinstall torch")


@pytest.fixture(name="ran")
def ran_fixture(monkeypatch: pytest.MonkeyPatch) -> list[SmokeOptions]:
    """The smoke child stood in for: the options it was given, and a healthy CUDA run."""
    options: list[SmokeOptions] = []

    def run_smoke(o: SmokeOptions, on_progress: object = None) -> object:
        options.append(o)
        return report()

    monkeypatch.setattr(command, "run_smoke", run_smoke)
    return options


def test_the_options_reach_the_run(ran: list[SmokeOptions]) -> None:
    r = invoke("smoke-test", "--device", "cuda", "--model", "LENET", "--steps", "5",
               "--warmup", "0", "--dtype", "bfloat16", "--batch-size", "8", "--timeout", "30",
               "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert ran == [SmokeOptions(device="cuda:0", model="lenet", batch_size=8, steps=5, warmup=0,
                                dtype="bfloat16", profile_dir=None, timeout=30.0,
                                python=sys.executable)]
    data = json.loads(r.stdout)
    assert data["summary"]["fail"] == 0 and data["findings"][0]["id"] == "GD450"
    assert data["environment"]["host"]["hostname"]  # the JSON names this machine
    assert r.stderr == "gpudoctor: smoke test passed\n"


def test_text_on_stdout_says_nothing_more(ran: list[SmokeOptions]) -> None:
    r = invoke("smoke-test", "--device", "cpu")
    assert r.exit_code == 0 and ran[0].device == "cpu" and ran[0].model == "all"
    assert "smoke test passed" in r.stdout and r.stderr == ""


def test_a_failed_run_exits_1(ran: list[SmokeOptions], monkeypatch: pytest.MonkeyPatch,
                              tmp_path: Path) -> None:
    monkeypatch.setattr(command, "run_smoke", lambda o, on_progress=None: BROKEN)
    target = tmp_path / "smoke.json"
    r = invoke("smoke-test", "--format", "json", "-o", str(target))
    assert r.exit_code == 1
    assert r.stderr == f"gpudoctor: smoke test failed; report written to {target}\n"
    assert {f["id"]: f["status"] for f in json.loads(target.read_text())["findings"]}[
        "GD454"] == "fail"


def test_a_profile_directory_is_proven_writable_before_the_run(
        ran: list[SmokeOptions], tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    r = invoke("smoke-test", "--profile", str(blocked / "traces"))
    assert r.exit_code == 2 and ran == []
    assert r.stderr.startswith(f"gpudoctor: error: --profile {blocked / 'traces'}: cannot write "
                               "the traces there: ")
    traces = tmp_path / "new" / "traces"
    command._writable(traces)
    assert traces.is_dir() and list(traces.iterdir()) == []  # its probe file removed


def test_a_report_without_the_host_probe_stays_as_it_is() -> None:
    r = object()
    assert command._host_beside(False)(r) is r  # type: ignore[arg-type]


def two_ranks(rank: int) -> DistributedRun:
    ranks = tuple(RankResult(i, i, f"node{i}", "cpu", "2 threads", "ok" if i == 0 else "error",
                             "done" if i == 0 else "init", device_ok=True, expected_sum=30,
                             sum=30 if i == 0 else None, error=None if i == 0 else "gloo died")
                  for i in range(2))
    return DistributedRun("gloo", 2, "127.0.0.1:29500", 10, 1 << 20, 5, 30.0, sys.executable,
                           "2.9.0", ranks, 2.0, rank=rank)


@pytest.mark.parametrize(("rank", "code"), [(0, 1), (1, 0)])
def test_distributed_rank_0_reports_the_others_say_one_line(
        monkeypatch: pytest.MonkeyPatch, rank: int, code: int) -> None:
    asked: list[distributed.DistributedOptions] = []

    def run_distributed(o: distributed.DistributedOptions) -> DistributedRun:
        asked.append(o)
        return two_ranks(rank)

    monkeypatch.setattr(distributed, "run_distributed", run_distributed)
    env = {"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    r = invoke("smoke-test", "--distributed", "--device", "cpu", "--timeout", "30",
               "--format", "json", env=env)
    assert r.exit_code == code, r.stderr
    assert asked == [distributed.DistributedOptions("cpu", 30.0, sys.executable)]
    if rank == 0:
        data = json.loads(r.stdout)
        assert data["command"] == "smoke-test --distributed"
        assert [x["rank"] for x in data["distributed"]["ranks"]] == [0, 1]
        assert r.stderr == "gpudoctor: distributed smoke test failed\n"
    else:
        assert r.stdout == ""
        assert r.stderr.startswith("gpudoctor: rank 1 of 2: ok (done); error (gloo died); "
                                   "rank 0 writes the report")

"""`gpudoctor.renderers.distributed`: rank 0's report of every rank of `smoke-test
--distributed`, as text (the ranks' table whole at any width, every row its rank's, strings from
the ranks escaped) and JSON (the run, or its failure, the verdicts and the environment).
(A real torchrun of two ranks: tests/fleet/test_distributed.py.)"""

from __future__ import annotations

import io
import json
import sys

from rich.console import Console

from gpudoctor.actions.distributed import DistributedOptions
from gpudoctor.actions.smoke import smoke_environment
from gpudoctor.checks import run_checks
from gpudoctor.checks.smoke import DISTRIBUTED_CHECKS, check_smoke_device_usable
from gpudoctor.compat import load_tables
from gpudoctor.model import Reason, Report, SmokeFailure
from gpudoctor.model_smoke import DistributedRun, RankResult
from gpudoctor.renderers.distributed import render_json, render_text

OPTIONS = DistributedOptions("cpu", 30.0, sys.executable)


def two_ranks(host1: str = "node1", sum1: int = 30) -> DistributedRun:
    """Two CPU ranks over gloo; rank 1 on `host1`, its all-reduce summing to `sum1` (30 is
    right)."""
    ranks = tuple(RankResult(i, i, host, "cpu", "2 threads", "ok", "done", device_ok=True,
                             expected_sum=30, sum=total, mismatches=int(total != 30),
                             algbw_gbs=1.5, busbw_gbs=1.25)
                  for i, host, total in ((0, "node0", 30), (1, host1, sum1)))
    return DistributedRun("gloo", 2, "127.0.0.1:29500", 10, 1 << 20, 5, 30.0, sys.executable,
                          "2.9.0", ranks, 4.25)


def judged(outcome: DistributedRun | SmokeFailure) -> Report:
    checks = ((check_smoke_device_usable, *DISTRIBUTED_CHECKS)
              if isinstance(outcome, SmokeFailure) else DISTRIBUTED_CHECKS)
    return run_checks(smoke_environment(outcome), load_tables(), checks)


def text(outcome: DistributedRun | SmokeFailure, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)
    return render_text(outcome, judged(outcome).results, console)


def test_the_ranks_table_and_the_verdict() -> None:
    lines = text(two_ranks()).splitlines()
    assert lines[0].startswith("gloo, 2 rank(s), master 127.0.0.1:29500, torch 2.9.0; ")
    table = lines[lines.index(next(x for x in lines if x.lstrip().startswith("rank "))):]
    assert table[0].split() == ["rank", "host", "device", "state", "phase", "all-reduce", "sum",
                                "busbw", "GB/s", "algbw", "GB/s"]
    assert table[1].split() == ["0", "node0", "cpu", "2", "threads", "ok", "done", "30", "✓",
                                "1.25", "1.5"]
    assert any(line.startswith("✓ GD456 ") for line in lines)
    assert lines[-1] == "distributed smoke test passed in 4.2 s"


def test_a_wrong_sum_fails_and_the_table_is_never_cut() -> None:
    for width in (40, 100):
        out = text(two_ranks(sum1=31), width)
        lines = out.splitlines()
        row = next(line for line in lines if line.lstrip().startswith("1 "))
        assert "31 ≠ 30" in row and row.split()[-2:] == ["1.25", "1.5"]  # every column, whole
        assert "…" not in out and all(line == line.rstrip() for line in lines)
        assert any(line.startswith("✗ GD456 ") for line in lines)
        assert lines[-1] == "distributed smoke test failed in 4.2 s"


def test_a_ranks_host_name_is_escaped_on_its_row() -> None:
    lines = text(two_ranks(host1="evil\n0  node9  cuda:0\x1b[2J")).splitlines()
    rows = [line for line in lines if line.lstrip()[:2] in ("0 ", "1 ")]
    assert len(rows) == 2 and "evil\\n0  node9  cuda:0\\x1b[2J" in rows[1]
    assert not any("\x1b" in line for line in lines)


def test_a_run_that_measured_nothing_has_no_table() -> None:
    failure = SmokeFailure(Reason.TIMEOUT, "the rendezvous timed out", "check MASTER_ADDR")
    lines = text(failure).splitlines()
    assert lines[0].startswith("✗ GD454 ") and "  → fix: check MASTER_ADDR" in lines
    assert not any(line.lstrip().startswith("rank ") for line in lines)
    assert lines[-1] == "distributed smoke test failed"


def test_json_holds_every_rank_or_the_failure() -> None:
    run = two_ranks(sum1=31)
    data = json.loads(render_json(OPTIONS, run, judged(run)))
    assert data["command"] == "smoke-test --distributed"
    assert [f["id"] for f in data["findings"]] == ["GD456"]
    assert data["findings"][0]["status"] == "fail"
    assert [(r["rank"], r["sum"]) for r in data["distributed"]["ranks"]] == [(0, 30), (1, 31)]
    assert data["distributed"]["backend"] == "gloo" and "environment" in data
    failure = SmokeFailure(Reason.TIMEOUT, "the rendezvous timed out", "check MASTER_ADDR")
    data = json.loads(render_json(OPTIONS, failure, judged(failure)))
    assert data["distributed"] == {"failure": {"reason": "timeout",
                                               "message": "the rendezvous timed out",
                                               "fix": "check MASTER_ADDR", "detail": None}}

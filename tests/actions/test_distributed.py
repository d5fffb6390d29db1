"""`gpudoctor.actions.distributed`: the launcher's variables, what a rank's child said (or why it
said nothing) turned into a DistributedRun or a SmokeFailure, and the child script's own
helpers (`_distributed_child.py`, run here from CHILD_SOURCE). The runs under the real torchrun
are tests/fleet/test_distributed.py's."""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.actions.childlines import PREFIX
from gpudoctor.actions.distributed import (
    DistributedOptions,
    RankEnv,
    _failure,
    rank_environment,
    report_from_data,
    run_distributed,
)
from gpudoctor.model import Reason, SmokeFailure
from gpudoctor.snapshot import to_data
from tests.checks.test_smoke import distributed_run, rank_result

LAUNCHED = {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "node0",
            "MASTER_PORT": "29500"}


# ------------------------------------------------------------------------ the launcher


def test_a_rank_of_a_job() -> None:
    assert rank_environment(LAUNCHED) == RankEnv(1, 4, 1, "node0:29500")
    no_local = {k: v for k, v in LAUNCHED.items() if k != "LOCAL_RANK"}
    assert rank_environment(no_local).local_rank == 0  # one rank per node: LOCAL_RANK unset
    assert rank_environment({**LAUNCHED, "LOCAL_RANK": ""}).local_rank == 0  # set, empty


@pytest.mark.parametrize(("changes", "said"), [
    ({"RANK": "", "MASTER_PORT": ""}, "RANK, MASTER_PORT not set: run it under a launcher"),
    ({"WORLD_SIZE": "four"}, "must be numbers"),
    ({"LOCAL_RANK": "x"}, "must be numbers"),
    ({"RANK": "4"}, "RANK=4 WORLD_SIZE=4 LOCAL_RANK=1 MASTER_PORT=29500 do not describe"),
    ({"RANK": "-1"}, "do not describe a rank of a job"),
    ({"LOCAL_RANK": "-1"}, "do not describe a rank of a job"),
    ({"MASTER_PORT": "65536"}, "do not describe a rank of a job"),
    ({"MASTER_PORT": "0"}, "do not describe a rank of a job"),
])
def test_what_no_launcher_would_set_is_refused_by_name(changes: dict[str, str],
                                                       said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        rank_environment({**LAUNCHED, **changes})


def test_the_backend_and_the_deadline_follow_the_options() -> None:
    assert DistributedOptions(device="cpu").backend == "gloo"
    assert DistributedOptions(device="cuda").backend == "nccl"
    assert DistributedOptions(timeout=120.0).deadline == 60.0


# ------------------------------------------------------------------------ what a child said


def test_a_childs_result_reads_back_as_the_run() -> None:
    run = distributed_run(rank_result(0), rank_result(1))
    assert report_from_data(to_data(run)) == run  # type: ignore[arg-type]
    broken = to_data(run)
    assert isinstance(broken, dict)
    broken["world_size"] = "two"
    with pytest.raises(ValueError, match="world_size"):
        report_from_data(broken)


@pytest.mark.parametrize(("error", "code", "reason", "words"), [
    (None, -9, Reason.CRASHED, "exited with code -9"),
    (None, 1, Reason.ERROR, "exited with code 1"),
    ({"code": "import", "message": "ModuleNotFoundError: No module named 'torch'"}, 1,
     Reason.NOT_INSTALLED, "PyTorch is not installed for /opt/py 3/bin/python"),
    ({"code": "hung", "message": "rank 1 hung in init"}, 1, Reason.TIMEOUT,
     "rank 1 hung in init"),
    ({"code": "no-distributed", "message": "torch.distributed is not available"}, 1,
     Reason.NOT_SUPPORTED, "torch.distributed is not available"),
    ({"code": "nccl", "message": "NCCL error", "detail": "Traceback …"}, 1, Reason.ERROR,
     "the distributed smoke test failed: NCCL error"),
])
def test_a_child_without_a_result_is_a_failure_saying_why(
        error: dict[str, Any] | None, code: int, reason: Reason, words: str) -> None:
    stderr = "\n".join(f"line {i}" for i in range(30))
    f = _failure(error, code, stderr, "/opt/py 3/bin/python")
    assert isinstance(f, SmokeFailure) and f.reason is reason and words in f.message
    if error is None:
        assert f.detail == "\n".join(f"line {i}" for i in range(10, 30))  # the last 20 lines
    if reason is Reason.NOT_INSTALLED:
        assert "gpudoctor recommend --python '/opt/py 3/bin/python'" in f.fix  # quoted
    if error is not None and error.get("detail"):
        assert f.detail == "Traceback …"


# ------------------------------------------------------------------------ the runner


def fake_python(tmp_path: Path, script: str) -> str:
    """An "interpreter" that ignores the child source and runs `script` (sh)."""
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\n" + script)
    python.chmod(0o755)
    return str(python)


def said(kind: str, data: object) -> str:
    return "printf '%s\\n' " + repr(PREFIX + json.dumps({"kind": kind, "data": data}))


@pytest.mark.subprocess
def test_the_runner_reads_the_childs_result(tmp_path: Path) -> None:
    run = distributed_run(rank_result(0), rank_result(1))
    python = fake_python(tmp_path, "echo torch says hello\n" + said("result", to_data(run)))
    assert run_distributed(DistributedOptions(device="cpu", python=python), {}) == run


@pytest.mark.subprocess
def test_the_runner_turns_every_way_a_child_fails_into_a_failure(tmp_path: Path) -> None:
    missing = run_distributed(DistributedOptions(python=str(tmp_path / "no-python")), {})
    assert isinstance(missing, SmokeFailure) and missing.reason is Reason.NOT_INSTALLED
    error = fake_python(tmp_path, said("error", {"code": "hung", "message": "rank 1 hung"}) +
                        "\nexit 1\n")
    hung = run_distributed(DistributedOptions(device="cpu", python=error), {})
    assert isinstance(hung, SmokeFailure) and hung.reason is Reason.TIMEOUT
    bad = fake_python(tmp_path, said("result", {"backend": "gloo"}))
    unread = run_distributed(DistributedOptions(device="cpu", python=bad), {})
    assert isinstance(unread, SmokeFailure) and unread.reason is Reason.ERROR
    assert unread.message == "the distributed smoke test's result could not be read"
    slow = fake_python(tmp_path, said("progress", {"label": "init"}) + "\nexec sleep 30\n")
    timed_out = run_distributed(DistributedOptions(device="cpu", timeout=1.0, python=slow), {})
    assert isinstance(timed_out, SmokeFailure) and timed_out.reason is Reason.TIMEOUT
    assert "did not finish within 1 s (last step: init)" in timed_out.message


@pytest.mark.subprocess
def test_the_child_gets_the_launchers_environment(tmp_path: Path) -> None:
    python = fake_python(tmp_path, 'echo "$RANK $PYTHONUNBUFFERED" > "$OUT"\nexit 3\n')
    out = tmp_path / "seen"
    f = run_distributed(DistributedOptions(device="cpu", python=python),
                        {**LAUNCHED, "OUT": str(out), "PATH": os.environ["PATH"]})
    assert isinstance(f, SmokeFailure) and f.message.endswith("exited with code 3")
    assert out.read_text() == "1 1\n"


# ------------------------------------------------------------------------ the child's helpers


@pytest.fixture(scope="module")
def rank_child() -> dict[str, Any]:
    from gpudoctor.actions.distributed import CHILD_SOURCE

    ns: dict[str, Any] = {"__name__": "gpudoctor_distributed_child"}
    exec(compile(CHILD_SOURCE, "_distributed_child.py", "exec"), ns)
    return ns


@pytest.mark.needs_torch  # the skip it had in fleet/test_distributed.py
@pytest.mark.parametrize(("local", "count", "index"), [
    (0, 8, 0), (5, 8, 5), (3, 1, 0), (0, 1, 0),  # one GPU per rank (Slurm's per-task binding)
])
def test_device_of_a_rank(rank_child: dict[str, Any], local: int, count: int,
                          index: int) -> None:
    assert rank_child["device_index"](local, count) == index


@pytest.mark.needs_torch  # the skip it had in fleet/test_distributed.py
def test_device_of_a_rank_that_has_none(rank_child: dict[str, Any]) -> None:
    with pytest.raises(RuntimeError, match="LOCAL_RANK 3 but torch sees 2 CUDA device"):
        rank_child["device_index"](3, 2)


@pytest.mark.needs_torch  # the skip it had in fleet/test_distributed.py
def test_nccl_timeout_comes_after_the_watchdogs(rank_child: dict[str, Any]) -> None:
    """init_process_group's timeout is NCCL's watchdog timeout: when it equalled the deadline,
    NCCL aborted the hung rank (SIGABRT: "crashed") as gpudoctor's own watchdog was about to
    report the hang. The process group gets twice the deadline; the watchdogs fire at 1x
    (rank 0) and 1.5x."""
    import datetime

    seen: dict[str, Any] = {}

    class Stop(Exception):
        pass

    class Dist:
        @staticmethod
        def PrefixStore(prefix: str, store: object) -> object:
            return store

        @staticmethod
        def init_process_group(backend: str, **kw: Any) -> None:
            seen.update(kw)
            raise Stop

    r = rank_child["Rank"]({"deadline": 30.0, "backend": "nccl", "elements": 1,
                            "bandwidth_bytes": 4, "iterations": 1, "device": "cuda"})
    with pytest.raises(Stop), redirect_stdout(io.StringIO()):
        rank_child["collectives"](None, Dist, r, None, object())
    assert seen["timeout"] == datetime.timedelta(seconds=60)
    assert seen["timeout"].total_seconds() > 1.5 * r.deadline

"""`smoke-test --distributed`: one rank's part of a multi-process smoke test, under torchrun.

torchrun (or srun, or any launcher that sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
MASTER_PORT) starts one gpudoctor per rank. Each runs `_distributed_child.py` under the
diagnosed interpreter through the one child runner (`gpudoctor.childproc`: own process group,
deadline, killed on timeout or Ctrl-C) with that environment passed through, so torch stays out
of the gpudoctor process and the child rendezvouses exactly as a training script would.

- `rank_environment(environ) -> RankEnv`: the launcher's variables, or `ValueError` naming the
  one missing (the CLI's usage error: "run it under torchrun").
- `run_distributed(options, environ) -> DistributedRun | SmokeFailure`: never raises for
  anything the diagnosed stack does. Rank 0's report holds every rank (gathered through the
  rendezvous store); another rank's holds its own. A `SmokeFailure` when the child measured
  nothing: torch missing, no torch.distributed, a crash, or the child outliving `timeout`.
- The deadline of each phase (device, rendezvous, init, all-reduce, bandwidth, gather) is
  half of `timeout`: a rank that has not finished a phase by then is named by rank 0 as hung,
  with the phase, and the run ends; the other half leaves time to report it.
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudoctor import childproc
from gpudoctor.actions.childlines import ChildMessages, child_environ
from gpudoctor.model import Reason, SmokeFailure
from gpudoctor.model_smoke import DistributedRun, RankResult

logger = logging.getLogger(__name__)

CHILD_SOURCE = (Path(__file__).parent / "_distributed_child.py").read_text(encoding="ascii")
LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
# the all-reduce correctness tensor and the bandwidth tensor, by device type: on GPUs large
# enough for NCCL to reach its bus bandwidth, on the CPU small enough for a CI runner
ELEMENTS = {"cuda": 1 << 24, "cpu": 1 << 20}
BANDWIDTH_BYTES = {"cuda": 256 << 20, "cpu": 16 << 20}
ITERATIONS = {"cuda": 20, "cpu": 5}


@dataclass(frozen=True, slots=True)
class RankEnv:
    """Where this process sits in the job, as the launcher said."""

    rank: int
    world_size: int
    local_rank: int
    master: str


def rank_environment(environ: Mapping[str, str]) -> RankEnv:
    """The launcher's variables; ValueError naming what is missing or malformed."""
    missing = [v for v in LAUNCHER_VARS if not environ.get(v)]
    if missing:
        raise ValueError(f"{', '.join(missing)} not set: run it under a launcher, e.g. "
                         "`torchrun --nproc-per-node 8 -m gpudoctor smoke-test --distributed`")
    try:
        rank, world = int(environ["RANK"]), int(environ["WORLD_SIZE"])
        local = int(environ.get("LOCAL_RANK") or 0)
        port = int(environ["MASTER_PORT"])
    except ValueError:
        raise ValueError("RANK, WORLD_SIZE, LOCAL_RANK and MASTER_PORT must be numbers") from None
    if not (0 <= rank < world and local >= 0 and 0 < port < 65536):
        raise ValueError(f"RANK={rank} WORLD_SIZE={world} LOCAL_RANK={local} "
                         f"MASTER_PORT={port} do not describe a rank of a job")
    return RankEnv(rank, world, local, f"{environ['MASTER_ADDR']}:{port}")


@dataclass(frozen=True, slots=True)
class DistributedOptions:
    """What to run: the device type ("cpu" or "cuda": each rank takes cuda:LOCAL_RANK)."""

    device: str = "cuda"
    timeout: float = 300.0
    python: str = sys.executable  # as `gpudoctor.interpreters.resolve` returned it

    @property
    def backend(self) -> str:
        """NCCL between GPUs, gloo between CPUs."""
        return "gloo" if self.device == "cpu" else "nccl"

    @property
    def deadline(self) -> float:
        """Seconds a phase may take before a rank is called hung."""
        return self.timeout / 2


def run_distributed(options: DistributedOptions,
                    environ: Mapping[str, str] | None = None) -> DistributedRun | SmokeFailure:
    """Run this rank's child and read its report (see the module docstring)."""
    python = options.python
    kind = "cpu" if options.device == "cpu" else "cuda"
    config = {"device": kind, "backend": options.backend, "deadline": options.deadline,
              "elements": ELEMENTS[kind], "bandwidth_bytes": BANDWIDTH_BYTES[kind],
              "iterations": ITERATIONS[kind]}
    env = child_environ(environ)
    lines = ChildMessages()
    messages = lines.messages

    argv = [python, "-c", CHILD_SOURCE, json.dumps(config)]
    try:
        done = childproc.run(argv, options.timeout, env, on_line=lines)
    except OSError as e:
        return SmokeFailure(Reason.NOT_INSTALLED, f"cannot run the Python interpreter {python}",
                            "pass --python with a working interpreter", repr(e))
    except childproc.ChildTimeout as e:
        return SmokeFailure(
            Reason.TIMEOUT, f"this rank did not finish within {options.timeout:g} s (last "
            f"step: {lines.last})", "run `gpudoctor check` on this node; raise --timeout if the "
            "job is just slow to start", str(e))
    if "result" in messages:
        try:
            return report_from_data(messages["result"])
        except (KeyError, TypeError, ValueError) as e:
            return SmokeFailure(Reason.ERROR, "the distributed smoke test's result could not be "
                                "read", "run the same command with `gpudoctor --debug`", repr(e))
    return _failure(messages.get("error"), done.returncode, done.stderr, python)


def _failure(error: dict[str, Any] | None, returncode: int, stderr: str,
             python: str) -> SmokeFailure:
    tail = "\n".join(stderr.strip().splitlines()[-20:])
    if error is None:
        return SmokeFailure(Reason.CRASHED if returncode < 0 else Reason.ERROR,
                            f"the distributed smoke test exited with code {returncode}",
                            "run `gpudoctor check` to find the layer at fault", tail)
    message, code = str(error.get("message")), error.get("code")
    if code == "import" and "'torch'" in message and message.startswith("ModuleNotFound"):
        return SmokeFailure(Reason.NOT_INSTALLED, f"PyTorch is not installed for {python}",
                            "install it: `gpudoctor recommend --python "
                            f"{shlex.quote(python)}` prints the "
                            "line that fits this machine", error.get("detail"))
    if code == "hung":
        return SmokeFailure(Reason.TIMEOUT, message, "see rank 0's report, which names every "
                            "rank that hung and where; run `gpudoctor check` on that node",
                            tail)
    if code == "no-distributed":
        return SmokeFailure(Reason.NOT_SUPPORTED, message, "install a PyTorch build with "
                            "distributed support (the PyPI and conda builds for Linux have it)")
    return SmokeFailure(Reason.ERROR, f"the distributed smoke test failed: {message}",
                        "run `gpudoctor check` to find the layer at fault",
                        error.get("detail") or tail)


def report_from_data(d: dict[str, Any]) -> DistributedRun:
    """The child's `result` as a DistributedRun (through the snapshot decoder, so a bad
    field is a ValueError naming it)."""
    from gpudoctor.snapshot import from_data

    report = from_data(DistributedRun, d)
    assert isinstance(report, DistributedRun)
    return report


__all__ = ["DistributedOptions", "DistributedRun", "RankEnv", "RankResult",
           "rank_environment", "run_distributed"]

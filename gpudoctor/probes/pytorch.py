"""PyTorch, probed in a child process of the diagnosed interpreter (`Deps.python`).

`import torch` can raise, abort the interpreter (a broken cuDNN does) or hang (a wedged
driver), so it never happens in gpudoctor's own process. The child reports static facts
(package metadata, `torch/version.py`, installed nvidia-* wheels) before importing torch, so
they survive a crash.

Mapping:
- interpreter cannot be executed → `Unavailable(NOT_INSTALLED)` for the whole probe
- no torch in that interpreter → `Unavailable(NOT_INSTALLED)` for the whole probe
- import raised → `runtime = Unavailable(ERROR)` with the exception's last line
- child killed by a signal (abort, segfault) → `runtime = Unavailable(CRASHED)`
- child ran past `Deps.torch_timeout` → `runtime = Unavailable(TIMEOUT)`
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from gpudoctor.model import (
    Reason,
    TorchDevice,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.probes.interface import Deps, ProbeTimeout, RunResult, finish, start

logger = logging.getLogger(__name__)

CHILD_SOURCE = (Path(__file__).parent / "_torch_child.py").read_text()
PREFIX = "GPUDOCTOR:"

# A child started before the CLI's own imports (see `prestart`), keyed by what it was given.
_PRESTARTED: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[subprocess.Popen[str], float]] = {}


def _argv(python: str) -> list[str]:
    return [python, "-c", CHILD_SOURCE]


def prestart(deps: Deps) -> None:
    """Start the torch child now, for `probe_torch(deps)` to collect later.

    `import torch` is the slowest fact `check` gathers; the CLI calls this before importing
    typer and rich so the two overlap. A child nobody collects is killed at exit.
    """
    key = (deps.python, tuple(sorted(deps.child_env().items())))
    try:
        proc = start(_argv(deps.python), deps.child_env())
    except OSError:
        return  # probe_torch will meet the same error and report it
    _PRESTARTED[key] = (proc, time.monotonic())
    atexit.register(_reap, proc)


def _reap(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.wait()


def _child(deps: Deps) -> tuple[subprocess.Popen[str], float]:
    key = (deps.python, tuple(sorted(deps.child_env().items())))
    found = _PRESTARTED.pop(key, None)
    if found is not None:
        return found
    return start(_argv(deps.python), deps.child_env()), time.monotonic()


def probe_torch(deps: Deps) -> TorchFacts | Unavailable:
    """Run the child and turn its output into facts."""
    if deps.no_torch:
        return Unavailable(Reason.SKIPPED, "PyTorch was not probed (--no-torch)")
    timed_out = False
    try:
        proc, started = _child(deps)
        result = finish(proc, max(0.1, deps.torch_timeout - (time.monotonic() - started)))
    except (FileNotFoundError, PermissionError) as e:
        return Unavailable(
            Reason.NOT_INSTALLED,
            f"cannot run the Python interpreter {deps.python}",
            detail=repr(e),
        )
    except ProbeTimeout as e:
        timed_out = True
        result = RunResult(-9, e.stdout, e.stderr)
    seconds = round(time.monotonic() - started, 3)
    stages = _stages(result.stdout)
    static_data = stages.get("static")
    if static_data is not None and static_data.get("missing"):
        return Unavailable(
            Reason.NOT_INSTALLED,
            f"PyTorch is not installed for {deps.python}",
            detail=static_data.get("error"),
        )
    if timed_out:
        runtime: TorchRuntime | Unavailable = Unavailable(
            Reason.TIMEOUT,
            f"`import torch` did not finish within {deps.torch_timeout:g} s: the CUDA stack is "
            "hanging (a wedged driver, a GPU in a bad state, or a network file system)",
        )
    elif "runtime" in stages:
        runtime = _runtime(stages["runtime"])
    else:
        runtime = _failure(result, deps)
    return TorchFacts(
        python=deps.python,
        static=_static(static_data, result),
        runtime=runtime,
        seconds=seconds,
    )


def _stages(stdout: str) -> dict[str, Any]:
    stages: dict[str, Any] = {}
    for line in stdout.splitlines():
        if line.startswith(PREFIX):
            try:
                msg = json.loads(line[len(PREFIX):])
                stages[msg["kind"]] = msg["data"]
            except (ValueError, KeyError, TypeError):
                logger.debug("unparsable child line: %r", line)
    return stages


def _static(data: dict[str, Any] | None, result: RunResult) -> TorchStatic | Unavailable:
    if data is None:
        return Unavailable(
            Reason.ERROR,
            "the interpreter did not report its packages",
            detail=_tail(result.stderr),
        )
    if "error" in data and "version" not in data:
        return Unavailable(Reason.NOT_SUPPORTED, str(data["error"]))
    return TorchStatic(
        version=str(data["version"]),
        location=str(data["location"]),
        version_py=tuple((str(k), str(v)) for k, v in data["version_py"]),
        nvidia_wheels=tuple((str(k), str(v)) for k, v in data["nvidia_wheels"]),
    )


def _runtime(d: dict[str, Any]) -> TorchRuntime:
    return TorchRuntime(
        version=str(d["version"]),
        cuda=d["cuda"],
        hip=d["hip"],
        cudnn_version=d["cudnn_version"],
        cuda_available=bool(d["cuda_available"]),
        cuda_init_error=d["cuda_init_error"],
        device_count=int(d["device_count"]),
        arch_list=tuple(d["arch_list"]),
        devices=tuple(
            TorchDevice(
                index=int(x["index"]),
                name=str(x["name"]),
                capability=str(x["capability"]),
                total_memory=int(x["total_memory"]),
            )
            for x in d["devices"]
        ),
        cudnn_conv=str(d["cudnn_conv"]),
        mapped_libraries=tuple(d["mapped_libraries"]),
    )


def _failure(result: RunResult, deps: Deps) -> Unavailable:
    if result.returncode < 0:
        try:
            name = signal.Signals(-result.returncode).name
        except ValueError:
            name = f"signal {-result.returncode}"
        return Unavailable(
            Reason.CRASHED,
            f"`import torch` crashed the interpreter ({name})",
            detail=_tail(result.stderr),
        )
    last = _last_error_line(result.stderr)
    return Unavailable(
        Reason.ERROR,
        f"`import torch` failed: {last}" if last else
        f"`import torch` failed with exit code {result.returncode}",
        detail=_tail(result.stderr),
    )


def _last_error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Error" in ln or "Exception" in ln:
            return ln[:300]
    return lines[-1][:300] if lines else ""


def _tail(text: str, n: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-n:])

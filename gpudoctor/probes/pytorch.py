"""PyTorch, probed in a child process of the diagnosed interpreter (`Deps.python`).

`import torch` can raise, abort the interpreter (a broken cuDNN does) or hang (a wedged
driver), so it never happens in gpudoctor's own process. The child reports static facts
(package metadata, `torch/version.py`, installed nvidia-* wheels) before importing torch, so
they survive a crash.

Mapping:
- interpreter cannot be executed → `Unavailable(NOT_INSTALLED)` for the whole probe
- no torch in that interpreter → `TorchFacts` naming the interpreter, with `static` and
  `runtime` both `Unavailable(NOT_INSTALLED)` (`views.torch_missing` reads it, and the
  bare `Unavailable(NOT_INSTALLED)` of older snapshots, alike)
- import raised → `runtime = Unavailable(ERROR)` with the exception's last line
- child killed by a signal (abort, segfault) → `runtime = Unavailable(CRASHED)`
- child ran past `Deps.torch_timeout` → `runtime = Unavailable(TIMEOUT)`
"""

from __future__ import annotations

import json
import logging
import re
import signal
from typing import Any

from gpudoctor import childproc
from gpudoctor.model import (
    Reason,
    TorchDevice,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.probes import prestart
from gpudoctor.probes.interface import Deps

logger = logging.getLogger(__name__)

PREFIX = "GPUDOCTOR:"


def probe_torch(deps: Deps) -> TorchFacts | Unavailable:
    """Run the child and turn its output into facts."""
    if deps.no_torch:
        return Unavailable(Reason.SKIPPED, "PyTorch was not probed (--no-torch)")
    timed_out = False
    try:
        child = prestart.take(deps.python, deps.child_env())  # started early by the CLI
        result = child.finish(max(0.1, deps.torch_timeout - child.elapsed))
    except OSError as e:  # not executable, missing, not a program (ENOEXEC)
        return Unavailable(
            Reason.NOT_INSTALLED,
            f"cannot run the Python interpreter {deps.python}",
            detail=repr(e),
        )
    except childproc.ChildTimeout as e:
        timed_out = True
        result = e.result
    seconds = round(child.elapsed, 3)
    stages = _stages(result.stdout)
    static_data = stages.get("static")
    if static_data is not None and static_data.get("missing"):
        # the interpreter stays named, so that the install line can run pip through it
        missing = Unavailable(Reason.NOT_INSTALLED, f"PyTorch is not installed for {deps.python}",
                              detail=static_data.get("error"))
        return TorchFacts(python=deps.python, static=missing, runtime=missing, seconds=seconds,
                          python_version=_python_version(static_data))
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
        python_version=_python_version(static_data),
    )


def _python_version(data: dict[str, Any] | None) -> str | Unavailable:
    """The interpreter's "X.Y.Z" as the child printed it, or why it is not known."""
    value = data.get("python_version") if isinstance(data, dict) else None
    if isinstance(value, str) and re.fullmatch(r"\d+\.\d+\.\d+", value):
        return value
    return Unavailable(Reason.ERROR, "the interpreter did not report its version")


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


def _static(data: dict[str, Any] | None, result: childproc.Completed) -> TorchStatic | Unavailable:
    if data is None:
        return Unavailable(
            Reason.ERROR,
            "the interpreter did not report its packages",
            detail=_detail(result),
        )
    if "error" in data and "version" not in data:
        return Unavailable(Reason.NOT_SUPPORTED, str(data["error"]))
    return TorchStatic(
        version=str(data["version"]),
        location=str(data["location"]),
        version_py=tuple((str(k), str(v)) for k, v in data["version_py"]),
        nvidia_wheels=tuple((str(k), str(v)) for k, v in data["nvidia_wheels"]),
        distributions=tuple((str(v), str(loc)) for v, loc in data.get("distributions", ())),
        cwd=str(data["cwd"]) if data.get("cwd") else Unavailable(
            Reason.NOT_SUPPORTED, "the interpreter's working directory could not be read"),
        companions=tuple((str(k), str(v)) for k, v in data.get("companions", ())),
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
        file=str(d["file"]) if d.get("file") else Unavailable(
            Reason.NOT_SUPPORTED, "torch has no __file__ (a namespace package)"),
    )


def _failure(result: childproc.Completed, deps: Deps) -> Unavailable:
    if result.returncode < 0:
        try:
            name = signal.Signals(-result.returncode).name
        except ValueError:
            name = f"signal {-result.returncode}"
        return Unavailable(
            Reason.CRASHED,
            f"`import torch` crashed the interpreter ({name})",
            detail=_detail(result),
        )
    last = _last_error_line(result.stderr)
    return Unavailable(
        Reason.ERROR,
        f"`import torch` failed: {last}" if last else
        f"`import torch` failed with exit code {result.returncode}",
        detail=_detail(result),
    )


def _last_error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Error" in ln or "Exception" in ln:
            return ln[:300]
    return lines[-1][:300] if lines else ""


def _detail(result: childproc.Completed) -> str:
    """The stderr tail, and the runner's note when the child's output was cut."""
    return "\n".join((_tail(result.stderr), *result.notes)).strip()


def _tail(text: str, n: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-n:])

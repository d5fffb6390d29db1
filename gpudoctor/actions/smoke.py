"""`smoke-test`: train reference CNNs on a device in a child process and judge the numbers.

Contract (also what `gpudoctor check --smoke` uses):

- `parse_device(text) -> str`: "cpu", "cuda" or "cuda:N" → canonical "cpu" / "cuda:N";
  anything else raises `ValueError` (the CLI's usage error).
- `run_smoke(options, on_progress=None) -> SmokeReport | SmokeFailure`: runs
  `_smoke_child.py` under `options.python` with `options.timeout`; never raises for anything
  the diagnosed stack does. `SmokeFailure` when nothing could be measured (interpreter or torch
  missing, `import torch` failed, the device cannot be opened — torch's own reason —, the child
  crashed or hung); otherwise a `SmokeReport`, in which a model that failed part-way (out of
  memory, a CUDA error) carries its `RunError`.
- `smoke_results(outcome) -> tuple[Result, ...]`: always the same checks GD450-GD455, in id
  order, layer PYTORCH; what does not apply is SKIP with the reason. The verdicts and their
  thresholds live in `gpudoctor.actions.smoke_checks`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudoctor.model import Reason, Result

logger = logging.getLogger(__name__)

CHILD_SOURCE = (Path(__file__).parent / "_smoke_child.py").read_text(encoding="ascii")
PREFIX = "GPUDOCTOR:"
MODELS = ("lenet", "convnet")
DTYPES = ("float32", "float16", "bfloat16")
_DEVICE = re.compile(r"(cpu|cuda(?::(\d{1,4}))?)")


def parse_device(text: str) -> str:
    """Canonical device string ("cpu", "cuda:N"); ValueError, with the reason, otherwise."""
    m = _DEVICE.fullmatch(text.strip().lower())
    if m is None:
        raise ValueError(f"{text!r} is not a device: use cpu, cuda or cuda:N (N = 0, 1, …)")
    return "cpu" if m.group(1) == "cpu" else f"cuda:{int(m.group(2) or 0)}"


@dataclass(frozen=True, slots=True)
class SmokeOptions:
    """What to run. Validated on construction (ValueError)."""

    device: str = "cuda:0"  # as parse_device returns it
    model: str = "all"  # "lenet", "convnet" or "all"
    batch_size: int | None = None  # None: lenet 128 / convnet 32 on CUDA, 32 / 4 on the CPU
    steps: int = 20  # timed steps per model and configuration
    warmup: int = 3  # untimed steps before them
    dtype: str = "float32"  # autocast to float16 / bfloat16; float32 runs without autocast
    profile_dir: str | None = None  # save one Chrome trace per model and configuration
    timeout: float = 300.0  # seconds for the whole child run: past it, it is called hung
    python: str | None = None  # interpreter whose torch is tested; None: this one

    def __post_init__(self) -> None:
        if parse_device(self.device) != self.device:
            raise ValueError(f"device {self.device!r} is not canonical (use parse_device)")
        if self.model not in (*MODELS, "all") or self.dtype not in DTYPES:
            raise ValueError(f"unknown model {self.model!r} or dtype {self.dtype!r}")
        small_batch = self.batch_size is not None and self.batch_size < 1
        if self.steps < 1 or self.warmup < 0 or small_batch or self.timeout <= 0:
            raise ValueError("steps and batch size must be >= 1, warmup >= 0, timeout > 0")

    @property
    def models(self) -> tuple[str, ...]:
        """The models to run, in order."""
        return MODELS if self.model == "all" else (self.model,)


@dataclass(frozen=True, slots=True)
class SmokeProgress:
    """One progress line of the child: `done` of `total` steps (total 0: not yet known)."""

    done: int
    total: int
    label: str


@dataclass(frozen=True, slots=True)
class SmokeFailure:
    """The smoke test could not measure anything; `message` says why, `fix` what to do."""

    reason: Reason
    message: str
    fix: str
    detail: str | None = None  # the child's stderr tail or traceback


@dataclass(frozen=True, slots=True)
class RunError:
    """A model or a sanity figure that failed part-way."""

    stage: str  # "lenet training", "matmul", "copy"
    message: str  # "OutOfMemoryError: CUDA out of memory. …"
    oom: bool
    free_memory: int | None = None  # bytes free on the device after the failure (CUDA)
    total_memory: int | None = None
    detail: str = ""  # the last frames of the traceback


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """The device as the child's torch saw it; the CUDA-only fields are None on the CPU."""

    name: str  # "cpu", "cuda:0"
    label: str  # "NVIDIA H100 80GB HBM3", "CPU (2 threads)"
    torch: str
    cuda: str | None  # torch.version.cuda
    capability: str | None = None  # "9.0"
    arch: str | None = None  # "sm_90"
    arch_list: tuple[str, ...] = ()  # torch.cuda.get_arch_list()
    arch_supported: bool | None = None  # an sm_/compute_ entry of the build can run here
    total_memory: int | None = None
    free_memory: int | None = None  # before the test
    cudnn_available: bool | None = None
    cudnn_version: int | None = None
    tf32_conv: bool | None = None  # the user's settings, used for timing (verification: off)
    tf32_matmul: bool | None = None


@dataclass(frozen=True, slots=True)
class StepTiming:
    """Per-step times after warm-up; spread = (p90 - p10) / median."""

    clock: str  # "cuda-events" or "perf_counter"
    steps: int
    median_ms: float
    p10_ms: float
    p90_ms: float
    min_ms: float
    max_ms: float
    spread: float


@dataclass(frozen=True, slots=True)
class ConfigRun:
    """One model trained under one configuration: "cpu", "native" (cuDNN disabled), "cudnn",
    "cudnn-benchmark" (cudnn.benchmark = True)."""

    name: str
    cudnn_enabled: bool | None  # None on the CPU
    benchmark: bool
    losses: tuple[float, ...]  # the verification steps' losses (TF32 off)
    nonfinite_grads: tuple[str, ...]  # parameters whose first gradient is NaN/inf or missing
    zero_grads: tuple[str, ...]  # parameters whose first gradient is all zero
    max_rel_diff: float | None  # first step vs the native run; None for the reference itself
    timing: StepTiming
    timed_losses_finite: bool
    conv_ops: tuple[str, ...] = ()  # aten::*conv* ops of the profiled step
    cudnn_kernels: tuple[str, ...] = ()  # kernels of those ops that are cuDNN's by name
    conv_kernels: tuple[str, ...] = ()  # every kernel of those ops
    trace: str | None = None  # the Chrome trace written (--profile)
    profile_error: str | None = None

    @property
    def training_ok(self) -> bool:
        """Finite losses falling over the steps, gradients finite and non-zero."""
        finite = all(map(_finite, self.losses)) and self.timed_losses_finite
        return (finite and len(self.losses) > 1 and self.losses[-1] < self.losses[0]
                and not self.nonfinite_grads and not self.zero_grads)


@dataclass(frozen=True, slots=True)
class ModelRun:
    """One model: its batch and every configuration it ran under."""

    model: str
    batch_size: int
    input: tuple[int, ...]  # (batch, 3, H, W)
    parameters: int
    configs: tuple[ConfigRun, ...]
    error: RunError | None  # what stopped it part-way

    def config(self, name: str) -> ConfigRun | None:
        """The run under that configuration, if it happened."""
        return next((c for c in self.configs if c.name == name), None)


@dataclass(frozen=True, slots=True)
class Throughput:
    """A sanity figure: a large matmul (TFLOP/s) or a device-to-device copy (GB/s, read +
    write counted). On the CPU they are CPU figures (`device` says so)."""

    what: str  # "matmul" or "copy"
    device: str  # "cuda" or "cpu"
    value: float = 0.0
    unit: str = ""
    setup: str = ""  # "8192x8192 float32, TF32 off, 10 iterations"
    max_rel_error: float = 0.0  # matmul rows vs float64; copy: 0 when bit-exact, else 1
    tf32: bool | None = None
    error: RunError | None = None


@dataclass(frozen=True, slots=True)
class SmokeReport:
    """Everything measured."""

    device: DeviceInfo
    dtype: str
    python: str
    models: tuple[ModelRun, ...]
    matmul: Throughput
    copy: Throughput
    cudnn_libraries: tuple[str, ...]  # libcudnn* files mapped in the child at the end
    seconds: float


SmokeOutcome = SmokeReport | SmokeFailure
ProgressCallback = Callable[[SmokeProgress], None]


def run_smoke(
    options: SmokeOptions,
    on_progress: ProgressCallback | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> SmokeOutcome:
    """Run the child and read what it measured (see the module docstring)."""
    python = options.python or sys.executable
    config = {"device": options.device, "models": list(options.models),
              "batch_size": options.batch_size, "steps": options.steps,
              "warmup": options.warmup, "dtype": options.dtype,
              "profile_dir": options.profile_dir}
    env = dict(os.environ if environ is None else environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    messages: dict[str, Any] = {}
    last = ["starting"]

    def on_line(line: str) -> None:
        if not line.startswith(PREFIX):
            return
        try:
            msg = json.loads(line[len(PREFIX):])
            kind, data = msg["kind"], msg["data"]
        except (ValueError, KeyError, TypeError):
            logger.debug("unparsable child line: %r", line)
            return
        messages[kind] = data
        if kind == "progress":
            last[0] = str(data["label"])
            if on_progress is not None:
                on_progress(SmokeProgress(int(data["done"]), int(data["total"]), last[0]))

    argv = [python, "-c", CHILD_SOURCE, json.dumps(config)]
    try:
        returncode, stderr = _run_streaming(argv, options.timeout, env, on_line)
    except (FileNotFoundError, PermissionError) as e:
        return SmokeFailure(Reason.NOT_INSTALLED, f"cannot run the Python interpreter {python}",
                            "pass --python with a working interpreter", repr(e))
    except TimeoutError as e:
        return SmokeFailure(
            Reason.TIMEOUT,
            f"the smoke test did not finish within {options.timeout:g} s (last step: {last[0]}):"
            " the CUDA stack hangs, or the run needs a longer --timeout",
            "run `gpudoctor check`; `nvidia-smi` shows a GPU stuck at 100% or in an error state;"
            " raise --timeout if the device is just slow", str(e))
    if "result" in messages:
        try:
            return _report(messages["result"], python)
        except (KeyError, TypeError, ValueError) as e:
            return SmokeFailure(Reason.ERROR, "the smoke test's result could not be read",
                                "run the same command with `gpudoctor --debug`", repr(e))
    return _failure(messages.get("error"), returncode, stderr, last[0], options, python)


def _run_streaming(
    argv: Sequence[str], timeout: float, env: Mapping[str, str], on_line: Callable[[str], None]
) -> tuple[int, str]:
    """Like `probes.interface.run`, but hands each stdout line to `on_line` as it comes.
    Raises TimeoutError after `timeout` s (the child's process group is killed)."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(env), text=True, errors="replace",
                            start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()
    err: list[str] = []
    assert proc.stdout is not None
    assert proc.stderr is not None
    out_stream, err_stream = proc.stdout, proc.stderr

    def read_out() -> None:
        for ln in out_stream:
            lines.put(ln)
        lines.put(None)

    readers = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=lambda: err.append(err_stream.read()), daemon=True)]
    for t in readers:
        t.start()
    deadline = time.monotonic() + timeout
    finished = False
    try:
        while not finished and (remaining := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None:
                finished = True
            else:
                on_line(line.rstrip("\n"))
        if finished:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        finished = False
    finally:
        _kill(proc)
        for t in readers:
            t.join(timeout=2)
    if not finished:
        raise TimeoutError(f"{argv[0]} did not finish within {timeout:g} s\n"
                           f"{_tail(''.join(err))}".strip())
    return proc.returncode, "".join(err)


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.wait()


def _failure(error: dict[str, Any] | None, returncode: int, stderr: str, last: str,
             options: SmokeOptions, python: str) -> SmokeFailure:
    check = "run `gpudoctor check` to find the layer at fault (driver, CUDA, cuDNN, PyTorch)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return SmokeFailure(Reason.CRASHED, f"the smoke test crashed ({name}) during: {last}",
                            check, _tail(stderr))
    if error is None:
        return SmokeFailure(Reason.ERROR,
                            f"the smoke test exited with code {returncode} during: {last}",
                            check, _tail(stderr))
    message, detail, code = str(error["message"]), error.get("detail"), error.get("code")
    if code == "import":
        if message.startswith("ModuleNotFoundError") and "'torch'" in message:
            return SmokeFailure(Reason.NOT_INSTALLED, f"PyTorch is not installed for {python}",
                                f"install it: {python} -m pip install torch", detail)
        return SmokeFailure(Reason.ERROR, f"`import torch` failed: {message}", check, detail)
    if code == "cuda-unavailable":
        reason = (Reason.NOT_SUPPORTED if "not compiled with CUDA" in message
                  else Reason.DRIVER_NOT_LOADED if "driver" in message.lower() else Reason.ERROR)
        fix = ("install a CUDA build of PyTorch (a CPU-only build never uses the GPU): "
               "`gpudoctor check` prints the exact pip line" if reason is Reason.NOT_SUPPORTED
               else f"{check}; or run the smoke test with --device cpu")
        return SmokeFailure(reason, f"{options.device} cannot be used: {message}", fix, detail)
    if code == "no-such-device":
        return SmokeFailure(Reason.NOT_SUPPORTED, message,
                            "pick an existing device (--device cuda:0); check "
                            "CUDA_VISIBLE_DEVICES", detail)
    return SmokeFailure(Reason.ERROR, f"the smoke test failed: {message}",
                        "this may be a gpudoctor bug: please report it with this output", detail)


def _tail(text: str, n: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")




# --------------------------------------------------------------------------- reading the result


def _make(cls: Any, d: dict[str, Any], **nested: Any) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    plain = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names}
    return cls(**{**plain, **nested})


def _error(d: dict[str, Any] | None) -> RunError | None:
    return None if d is None else _make(RunError, d)


def _report(d: dict[str, Any], python: str) -> SmokeReport:
    models = tuple(
        _make(ModelRun, m, error=_error(m["error"]), configs=tuple(
            _make(ConfigRun, c, timing=_make(StepTiming, c["timing"])) for c in m["configs"]))
        for m in d["models"])
    matmul, copy = (_make(Throughput, d[k], error=_error(d[k].get("error")))
                    for k in ("matmul", "copy"))
    return SmokeReport(_make(DeviceInfo, d["device"]), str(d["dtype"]), python, models, matmul,
                       copy, tuple(d["cudnn_libraries"]), float(d["seconds"]))


def outcome_to_dict(outcome: SmokeOutcome) -> dict[str, Any]:
    """Plain JSON-able data in field order; a failure is {"failure": {...}}."""
    data = dataclasses.asdict(outcome)
    if isinstance(outcome, SmokeFailure):
        return {"failure": {**data, "reason": str(outcome.reason)}}
    for m, model in zip(data["models"], outcome.models, strict=True):
        for c, run in zip(m["configs"], model.configs, strict=True):
            c["training_ok"] = run.training_ok
    return data


def smoke_results(outcome: SmokeOutcome) -> tuple[Result, ...]:
    """The smoke test's verdicts: GD450-GD455 in id order, whatever the outcome."""
    from gpudoctor.actions.smoke_checks import results

    return results(outcome)

"""`smoke-test`: train reference CNNs on a device in a child process and judge the numbers.

Contract (also what `gpudoctor check --smoke` uses):

- `parse_device(text) -> str`: "cpu", "cuda" or "cuda:N" → canonical "cpu" / "cuda:N";
  anything else raises `ValueError` (the CLI's usage error).
- `run_smoke(options, on_progress=None) -> SmokeRun | SmokeFailure`: runs
  `_smoke_child.py` under `options.python` with `options.timeout`; never raises for anything
  the diagnosed stack does. `SmokeFailure` when nothing could be measured (interpreter or torch
  missing, `import torch` failed, the device cannot be opened — torch's own reason —, the child
  crashed or hung); otherwise a `SmokeRun`, in which a model that failed part-way (out of
  memory, a CUDA error) carries its `RunError`.
- `smoke_report(outcome) -> Report`: the outcome becomes `Environment.smoke` and the smoke
  checks GD450-GD455 of the one registry judge it (`gpudoctor.checks.smoke`, which holds the
  verdicts and their thresholds); what does not apply is SKIP with the reason. The outcome's
  dataclasses are plain facts in `gpudoctor.model` / `gpudoctor.model_smoke`, so a snapshot
  round-trips them and `check --from-snapshot` replays the verdicts.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shlex
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudoctor import __version__, childproc
from gpudoctor.actions.childlines import ChildMessages, child_environ
from gpudoctor.model import Environment, Reason, SmokeFacts, Unavailable
from gpudoctor.model import SmokeFailure as SmokeFailure  # re-exported: the outcome's types
from gpudoctor.model_smoke import ConfigRun as ConfigRun
from gpudoctor.model_smoke import DeviceInfo as DeviceInfo
from gpudoctor.model_smoke import ModelRun as ModelRun
from gpudoctor.model_smoke import RunError as RunError
from gpudoctor.model_smoke import SmokeRun as SmokeRun
from gpudoctor.model_smoke import StepTiming as StepTiming
from gpudoctor.model_smoke import Throughput as Throughput
from gpudoctor.versions import covers

if TYPE_CHECKING:
    from gpudoctor.model import Report

logger = logging.getLogger(__name__)

CHILD_SOURCE = (Path(__file__).parent / "_smoke_child.py").read_text(encoding="ascii")
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
    # the interpreter whose torch is tested, as `gpudoctor.interpreters.resolve` returned it
    python: str = sys.executable

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


SmokeOutcome = SmokeFacts  # SmokeRun | SmokeFailure (gpudoctor.model)
ProgressCallback = Callable[[SmokeProgress], None]


def run_smoke(
    options: SmokeOptions,
    on_progress: ProgressCallback | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> SmokeOutcome:
    """Run the child and read what it measured (see the module docstring)."""
    python = options.python
    config = {"device": options.device, "models": list(options.models),
              "batch_size": options.batch_size, "steps": options.steps,
              "warmup": options.warmup, "dtype": options.dtype,
              "profile_dir": options.profile_dir}
    env = child_environ(environ)

    def progress(data: dict[str, Any]) -> None:
        if on_progress is not None:
            on_progress(SmokeProgress(int(data["done"]), int(data["total"]), str(data["label"])))

    lines = ChildMessages(progress)
    messages = lines.messages

    argv = [python, "-c", CHILD_SOURCE, json.dumps(config)]
    try:
        done = childproc.run(argv, options.timeout, env, on_line=lines)
    except OSError as e:  # missing, not executable, not a program
        return SmokeFailure(Reason.NOT_INSTALLED, f"cannot run the Python interpreter {python}",
                            "pass --python with a working interpreter", repr(e))
    except childproc.ChildTimeout as e:
        return SmokeFailure(
            Reason.TIMEOUT,
            f"the smoke test did not finish within {options.timeout:g} s (last step: {lines.last}):"
            " the CUDA stack hangs, or the run needs a longer --timeout",
            "run `gpudoctor check`; `nvidia-smi` shows a GPU stuck at 100% or in an error state;"
            " raise --timeout if the device is just slow",
            f"{e}\n{_tail(e.result.stderr)}".strip())
    returncode, stderr = done.returncode, "\n".join((done.stderr, *done.notes))
    if "result" in messages:
        try:
            return _report(messages["result"], python)
        except (KeyError, TypeError, ValueError) as e:
            return SmokeFailure(Reason.ERROR, "the smoke test's result could not be read",
                                "run the same command with `gpudoctor --debug`", repr(e))
    return _failure(messages.get("error"), returncode, stderr, lines.last, options, python)


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
                                "install it: `gpudoctor recommend --python "
                                f"{shlex.quote(python)}` prints "
                                "the line that fits this machine", detail)
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






# --------------------------------------------------------------------------- reading the result


def _make(cls: Any, d: dict[str, Any], **nested: Any) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    plain = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names}
    return cls(**{**plain, **nested})


def _error(d: dict[str, Any] | None) -> RunError | None:
    return None if d is None else _make(RunError, d)


def _report(d: dict[str, Any], python: str) -> SmokeRun:
    models = tuple(
        _make(ModelRun, m, error=_error(m["error"]), configs=tuple(
            _make(ConfigRun, c, timing=_make(StepTiming, c["timing"])) for c in m["configs"]))
        for m in d["models"])
    matmul, copy = (_make(Throughput, d[k], error=_error(d[k].get("error")))
                    for k in ("matmul", "copy"))
    device = _make(DeviceInfo, d["device"])
    if device.capability and device.arch_list:  # the one arch rule, not the child's sketch
        device = dataclasses.replace(device, arch_supported=covers(device.arch_list,
                                                                   device.capability))
    return SmokeRun(device, str(d["dtype"]), python, models, matmul,
                       copy, tuple(d["cudnn_libraries"]), float(d["seconds"]))


def outcome_to_dict(outcome: SmokeOutcome) -> dict[str, Any]:
    """Plain JSON-able data in field order, as a snapshot holds it (NaN as "NaN": strict
    JSON); a failure is {"failure": {...}}."""
    from gpudoctor.snapshot import to_data

    data: dict[str, Any] = to_data(outcome)
    if isinstance(outcome, SmokeFailure):
        return {"failure": data}
    if not isinstance(outcome, SmokeRun):  # a DistributedRun: plain data as it is
        return data
    for m, model in zip(data["models"], outcome.models, strict=True):
        for c, run in zip(m["configs"], model.configs, strict=True):
            c["training_ok"] = run.training_ok
    return data


def smoke_environment(outcome: SmokeOutcome) -> Environment:
    """An Environment whose smoke fact is `outcome`; `smoke-test` probes no other fact (its
    JSON report adds the host's), so the others are `Unavailable(SKIPPED)` (`gpudoctor check
    --smoke` fills them all)."""
    from datetime import datetime, timezone

    other = Unavailable(Reason.SKIPPED, "not probed by smoke-test: run `gpudoctor check`")
    return Environment(
        gpudoctor_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        host=other, nvml=other, libcuda=other, toolkits=other, torch=other, cudnn=other,
        smoke=outcome)


def smoke_report(outcome: SmokeOutcome) -> Report:
    """The smoke checks (GD450-GD455, from the one registry) run over `smoke_environment`:
    the same verdicts `gpudoctor check --smoke` gives for the same outcome."""
    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.checks.smoke import CHECKS
    from gpudoctor.compat import load_tables

    checks = tuple(c for c in REGISTRY if c in CHECKS)
    return run_checks(smoke_environment(outcome), load_tables(), checks)

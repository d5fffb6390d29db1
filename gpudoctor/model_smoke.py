"""The smoke test's measurements as plain facts: what `Environment.smoke` holds when it ran.

A leaf (stdlib only), imported by `gpudoctor.model`, which adds `SmokeFailure` (it carries a
`Reason`) and the `SmokeFacts` union. Every field is plain data so that a snapshot or a JSON
report round-trips it (`gpudoctor.snapshot`) and `check --from-snapshot` replays the smoke
checks (GD450-GD455) exactly. The child (`actions/_smoke_child.py`) measures these;
`gpudoctor.actions.smoke` reads its output into them.
"""

from __future__ import annotations

from dataclasses import dataclass


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")


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
    # TF32 while the steps were timed: cuDNN's convolutions (conv) and cuBLAS, which runs the
    # native path's im2col GEMMs and every linear layer (matmul); like for like when equal.
    # None: not recorded (an older gpudoctor timed under torch's defaults: conv on, matmul off)
    timing_tf32_conv: bool | None = None
    timing_tf32_matmul: bool | None = None

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
class SmokeRun:
    """Everything the smoke test measured."""

    device: DeviceInfo
    dtype: str
    python: str
    models: tuple[ModelRun, ...]
    matmul: Throughput
    copy: Throughput
    cudnn_libraries: tuple[str, ...]  # libcudnn* files mapped in the child at the end
    seconds: float


# --------------------------------------------------------------------------- distributed


@dataclass(frozen=True, slots=True)
class RankResult:
    """One rank of `smoke-test --distributed`: its device check, the all-reduce's exact sums
    and its bus bandwidth; or where it stopped. `state` is "ok", "error" (the rank said what
    failed) or "hung" (it did not reach the next phase before the deadline: named by rank 0,
    from the phases the rank marked in the rendezvous store)."""

    rank: int
    local_rank: int
    host: str
    device: str  # "cpu", "cuda:3"
    label: str  # "NVIDIA H100 80GB HBM3", "2 CPU threads"
    state: str
    # the last phase it reached: "device", "rendezvous", "init", "allreduce", "bandwidth",
    # "done"
    phase: str
    device_ok: bool | None = None  # a small matmul on the device equals the CPU's, exactly
    expected_sum: int | None = None  # of the all-reduced tensor's elements
    sum: int | None = None
    mismatches: int | None = None  # elements not equal to the expected value
    # bytes / time per all-reduce, GB/s; None with one rank: an all-reduce over one rank
    # moves nothing, so a figure would measure a local copy, not communication
    algbw_gbs: float | None = None
    busbw_gbs: float | None = None  # algbw × 2(n-1)/n, nccl-tests' bus bandwidth
    error: str | None = None


@dataclass(frozen=True, slots=True)
class DistributedRun:
    """What `smoke-test --distributed` measured, gathered by rank 0 (a rank other than 0 holds
    only its own result)."""

    backend: str  # "nccl", "gloo"
    world_size: int
    master: str  # MASTER_ADDR:MASTER_PORT
    elements: int  # of the correctness tensor (float32, integer values: sums are exact)
    bandwidth_bytes: int  # of the bandwidth tensor
    iterations: int  # timed all-reduces
    deadline: float  # seconds a phase may take before a rank is called hung
    python: str
    torch: str
    ranks: tuple[RankResult, ...]
    seconds: float
    rank: int = 0  # the rank that wrote this report
    error: str | None = None  # what stopped the run as a whole (the rendezvous timed out)

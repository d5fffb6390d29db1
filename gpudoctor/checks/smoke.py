"""Smoke-test checks (GD450-GD455): the verdicts on `Environment.smoke`.

`gpudoctor check --smoke` and `gpudoctor smoke-test` put the smoke test's outcome into the
Environment; without it the fact is `Unavailable(SKIPPED)` and every check here is SKIP ("pass
--smoke"). When the test ran but could measure nothing (`SmokeFailure`: torch missing, the
device unusable, a crash or a hang), GD454 fails with the reason and the others are SKIP.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpudoctor.checks.base import (
    check,
    failed,
    noted,
    passed,
    skipped,
    unavailable_reason,
    warned,
)
from gpudoctor.model import (
    Environment,
    Finding,
    Layer,
    Reason,
    Severity,
    SmokeFailure,
    Unavailable,
)
from gpudoctor.model_smoke import ConfigRun, DistributedRun, SmokeRun
from gpudoctor.versions import format_cudnn_version

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

# Normwise relative difference max|a-b| / max|b| of the first step's logits, loss and
# gradients, cuDNN vs native. float32 is compared with TF32 off: the algorithms (implicit GEMM,
# Winograd, FFT vs im2col + GEMM) then differ by summation order, about 1e-6..1e-4, so 1e-3
# leaves room without hiding a wrong kernel (those are off by O(1)). Half types round every
# activation: float16 keeps 11 bits (2^-11 ≈ 5e-4 per rounding), bfloat16 8 bits (2^-8 ≈ 4e-3),
# compounded over the layers and the backward pass. This is the base of `tolerance`, which
# adds what grows with the batch.
TOLERANCE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}
# unit roundoff u = 2^-p of the type the native path accumulates the weight gradient in
UNIT_ROUNDOFF = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
ACCUMULATION_SIGMAS = 3.0  # k in k·u·√B
# a tolerance this wide cannot tell a wrong kernel (off by O(1)) from rounding: no verdict
MAX_TOLERANCE = 0.5
# The matmul sanity figure vs float64: TF32 rounds its inputs to 11 bits, like float16.
MATMUL_TOLERANCE = {"float32": 1e-4, "tf32": 1e-2, "float16": 1e-2, "bfloat16": 5e-2}
# cuDNN more than 10% slower than native warns: twice the ≤5% step-time spread we aim for,
# so a warning is a real slowdown, not noise.
SLOWER_MARGIN = 0.10

CHECK = "`gpudoctor check`"
CPU_SKIP = "cuDNN applies to CUDA devices only; the smoke test ran PyTorch's CPU kernels"
NOT_RUN = "the smoke test did not run (pass --smoke)"
NEEDS = "smoke test (check --smoke / smoke-test)"
FACTS = frozenset({"smoke"})  # the Environment fields they read
Evidence = tuple[tuple[str, str], ...]
# The torch install line comes from one source (gpudoctor.compat.advice), which weighs the driver,
# the GPUs and the installed torch; `smoke-test` probes none of them, and the smoke verdicts
# must read the same there as in `check --smoke` (where GD402-GD405 print the line), so the
# smoke checks name the command that prints it rather than a line of their own.
RECOMMEND = "`gpudoctor recommend` prints the install line that fits this machine"


def _measured(env: Environment) -> SmokeRun | Finding:
    """The measurements, or the SKIP finding that says why there are none."""
    s = env.smoke
    if isinstance(s, SmokeRun):
        return s
    if isinstance(s, SmokeFailure):
        return skipped("the smoke test did not run (see GD454)")
    if isinstance(s, DistributedRun):
        return skipped("the distributed smoke test trains no model (see GD456)")
    assert isinstance(s, Unavailable)
    return skipped(NOT_RUN if s.reason is Reason.SKIPPED else unavailable_reason("smoke test", s))


def tolerance(dtype: str, batch: int) -> float:
    """GD451's bound on max|a-b| / max|b| for a model trained on batches of `batch` in `dtype`:

        tolerance = TOLERANCE[dtype] + k · u · √batch,    k = 3, u = 2^-p

    (u = 2^-24 float32, 2^-11 float16, 2^-8 bfloat16). Why the batch: PyTorch's native
    convolution (cuDNN disabled: `slow_conv2d` in aten/src/ATen/native/cuda/ConvolutionMM2d.cu)
    computes the weight gradient one sample at a time, each sample's GEMM added into the
    gradient tensor itself (beta = 1), which is in the autocast type: the running sum is
    rounded to u once per sample, B times; cuDNN accumulates in float32 and rounds once. Each
    rounding errs by at most u·|s_k| (half an ulp), independently and with mean zero, so the
    sum of B of them has a standard deviation of about u·|s|·√(B/3): the difference grows as
    √B, not as the worst case (B - 1)·u. A CPU emulation of that accumulation on the smoke
    test's own models and batch (reference in float64; tests/checks/test_smoke.py)
    gives 0.5-1.1 · u·√B over batches of 16 to 2048; k = 3 leaves three times that. float16
    runs scale the loss (the smoke child's LOSS_SCALE) so the sums stay out of float16's
    subnormal range, where the rounding step is no longer relative.

    Examples: bfloat16 at 128 → 0.183, at 1024 → 0.425; float16 at 128 → 0.0266; float32 1e-3.
    """
    return TOLERANCE[dtype] + ACCUMULATION_SIGMAS * UNIT_ROUNDOFF[dtype] * math.sqrt(
        max(batch, 1))


def _no_bf16_cudnn(r: SmokeRun) -> Finding | None:
    """The SKIP for bfloat16 on a GPU before sm_80: PyTorch gives cuDNN no bfloat16
    convolution there (ConvParams::use_cudnn requires supportsBFloat16ConvolutionWithCuDNNv8,
    compute capability 8.0 or later), so every configuration ran the native kernels."""
    cap = r.device.capability or ""
    major = cap.split(".")[0]
    if r.dtype != "bfloat16" or not major.isdigit() or int(major) >= 8:
        return None
    return skipped(f"cuDNN has no bfloat16 convolution before sm_80 ({r.device.arch or cap}): "
                   "PyTorch runs them with its native kernels by design; use float16 on this "
                   "GPU to test cuDNN")


def _runs(r: SmokeRun, prefix: str = "") -> list[tuple[str, ConfigRun]]:
    return [(m.model, c) for m in r.models for c in m.configs if c.name.startswith(prefix)]


def rate(value: float) -> str:
    """A figure with three significant digits, never in exponent form: 2650, 48.3, 0.236."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def cudnn_text(v: int | None) -> str:
    """torch's cuDNN as GD309 says it: 92000 → "9.20.0"; "?" when the child did not say."""
    return "?" if v is None or v < 0 else format_cudnn_version(v)


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**30:.1f} GiB"


def _cudnn_measured(env: Environment) -> SmokeRun | Finding:
    """The measurements of a CUDA run that has cuDNN runs to compare, or the SKIP finding
    that says why there are none."""
    r = _measured(env)
    if isinstance(r, Finding):
        return r
    if not r.device.name.startswith("cuda"):
        return skipped(CPU_SKIP)
    if not r.device.cudnn_available:
        return skipped("torch has no usable cuDNN here (see GD452)")
    if not _runs(r, "cudnn"):
        return skipped("no model finished a cuDNN run (see GD454)")
    return r


@check("GD450", "smoke-training-correct", "Smoke test: training steps give finite, falling losses",
       Layer.PYTORCH, Severity.ERROR, NEEDS, reads={"smoke"})
def check_smoke_training_correct(env: Environment, tables: Tables) -> Finding:
    """Each model trains on a fixed synthetic batch from fixed weights: forward, cross-entropy,
    backward, SGD step. The losses must be finite and fall over the steps, and every
    parameter's gradient must be finite and non-zero. Anything else means the device (or a
    library on it) computes wrong numbers."""
    r = _measured(env)
    if isinstance(r, Finding):
        return r
    runs = _runs(r)
    if not runs:
        return skipped("no model ran (see GD454)")
    ev = tuple((f"{m}/{c.name} losses", " → ".join(f"{x:.4f}" for x in c.losses))
               for m, c in runs)
    bad = []
    for m, c in runs:
        if c.training_ok:
            continue
        why = ([f"non-finite or missing gradients: {', '.join(c.nonfinite_grads)}"]
               if c.nonfinite_grads else [])
        why += [f"all-zero gradients: {', '.join(c.zero_grads)}"] if c.zero_grads else []
        why += [] if why else [f"loss {c.losses[0]:.4f} → {c.losses[-1]:.4f}"
                              + ("" if c.timed_losses_finite else ", non-finite while timed")]
        bad.append(f"{m}/{c.name}: {'; '.join(why)}")
    if bad:
        return failed(
            f"training on {r.device.name} gives wrong numbers ({r.dtype}): " + " | ".join(bad),
            f"run {CHECK}; if it passes, update the NVIDIA driver and check the GPU's health "
            "(`nvidia-smi -q -d ECC,TEMPERATURE,CLOCK`)", ev)
    first: dict[str, ConfigRun] = {}
    for m, c in runs:
        first.setdefault(m, c)
    summary = ", ".join(f"{m} {c.losses[0]:.3f} → {c.losses[-1]:.3f}" for m, c in first.items())
    return passed(f"losses finite and falling ({summary}), gradients finite and non-zero in "
                  f"{len(runs)} run(s), {r.dtype}", ev)


@check("GD451", "smoke-cudnn-matches-native", "Smoke test: cuDNN results match the native path",
       Layer.PYTORCH, Severity.ERROR, NEEDS, reads={"smoke"})
def check_smoke_cudnn_matches_native(env: Environment, tables: Tables) -> Finding:
    """From the same weights and batch, the first training step with cuDNN (with and without
    `benchmark=True`) and with cuDNN disabled must agree: logits, loss and every gradient
    within TOLERANCE[dtype] + 3·u·√batch of max|a-b| / max|b|, TF32 off (`tolerance`: the
    native path accumulates the weight gradient per sample in the half type). Where that
    reaches MAX_TOLERANCE (0.5: bfloat16 beyond a batch of ~1300) the comparison cannot tell a
    wrong kernel from rounding and is skipped, as is bfloat16 before sm_80 (no cuDNN bf16)."""
    r = _cudnn_measured(env)
    if isinstance(r, Finding):
        return r
    no_cudnn = _no_bf16_cudnn(r)
    if no_cudnn is not None:
        return no_cudnn
    batch = {m.model: m.batch_size for m in r.models}
    tols = {m: tolerance(r.dtype, b) for m, b in batch.items()}
    diffs = [(m, c.name, c.max_rel_diff, tols[m]) for m, c in _runs(r, "cudnn")
             if c.max_rel_diff is not None]
    ev = tuple((f"{m}/{n} max relative difference", f"{d:.2e}") for m, n, d, _ in diffs)
    ev += tuple((f"{m} tolerance", f"{t:.3g} = {TOLERANCE[r.dtype]:g} + "
                 f"{ACCUMULATION_SIGMAS:g}·u·√{batch[m]} (u = {UNIT_ROUNDOFF[r.dtype]:.3g}, "
                 f"{r.dtype}, TF32 off)") for m, t in tols.items())
    coarse = [m for m, t in tols.items() if t >= MAX_TOLERANCE]
    diffs = [d for d in diffs if d[0] not in coarse]
    if not diffs:
        why = (f"at batch {', '.join(str(batch[m]) for m in coarse)} the native path's "
               f"{r.dtype} accumulation alone allows differences of {max(tols.values()):.2g}: "
               "the comparison cannot tell a wrong kernel from rounding (use a smaller "
               "--batch-size or float32)") if coarse else \
            "no cuDNN run was compared with a native one"
        return skipped(why, ev)
    m, name, worst, tol = max(diffs, key=lambda x: x[2] / x[3] if x[2] == x[2] else float("inf"))
    if not worst <= tol:
        return failed(
            f"cuDNN and native results differ: max relative difference {worst:.2e} > {tol:.3g} "
            f"({m}/{name}, {r.dtype}, batch {batch[m]})",
            f"reinstall PyTorch so it loads the cuDNN it was built with ({RECOMMEND}), update "
            f"the NVIDIA driver, then run {CHECK}", ev)
    return passed(f"cuDNN matches the native path: max relative difference {worst:.1e} ≤ "
                  f"{tol:.3g} ({m}, {r.dtype}, batch {batch[m]}, TF32 off)", ev)


@check("GD452", "smoke-cudnn-used", "Smoke test: convolutions run in cuDNN", Layer.PYTORCH,
       Severity.ERROR, NEEDS, reads={"smoke"})
def check_smoke_cudnn_used(env: Environment, tables: Tables) -> Finding:
    """On a CUDA device with cuDNN enabled, convolutions must run in cuDNN: the profiler shows
    aten::cudnn_convolution and cuDNN kernels, and libcudnn* is mapped into the process. A
    CUDA device without a usable cuDNN fails: every convolution falls back to slow kernels.
    bfloat16 on a GPU before sm_80 (V100, T4) is skipped: PyTorch gives cuDNN no bfloat16
    convolution there (compute capability 8.0 or later), so native kernels are expected."""
    r = _measured(env)
    if isinstance(r, Finding):
        return r
    d = r.device
    if not d.name.startswith("cuda"):
        return skipped(CPU_SKIP)
    if not d.cudnn_available:
        return failed(
            f"torch {d.torch} has no usable cuDNN on {d.name} "
            "(torch.backends.cudnn.is_available() is False)",
            f"reinstall the CUDA build of PyTorch, which bundles cuDNN: {RECOMMEND}")
    runs = _runs(r, "cudnn")
    if not runs:
        return skipped("no model finished a cuDNN run (see GD454)")
    no_cudnn = _no_bf16_cudnn(r)
    if no_cudnn is not None:
        return no_cudnn
    ops = sorted({op for _, c in runs for op in c.conv_ops})
    kernels = sorted({k for _, c in runs for k in c.cudnn_kernels})
    errors = sorted({c.profile_error for _, c in runs if c.profile_error})
    ev = (("conv ops", ", ".join(ops) or "-"), ("cuDNN kernels", ", ".join(kernels[:6]) or "-"),
          ("libcudnn mapped", ", ".join(r.cudnn_libraries) or "none"),
          *(("profiler", e) for e in errors))
    libs = f"{len(r.cudnn_libraries)} libcudnn* file(s) mapped"
    seen = [op for op in ops if "cudnn" in op]
    seen += [f"{len(kernels)} cuDNN kernel(s) such as {kernels[0]}"] if kernels else []
    cudnn = cudnn_text(d.cudnn_version)
    if seen:
        return passed(f"cuDNN {cudnn} ran the convolutions ({', '.join(seen)}); {libs}", ev)
    if errors and r.cudnn_libraries:
        return passed(f"cuDNN {cudnn} is loaded ({libs}); the profiler could not show its "
                      f"kernels: {errors[0]}", ev)
    return warned(
        f"cuDNN is enabled but the profiled convolutions did not run in it ({libs})",
        f"run {CHECK} (GD3xx: cuDNN files) and make sure nothing sets "
        "torch.backends.cudnn.enabled = False", ev)


@check("GD453", "smoke-cudnn-faster", "Smoke test: cuDNN is faster than the native path",
       Layer.PYTORCH, Severity.WARNING, NEEDS, reads={"smoke"})
def check_smoke_cudnn_faster(env: Environment, tables: Tables) -> Finding:
    """Training-step time with cuDNN (the faster of benchmark off and on) vs cuDNN disabled,
    medians over the timed steps after warm-up (CUDA events), both paths in IEEE FP32 (TF32
    off for cuDNN's convolutions and for the native path's GEMMs alike: torch's defaults would
    give cuDNN TF32 and the GEMMs FP32, a speed-up that is TF32's). cuDNN slower than the native
    path by more than SLOWER_MARGIN (10%) warns: an old cuDNN, the wrong library loaded, or a
    GPU throttled or shared. bfloat16 before sm_80 is skipped: cuDNN has no bfloat16
    convolution there. A report timed at two precisions is skipped."""
    r = _cudnn_measured(env)
    if isinstance(r, Finding):
        return r
    skip = _no_bf16_cudnn(r) or _unlike_precision(r)
    if skip is not None:
        return skip
    rows, slow, ev = [], [], []
    for m in r.models:
        native = m.config("native")
        fast = [c for c in (m.config("cudnn"), m.config("cudnn-benchmark")) if c is not None]
        for c in (native, *fast):
            if c is not None:
                t = c.timing
                ev.append((f"{m.model}/{c.name}",
                           f"median {t.median_ms:.3f} ms, spread {t.spread:.1%} (p90-p10)/median"))
        if native is None or not fast:
            continue
        if native.timing_tf32_conv is not None:
            ev.append((f"{m.model} precision while timed", "TF32 conv "
                       f"{'on' if native.timing_tf32_conv else 'off'}, matmul "
                       f"{'on' if native.timing_tf32_matmul else 'off'} (both paths)"))
        best = min(fast, key=lambda c: c.timing.median_ms)
        ratio = native.timing.median_ms / best.timing.median_ms
        rows.append(f"{m.model} {ratio:.2f}x ({best.name} {best.timing.median_ms:.2f} ms vs "
                    f"native {native.timing.median_ms:.2f} ms)")
        if best.timing.median_ms > native.timing.median_ms * (1 + SLOWER_MARGIN):
            slow.append(rows[-1])
    if not rows:
        return skipped("no model was timed both with and without cuDNN", tuple(ev))
    if slow:
        return warned(
            f"cuDNN is more than {SLOWER_MARGIN:.0%} slower than the native path: "
            + "; ".join(slow),
            "check that nothing else uses the GPU (`nvidia-smi`), that it is not throttled "
            "(`nvidia-smi -q -d PERFORMANCE`), and update PyTorch for a newer cuDNN", tuple(ev))
    return passed("cuDNN speeds training steps up: " + "; ".join(rows), tuple(ev))


def _unlike_precision(r: SmokeRun) -> Finding | None:
    """The SKIP for a report whose paths were timed at different precisions: cuDNN's
    convolutions with TF32 on, the native path's GEMMs (cuBLAS) with it off — torch's defaults,
    under which an older gpudoctor timed. That speed-up is TF32's, not cuDNN's."""
    for m, c in _runs(r):
        conv, matmul = c.timing_tf32_conv, c.timing_tf32_matmul
        if conv is not None and matmul is not None and conv != matmul:
            return skipped(f"not like for like: {m}/{c.name} was timed with TF32 "
                           f"{'on' if conv else 'off'} for cuDNN's convolutions and "
                           f"{'on' if matmul else 'off'} for the native path's GEMMs: rerun "
                           "the smoke test (it now times both in FP32)")
    return None


@check("GD454", "smoke-device-usable", "Smoke test: the device runs the models", Layer.PYTORCH,
       Severity.ERROR, NEEDS, reads={"smoke"})
def check_smoke_device_usable(env: Environment, tables: Tables) -> Finding:
    """The device runs the models: CUDA initialises, torch's build has kernels for the GPU's
    architecture (sm_XY or older PTX in torch.cuda.get_arch_list()), memory suffices. Out of
    memory is reported with the free memory; a missing architecture with the build's list.
    When the smoke test could not measure anything at all (no torch, the device cannot be
    opened, the run crashed or hung), this check fails with the reason and the fix."""
    s = env.smoke
    if isinstance(s, SmokeFailure):
        ev: Evidence = (("reason", str(s.reason)),
                        *((("detail", s.detail),) if s.detail else ()))
        return failed(s.message, s.fix, ev)
    r = _measured(env)
    if isinstance(r, Finding):
        return r
    d = r.device
    arch = ("" if d.capability is None else
            f", sm_{d.capability.replace('.', '')}, {_gib(d.free_memory)} free of "
            f"{_gib(d.total_memory)}")
    ev = (("device", f"{d.name}: {d.label}{arch}"), ("torch", f"{d.torch} (CUDA {d.cuda})"),
          ("arch list", " ".join(d.arch_list) or "-"))
    errors = [m.error for m in r.models if m.error is not None]
    if errors:
        e = errors[0]
        ev += (("error", e.message), ("traceback", e.detail))
        if d.arch_supported is False:
            return failed(
                f"{d.name} is {d.arch} but this PyTorch build has kernels for "
                f"{' '.join(d.arch_list) or 'no GPU'}: {e.stage} failed: {e.message}",
                f"install a PyTorch build that supports {d.arch}: {RECOMMEND}", ev)
        if e.oom:
            return failed(
                f"out of memory during {e.stage} on {d.name}: {_gib(e.free_memory)} free of "
                f"{_gib(e.total_memory)} at the failure, {_gib(d.free_memory)} before the test",
                "free GPU memory (`nvidia-smi` lists the processes using it) or lower "
                "--batch-size", ev)
        return failed(f"{e.stage} failed on {d.name}: {e.message}",
                      f"run {CHECK} to find the layer at fault", ev)
    names = ", ".join(m.model for m in r.models)
    if d.arch_supported is False:
        return warned(f"{names} ran, but {d.arch} is not in torch's arch list "
                      f"({' '.join(d.arch_list)})",
                      f"install a PyTorch build that supports {d.arch}: {RECOMMEND}", ev)
    return passed(f"{d.name} ({d.label}{arch}) trained {names} in {r.dtype}", ev)


@check("GD455", "smoke-device-throughput",
       "Smoke test: matmul and copy run correctly (TFLOP/s, GB/s)", Layer.PYTORCH,
       Severity.ERROR, NEEDS, reads={"smoke"})
def check_smoke_device_throughput(env: Environment, tables: Tables) -> Finding:
    """Sanity figures: a large matmul's TFLOP/s, checked against float64 on a few rows, and a
    device-to-device copy's GB/s (read + write counted), checked bit-exact. On the CPU they
    are CPU figures. A wrong result or an error fails; the figures themselves never do."""
    r = _measured(env)
    if isinstance(r, Finding):
        return r
    parts, ev, bad = [], [], []
    for t in (r.matmul, r.copy):
        if t.error is not None:
            oom = f" ({_gib(t.error.free_memory)} free)" if t.error.oom else ""
            bad.append(f"{t.what} failed: {t.error.message}{oom}")
            continue
        key = "tf32" if t.tf32 else r.dtype
        tol = MATMUL_TOLERANCE[key] if t.what == "matmul" else 0.0
        ev.append((t.what, f"{rate(t.value)} {t.unit} on {t.device}: {t.setup}; max relative "
                   f"error {t.max_rel_error:.1e}"))
        if not t.max_rel_error <= tol:
            bad.append(f"{t.what} result wrong: max relative error {t.max_rel_error:.1e} > "
                       f"{tol:g}")
        parts.append(f"{t.what} {rate(t.value)} {t.unit}")
    where = " (CPU figures)" if not r.device.name.startswith("cuda") else ""
    if bad:
        return failed("; ".join(bad),
                      f"run {CHECK}; update the NVIDIA driver and check the GPU's health",
                      tuple(ev))
    return passed(", ".join(parts) + where, tuple(ev))



@check("GD456", "smoke-distributed",
       "Smoke test: every rank all-reduces exact sums (bus bandwidth shown)", Layer.PYTORCH,
       Severity.ERROR, "distributed smoke test (smoke-test --distributed)", reads={"smoke"})
def check_smoke_distributed(env: Environment, tables: Tables) -> Finding:
    """`smoke-test --distributed`, one process per rank under torchrun: every rank opens its
    device (cuda:LOCAL_RANK, or the CPU) and checks a small matmul exactly, joins the process
    group (NCCL on GPUs, gloo on the CPU), all-reduces a tensor of known integer values whose
    sum must come back exact on every element, and times all-reduces for its bus bandwidth
    (algbw × 2(n-1)/n, as nccl-tests reports it). A rank that does not finish a phase within
    the deadline (half of --timeout) is named as hung, with the phase. Any rank that hung,
    failed or got a wrong sum fails the check; the bandwidth figures never do. One rank alone
    moves nothing between GPUs: a note that communication was not exercised."""
    s = env.smoke
    if isinstance(s, SmokeFailure):
        return skipped("the smoke test did not run (see GD454)")
    if isinstance(s, Unavailable):
        return skipped(NOT_RUN if s.reason is Reason.SKIPPED
                       else unavailable_reason("smoke test", s))
    if not isinstance(s, DistributedRun):
        return skipped("the distributed smoke test did not run: `torchrun --nproc-per-node N "
                       "-m gpudoctor smoke-test --distributed`")
    ev: Evidence = tuple(
        (f"rank {r.rank}", f"{r.host} {r.device} {r.label}: {r.state} ({r.phase})"
         + (f", sum {r.sum} of {r.expected_sum}" if r.sum is not None else "")
         + (f", busbw {rate(r.busbw_gbs)} GB/s" if r.busbw_gbs is not None else "")
         + (f": {r.error}" if r.error else "")) for r in s.ranks)
    ev += (("backend", f"{s.backend}, world size {s.world_size}, master {s.master}"),)
    stuck = [r for r in s.ranks if r.state not in ("ok", "waiting")]  # waiting: on those
    bad = [f"rank {r.rank} ({r.host}, {r.device}) {r.state}: {r.error or r.phase}"
           for r in stuck or [r for r in s.ranks if r.state != "ok"]]
    bad += [f"rank {r.rank} ({r.host}, {r.device}): all-reduce sum {r.sum}, expected "
            f"{r.expected_sum} ({r.mismatches} element(s) wrong)"
            for r in s.ranks if r.state == "ok" and (r.mismatches or r.sum != r.expected_sum)]
    bad += [f"rank {r.rank} ({r.host}, {r.device}): a matmul on the device differs from the CPU's"
            for r in s.ranks if r.device_ok is False]
    if s.error and not bad:
        bad.append(s.error)
    missing = s.world_size - len(s.ranks) if s.rank == 0 else 0
    if missing > 0:
        bad.append(f"{missing} rank(s) sent no result")
    if bad:
        hung = any(r.state == "hung" for r in s.ranks)
        fix = ("run `gpudoctor check` on the node of each rank named; a hang in init or the "
               "all-reduce is usually the network between nodes (NCCL_DEBUG=INFO shows the "
               "interface NCCL picked; NCCL_SOCKET_IFNAME sets it) or a GPU stuck at 100% "
               "(`nvidia-smi`)" if hung else
               "run `gpudoctor check` on the node of each rank named; wrong sums mean the GPU, "
               "the interconnect or the NCCL library miscomputes: update the driver and "
               "PyTorch, and check the GPUs' health (`nvidia-smi -q -d ECC`)")
        return failed(f"distributed smoke test over {s.backend} ({s.world_size} ranks): "
                      + "; ".join(bad), fix, ev)
    bw = ", ".join(f"rank {r.rank} {rate(r.busbw_gbs)}" for r in s.ranks
                   if r.busbw_gbs is not None)
    expected = s.ranks[0].expected_sum if s.ranks else None
    if s.world_size == 1:
        return noted(f"1 rank over {s.backend}: the device and a one-rank all-reduce work "
                     f"({expected} over {s.elements} elements), but nothing crossed between "
                     "GPUs: communication was not exercised and no bandwidth was measured",
                     "run it with 2 or more ranks (`torchrun --nproc-per-node 2`, on a node "
                     "with 2 or more GPUs) to test NCCL between GPUs", ev)
    return passed(f"{len(s.ranks)} of {s.world_size} rank(s) over {s.backend}: all-reduce sums "
                  f"exact ({expected} over {s.elements} elements on every rank); bus bandwidth "
                  f"GB/s: {bw or 'not measured'}", ev)

CHECKS = (
    check_smoke_training_correct,
    check_smoke_cudnn_matches_native,
    check_smoke_cudnn_used,
    check_smoke_cudnn_faster,
    check_smoke_device_usable,
    check_smoke_device_throughput,
)
# `smoke-test --distributed`'s verdict: in the registry after CHECKS; `smoke-test` (one device)
# and `check --smoke` run no distributed test, so it is SKIP there
DISTRIBUTED_CHECKS = (check_smoke_distributed,)

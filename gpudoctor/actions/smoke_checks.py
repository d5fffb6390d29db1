"""The smoke test's verdicts, GD450-GD455: pure functions of a `SmokeReport`.

Like `gpudoctor.checks`, each is a small function whose docstring is its docs page; unlike
them, they read a smoke-test outcome instead of an `Environment`, so they live beside the
action. When the test could not run at all (`SmokeFailure`), GD454 fails with the reason and
the others are SKIP.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.actions.smoke import ConfigRun, SmokeFailure, SmokeOutcome, SmokeReport
from gpudoctor.model import CheckId, Finding, Layer, Result, Severity, Status

# Normwise relative difference max|a-b| / max|b| of the first step's logits, loss and
# gradients, cuDNN vs native. float32 is compared with TF32 off: the algorithms (implicit GEMM,
# Winograd, FFT vs im2col + GEMM) then differ by summation order, about 1e-6..1e-4, so 1e-3
# leaves room without hiding a wrong kernel (those are off by O(1)). Half types round every
# activation: float16 keeps 11 bits (2^-11 ≈ 5e-4 per rounding), bfloat16 8 bits (2^-8 ≈ 4e-3),
# compounded over the layers and the backward pass.
TOLERANCE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}
# The matmul sanity figure vs float64: TF32 rounds its inputs to 11 bits, like float16.
MATMUL_TOLERANCE = {"float32": 1e-4, "tf32": 1e-2, "float16": 1e-2, "bfloat16": 5e-2}
# cuDNN more than 10% slower than native warns: twice the ≤5% step-time spread we aim for,
# so a warning is a real slowdown, not noise.
SLOWER_MARGIN = 0.10

CHECK = "`gpudoctor check`"
CPU_SKIP = "cuDNN applies to CUDA devices only; --device cpu ran PyTorch's CPU kernels"


@dataclass(frozen=True, slots=True)
class SmokeCheck:
    """One smoke-test verdict."""

    id: CheckId
    slug: str
    title: str
    severity: Severity
    run: Callable[[SmokeReport], Finding] = dataclasses.field(repr=False, compare=False)

    @property
    def doc(self) -> str:
        """The check's docs page: its function's docstring."""
        return (self.run.__doc__ or "").strip()


def _runs(r: SmokeReport, prefix: str = "") -> list[tuple[str, ConfigRun]]:
    return [(m.model, c) for m in r.models for c in m.configs if c.name.startswith(prefix)]


def rate(value: float) -> str:
    """A figure with three significant digits, never in exponent form: 2650, 48.3, 0.236."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**30:.1f} GiB"


def _not_applicable(r: SmokeReport) -> Finding | None:
    if not r.device.name.startswith("cuda"):
        return Finding(Status.SKIP, CPU_SKIP)
    if not r.device.cudnn_available:
        return Finding(Status.SKIP, "torch has no usable cuDNN here (see GD452)")
    if not _runs(r, "cudnn"):
        return Finding(Status.SKIP, "no model finished a cuDNN run (see GD454)")
    return None


def training_correct(r: SmokeReport) -> Finding:
    """Each model trains on a fixed synthetic batch from fixed weights: forward, cross-entropy,
    backward, SGD step. The losses must be finite and fall over the steps, and every
    parameter's gradient must be finite and non-zero. Anything else means the device (or a
    library on it) computes wrong numbers."""
    runs = _runs(r)
    if not runs:
        return Finding(Status.SKIP, "no model ran (see GD454)")
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
        return Finding(
            Status.FAIL, f"training on {r.device.name} gives wrong numbers ({r.dtype}): "
            + " | ".join(bad),
            f"run {CHECK}; if it passes, update the NVIDIA driver and check the GPU's health "
            "(`nvidia-smi -q -d ECC,TEMPERATURE,CLOCK`)", ev)
    first: dict[str, ConfigRun] = {}
    for m, c in runs:
        first.setdefault(m, c)
    summary = ", ".join(f"{m} {c.losses[0]:.3f} → {c.losses[-1]:.3f}" for m, c in first.items())
    return Finding(Status.PASS, f"losses finite and falling ({summary}), gradients finite and "
                   f"non-zero in {len(runs)} run(s), {r.dtype}", None, ev)


def cudnn_matches_native(r: SmokeReport) -> Finding:
    """From the same weights and batch, the first training step with cuDNN (with and without
    `benchmark=True`) and with cuDNN disabled must agree: logits, loss and every gradient
    within TOLERANCE of max|a-b| / max|b| (float32 1e-3 with TF32 off for the comparison;
    float16 1e-2; bfloat16 5e-2)."""
    skip = _not_applicable(r)
    if skip is not None:
        return skip
    tol = TOLERANCE[r.dtype]
    diffs = [(m, c.name, c.max_rel_diff) for m, c in _runs(r, "cudnn")
             if c.max_rel_diff is not None]
    ev = tuple((f"{m}/{n} max relative difference", f"{d:.2e}") for m, n, d in diffs)
    ev += (("tolerance", f"{tol:g} ({r.dtype}, TF32 off for the comparison)"),
           ("TF32 for timing", f"conv {r.device.tf32_conv}, matmul {r.device.tf32_matmul}"))
    if not diffs:
        return Finding(Status.SKIP, "no cuDNN run was compared with a native one", evidence=ev)
    m, name, worst = max(diffs, key=lambda x: x[2] if x[2] == x[2] else float("inf"))
    if not worst <= tol:
        return Finding(
            Status.FAIL, f"cuDNN and native results differ: max relative difference {worst:.2e}"
            f" > {tol:g} ({m}/{name}, {r.dtype})",
            "reinstall PyTorch so it loads the cuDNN it was built with (`pip install "
            f"--force-reinstall torch`), update the NVIDIA driver, then run {CHECK}", ev)
    return Finding(Status.PASS, f"cuDNN matches the native path: max relative difference "
                   f"{worst:.1e} ≤ {tol:g} ({r.dtype}, TF32 off for the comparison)", None, ev)


def cudnn_used(r: SmokeReport) -> Finding:
    """On a CUDA device with cuDNN enabled, convolutions must run in cuDNN: the profiler shows
    aten::cudnn_convolution and cuDNN kernels, and libcudnn* is mapped into the process. A
    CUDA device without a usable cuDNN fails: every convolution falls back to slow kernels."""
    d = r.device
    if not d.name.startswith("cuda"):
        return Finding(Status.SKIP, CPU_SKIP)
    if not d.cudnn_available:
        wheel = f"cu{d.cuda.replace('.', '')}" if d.cuda else "cu124"
        return Finding(
            Status.FAIL, f"torch {d.torch} has no usable cuDNN on {d.name} "
            "(torch.backends.cudnn.is_available() is False)",
            f"reinstall the CUDA build of PyTorch, which bundles cuDNN: pip install "
            f"--force-reinstall torch --index-url https://download.pytorch.org/whl/{wheel}")
    runs = _runs(r, "cudnn")
    if not runs:
        return Finding(Status.SKIP, "no model finished a cuDNN run (see GD454)")
    ops = sorted({op for _, c in runs for op in c.conv_ops})
    kernels = sorted({k for _, c in runs for k in c.cudnn_kernels})
    errors = sorted({c.profile_error for _, c in runs if c.profile_error})
    ev = (("conv ops", ", ".join(ops) or "-"), ("cuDNN kernels", ", ".join(kernels[:6]) or "-"),
          ("libcudnn mapped", ", ".join(r.cudnn_libraries) or "none"),
          *(("profiler", e) for e in errors))
    libs = f"{len(r.cudnn_libraries)} libcudnn* file(s) mapped"
    seen = [op for op in ops if "cudnn" in op]
    seen += [f"{len(kernels)} cuDNN kernel(s) such as {kernels[0]}"] if kernels else []
    if seen:
        return Finding(Status.PASS, f"cuDNN {d.cudnn_version} ran the convolutions "
                       f"({', '.join(seen)}); {libs}", None, ev)
    if errors and r.cudnn_libraries:
        return Finding(Status.PASS, f"cuDNN {d.cudnn_version} is loaded ({libs}); the profiler "
                       f"could not show its kernels: {errors[0]}", None, ev)
    return Finding(
        Status.WARN, "cuDNN is enabled but the profiled convolutions did not run in it "
        f"({libs})", f"run {CHECK} (GD3xx: cuDNN files) and make sure nothing sets "
        "torch.backends.cudnn.enabled = False", ev)


def cudnn_faster(r: SmokeReport) -> Finding:
    """Training-step time with cuDNN (the faster of benchmark off and on) vs cuDNN disabled,
    medians over the timed steps after warm-up (CUDA events). cuDNN slower than the native
    path by more than SLOWER_MARGIN (10%) warns: an old cuDNN, the wrong library loaded, or a
    GPU throttled or shared."""
    skip = _not_applicable(r)
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
        best = min(fast, key=lambda c: c.timing.median_ms)
        ratio = native.timing.median_ms / best.timing.median_ms
        rows.append(f"{m.model} {ratio:.2f}x ({best.name} {best.timing.median_ms:.2f} ms vs "
                    f"native {native.timing.median_ms:.2f} ms)")
        if best.timing.median_ms > native.timing.median_ms * (1 + SLOWER_MARGIN):
            slow.append(rows[-1])
    if not rows:
        return Finding(Status.SKIP, "no model was timed both with and without cuDNN",
                       evidence=tuple(ev))
    if slow:
        return Finding(
            Status.WARN, f"cuDNN is more than {SLOWER_MARGIN:.0%} slower than the native path: "
            + "; ".join(slow),
            "check that nothing else uses the GPU (`nvidia-smi`), that it is not throttled "
            "(`nvidia-smi -q -d PERFORMANCE`), and update PyTorch for a newer cuDNN",
            tuple(ev))
    return Finding(Status.PASS, "cuDNN speeds training steps up: " + "; ".join(rows), None,
                   tuple(ev))


def device_usable(r: SmokeReport) -> Finding:
    """The device runs the models: CUDA initialises, torch's build has kernels for the GPU's
    architecture (sm_XY or older PTX in torch.cuda.get_arch_list()), memory suffices. Out of
    memory is reported with the free memory; a missing architecture with the build's list."""
    d = r.device
    arch = ("" if d.capability is None else
            f", sm_{d.capability.replace('.', '')}, {_gib(d.free_memory)} free of "
            f"{_gib(d.total_memory)}")
    ev: tuple[tuple[str, str], ...] = (
        ("device", f"{d.name}: {d.label}{arch}"), ("torch", f"{d.torch} (CUDA {d.cuda})"),
        ("arch list", " ".join(d.arch_list) or "-"))
    errors = [m.error for m in r.models if m.error is not None]
    if errors:
        e = errors[0]
        ev += (("error", e.message), ("traceback", e.detail))
        if d.arch_supported is False:
            return Finding(
                Status.FAIL, f"{d.name} is {d.arch} but this PyTorch build has kernels for "
                f"{' '.join(d.arch_list) or 'no GPU'}: {e.stage} failed: {e.message}",
                f"install a PyTorch build that supports {d.arch}: see "
                "https://pytorch.org/get-started/locally/ (older GPUs: an older release)", ev)
        if e.oom:
            return Finding(
                Status.FAIL, f"out of memory during {e.stage} on {d.name}: "
                f"{_gib(e.free_memory)} free of {_gib(e.total_memory)} at the failure, "
                f"{_gib(d.free_memory)} before the test",
                "free GPU memory (`nvidia-smi` lists the processes using it) or lower "
                "--batch-size", ev)
        return Finding(Status.FAIL, f"{e.stage} failed on {d.name}: {e.message}",
                       f"run {CHECK} to find the layer at fault", ev)
    names = ", ".join(m.model for m in r.models)
    if d.arch_supported is False:
        return Finding(Status.WARN, f"{names} ran, but {d.arch} is not in torch's arch list "
                       f"({' '.join(d.arch_list)})",
                       f"install a PyTorch build that supports {d.arch}", ev)
    return Finding(Status.PASS, f"{d.name} ({d.label}{arch}) trained {names} in {r.dtype}", None,
                   ev)


def device_throughput(r: SmokeReport) -> Finding:
    """Sanity figures: a large matmul's TFLOP/s, checked against float64 on a few rows, and a
    device-to-device copy's GB/s (read + write counted), checked bit-exact. On the CPU they
    are CPU figures. A wrong result or an error fails; the figures themselves never do."""
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
        return Finding(Status.FAIL, "; ".join(bad),
                       f"run {CHECK}; update the NVIDIA driver and check the GPU's health",
                       tuple(ev))
    return Finding(Status.PASS, ", ".join(parts) + where, None, tuple(ev))


SMOKE_CHECKS: tuple[SmokeCheck, ...] = (
    SmokeCheck(CheckId("GD450"), "smoke-training-correct",
               "Smoke test: training steps give finite, falling losses", Severity.ERROR,
               training_correct),
    SmokeCheck(CheckId("GD451"), "smoke-cudnn-matches-native",
               "Smoke test: cuDNN results match the native path", Severity.ERROR,
               cudnn_matches_native),
    SmokeCheck(CheckId("GD452"), "smoke-cudnn-used", "Smoke test: convolutions run in cuDNN",
               Severity.ERROR, cudnn_used),
    SmokeCheck(CheckId("GD453"), "smoke-cudnn-faster",
               "Smoke test: cuDNN is faster than the native path", Severity.WARNING,
               cudnn_faster),
    SmokeCheck(CheckId("GD454"), "smoke-device-usable", "Smoke test: the device runs the models",
               Severity.ERROR, device_usable),
    SmokeCheck(CheckId("GD455"), "smoke-device-throughput",
               "Smoke test: matmul and copy run correctly (TFLOP/s, GB/s)", Severity.ERROR,
               device_throughput),
)


def results(outcome: SmokeOutcome) -> tuple[Result, ...]:
    """Every smoke check's Result, in id order; a `SmokeFailure` fails GD454, SKIPs the rest."""
    out = []
    for c in SMOKE_CHECKS:
        if isinstance(outcome, SmokeFailure):
            ev = (("reason", str(outcome.reason)),
                  *((("detail", outcome.detail),) if outcome.detail else ()))
            finding = (Finding(Status.FAIL, outcome.message, outcome.fix, ev)
                       if c.id == "GD454" else
                       Finding(Status.SKIP, "the smoke test did not run (see GD454)"))
        else:
            finding = c.run(outcome)
        finding = dataclasses.replace(finding, check_id=c.id)
        out.append(Result(c.id, c.slug, c.title, Layer.PYTORCH, c.severity, finding))
    return tuple(out)

"""Child-process half of `gpudoctor smoke-test`. Runs under the interpreter being diagnosed.

Executed as source (`python -c SOURCE CONFIG_JSON`), not imported: standard library and torch
only, Python 3.8 syntax. `gpudoctor.actions.smoke` documents what the parent makes of it.

Protocol: JSON lines on stdout, each prefixed with `GPUDOCTOR:` and shaped
`{"kind": K, "data": D}`. K is `progress` (many; D = done, total, label), `device` (once the
device is open), then either `error` (D = code, message, detail; codes: import,
cuda-unavailable, no-such-device, internal) or `result` (everything measured).

Measurements, per model and configuration (CUDA: `native` = cuDNN disabled, `cudnn`,
`cudnn-benchmark`; CPU: `cpu`), from the same initial weights and batch, all with TF32 off
(torch's defaults give cuDNN TF32 and cuBLAS, the native path's GEMMs, FP32: not like for like):
- VERIFY_STEPS training steps (forward, cross-entropy, backward, SGD): the losses, whether
  every gradient is finite and non-zero, and the first step's logits, loss and gradients vs
  the native run's, max|a-b| / max|b| per tensor (the largest reported); float16 scales the
  loss by LOSS_SCALE (as GradScaler would: the first convolutions' gradients lie below
  float16's normal range otherwise) and unscales the gradients before the optimizer step;
- `warmup` untimed then `steps` timed steps (CUDA events; CPU: time.perf_counter): median,
  p10, p90, spread = (p90 - p10) / median, and the TF32 state they ran under;
- one profiled step: the convolution ops (aten::cudnn_convolution vs aten::_slow_conv2d_*)
  and the kernels they launched; `profile_dir` gets its Chrome trace.
"""

import contextlib
import json
import math
import os
import re
import sys
import time
import traceback

PREFIX = "GPUDOCTOR:"
DOT = " \u00b7 "  # progress labels "lenet \u00b7 cudnn \u00b7 timing 3/20"; the source stays ASCII
VERIFY_STEPS = 5
LOSS_SCALE = {"float16": 1024.0}  # 2**10: exact to undo; bfloat16 has float32's range
LR = 0.02
MOMENTUM = 0.9
SEED = 0
# model -> (input size, batch size) by device type; the CPU sizes keep CI fast
SIZES = {
    "lenet": {"cuda": (32, 128), "cpu": (32, 32)},
    "convnet": {"cuda": (112, 32), "cpu": (56, 4)},
}
# cuDNN's kernels by name: cudnn::*, scudnn_*, *xmma_fprop/dgrad/wgrad_implicit_gemm*,
# implicit_convolve_sgemm, winograd, fft2d_*, nchwToNhwc. cuBLAS GEMMs (sm90_xmma_gemm_*) and
# torch's native im2col/col2im kernels do not match.
CUDNN_KERNEL = re.compile(
    r"cudnn|fprop|dgrad|wgrad|convolve|winograd|fft2d|nchwToNhwc|nhwcToNchw", re.IGNORECASE)


def emit(kind, payload):
    sys.stdout.write(PREFIX + json.dumps({"kind": kind, "data": payload}) + "\n")
    sys.stdout.flush()


class Progress:
    def __init__(self, total):
        self.total = total
        self.done = 0

    def tick(self, label, n=1):
        self.done = min(self.total, self.done + n)
        emit("progress", {"done": self.done, "total": self.total, "label": label})


def error_text(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def is_oom(torch, e):
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e)


# --------------------------------------------------------------------------- device


def tf32_state(torch):
    """Whether convolutions (cuDNN) and matmuls (cuBLAS) may use TF32, as {"conv", "matmul"}:
    torch's `fp32_precision` settings where it has them (>= 2.9; its legacy `allow_tf32` flags
    refuse to answer once conv and matmul were set apart), the legacy flags otherwise; None
    where torch tells neither."""
    new = fp32_precisions(torch)
    if new is not None:
        return {"conv": new[0] == "tf32", "matmul": new[1] == "tf32"}
    return {"conv": read(torch.backends.cudnn, "allow_tf32"),
            "matmul": read(torch.backends.cuda.matmul, "allow_tf32")}


def fp32_precisions(torch):
    """(conv, matmul) as torch resolves `fp32_precision`: the operation's, else its backend's
    ("cuda": `cudnn.fp32_precision`), else the generic one; "none" all the way is IEEE. None
    on a torch without the settings."""
    b = torch.backends
    try:
        ops = (b.cudnn.conv.fp32_precision, b.cuda.matmul.fp32_precision)
        parents = (b.cudnn.fp32_precision, b.fp32_precision)
    except Exception:  # noqa: BLE001 - an older torch: no such attribute, or its error
        return None
    return tuple(next((p for p in (op, *parents) if p != "none"), "ieee") for op in ops)


def read(obj, attr):
    try:
        return bool(getattr(obj, attr)) if attr == "allow_tf32" else getattr(obj, attr)
    except Exception:  # noqa: BLE001 - torch's mixed-API RuntimeError, or no such flag
        return None


@contextlib.contextmanager
def tf32_off(torch):
    """TF32 off (IEEE FP32) for convolutions and matmuls, the previous settings back after:
    through `fp32_precision` where torch has it (the legacy flags are on their way out)."""
    b = torch.backends
    new = fp32_precisions(torch) is not None
    targets = (b.cudnn.conv, b.cuda.matmul) if new else (b.cudnn, b.cuda.matmul)
    attr, off = ("fp32_precision", "ieee") if new else ("allow_tf32", False)
    saved = [read(t, attr) for t in targets]
    for t in targets:
        setattr(t, attr, off)
    try:
        yield
    finally:
        for t, value in zip(targets, saved):  # noqa: B905 - strict= needs Python 3.10
            if value is not None:
                setattr(t, attr, value)


def arch_supported(major, minor, arch_list):
    """A cubin for sm_XY runs on X.Y' with Y' >= Y; PTX for compute_XY is JIT-compiled for any
    later device."""
    for arch in arch_list:
        m = re.match(r"(sm|compute)_(\d+?)(\d)[af]?$", arch)
        if not m:
            continue
        a_major, a_minor = int(m.group(2)), int(m.group(3))
        if m.group(1) == "sm" and a_major == major and a_minor <= minor:
            return True
        if m.group(1) == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False


def open_device(torch, name):
    """(device, facts) or (None, error payload)."""
    facts = {"name": name, "torch": str(torch.__version__),
             "cuda": getattr(torch.version, "cuda", None)}
    if name == "cpu":
        facts["label"] = f"{torch.get_num_threads()} CPU threads"
        return torch.device("cpu"), facts
    if not torch.cuda.is_available():
        reason = "torch.cuda.is_available() returned False"
        try:
            torch.cuda.init()
        except Exception as e:  # noqa: BLE001 - torch's reason, whatever its type
            reason = error_text(e)
        return None, {"code": "cuda-unavailable", "message": reason,
                      "detail": f"torch {facts['torch']}, torch.version.cuda = {facts['cuda']}"}
    index = int(name.split(":")[1])
    count = torch.cuda.device_count()
    if index >= count:
        return None, {"code": "no-such-device",
                      "message": f"torch sees {count} CUDA device(s), so {name} does not exist",
                      "detail": os.environ.get("CUDA_VISIBLE_DEVICES")}
    torch.cuda.set_device(index)
    p = torch.cuda.get_device_properties(index)
    arch_list = list(torch.cuda.get_arch_list())
    free, total = torch.cuda.mem_get_info(index)
    cudnn_ok = bool(torch.backends.cudnn.is_available())
    facts.update(
        label=p.name, capability=f"{p.major}.{p.minor}", arch=f"sm_{p.major}{p.minor}",
        arch_list=arch_list,
        arch_supported=arch_supported(p.major, p.minor, arch_list),
        total_memory=int(total), free_memory=int(free),
        cudnn_available=cudnn_ok,
        cudnn_version=torch.backends.cudnn.version() if cudnn_ok else None,
        tf32_conv=tf32_state(torch)["conv"], tf32_matmul=tf32_state(torch)["matmul"],
    )
    return torch.device(name), facts


# --------------------------------------------------------------------------- models


def build_model(torch, kind):
    nn = torch.nn
    if kind == "lenet":
        return nn.Sequential(
            nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
        )
    layers = []
    for c_in, c_out in ((3, 64), (64, 128), (128, 256)):
        if c_in != 3:
            layers.append(nn.MaxPool2d(2))
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(),
                   nn.Conv2d(c_out, c_out, 3, padding=1), nn.ReLU()]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10))


class Trainer:
    """One model, one device, one batch: fresh optimiser from the initial weights per run."""

    def __init__(self, torch, cfg, kind, device, progress):
        self.torch, self.kind, self.device, self.progress = torch, kind, device, progress
        self.cuda = device.type == "cuda"
        size, batch = SIZES[kind][device.type]
        self.batch = cfg["batch_size"] or batch
        torch.manual_seed(SEED)
        self.model = build_model(torch, kind).to(device)
        self.initial = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        gen = torch.Generator().manual_seed(SEED)
        self.x = torch.randn(self.batch, 3, size, size, generator=gen).to(device)
        self.y = torch.randint(0, 10, (self.batch,), generator=gen).to(device)
        self.amp = None if cfg["dtype"] == "float32" else getattr(torch, cfg["dtype"])
        self.scale, self.cfg = LOSS_SCALE.get(cfg["dtype"], 1.0), cfg

    def reset(self):
        self.model.load_state_dict(self.initial)
        return self.torch.optim.SGD(self.model.parameters(), lr=LR, momentum=MOMENTUM)

    def step(self, opt):
        torch = self.torch
        opt.zero_grad(set_to_none=True)
        ctx = (torch.autocast(self.device.type, dtype=self.amp) if self.amp is not None
               else contextlib.nullcontext())
        with ctx:
            out = self.model(self.x)
            loss = torch.nn.functional.cross_entropy(out.float(), self.y)
        (loss * self.scale if self.scale != 1.0 else loss).backward()
        for p in self.model.parameters() if self.scale != 1.0 else ():
            if p.grad is not None:
                p.grad.div_(self.scale)
        opt.step()
        return out, loss

    def verify(self, label):
        """VERIFY_STEPS steps; the first step's tensors for the comparison."""
        opt = self.reset()
        losses, first, bad_grads, zero_grads = [], None, [], []
        for i in range(VERIFY_STEPS):
            out, loss = self.step(opt)
            if i == 0:
                grads = [(n, p.grad) for n, p in self.model.named_parameters()]
                bad_grads = [n for n, g in grads if g is None or not bool(g.isfinite().all())]
                zero_grads = [n for n, g in grads if g is not None and not bool(g.any())]
                first = [out.detach().float().cpu(), loss.detach().float().cpu()]
                first += [g.detach().float().cpu() for _, g in grads if g is not None]
            losses.append(float(loss.item()))
            self.progress.tick(f"{self.kind}{DOT}{label}{DOT}check {i + 1}/{VERIFY_STEPS}")
        return {"losses": losses, "nonfinite_grads": bad_grads, "zero_grads": zero_grads}, first

    def time_steps(self, label):
        torch, cfg = self.torch, self.cfg
        self.tf32 = tf32_state(torch)  # what the timed steps run under
        opt = self.reset()
        for i in range(cfg["warmup"]):
            self.step(opt)
            self.progress.tick(f"{self.kind}{DOT}{label}{DOT}warm-up {i + 1}/{cfg['warmup']}")
        if self.cuda:
            torch.cuda.synchronize()
        marks, losses = [], []
        for i in range(cfg["steps"]):
            if self.cuda:
                start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
                start.record()
                losses.append(self.step(opt)[1].detach())
                end.record()
                marks.append((start, end))
            else:
                t0 = time.perf_counter()
                losses.append(self.step(opt)[1].detach())
                marks.append((time.perf_counter() - t0) * 1e3)
            self.progress.tick(f"{self.kind}{DOT}{label}{DOT}timing {i + 1}/{cfg['steps']}")
        if self.cuda:
            torch.cuda.synchronize()
            marks = [s.elapsed_time(e) for s, e in marks]
        finite = all(math.isfinite(float(v.item())) for v in losses)
        return summarize(marks, "cuda-events" if self.cuda else "perf_counter"), finite

    def profile(self, label):
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        opt = self.reset()
        with profile(activities=activities) as prof:
            self.step(opt)
            if self.cuda:
                self.torch.cuda.synchronize()
        ops, kernels = set(), set()
        for e in prof.events():
            if e.name.startswith("aten::") and "conv" in e.name:
                ops.add(e.name)
                kernels.update(k.name for k in getattr(e, "kernels", ()))
        found = {"conv_ops": sorted(ops), "conv_kernels": sorted(kernels)[:20],
                 "cudnn_kernels": sorted(k for k in kernels if CUDNN_KERNEL.search(k))[:20]}
        if self.cfg["profile_dir"]:
            os.makedirs(self.cfg["profile_dir"], exist_ok=True)
            path = os.path.join(self.cfg["profile_dir"], f"smoke-{self.kind}-{label}.json")
            prof.export_chrome_trace(path)
            found["trace"] = os.path.abspath(path)
        return found


def summarize(ms, clock):
    xs = sorted(ms)

    def pct(q):
        pos = (len(xs) - 1) * q
        lo, hi = math.floor(pos), math.ceil(pos)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    median = pct(0.5)
    return {"clock": clock, "steps": len(xs), "median_ms": median, "p10_ms": pct(0.1),
            "p90_ms": pct(0.9), "min_ms": xs[0], "max_ms": xs[-1],
            "spread": (pct(0.9) - pct(0.1)) / median if median > 0 else 0.0}


def max_rel_diff(a, b):
    worst = 0.0
    for x, y in zip(a, b):  # noqa: B905 - strict= needs Python 3.10
        scale = float(y.abs().max()) if y.numel() else 0.0
        diff = float((x - y).abs().max()) if y.numel() else 0.0
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def configs(device, facts):
    if device.type == "cpu":
        return [("cpu", None, False)]
    if not facts["cudnn_available"]:
        return [("native", False, False)]
    return [("native", False, False), ("cudnn", True, False), ("cudnn-benchmark", True, True)]


def run_model(torch, cfg, kind, device, facts, progress):
    t = Trainer(torch, cfg, kind, device, progress)
    result = {"model": kind, "batch_size": t.batch, "input": list(t.x.shape),
              "parameters": sum(p.numel() for p in t.model.parameters()), "lr": LR,
              "momentum": MOMENTUM, "verify_steps": VERIFY_STEPS, "configs": [], "error": None}
    reference = None
    saved = (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark)
    try:
        with tf32_off(torch):
            for label, enabled, benchmark in configs(device, facts):
                first = run_config(torch, t, result, label, enabled, benchmark, reference)
                reference = reference or first
    except Exception as e:  # noqa: BLE001 - OOM, CUDA errors: the finding, with the text
        result["error"] = failure(torch, e, f"{kind} training")
    finally:
        torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark = saved
    return result


def run_config(torch, t, result, label, enabled, benchmark, reference):
    """One configuration: verify, compare with `reference` (the native run's first-step
    tensors; None for the native run itself), time, profile. Returns its first-step tensors."""
    if enabled is not None:
        torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark = enabled, benchmark
    run = {"name": label, "cudnn_enabled": enabled, "benchmark": benchmark}
    checks, first = t.verify(label)
    run.update(checks)
    run["max_rel_diff"] = max_rel_diff(first, reference) if reference is not None else None
    run["timing"], run["timed_losses_finite"] = t.time_steps(label)
    run["timing_tf32_conv"], run["timing_tf32_matmul"] = t.tf32["conv"], t.tf32["matmul"]
    try:
        run.update(t.profile(label))
    except Exception as e:  # noqa: BLE001 - profiling is evidence, never the verdict
        run["profile_error"] = error_text(e)
    result["configs"].append(run)
    return first


def failure(torch, e, stage):
    out = {"stage": stage, "message": error_text(e), "oom": is_oom(torch, e),
           "detail": "".join(traceback.format_exception(type(e), e, e.__traceback__)[-3:])}
    if torch.cuda.is_available():
        with contextlib.suppress(Exception):
            torch.cuda.empty_cache()
            out["free_memory"], out["total_memory"] = torch.cuda.mem_get_info()
    return out


# --------------------------------------------------------------------------- sanity figures


def timed(torch, device, fn, iters):
    fn()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return time.perf_counter() - t0


def matmul_rate(torch, device, dtype):
    cuda = device.type == "cuda"
    n, iters = (8192, 10) if cuda else (1024, 3)
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(SEED)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dt)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dt)
    c = torch.empty(n, n, device=device, dtype=dt)
    seconds = timed(torch, device, lambda: torch.matmul(a, b, out=c), iters)
    ref = a[:4].double() @ b.double()
    tf32 = tf32_state(torch)["matmul"] if cuda and dtype == "float32" else None
    note = "" if tf32 is None else ", TF32 on" if tf32 else ", TF32 off"
    return {"what": "matmul", "device": device.type, "unit": "TFLOP/s",
            "value": 2.0 * n ** 3 * iters / seconds / 1e12, "tf32": tf32,
            "setup": f"{n}x{n} {dtype}{note}, {iters} iterations",
            "max_rel_error": float((c[:4].double() - ref).abs().max() / ref.abs().max())}


def copy_rate(torch, device):
    cuda = device.type == "cuda"
    nbytes, iters = (256 << 20, 10) if cuda else (64 << 20, 5)
    src = torch.arange(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    seconds = timed(torch, device, lambda: dst.copy_(src), iters)
    return {"what": "copy", "device": device.type, "unit": "GB/s",
            "value": 2.0 * nbytes * iters / seconds / 1e9,
            "setup": f"{nbytes >> 20} MiB, {iters} iterations, read + write counted",
            "max_rel_error": 0.0 if bool(torch.equal(src, dst)) else 1.0}


def sanity(torch, device, name, fn, *args):
    try:
        return fn(torch, device, *args)
    except Exception as e:  # noqa: BLE001 - reported, like a model's failure
        return {"what": name, "device": device.type, "error": failure(torch, e, name)}


def mapped_cudnn():
    found = set()
    with contextlib.suppress(OSError), open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and re.search(r"/libcudnn[^/]*$", parts[5].strip()):
                found.add(parts[5].strip())
    return sorted(found)


# --------------------------------------------------------------------------- main


def main():
    started = time.monotonic()
    cfg = json.loads(sys.argv[1])
    emit("progress", {"done": 0, "total": 0, "label": "importing torch"})
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - a broken torch raises anything on import
        emit("error", {"code": "import", "message": error_text(e),
                       "detail": traceback.format_exc()[-2000:]})
        return 3
    emit("progress", {"done": 0, "total": 0, "label": f"opening {cfg['device']}"})
    try:
        device, facts = open_device(torch, cfg["device"])
    except Exception as e:  # noqa: BLE001 - CUDA is there but the device refuses (busy, lost...)
        device, facts = None, {"code": "cuda-unavailable", "message": error_text(e),
                               "detail": traceback.format_exc()[-2000:]}
    if device is None:
        emit("error", facts)
        return 4
    emit("device", facts)
    n_configs = len(configs(device, facts))
    per_config = VERIFY_STEPS + cfg["warmup"] + cfg["steps"]
    progress = Progress(len(cfg["models"]) * n_configs * per_config + 2)
    models = [run_model(torch, cfg, kind, device, facts, progress) for kind in cfg["models"]]
    progress.tick("matmul")
    matmul = sanity(torch, device, "matmul", matmul_rate, cfg["dtype"])
    progress.tick("copy")
    copy = sanity(torch, device, "copy", copy_rate)
    emit("result", {"device": facts, "dtype": cfg["dtype"], "models": models,
                    "matmul": matmul, "copy": copy, "cudnn_libraries": mapped_cudnn(),
                    "seconds": time.monotonic() - started})
    return 0


if __name__ == "__main__":  # `python -c`; tests exec this source under another name
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - a bug here or a torch too old: no bare traceback
        emit("error", {"code": "internal", "message": error_text(exc),
                       "detail": traceback.format_exc()[-2000:]})
        sys.exit(5)

"""PyTorch checks (GD4xx)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.checks import facts as F
from gpudoctor.checks.base import check, failed, passed, skipped, warned
from gpudoctor.model import Environment, Finding, Layer, Reason, Severity, TorchFacts, Unavailable

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

TORCH_URL = "https://pytorch.org/get-started/locally/"


def _install_fix(env: Environment, tables: Tables) -> str:
    variant = F.best_variant(env, tables)
    if variant is None:
        return f"pip install --force-reinstall torch (see {TORCH_URL})"
    return F.pip_install_line(variant)


@check("GD401", "torch-importable", "PyTorch imports", Layer.PYTORCH, Severity.ERROR,
       "torch child process")
def check_torch_importable(env: Environment, tables: Tables) -> Finding:
    """`import torch` runs in a child process with a timeout. It can fail with an exception (a
    missing shared library, an ABI mismatch), crash the interpreter (abort, segfault — often a
    broken cuDNN or CUDA library), or hang (a wedged driver). Each is reported with its text."""
    t = env.torch
    if isinstance(t, Unavailable):
        if t.reason is Reason.SKIPPED:
            return skipped(t.message)
        if t.reason is Reason.NOT_INSTALLED and not F.gpus(env) and not F.toolkit(env):
            return skipped(f"{t.message}; nothing here needs it")
        if t.reason is Reason.NOT_INSTALLED:
            return warned(t.message, _install_fix(env, tables), (("detail", t.detail or ""),))
        return failed(t.message, None, (("detail", t.detail or ""),))
    assert isinstance(t, TorchFacts)
    ev: tuple[tuple[str, str], ...] = (
        ("python", t.python), ("probe seconds", f"{t.seconds:.2f}"))
    if isinstance(t.static, Unavailable):
        ev += (("package metadata", t.static.message),)
    else:
        ev += (("installed", f"{t.static.version} at {t.static.location}"),)
    rt = t.runtime
    if isinstance(rt, Unavailable):
        ev += (("stderr", rt.detail or ""),)
        installed = t.static.version if not isinstance(t.static, Unavailable) else None
        reinstall = (f"pip install --force-reinstall torch=={installed.split('+')[0]}"
                     if installed else "pip install --force-reinstall torch")
        fixes = {
            Reason.TIMEOUT: "run `nvidia-smi`; if it hangs too, the driver is wedged: reboot. "
                            "Raise the limit with --timeout if torch lives on a slow file system",
            Reason.CRASHED: f"look at the stderr below; a crash on import usually means a broken "
                            f"CUDA/cuDNN library on LD_LIBRARY_PATH: unset LD_LIBRARY_PATH and "
                            f"retry, or {reinstall}",
        }
        return failed(rt.message, fixes.get(rt.reason, _import_error_fix(rt, reinstall)), ev)
    return passed(f"torch {rt.version} imports ({t.seconds:.1f} s)", ev)


def _import_error_fix(rt: Unavailable, reinstall: str) -> str:
    text = f"{rt.message}\n{rt.detail or ''}"
    lib = re.search(r"(lib[\w\-.]+\.so[\w.]*): cannot open shared object file", text)
    if lib:
        return (f"{lib.group(1)} is missing from the loader path: {reinstall}, and check that "
                "LD_LIBRARY_PATH does not point at an older CUDA/cuDNN")
    if "undefined symbol" in text:
        return (f"a library torch loads is the wrong version (undefined symbol): unset "
                f"LD_LIBRARY_PATH and retry, or {reinstall}")
    return reinstall


@check("GD402", "torch-cuda-build", "PyTorch is a CUDA build where a GPU is", Layer.PYTORCH,
       Severity.ERROR, "torch.version.cuda, NVML, CUDA toolkit, compat tables")
def check_torch_cuda_build(env: Environment, tables: Tables) -> Finding:
    """A CPU-only PyTorch (torch.version.cuda is None, e.g. `2.13.0+cpu`) never uses the GPU,
    whatever the driver. The fix is the pip line for the newest CUDA variant the driver runs
    (or, with no driver visible, the toolkit's CUDA major)."""
    tv = F.torch_version(env)
    if tv is None:
        return skipped("PyTorch is not installed or could not be read")
    rt = F.torch_runtime(env)
    if rt is not None and rt.hip:
        return failed(f"torch {tv} is a ROCm (AMD) build, not a CUDA build",
                      _install_fix(env, tables), (("torch.version.hip", rt.hip),))
    tc = F.torch_cuda(env)
    if tc:
        return passed(f"torch {tv} is built for CUDA {tc}")
    gpu_side = []
    if F.driver_present(env):
        gpu_side.append(f"an NVIDIA driver ({F.driver_version(env) or 'version unknown'})")
    if F.toolkit_version(env):
        gpu_side.append(f"a CUDA {F.toolkit_version(env)} toolkit")
    if not gpu_side:
        return passed(f"torch {tv} is a CPU-only build, and this machine has no NVIDIA driver")
    message = f"torch {tv} is a CPU-only build, but this machine has " + " and ".join(gpu_side)
    evidence = (("torch.version.cuda", "None"),)
    if not F.driver_present(env):  # a toolkit alone: a CUDA torch would not run here either
        return warned(message + " (no driver, so a CUDA build could not run yet)",
                      _install_fix(env, tables), evidence)
    return failed(message, _install_fix(env, tables), evidence)


@check("GD403", "torch-cuda-available", "torch.cuda.is_available()", Layer.PYTORCH,
       Severity.ERROR, "torch child process")
def check_torch_cuda_available(env: Environment, tables: Tables) -> Finding:
    """For a CUDA build, `torch.cuda.is_available()` must be True. When it is False, torch's own
    reason (the error of `torch.cuda.init()`) is shown with the likely cause."""
    rt = F.torch_runtime(env)
    if rt is None:
        return skipped("torch did not import (see GD401)")
    if not rt.cuda:
        return skipped("PyTorch is a CPU-only build (see GD402)")
    if rt.cuda_available:
        return passed(f"CUDA available, {rt.device_count} device(s): "
                      + ", ".join(d.name for d in rt.devices))
    reason = rt.cuda_init_error or "torch gave no reason"
    ev = (("torch.cuda.init()", reason),)
    visible = env.host.getenv("CUDA_VISIBLE_DEVICES") if not isinstance(
        env.host, Unavailable) else None
    if not F.driver_present(env):
        fix = "install the NVIDIA driver (see GD101)"
    elif visible is not None and visible.strip() in ("", "-1", "NoDevFiles"):
        fix = "unset CUDA_VISIBLE_DEVICES (it hides every GPU)"
    elif "too old" in reason or "insufficient" in reason:
        fix = "upgrade the NVIDIA driver (see GD103)"
    else:
        fix = "see GD101–GD103 and GD501–GD502 for the cause"
    return failed(f"torch.cuda.is_available() is False: {reason}", fix, ev)


@check("GD404", "gpu-arch-in-torch-build", "GPU architecture is in torch's build",
       Layer.PYTORCH, Severity.ERROR, "NVML / torch devices, torch.cuda.get_arch_list()")
def check_gpu_arch(env: Environment, tables: Tables) -> Finding:
    """torch runs kernels compiled for the GPU's compute capability (sm_XY in
    torch.cuda.get_arch_list()), or JIT-compiles PTX (compute_XY) of an equal or lower
    capability. Otherwise every kernel fails with 'no kernel image is available for execution
    on the device'."""
    rt = F.torch_runtime(env)
    if rt is None or not rt.cuda or not rt.arch_list:
        return skipped("needs a CUDA build of torch that imports and reports its arch list")
    ccs = {d.capability: d.name for d in rt.devices} or {
        g.compute_capability: g.name for g in F.gpus(env)}
    if not ccs:
        return skipped("no GPU visible")
    sms = {_cc(a) for a in rt.arch_list if a.startswith("sm_")}
    ptx = {_cc(a) for a in rt.arch_list if a.startswith("compute_")}
    missing = []
    for cc, name in sorted(ccs.items()):
        c = _cc("sm_" + cc.replace(".", ""))
        if c in sms or any(p <= c for p in ptx):
            continue
        missing.append(f"{name} (sm_{cc.replace('.', '')})")
    ev = (("arch list", " ".join(rt.arch_list)), ("GPUs", ", ".join(sorted(ccs))))
    if not missing:
        return passed(f"{', '.join(sorted(ccs))} covered by torch {rt.version}'s arch list", ev)
    return failed(
        f"torch {rt.version} has no kernels for {', '.join(missing)}",
        "install a torch build that includes it: for GPUs older than Turing (sm_75) take a "
        "CUDA 12.6 wheel (pip install torch --index-url https://download.pytorch.org/whl/cu126);"
        " for the newest GPUs take the newest CUDA variant (`gpudoctor recommend`)",
        ev,
    )


def _cc(arch: str) -> tuple[int, int]:
    digits = re.sub(r"\D", "", arch.split("_", 1)[-1])
    return (int(digits[:-1] or 0), int(digits[-1])) if digits else (0, 0)


@check("GD405", "torch-cudnn-works", "cuDNN runs a convolution in torch", Layer.PYTORCH,
       Severity.ERROR, "torch child process")
def check_torch_cudnn(env: Environment, tables: Tables) -> Finding:
    """With CUDA available, the probe runs one small convolution so cuDNN's lazily loaded
    sub-libraries load too; a failure here is what a training script would hit first."""
    rt = F.torch_runtime(env)
    if rt is None or not rt.cuda_available:
        return skipped("CUDA is not available in torch (see GD403)")
    libs = tuple(("mapped", p) for p in rt.mapped_libraries if "cudnn" in p)
    if rt.cudnn_version is None:
        return failed("torch reports no cuDNN (torch.backends.cudnn.version() is None)",
                      _install_fix(env, tables), libs)
    if rt.cudnn_conv != "ok":
        return failed(f"a cuDNN convolution failed: {rt.cudnn_conv}", _install_fix(env, tables),
                      libs)
    return passed(f"cuDNN {rt.cudnn_version} ran a convolution", libs)


@check("GD406", "torch-single-install", "one torch on the path", Layer.PYTORCH,
       Severity.WARNING, "torch package metadata, torch child process")
def check_torch_shadowed(env: Environment, tables: Tables) -> Finding:
    """The torch that imports should be the one pip installed. A different version means
    another copy shadows it (PYTHONPATH, a source checkout in the working directory, a user
    site-packages), a classic cause of 'I installed the CUDA build but still get CPU'."""
    rt, st = F.torch_runtime(env), F.torch_static(env)
    if rt is None or st is None:
        return skipped("needs both the package metadata and a working import")
    if rt.version == st.version:
        return passed(f"torch {rt.version} from {st.location}")
    return warned(
        f"`import torch` gives {rt.version} but the installed package says {st.version}",
        f"remove the other copy: check PYTHONPATH, the current directory and "
        f"`pip list --user`; torch imports from {st.location}",
        (("imported", rt.version), ("installed metadata", st.version)),
    )


CHECKS = (
    check_torch_importable,
    check_torch_cuda_build,
    check_torch_cuda_available,
    check_gpu_arch,
    check_torch_cudnn,
    check_torch_shadowed,
)

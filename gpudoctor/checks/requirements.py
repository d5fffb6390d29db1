"""Requirement checks (GD6xx): what a CI job asked for with `check --require`, measured.

One check per kind of requirement; each SKIPs when no requirement of its kind was given, and
fails with the measured value when one is unmet. The requirements come in the Environment
(`Environment.requirements`), parsed by `gpudoctor.requirements`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, passed, skipped
from gpudoctor.compat import machine
from gpudoctor.model import (
    CudnnFacts,
    Environment,
    Finding,
    Layer,
    NvmlFacts,
    Reason,
    Severity,
    TorchStatic,
    Unavailable,
)
from gpudoctor.requirements import (
    Requirement,
    RequirementError,
    format_bytes,
    holds,
    version_tuple,
)
from gpudoctor.versions import format_cudnn_version, parse_cc, sm_name

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

# a fact a pasted report does not state, or that the user asked not to gather, is not known
# to be missing: the requirement is skipped, not failed
_UNKNOWN = (Reason.NOT_REPORTED, Reason.SKIPPED)


@dataclass(frozen=True, slots=True)
class Measured:
    """What a requirement is judged on: one item (`gpus`, `driver`) or one per GPU (`arch`,
    `gpu-memory`), each a label, a value to compare and how to show it."""

    items: tuple[tuple[str, int | tuple[int, ...], str], ...]
    summary: str  # "4 GPUs visible (NVIDIA A100 ×4)"
    partial: bool = False  # each version states only the parts it has (torch's cuDNN: 3)


def requirements_of(env: Environment, kind: str | None = None) -> tuple[Requirement, ...]:
    """The requirements given (of one kind), () when none (or none were recorded)."""
    reqs = env.requirements if isinstance(env.requirements, tuple) else ()
    return tuple(r for r in reqs if isinstance(r, Requirement) and kind in (None, r.kind))


def _judge(env: Environment, kind: str, example: str, fix: str,
           measured: Measured | Unavailable) -> Finding:
    reqs = requirements_of(env, kind)
    if not reqs:
        return skipped(f"no {kind} requirement given (e.g. check --require '{example}')")
    evidence = tuple(("required", str(r)) for r in reqs)
    if isinstance(measured, Unavailable):
        if measured.reason in _UNKNOWN:
            return skipped(f"{', '.join(map(str, reqs))}: {measured.message}", evidence)
        return failed(f"requirement {', '.join(map(str, reqs))}: {measured.message}", fix,
                      evidence)
    evidence += tuple(("measured " + label, shown) for label, _, shown in measured.items)
    unmet = []
    for r in reqs:
        try:
            bad = [shown for _, value, shown in measured.items if not holds(
                r, value, len(value) if measured.partial and isinstance(value, tuple) else None)]
        except RequirementError as e:  # from a snapshot: the CLI refuses these
            return failed(f"malformed requirement {r}: {e}", f"correct the requirement {r}",
                          evidence)
        if bad:
            unmet.append(f"requirement {r}: " + (
                measured.summary if len(measured.items) <= 1 else "; ".join(bad)))
    if unmet:
        return failed("; ".join(unmet), fix, evidence)
    return passed(f"{', '.join(map(str, reqs))}: {measured.summary}", evidence)


def _no_driver(env: Environment, what: str) -> Unavailable:
    """Why a driver fact is missing: not in the report (skip), else no working driver."""
    nvml = env.nvml
    if V.driver_unknown(env) and isinstance(nvml, Unavailable):
        return Unavailable(Reason.NOT_REPORTED, f"the report does not state {what}")
    why = nvml.message if isinstance(nvml, Unavailable) else "no driver"
    return Unavailable(Reason.NOT_INSTALLED, f"no working NVIDIA driver ({why})")


_RUNNER_FIX = ("run the job where the requirement holds (the runner's labels, the container's "
               "--gpus, the pod's nvidia.com/gpu limit), or relax the requirement; `nvidia-smi` "
               "shows what this machine has")


def _count_names(names: list[str]) -> str:
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in Counter(names).items())


def _gpus(env: Environment) -> Measured | Unavailable:
    if isinstance(env.nvml, NvmlFacts):
        good = V.gpus(env)
        lost = len(env.nvml.gpus) - len(good)
        names = _count_names([g.name for g in good]) + (f"; {lost} lost" if lost else "")
        n = len(good)
        return Measured((("NVML GPUs", n, str(n)),),
                        f"{n} GPU{'s' if n != 1 else ''} visible" + (f" ({names})" if names
                                                                     else ""))
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.device_count, int):
        n = rt.device_count
        return Measured((("torch.cuda.device_count()", n, str(n)),),
                        f"torch sees {n} GPU{'s' if n != 1 else ''} (NVML: "
                        f"{V.reason_of(env.nvml)})")
    missing = _no_driver(env, "the GPUs")
    if missing.reason in _UNKNOWN:
        return missing
    return Measured((("GPUs", 0, "0"),), f"0 GPUs visible: {missing.message}")


@check("GD601", "require-gpus", "the machine has the GPUs the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require gpus…, NVML (else torch)",
       reads={"requirements", "nvml", "libcuda", "torch"})
def check_require_gpus(env: Environment, tables: Tables) -> Finding:
    """`--require gpus>=N`: the number of GPUs the driver shows (NVML's count of GPUs that
    answer; a lost GPU does not count), else `torch.cuda.device_count()`. No driver means 0
    GPUs, so a runner whose GPUs vanished fails the job instead of training on the CPU.

    Fix: run the job on a runner that has the GPUs (its labels, the container's `--gpus`, the
    pod's `nvidia.com/gpu` limit); `nvidia-smi -L` lists what this one has.
    """
    return _judge(env, "gpus", "gpus>=8", _RUNNER_FIX, _gpus(env))


def _version_of(label: str, text: str | None, shown: str) -> Measured | Unavailable:
    v = version_tuple(text or "")
    if v is None:
        return Unavailable(Reason.ERROR, f"{label} {text!r} is not a version")
    return Measured(((label, v, text or ""),), shown)


@check("GD602", "require-driver", "the driver is the version the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require driver…, NVML/libcuda",
       reads={"requirements", "nvml", "libcuda"})
def check_require_driver(env: Environment, tables: Tables) -> Finding:
    """`--require driver>=535`: the NVIDIA driver's version (NVML, else the kernel module's
    /proc/driver/nvidia/version), compared at the precision given (`driver>=535` is met by
    535.104.05).

    Fix: upgrade the driver (https://www.nvidia.com/en-us/drivers/) or run the job on a
    runner that has it.
    """
    drv = V.driver_version(env)
    measured = (_version_of("driver", drv, f"driver {drv}") if drv
                else _no_driver(env, "the driver version"))
    return _judge(env, "driver", "driver>=535", "upgrade the NVIDIA driver "
                  "(https://www.nvidia.com/en-us/drivers/), or " + _RUNNER_FIX, measured)


@check("GD603", "require-cuda", "the driver runs the CUDA version the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require cuda…, NVML/libcuda, compat tables",
       reads={"requirements", "nvml", "libcuda"})
def check_require_cuda(env: Environment, tables: Tables) -> Finding:
    """`--require cuda>=12.1`: the highest CUDA version the **driver** runs (NVML's
    `cudaDriverGetVersion`, else libcuda's, else derived from the driver version through the
    compat table) — "can this machine run CUDA 12.1 work?". Not torch's CUDA (require a torch
    build for that) and not the local toolkit's (which only matters for compiling).

    Fix: upgrade the driver to one that runs that CUDA (`gpudoctor compat cuda 12.1` names
    the minimum), or run the job on a runner that has it.
    """
    cuda = machine.driver_cuda(env, tables)
    measured = (_version_of("driver CUDA", cuda[0], f"the driver runs CUDA ≤ {cuda[0]} "
                            f"(from {cuda[1]})") if cuda
                else _no_driver(env, "the driver's CUDA version"))
    return _judge(env, "cuda", "cuda>=12.1", "upgrade the NVIDIA driver to one that runs that "
                  "CUDA (`gpudoctor compat cuda VERSION` names the minimum), or " + _RUNNER_FIX,
                  measured)


def _cudnn(env: Environment) -> Measured | Unavailable:
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.cudnn_version, int):
        v = format_cudnn_version(rt.cudnn_version)
        full = _cudnn_build(env, v)  # 9.26.0 → 9.26.0.51, from the wheel or the library
        if full:
            return _version_of("cuDNN", full, f"torch loads cuDNN {full}")
        measured = _version_of("cuDNN", v, f"torch loads cuDNN {v} (torch states no build "
                               "number)")
        return (dataclasses.replace(measured, partial=True) if isinstance(measured, Measured)
                else measured)
    if isinstance(env.cudnn, CudnnFacts) and env.cudnn.installs:
        i = next((i for i in env.cudnn.installs if i.in_use), env.cudnn.installs[0])
        found = next((x for x in (i.library_version, i.header_version) if isinstance(x, str)),
                     None)
        if found:
            return _version_of("cuDNN", found, f"cuDNN {found} in {i.lib_dir} ({i.origin})")
    if not V.is_reported(env.cudnn) and (rt is None or not V.is_reported(rt.cudnn_version)):
        return Unavailable(Reason.NOT_REPORTED, "the report does not state the cuDNN version")
    return Unavailable(Reason.NOT_INSTALLED, "no cuDNN found (torch loads none, and no copy "
                       "on disk has a readable version)")


def _cudnn_build(env: Environment, version: str) -> str | None:
    """The four-part version of the cuDNN torch loads (`version`, three parts): the
    nvidia-cudnn wheel beside torch, else a library on disk, when its first three parts are
    `version`'s."""
    t = V.torch_facts(env)
    wheels = t.static.nvidia_wheels if t and isinstance(t.static, TorchStatic) else ()
    found = [v for name, v in wheels if name.startswith("nvidia-cudnn")]
    if isinstance(env.cudnn, CudnnFacts):
        found += [i.library_version for i in env.cudnn.installs
                  if isinstance(i.library_version, str)]
    return next((v for v in found if v.startswith(version + ".")
                 and version_tuple(v) is not None and len(version_tuple(v) or ()) == 4), None)


@check("GD604", "require-cudnn", "cuDNN is the version the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require cudnn…, torch, cuDNN files",
       reads={"requirements", "torch", "cudnn"})
def check_require_cudnn(env: Environment, tables: Tables) -> Finding:
    """`--require cudnn>=9`: the cuDNN torch loads (`torch.backends.cudnn.version()`), else
    the version of the cuDNN copy in use on disk (its library, else its header). torch's
    number has no build part: `cudnn==9.26.0.51` reads it from the nvidia-cudnn wheel beside
    torch or the library on disk, and without either is judged at the three parts torch
    states.

    Fix: install a torch build that bundles that cuDNN (`gpudoctor recommend`), or that cuDNN
    (`gpudoctor install-cudnn`).
    """
    return _judge(env, "cudnn", "cudnn>=9", "install a torch build that bundles that cuDNN "
                  "(`gpudoctor recommend`) or that cuDNN (`gpudoctor install-cudnn`), or "
                  + _RUNNER_FIX, _cudnn(env))


@check("GD605", "require-torch", "PyTorch is the version the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require torch…, torch",
       reads={"requirements", "torch"})
def check_require_torch(env: Environment, tables: Tables) -> Finding:
    """`--require torch>=2.4`: the version of the torch that imports (else the installed
    one's metadata), compared without its local tag (2.4.1+cu121 meets torch>=2.4).

    Fix: `pip install "torch>=2.4"` with the index URL `gpudoctor recommend` names.
    """
    tv = V.torch_version(env)
    if tv:
        measured: Measured | Unavailable = _version_of("torch", tv, f"torch {tv}")
    elif (missing := V.torch_missing(env)) is not None:
        measured = (missing if missing.reason in _UNKNOWN else
                    Unavailable(Reason.NOT_INSTALLED, f"no torch ({missing.message})"))
    else:
        measured = Unavailable(Reason.NOT_INSTALLED, "torch's version is unknown")
    return _judge(env, "torch", "torch>=2.4", "install the torch the job needs (`gpudoctor "
                  "recommend` names the install line for this driver)", measured)


def _per_gpu(env: Environment, tables: Tables, kind: str) -> Measured | Unavailable:
    """Each GPU's compute capability (`arch`) or total memory (`gpu-memory`)."""
    items: list[tuple[str, int | tuple[int, ...], str]] = []
    unknown = []
    if kind == "arch":
        for g in machine.seen_gpus(env, tables):
            cc = parse_cc(g.cc) if isinstance(g.cc, str) else None
            if cc is None:
                unknown.append(f"GPU {g.index} {g.name}")
            else:
                items.append((f"GPU {g.index}", cc, f"GPU {g.index} {g.name} is {sm_name(cc)}"))
    else:
        rt = V.torch_runtime(env)
        sizes = ([(g.index, g.name, g.memory_total) for g in V.gpus(env)]
                 or [(d.index, d.name, d.total_memory) for d in
                     (rt.devices if rt and isinstance(rt.devices, tuple) else ())])
        for index, name, size in sizes:
            if isinstance(size, int):
                items.append((f"GPU {index}", size,
                              f"GPU {index} {name} has {format_bytes(size)}"))
            else:
                unknown.append(f"GPU {index} {name}")
    what = "compute capability" if kind == "arch" else "memory"
    if unknown:
        return Unavailable(Reason.NOT_REPORTED, f"the {what} of {', '.join(unknown)} is unknown")
    if not items:
        missing = _no_driver(env, "the GPUs")
        return missing if missing.reason in _UNKNOWN else Unavailable(
            Reason.NOT_INSTALLED, f"no GPU visible: {missing.message}")
    return Measured(tuple(items), "; ".join(shown for _, _, shown in items))


@check("GD606", "require-arch", "every GPU has the compute capability the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require arch…, torch devices (else NVML)",
       reads={"requirements", "torch", "nvml", "libcuda"})
def check_require_arch(env: Environment, tables: Tables) -> Finding:
    """`--require arch>=sm_80` (or `arch>=8.0`): every GPU's compute capability, as torch
    sees the devices (else NVML, or the product name in the GPU table for a pasted report).
    Each GPU must meet it; the ones that do not are named.

    Fix: run the job on GPUs of that architecture or newer.
    """
    return _judge(env, "arch", "arch>=sm_80", _RUNNER_FIX, _per_gpu(env, tables, "arch"))


@check("GD607", "require-gpu-memory", "every GPU has the memory the job requires",
       Layer.REQUIREMENTS, Severity.ERROR, "--require gpu-memory…, NVML (else torch)",
       reads={"requirements", "torch", "nvml", "libcuda"})
def check_require_gpu_memory(env: Environment, tables: Tables) -> Finding:
    """`--require gpu-memory>=40GiB`: every GPU's total memory (NVML, else torch), in GiB /
    MiB / TiB (powers of 2) or GB / MB / TB (powers of 10). NVML's total is a little below
    the product's name: an "80GB" H100 reports 79.6 GiB, so ask for `gpu-memory>=79GiB` (or
    `>=80GB`, 74.5 GiB) there.

    Fix: run the job on GPUs with that much memory.
    """
    return _judge(env, "gpu-memory", "gpu-memory>=40GiB", _RUNNER_FIX,
                  _per_gpu(env, tables, "gpu-memory"))


CHECKS = (check_require_gpus, check_require_driver, check_require_cuda, check_require_cudnn,
          check_require_torch, check_require_arch, check_require_gpu_memory)
KIND_CHECKS: dict[str, str] = {"gpus": "GD601", "driver": "GD602", "cuda": "GD603",
                               "cudnn": "GD604", "torch": "GD605", "arch": "GD606",
                               "gpu-memory": "GD607"}

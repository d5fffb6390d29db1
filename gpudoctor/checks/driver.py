"""Driver and GPU checks (GD1xx)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.checks import facts as F
from gpudoctor.checks.base import check, failed, passed, skipped, warned
from gpudoctor.model import Environment, Finding, Layer, NvmlFacts, Reason, Severity, Unavailable

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

DRIVER_URL = "https://www.nvidia.com/en-us/drivers/"


@check("GD101", "driver-present", "NVIDIA driver is installed and loaded", Layer.DRIVER,
       Severity.ERROR, "NVML, libcuda, torch build, CUDA toolkit")
def check_driver_present(env: Environment, tables: Tables) -> Finding:
    """An NVIDIA driver must be installed and its kernel module loaded before any CUDA program
    (a CUDA build of PyTorch, anything built with the toolkit) can use a GPU.

    NVML tells the cases apart: the library is missing (no driver), the kernel module is not
    loaded, or the user-space library and the kernel module are different versions (the driver
    was upgraded without a reboot). On WSL, where NVML may be absent, libcuda stands in.
    """
    drv = F.driver_version(env)
    if isinstance(env.nvml, NvmlFacts):
        cuda = F.driver_cuda(env, tables)
        return passed(
            f"driver {drv}" + (f", supports CUDA ≤ {cuda[0]}" if cuda else ""),
            (("driver", env.nvml.driver_version), ("nvml binding", env.nvml.binding)),
        )
    nvml = env.nvml
    assert isinstance(nvml, Unavailable)
    if F.driver_present(env):
        return passed(f"driver {drv or '(version unknown)'} found through libcuda "
                      f"(NVML unavailable: {nvml.message})")
    need = F.needs_driver(env)
    evidence = (("NVML", nvml.message), ("libcuda", F.reason_of(env.libcuda)))
    if nvml.reason is Reason.VERSION_MISMATCH:
        return failed(
            "the NVIDIA driver's library and kernel module are different versions",
            "reboot, or reload the module: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset "
            "nvidia && sudo modprobe nvidia",
            evidence,
        )
    if nvml.reason is Reason.DRIVER_NOT_LOADED:
        return failed(
            "the NVIDIA driver is installed but its kernel module is not loaded",
            "sudo modprobe nvidia (if it fails, see `sudo dmesg | grep -i nvidia`; with Secure "
            "Boot, enrol the module's key or disable Secure Boot)",
            evidence,
        )
    if nvml.reason is Reason.PERMISSION_DENIED:
        return failed("no permission to talk to the NVIDIA driver",
                      "check the permissions of /dev/nvidia* (see GD502)", evidence)
    if not need:
        return skipped("no NVIDIA driver, and nothing here needs one (no CUDA build of PyTorch, "
                       "no CUDA toolkit)", evidence)
    if F.torch_cuda(env) is None:  # only a toolkit: it compiles, nothing it builds can run
        return warned(
            "no NVIDIA driver: CUDA programs built here cannot run (" + need[0] + ")",
            f"install the NVIDIA driver for your GPU ({DRIVER_URL}), or ignore this on a "
            "build-only machine",
            evidence,
        )
    return failed(
        "no NVIDIA driver, but " + " and ".join(need),
        f"install the NVIDIA driver for your GPU ({DRIVER_URL}; on Ubuntu: sudo "
        "ubuntu-drivers install), then reboot; in a container, start it with --gpus all "
        "(NVIDIA Container Toolkit)",
        evidence,
    )


@check("GD102", "gpus-healthy", "every GPU answers NVML", Layer.DRIVER, Severity.ERROR, "NVML")
def check_gpus(env: Environment, tables: Tables) -> Finding:
    """Each GPU the driver knows must answer NVML. A GPU that fails (`GpuIsLost`, a reset
    required, a corrupted InfoROM) is named, and the others are still checked."""
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(F.reason_of(env.nvml))
    bad = [g for g in env.nvml.gpus if isinstance(g, Unavailable)]
    good = F.gpus(env)
    evidence = tuple(
        (f"GPU {g.index}", f"{g.name}, sm_{g.compute_capability.replace('.', '')}, "
         f"{g.memory_total / 2**30:.0f} GiB, {g.pci_bus_id}") for g in good
    ) + tuple((f"failed GPU #{i}", u.message) for i, u in enumerate(bad))
    if not env.nvml.gpus:
        return failed("the driver is loaded but sees no GPU",
                      "check `lspci | grep -i nvidia`; in a VM, check the GPU pass-through",
                      evidence)
    if bad:
        return failed(
            f"{len(bad)} of {len(env.nvml.gpus)} GPUs failed: " + "; ".join(u.message for u in bad),
            "run `nvidia-smi -q` and `sudo dmesg | grep -i xid`; a lost GPU needs "
            "`sudo nvidia-smi -r -i <index>` or a reboot",
            evidence,
        )
    names = ", ".join(sorted({g.name for g in good}))
    return passed(f"{len(good)} GPU{'s' if len(good) != 1 else ''}: {names}", evidence)


@check("GD103", "driver-supports-torch-cuda", "driver is new enough for PyTorch's CUDA",
       Layer.DRIVER, Severity.ERROR, "NVML/libcuda, torch.version.cuda, compat tables")
def check_driver_vs_torch(env: Environment, tables: Tables) -> Finding:
    """PyTorch's CUDA runtime needs a driver at least as new as NVIDIA's table says. For CUDA
    ≥ 11 an older driver of the same major family still runs it by minor-version compatibility,
    with limits (no PTX JIT of newer PTX; some calls return cudaErrorCallRequiresNewerDriver).
    """
    tc = F.torch_cuda(env)
    if not tc:
        return skipped("PyTorch is not a CUDA build (or not installed)")
    drv = F.driver_version(env)
    dcuda = F.driver_cuda(env, tables)
    have, want = F.version(dcuda[0] if dcuda else None), F.version(tc)
    if dcuda and have and want and have >= want:
        return passed(f"driver {drv or ''} runs CUDA ≤ {dcuda[0]} ({dcuda[1]}) ≥ PyTorch's "
                      f"CUDA {tc}".replace("driver  ", "driver "),
                      (("driver", drv or "?"), ("driver CUDA", dcuda[0]), ("torch CUDA", tc)))
    if not drv:
        return skipped("no NVIDIA driver version to compare (see GD101)")
    minimum = tables.cuda_min_driver(tc)
    evidence: tuple[tuple[str, str], ...] = (("driver", drv), ("torch CUDA", tc))
    if minimum is None:
        return skipped(f"CUDA {tc} is not in the compat tables", evidence)
    dv = F.version(drv)
    full, family = F.version(minimum.full), F.version(minimum.family)
    evidence += (("minimum (full)", minimum.full or "?"),
                 ("minimum (family)", minimum.family or "-"))
    fix_variant = F.best_variant(env, tables)
    alt = f", or install a build for this driver: {F.pip_install_line(fix_variant)}" \
        if fix_variant else ""
    if dv is None:
        return skipped(f"driver version {drv!r} does not parse", evidence)
    if full and dv >= full:
        return passed(f"driver {drv} ≥ {minimum.full} needed by CUDA {tc}", evidence)
    if family and dv >= family:
        return warned(
            f"driver {drv} is older than {minimum.full} (CUDA {tc}'s driver) but runs it by "
            f"minor-version compatibility (≥ {minimum.family}); PTX JIT and newer APIs may fail",
            f"upgrade the driver to ≥ {minimum.full} ({DRIVER_URL}){alt}",
            evidence,
        )
    need = minimum.family or minimum.full
    return failed(
        f"driver {drv} is too old for PyTorch's CUDA {tc}, which needs ≥ {need}",
        f"upgrade the NVIDIA driver to ≥ {need} ({DRIVER_URL}){alt}",
        evidence,
    )


@check("GD104", "driver-supports-toolkit", "driver runs what the local toolkit builds",
       Layer.DRIVER, Severity.WARNING, "NVML/libcuda, CUDA toolkit, compat tables")
def check_driver_vs_toolkit(env: Environment, tables: Tables) -> Finding:
    """Programs compiled with the local toolkit (CUDA extensions, nvcc builds) need a driver
    that supports that toolkit's CUDA version; `nvcc` itself runs without one."""
    tv = F.toolkit_version(env)
    if not tv:
        return skipped("no CUDA toolkit found (or its version is unreadable)")
    cuda = F.driver_cuda(env, tables)
    if cuda is None:
        return skipped("no NVIDIA driver (see GD101)")
    dcuda, source = cuda
    ev = (("toolkit", tv), ("driver supports CUDA", f"{dcuda} ({source})"))
    tvv, dvv = F.version(tv), F.version(dcuda)
    if tvv is None or dvv is None:
        return skipped("a version does not parse", ev)
    if (tvv.major, tvv.minor) <= (dvv.major, dvv.minor):
        return passed(f"toolkit CUDA {tv} ≤ driver's CUDA {dcuda}", ev)
    minimum = tables.cuda_min_driver(tv)
    need = f"≥ {minimum.full}" if minimum and minimum.full else f"one that supports CUDA {tv}"
    if tvv.major == dvv.major and tvv.major >= 11:
        return warned(
            f"toolkit CUDA {tv} is newer than the driver's CUDA {dcuda}: what it builds runs by "
            "minor-version compatibility only (no PTX JIT)",
            f"upgrade the NVIDIA driver to {need} ({DRIVER_URL})", ev)
    return failed(
        f"toolkit CUDA {tv} is newer than the driver supports (CUDA {dcuda}): programs it "
        "builds fail with 'CUDA driver version is insufficient for CUDA runtime version'",
        f"upgrade the NVIDIA driver to {need} ({DRIVER_URL}), or use a CUDA {dcuda} toolkit", ev)


CHECKS = (check_driver_present, check_gpus, check_driver_vs_torch, check_driver_vs_toolkit)

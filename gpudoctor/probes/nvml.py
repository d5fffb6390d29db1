"""The driver and its GPUs through NVML (NVIDIA's nvidia-ml-py binding, module `pynvml`).

Error mapping (`nvmlInit` and the system queries):

- `pynvml` not importable, or a `pynvml` that is not nvidia-ml-py → ERROR (broken binding)
- `NVMLError_LibraryNotFound` → NOT_INSTALLED ("no NVIDIA driver user-space library")
- `NVMLError_DriverNotLoaded` → DRIVER_NOT_LOADED
- `NVMLError_LibRmVersionMismatch` → VERSION_MISMATCH ("reboot, or reload the nvidia module")
- `NVMLError_NoPermission` → PERMISSION_DENIED
- `NVMLError_NotSupported` / `NVMLError_FunctionNotFound` → NOT_SUPPORTED
- any other `NVMLError` → ERROR with NVML's own text

Per GPU, a failing handle or query makes that GPU an `Unavailable` in `NvmlFacts.gpus` and
leaves the others alone (e.g. `NVMLError_GpuIsLost`). Persistence and MIG mode are optional
per GPU (`NotSupported` on GeForce / non-MIG parts).
"""

from __future__ import annotations

import logging
from importlib import metadata
from typing import Any

from gpudoctor.model import GpuFacts, NvmlFacts, Reason, Unavailable
from gpudoctor.probes.interface import Deps

logger = logging.getLogger(__name__)

_INIT_REASONS = {
    "NVMLError_LibraryNotFound": (
        Reason.NOT_INSTALLED,
        "the NVIDIA driver's libnvidia-ml.so.1 was not found: no driver is installed here",
    ),
    "NVMLError_DriverNotLoaded": (
        Reason.DRIVER_NOT_LOADED,
        "the NVIDIA kernel driver is not loaded",
    ),
    "NVMLError_LibRmVersionMismatch": (
        Reason.VERSION_MISMATCH,
        "the driver's user-space library and kernel module differ: reboot, or reload the "
        "nvidia kernel module",
    ),
    "NVMLError_NoPermission": (Reason.PERMISSION_DENIED, "no permission to talk to the driver"),
    "NVMLError_NotSupported": (Reason.NOT_SUPPORTED, "NVML is not supported here"),
    "NVMLError_FunctionNotFound": (
        Reason.NOT_SUPPORTED,
        "the driver's NVML lacks a function this query needs",
    ),
}


def unavailable_from_nvml(err: BaseException, what: str) -> Unavailable:
    """Map an NVMLError to a reason; `what` names the query for the message."""
    name = type(err).__name__
    reason, message = _INIT_REASONS.get(name, (Reason.ERROR, f"NVML failed: {err}"))
    if name not in _INIT_REASONS:
        message = f"{what}: NVML said {err}"
    return Unavailable(reason, message, detail=f"{name}: {err}")


def probe_nvml(deps: Deps) -> NvmlFacts | Unavailable:
    """Driver version, the highest CUDA it supports, and every GPU."""
    del deps  # NVML is found by the loader; tests point LD_LIBRARY_PATH at a fake library
    try:
        import pynvml
    except ImportError as e:
        return Unavailable(
            Reason.NOT_INSTALLED,
            "the nvidia-ml-py package is not importable: pip install nvidia-ml-py",
            detail=repr(e),
        )
    binding = _binding()
    if not hasattr(pynvml, "NVMLError") or not hasattr(pynvml, "nvmlInit"):
        return Unavailable(
            Reason.ERROR,
            "the 'pynvml' module is not NVIDIA's binding: pip uninstall pynvml && "
            "pip install --force-reinstall nvidia-ml-py",
            detail=f"pynvml from {getattr(pynvml, '__file__', '?')}",
        )
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        return unavailable_from_nvml(e, "nvmlInit")
    except OSError as e:  # an unloadable libnvidia-ml.so.1 (wrong arch, truncated file)
        return Unavailable(Reason.ERROR, "libnvidia-ml.so.1 could not be loaded", detail=repr(e))
    try:
        return _facts(pynvml, binding)
    except pynvml.NVMLError as e:
        return unavailable_from_nvml(e, "reading the driver version")
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError as e:
            logger.debug("nvmlShutdown: %r", e)


def _binding() -> str:
    try:
        return f"nvidia-ml-py {metadata.version('nvidia-ml-py')}"
    except metadata.PackageNotFoundError:
        return "pynvml (not from nvidia-ml-py)"


def _facts(pynvml: Any, binding: str) -> NvmlFacts:
    driver = pynvml.nvmlSystemGetDriverVersion()
    count = pynvml.nvmlDeviceGetCount()
    return NvmlFacts(
        driver_version=_str(driver),
        cuda_driver_version=_optional(pynvml, pynvml.nvmlSystemGetCudaDriverVersion_v2, "CUDA"),
        nvml_version=_optional(pynvml, lambda: _str(pynvml.nvmlSystemGetNVMLVersion()), "NVML"),
        binding=binding,
        gpus=tuple(_gpu(pynvml, i) for i in range(count)),
    )


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(pynvml: Any, fn: Any, what: str) -> Any:
    try:
        return fn()
    except pynvml.NVMLError as e:
        return unavailable_from_nvml(e, f"reading the {what} version")


def _gpu(pynvml: Any, index: int) -> GpuFacts | Unavailable:
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        pci = pynvml.nvmlDeviceGetPciInfo(h)
        return GpuFacts(
            index=index,
            name=_str(pynvml.nvmlDeviceGetName(h)),
            uuid=_str(pynvml.nvmlDeviceGetUUID(h)),
            compute_capability=f"{major}.{minor}",
            memory_total=int(mem.total),
            memory_free=int(mem.free),
            pci_bus_id=_str(pci.busId),
            persistence_mode=_optional(
                pynvml, lambda: bool(pynvml.nvmlDeviceGetPersistenceMode(h)), "persistence mode"
            ),
            mig_mode=_optional(
                pynvml, lambda: bool(pynvml.nvmlDeviceGetMigMode(h)[0]), "MIG mode"
            ),
        )
    except pynvml.NVMLError as e:
        return unavailable_from_nvml(e, f"GPU {index}")

"""The driver and its GPUs through NVML (NVIDIA's nvidia-ml-py binding, module `pynvml`).

Error mapping (`nvmlInit` and the system queries):

- `pynvml` not importable → NOT_INSTALLED; a `pynvml` that is not nvidia-ml-py → ERROR
  (broken binding)
- `NVMLError_LibraryNotFound` → NOT_INSTALLED ("no NVIDIA driver user-space library"), or
  ERROR when the library is there but the loader rejects it (truncated, wrong architecture)
- `NVMLError_DriverNotLoaded` → DRIVER_NOT_LOADED
- `NVMLError_LibRmVersionMismatch` → VERSION_MISMATCH ("reboot, or reload the nvidia module")
- `NVMLError_NoPermission` → PERMISSION_DENIED
- `NVMLError_NotSupported` / `NVMLError_FunctionNotFound` → NOT_SUPPORTED
- any other `NVMLError` → ERROR with NVML's own text
- `NVMLLibraryMismatchError` (nvidia-ml-py 13's unversioned process queries on a driver without
  their `_v3` form, e.g. R470; an `Exception`, not an `NVMLError`) → NOT_SUPPORTED for that
  query alone, like `FunctionNotFound`

Per GPU, a failing handle or query makes that GPU an `Unavailable` in `NvmlFacts.gpus` and
leaves the others alone (e.g. `NVMLError_GpuIsLost`). Persistence and MIG mode are optional
per GPU (`NotSupported` on GeForce / non-MIG parts), and so are the memory figures (a MIG-enabled
GPU read by a non-root user answers `NoPermission`: the GPU, its MIG mode included, stays a
fact), and each health fact (ECC, retired pages, remapped rows, clock events, heat, power,
PCIe, the recovery action, the NVSwitch fabric, the processes on the GPU:
`gpudoctor.probes.nvml_health`).

A deadline (`Deps.nvml_timeout`): a wedged driver can block `nvmlInit` for good, so the queries
run in a daemon thread and a probe that waited that long returns `Unavailable(TIMEOUT)` ("NVML
did not answer within N s"). A thread stuck in a C call cannot be killed; being a daemon, it
does not keep the process from exiting. Measured on the 2-core CI machine, the thread costs
under 1 ms, where running the queries in a child process would add 30 ms (a bare interpreter
importing pynvml) to 110 ms (one that returns the facts through gpudoctor's model) to every
`check`, whose budget without torch is 300 ms.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from gpudoctor.model import GpuFacts, NvmlFacts, Reason, Unavailable
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.nvml_health import library_mismatch, read_health

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


def nvml_errors(pynvml: Any) -> tuple[type[BaseException], ...]:
    """What a query of this binding raises for the driver's answer: `NVMLError`, and
    `NVMLLibraryMismatchError` where the binding has it (nvidia-ml-py 13: not an NVMLError)."""
    return (pynvml.NVMLError, *library_mismatch(pynvml))


def unavailable_from_nvml(err: BaseException, what: str) -> Unavailable:
    """Map an NVMLError to a reason; `what` names the query for the message."""
    name = type(err).__name__
    detail = f"{name}: {err}"
    if name == "NVMLLibraryMismatchError":
        return Unavailable(
            Reason.NOT_SUPPORTED, f"{what} is not supported by this driver: it lacks the "
            "versioned query this nvidia-ml-py calls (an older driver, e.g. R470); update the "
            "driver, or install the nvidia-ml-py of the driver's release", detail=detail)
    if what != "nvmlInit" and name in ("NVMLError_NotSupported", "NVMLError_FunctionNotFound"):
        # one query of a working NVML (MIG mode on a GeForce): not "NVML is not supported"
        return Unavailable(
            Reason.NOT_SUPPORTED, f"{what} is not supported by this GPU or driver", detail=detail
        )
    if name in _INIT_REASONS:
        reason, message = _INIT_REASONS[name]
        return Unavailable(reason, message, detail=detail)
    return Unavailable(Reason.ERROR, f"{what}: NVML said {err}", detail=detail)


def _load_library() -> OSError | None:
    """What the loader says of libnvidia-ml.so.1, loaded by that name as pynvml loads it;
    None: it loads."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        return e
    return None


def _unloadable(e: OSError) -> Unavailable | None:
    """The library exists but cannot be loaded (truncated, wrong architecture): the loader's
    message tells it from a library that is not there (None)."""
    if "No such file or directory" in str(e):
        return None
    return Unavailable(
        Reason.ERROR,
        "libnvidia-ml.so.1 was found but cannot be loaded: reinstall the NVIDIA driver",
        detail=str(e),
    )


def _library_not_found(err: BaseException) -> Unavailable:
    """pynvml reports a libnvidia-ml.so.1 that exists but cannot be loaded as LibraryNotFound
    too; the loader's own message tells the two apart."""
    said = _load_library()
    return (_unloadable(said) if said else None) or unavailable_from_nvml(err, "nvmlInit")


# nvmlComputeMode_t, by the names nvidia-smi -q prints
COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def probe_nvml(deps: Deps) -> NvmlFacts | Unavailable:
    """Driver version, the highest CUDA it supports, and every GPU; TIMEOUT past
    `deps.nvml_timeout` seconds (NVML is found by the loader: tests point LD_LIBRARY_PATH at a
    fake library)."""
    outcome: list[NvmlFacts | Unavailable | BaseException] = []

    def query() -> None:
        try:
            outcome.append(_query())
        except BaseException as e:  # noqa: BLE001 -- re-raised in the caller's thread below
            outcome.append(e)

    worker = threading.Thread(target=query, name="gpudoctor-nvml", daemon=True)
    worker.start()
    worker.join(deps.nvml_timeout)
    if not outcome:
        return Unavailable(
            Reason.TIMEOUT,
            f"NVML did not answer within {deps.nvml_timeout:g} s: the driver is not responding "
            "(a GPU or driver in a bad state); run `nvidia-smi` — if it hangs too, reboot",
            detail="nvmlInit or a query blocked; its thread was abandoned",
        )
    if isinstance(outcome[0], BaseException):
        raise outcome[0]  # for the probe boundary in probes.collect()
    return outcome[0]


def _driver_library() -> Unavailable | None:
    """Load libnvidia-ml.so.1 as pynvml would (`CDLL` by that name), before importing pynvml:
    on a machine without a driver the answer is the same, without the 30-45 ms that importing
    the binding (and ctypes.util, tempfile) costs there. None: it loads."""
    said = _load_library()
    if said is None:
        return None
    reason, message = _INIT_REASONS["NVMLError_LibraryNotFound"]
    return _unloadable(said) or Unavailable(reason, message,
                                            detail=f"NVMLError_LibraryNotFound: {said}")


def _query() -> NvmlFacts | Unavailable:
    if sys.platform.startswith("linux"):
        missing = _driver_library()
        if missing is not None:
            return missing
    try:
        import pynvml
    except ImportError as e:
        from gpudoctor.compat.wheels import package_line  # lazy: only a broken install says it

        return Unavailable(
            Reason.NOT_INSTALLED,
            f"the nvidia-ml-py package is not importable: {package_line('nvidia-ml-py')}",
            detail=repr(e),
        )
    binding = _binding(pynvml)
    if not hasattr(pynvml, "NVMLError") or not hasattr(pynvml, "nvmlInit"):
        from gpudoctor.compat.wheels import package_line  # lazy: only a wrong binding says it

        return Unavailable(
            Reason.ERROR,
            "the 'pynvml' module is not NVIDIA's binding: pip uninstall pynvml && "
            f"{package_line('nvidia-ml-py', force=True)}",
            detail=f"pynvml from {getattr(pynvml, '__file__', '?')}",
        )
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        if type(e).__name__ == "NVMLError_LibraryNotFound":
            return _library_not_found(e)
        return unavailable_from_nvml(e, "nvmlInit")
    except OSError as e:  # an unloadable libnvidia-ml.so.1 (wrong arch, truncated file)
        return Unavailable(Reason.ERROR, "libnvidia-ml.so.1 could not be loaded", detail=repr(e))
    try:
        return _facts(pynvml, binding)
    except nvml_errors(pynvml) as e:
        return unavailable_from_nvml(e, "reading the driver version")
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError as e:
            logger.debug("nvmlShutdown: %r", e)


def _binding(pynvml: Any) -> str:
    """Which binding `import pynvml` found: NVIDIA's nvidia-ml-py, named with its version from
    the dist-info folder beside the module (a directory listing, not importlib.metadata's
    scan of every distribution: ~7 ms on every run)."""
    where = Path(getattr(pynvml, "__file__", "") or ".").parent
    try:
        names = [n for n in os.listdir(where) if n.lower().startswith("nvidia_ml_py-")
                 and n.endswith(".dist-info")]
    except OSError:
        names = []
    if names:
        return f"nvidia-ml-py {names[0][len('nvidia_ml_py-'):-len('.dist-info')]}"
    return "pynvml (not from nvidia-ml-py)"


def _facts(pynvml: Any, binding: str) -> NvmlFacts:
    driver = pynvml.nvmlSystemGetDriverVersion()
    count = pynvml.nvmlDeviceGetCount()
    return NvmlFacts(
        driver_version=_str(driver),
        cuda_driver_version=_optional(
            pynvml, pynvml.nvmlSystemGetCudaDriverVersion_v2, "reading the CUDA version"
        ),
        nvml_version=_optional(
            pynvml, lambda: _str(pynvml.nvmlSystemGetNVMLVersion()), "reading the NVML version"
        ),
        binding=binding,
        gpus=tuple(_gpu(pynvml, i, _str(driver)) for i in range(count)),
    )


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(pynvml: Any, fn: Any, what: str) -> Any:
    try:
        return fn()
    except nvml_errors(pynvml) as e:
        return unavailable_from_nvml(e, what)


def _gpu(pynvml: Any, index: int, driver: str = "") -> GpuFacts | Unavailable:
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
        mem = _optional(pynvml, lambda: pynvml.nvmlDeviceGetMemoryInfo(h), f"GPU {index} memory")
        pci = pynvml.nvmlDeviceGetPciInfo(h)
        return GpuFacts(
            index=index,
            name=_str(pynvml.nvmlDeviceGetName(h)),
            uuid=_str(pynvml.nvmlDeviceGetUUID(h)),
            compute_capability=f"{major}.{minor}",
            memory_total=mem if isinstance(mem, Unavailable) else int(mem.total),
            memory_free=mem if isinstance(mem, Unavailable) else int(mem.free),
            pci_bus_id=_str(pci.busId),
            persistence_mode=_optional(
                pynvml,
                lambda: bool(pynvml.nvmlDeviceGetPersistenceMode(h)),
                f"GPU {index} persistence mode",
            ),
            mig_mode=_optional(
                pynvml, lambda: bool(pynvml.nvmlDeviceGetMigMode(h)[0]), f"GPU {index} MIG mode"
            ),
            health=read_health(pynvml, h, index, lambda fn, what: _optional(pynvml, fn, what),
                               driver),
            compute_mode=_optional(
                pynvml, lambda: COMPUTE_MODES.get(int(pynvml.nvmlDeviceGetComputeMode(h)),
                                                  "Unknown"), f"GPU {index} compute mode"),
        )
    except nvml_errors(pynvml) as e:
        return unavailable_from_nvml(e, f"GPU {index}")

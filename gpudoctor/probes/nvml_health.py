"""A GPU's health through NVML: memory errors, clock events, heat, power and the PCIe link.

The same facts `nvidia-smi -q` prints (`gpudoctor.reports.nvidia_smi_q` reads them from a
paste), read with the queries nvidia-smi itself makes, none of which needs root:

- ECC: `nvmlDeviceGetEccMode`, `nvmlDeviceGetTotalEccErrors` (volatile/aggregate ×
  corrected/uncorrected); retired pages (`nvmlDeviceGetRetiredPages` per cause,
  `nvmlDeviceGetRetiredPagesPendingStatus`; Kepler to Volta); remapped rows
  (`nvmlDeviceGetRemappedRows`; Ampere and later)
- clock-event reasons (`nvmlDeviceGetCurrentClocksEventReasons`, or the older
  `…ThrottleReasons` on a driver before 535), decoded to nvidia-smi's names
- temperature and its slowdown/shutdown thresholds, power draw and the enforced limit
- PCIe generation and width, current and maximum, and the replay counter
- the driver's recovery action (`nvmlDeviceGetFieldValues` with
  `NVML_FI_DEV_GET_GPU_RECOVERY_ACTION`, drivers from the 550 series), the NVSwitch fabric's
  registration state and status (`nvmlDeviceGetGpuFabricInfo`; state NOT_SUPPORTED: no
  NVSwitch), and the processes holding memory on the GPU (`nvmlDeviceGet{Compute,Graphics}
  RunningProcesses`, named from /proc/PID/comm where this process can see them)

Each field degrades alone: `NotSupported` (ECC on a GeForce, remapped rows before Ampere) and
`FunctionNotFound` (a driver older than the query) → NOT_SUPPORTED, anything else → ERROR with
NVML's text; the GPU itself stays a fact.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpudoctor.model import GpuHealth, GpuProcess, Reason, Unavailable

# nvmlClocksEventReason* bits → nvidia-smi -q's names ("GPU Idle" is kept apart, in gpu_idle)
CLOCK_EVENT_BITS = (
    (0x2, "Applications Clocks Setting"),
    (0x4, "SW Power Cap"),
    (0x8, "HW Slowdown"),
    (0x10, "Sync Boost"),
    (0x20, "SW Thermal Slowdown"),
    (0x40, "HW Thermal Slowdown"),
    (0x80, "HW Power Brake Slowdown"),
    (0x100, "Display Clock Setting"),
)
IDLE_BIT = 0x1

# nvmlGpuRecoveryAction_t, by the names nvidia-smi -q prints ("GPU Recovery Action")
RECOVERY_ACTIONS = {0: "None", 1: "Reset", 2: "Reboot", 3: "Drain P2P", 4: "Drain and Reset",
                    5: "Recover IMEX Domain", 6: "Bus Reset", 7: "System Reboot"}
RECOVERY_FIELD = 230  # NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (bindings before 12.560 lack it)
# nvmlGpuFabricState_t (0 NOT_SUPPORTED: no NVSwitch), by nvidia-smi -q's names
FABRIC_STATES = {1: "Not Started", 2: "In Progress", 3: "Completed"}
PROC = Path("/proc")

Optional = Callable[[Callable[[], Any], str], Any]


def decode_clock_events(mask: int) -> tuple[str, ...]:
    """The active reasons of an nvmlClocksEventReason mask, by nvidia-smi's names."""
    return tuple(name for bit, name in CLOCK_EVENT_BITS if mask & bit)


def read_health(pynvml: Any, h: Any, index: int, nvml_optional: Optional) -> GpuHealth:
    """Every health fact of one GPU; `nvml_optional(fn, what)` turns an NVMLError into a fact,
    and a query this binding lacks (an nvidia-ml-py older than the driver) becomes one too."""
    gpu = f"GPU {index}"

    def optional(fn: Callable[[], Any], what: str) -> Any:
        return nvml_optional(lambda: _guard(fn, what), what)

    def ecc(kind: int, scope: int, what: str) -> int | Unavailable:
        return optional(  # type: ignore[no-any-return]
            lambda: int(pynvml.nvmlDeviceGetTotalEccErrors(h, kind, scope)), f"{gpu} {what}")

    mode = optional(lambda: pynvml.nvmlDeviceGetEccMode(h), f"{gpu} ECC mode")
    unc, corr, vol, agg = 1, 0, 0, 1  # nvmlMemoryErrorType_t, nvmlEccCounterType_t
    remap = optional(lambda: pynvml.nvmlDeviceGetRemappedRows(h), f"{gpu} remapped rows")
    mask = optional(lambda: _clock_mask(pynvml, h), f"{gpu} clock-event reasons")
    fabric = optional(lambda: _fabric(pynvml, h, gpu), f"{gpu} fabric state")
    return GpuHealth(
        ecc_mode=_pick(mode, 0, _enabled),
        ecc_mode_pending=_pick(mode, 1, _enabled),
        ecc_volatile_uncorrectable=ecc(unc, vol, "volatile uncorrectable ECC errors"),
        ecc_aggregate_uncorrectable=ecc(unc, agg, "aggregate uncorrectable ECC errors"),
        ecc_volatile_correctable=ecc(corr, vol, "volatile correctable ECC errors"),
        ecc_aggregate_correctable=ecc(corr, agg, "aggregate correctable ECC errors"),
        retired_pages_single_bit=optional(
            lambda: len(pynvml.nvmlDeviceGetRetiredPages(
                h, 0)),  # NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
            f"{gpu} pages retired for single-bit ECC errors"),
        retired_pages_double_bit=optional(
            lambda: len(pynvml.nvmlDeviceGetRetiredPages(
                h, 1)),  # NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
            f"{gpu} pages retired for double-bit ECC errors"),
        retired_pages_pending=optional(
            lambda: bool(pynvml.nvmlDeviceGetRetiredPagesPendingStatus(h)),
            f"{gpu} pending page retirement"),
        remapped_rows_correctable=_pick(remap, 0, int),
        remapped_rows_uncorrectable=_pick(remap, 1, int),
        remapped_rows_pending=_pick(remap, 2, bool),
        remapped_rows_failure=_pick(remap, 3, bool),
        clock_events=mask if isinstance(mask, Unavailable) else decode_clock_events(mask),
        gpu_idle=mask if isinstance(mask, Unavailable) else bool(mask & IDLE_BIT),
        temperature=optional(
            lambda: int(pynvml.nvmlDeviceGetTemperature(h, 0)),  # NVML_TEMPERATURE_GPU
            f"{gpu} temperature"),
        temperature_slowdown=optional(
            lambda: int(pynvml.nvmlDeviceGetTemperatureThreshold(h, 1)),  # …_SLOWDOWN
            f"{gpu} slowdown temperature"),
        temperature_shutdown=optional(
            lambda: int(pynvml.nvmlDeviceGetTemperatureThreshold(h, 0)),  # …_SHUTDOWN
            f"{gpu} shutdown temperature"),
        power_draw=optional(lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                            f"{gpu} power draw"),
        power_limit=optional(lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                             f"{gpu} power limit"),
        pcie_gen=optional(lambda: int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                          f"{gpu} PCIe generation"),
        pcie_gen_max=optional(lambda: int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(h)),
                              f"{gpu} maximum PCIe generation"),
        pcie_width=optional(lambda: int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
                            f"{gpu} PCIe link width"),
        pcie_width_max=optional(lambda: int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(h)),
                                f"{gpu} maximum PCIe link width"),
        pcie_replays=optional(lambda: int(pynvml.nvmlDeviceGetPcieReplayCounter(h)),
                              f"{gpu} PCIe replay counter"),
        recovery_action=optional(lambda: _recovery_action(pynvml, h), f"{gpu} recovery action"),
        fabric_state=_pick(fabric, 0, str),
        fabric_status=_pick(fabric, 1, str),
        processes=optional(lambda: _processes(pynvml, h), f"{gpu} process list"),
    )


def _recovery_action(pynvml: Any, h: Any) -> str:
    """The driver's recovery action; a field the driver does not have raises its NVMLError."""
    field = getattr(pynvml, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", RECOVERY_FIELD)
    value = pynvml.nvmlDeviceGetFieldValues(h, [field])[0]
    if value.nvmlReturn:
        raise pynvml.NVMLError(value.nvmlReturn)
    kinds = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")
    raw = int(getattr(value.value, kinds[value.valueType]
                      if 0 <= value.valueType < len(kinds) else "uiVal"))
    return RECOVERY_ACTIONS.get(raw, f"unknown action {raw}")


def _fabric(pynvml: Any, h: Any, gpu: str) -> tuple[str, str] | Unavailable:
    """(state, status) of the GPU's NVSwitch fabric registration; NOT_SUPPORTED without one."""
    info = pynvml.c_nvmlGpuFabricInfo_t()
    pynvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(info))
    state = FABRIC_STATES.get(int(info.state) & 0xFF)  # a char in nvml.h, a c_uint in pynvml
    if state is None:
        return Unavailable(Reason.NOT_SUPPORTED, f"{gpu} has no NVSwitch fabric (fabric state "
                           "N/A): Fabric Manager is not needed")
    code = int(info.status)
    return state, "Success" if code == 0 else str(pynvml.NVMLError(code))


def _processes(pynvml: Any, h: Any) -> tuple[GpuProcess, ...]:
    """Compute and graphics processes on the GPU, one entry per pid."""
    found: dict[int, GpuProcess] = {}
    for kind, query in (("C", pynvml.nvmlDeviceGetComputeRunningProcesses),
                        ("G", pynvml.nvmlDeviceGetGraphicsRunningProcesses)):
        for p in query(h):
            pid = int(p.pid)
            used: int | Unavailable = int(p.usedGpuMemory) if p.usedGpuMemory is not None else \
                Unavailable(Reason.NOT_SUPPORTED, "the driver does not report this process's "
                            "memory (Windows WDDM, or a MIG instance)")
            if pid in found:  # both a compute and a graphics context
                known = found[pid]
                found[pid] = GpuProcess(pid, known.name, known.used_memory, "C+G")
            else:
                found[pid] = GpuProcess(pid, process_name(pid), used, kind)
    return tuple(found.values())


def process_name(pid: int, proc: Path | None = None) -> str:
    """/proc/PID/comm, or a name saying this process cannot see it (another pid namespace: a
    container sees the host's pids through NVML; /proc mounted with hidepid)."""
    try:
        return ((proc or PROC) / str(pid) / "comm").read_text(encoding="utf-8",
                                                              errors="replace").strip()
    except OSError:
        return f"pid {pid} (not visible from this namespace)"


def _guard(fn: Callable[[], Any], what: str) -> Any:
    """A query the binding does not have: NOT_SUPPORTED, naming the upgrade."""
    try:
        return fn()
    except AttributeError as e:
        return Unavailable(Reason.NOT_SUPPORTED, f"{what}: this nvidia-ml-py binding lacks the "
                           "query (older than the driver): pip install -U nvidia-ml-py",
                           detail=repr(e))


def _clock_mask(pynvml: Any, h: Any) -> int:
    """The clock-event mask; drivers before 535 (and bindings before 12.535) only have the
    query's older name."""
    event = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if event is not None:
        try:
            return int(event(h))
        except pynvml.NVMLError_FunctionNotFound:
            pass
    return int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h))


def _enabled(value: Any) -> str:
    return "Enabled" if value else "Disabled"


def _pick(values: Any, i: int, cast: Callable[[Any], Any]) -> Any:
    """Element `i` of a query's tuple, or the query's Unavailable for every element."""
    if isinstance(values, Unavailable):
        return values
    try:
        return cast(values[i])
    except (IndexError, TypeError, ValueError) as e:
        return Unavailable(Reason.ERROR, "NVML returned an unexpected shape", detail=repr(e))

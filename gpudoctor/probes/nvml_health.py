"""A GPU's health through NVML: memory errors, clock events, heat, power and the PCIe link.

The same facts `nvidia-smi -q` prints (`gpudoctor.reports.nvidia_smi_q` reads them from a
paste), read with the queries nvidia-smi itself makes, none of which needs root:

- ECC: `nvmlDeviceGetEccMode`, `nvmlDeviceGetTotalEccErrors` (volatile/aggregate ×
  corrected/uncorrected); retired pages (`nvmlDeviceGetRetiredPages` per cause,
  `nvmlDeviceGetRetiredPagesPendingStatus`; Kepler to Volta); remapped rows
  (`nvmlDeviceGetRemappedRows`; Ampere and later)
- clock-event reasons (`nvmlDeviceGetCurrentClocksEventReasons`, or the older
  `…ThrottleReasons` on a driver before 535), decoded to nvidia-smi's names
- temperature (`nvmlDeviceGetTemperatureV`; `nvmlDeviceGetTemperature`, which NVIDIA retires
  with CUDA 14, on a driver or binding without it) and its slowdown/shutdown thresholds, power
  draw and the enforced limit
- PCIe generation and width, current and maximum, and the replay counter
- the driver's recovery action (`nvmlDeviceGetFieldValues` with
  `NVML_FI_DEV_GET_GPU_RECOVERY_ACTION`, drivers from the 550 series), the NVSwitch fabric's
  registration state and status and its health (`nvmlDeviceGetGpuFabricInfoV` with the v3
  struct — health mask and summary —, else v2 — health mask —, else the retiring
  `nvmlDeviceGetGpuFabricInfo` — no health; state NOT_SUPPORTED: no NVSwitch), and the
  processes holding memory on the GPU (`nvmlDeviceGet{Compute,Graphics}RunningProcesses`, the
  _v3 queries; their _v2 forms on a driver without them, e.g. R470), named from /proc/PID/comm
  where this process can see them. gpudoctor's own processes (this one, the children it
  started — the torch probe's child runs CUDA while NVML is read — and their descendants) are
  left out: they are not "other processes" holding the GPU.

Each field degrades alone: `NotSupported` (ECC on a GeForce, remapped rows before Ampere) and
`FunctionNotFound` (a driver older than the query) → NOT_SUPPORTED, and so does the binding's
`NVMLLibraryMismatchError` (an unversioned query whose versioned form the driver lacks; not an
`NVMLError`); anything else → ERROR with NVML's text; the GPU itself stays a fact.

The process entries: nvidia-ml-py 12.535.77 and older 12.535 releases read them with a 32-byte
struct, drivers from 535.98 on (580 included) write 24-byte ones, so every entry after the
first is garbage; with such a binding the process list is ERROR, naming the upgrade
(`PROCESS_STRUCT_FIXED_IN`, the floor in pyproject.toml), never wrong pids.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from gpudoctor import childproc
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
# nvmlGpuFabricInfo_v2/v3 healthMask: (shift, width, {value: the problem it names}); a value
# not listed is fine (NOT_SUPPORTED, FALSE, NONE, CONNECTED)
FABRIC_HEALTH_BITS = (
    (0, 0x3, {1: "Degraded Bandwidth"}),
    (2, 0x3, {1: "Route Recovery In Progress"}),
    (4, 0x3, {1: "Route Unhealthy"}),
    (6, 0x3, {1: "Access Timeout Recovery In Progress"}),
    (8, 0xF, {2: "Incorrect Configuration: System GUID", 3: "Incorrect Configuration: "
              "Chassis Serial Number", 4: "Incorrect Configuration: No Partition",
              5: "Incorrect Configuration: Insufficient NVLinks", 6: "Incorrect Configuration: "
              "Incompatible GPU Firmware", 7: "Incorrect Configuration: Invalid Location",
              8: "Incorrect Configuration: GPU State Invalid"}),
    (14, 0x3, {2: "Fabric Manager Disconnected"}),
)
# nvmlGpuFabricInfo_v3 healthSummary (0 NOT_SUPPORTED)
FABRIC_SUMMARIES = {1: "Healthy", 2: "Unhealthy", 3: "Limited Capacity"}
ARGUMENT_VERSION_MISMATCH = 25  # NVML_ERROR_ARGUMENT_VERSION_MISMATCH: a struct too new
PROCESS_ENTRY_SIZE = 24  # nvmlProcessInfo_t as drivers write it (all but 535.43-535.86)
PROCESS_STRUCT_FIXED_IN = "12.535.108"  # the first nvidia-ml-py 12.535 reading 24 bytes
PROC = Path("/proc")

Optional = Callable[[Callable[[], Any], str], Any]


def library_mismatch(pynvml: Any) -> tuple[type[BaseException], ...]:
    """The binding's `NVMLLibraryMismatchError` (nvidia-ml-py 13), if it has one: raised by an
    unversioned query whose versioned form the driver lacks; an Exception, not an NVMLError."""
    mismatch = getattr(pynvml, "NVMLLibraryMismatchError", None)
    return (mismatch,) if isinstance(mismatch, type) and issubclass(mismatch, Exception) else ()


def decode_clock_events(mask: int) -> tuple[str, ...]:
    """The active reasons of an nvmlClocksEventReason mask, by nvidia-smi's names."""
    return tuple(name for bit, name in CLOCK_EVENT_BITS if mask & bit)


def read_health(pynvml: Any, h: Any, index: int, nvml_optional: Optional,
                driver_version: str = "") -> GpuHealth:
    """Every health fact of one GPU; `nvml_optional(fn, what)` turns an NVMLError into a fact,
    and a query this binding lacks (an nvidia-ml-py older than the driver) becomes one too.
    `driver_version` decides whether the binding reads process entries with the driver's
    struct size."""
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
        temperature=optional(lambda: _temperature(pynvml, h), f"{gpu} temperature"),
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
        fabric_health=_pick(fabric, 2, _same),
        fabric_health_summary=_pick(fabric, 3, _same),
        processes=optional(lambda: _processes(pynvml, h, gpu, driver_version),
                           f"{gpu} process list"),
    )


def _temperature(pynvml: Any, h: Any) -> int:
    """The GPU die's temperature (sensor 0): the versioned query first; the retiring
    unversioned one where the binding or the driver lacks it."""
    versioned = getattr(pynvml, "nvmlDeviceGetTemperatureV", None)
    if versioned is not None:
        try:
            return int(versioned(h, 0))
        except pynvml.NVMLError as e:
            if not _older_driver(e):
                raise
    return int(pynvml.nvmlDeviceGetTemperature(h, 0))


def _older_driver(e: BaseException) -> bool:
    """An NVMLError saying the driver lacks the query or the struct version."""
    return (type(e).__name__ == "NVMLError_FunctionNotFound"
            or getattr(e, "value", None) == ARGUMENT_VERSION_MISMATCH)


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


def _fabric_info(pynvml: Any, h: Any) -> Any:
    """The fabric struct: nvmlDeviceGetGpuFabricInfoV with v3 (health summary), then v2 (health
    mask) where the driver refuses v3; the retiring nvmlDeviceGetGpuFabricInfo (no health)
    where the binding or the driver has no versioned query."""
    versioned = getattr(pynvml, "nvmlDeviceGetGpuFabricInfoV", None)
    for name in ("c_nvmlGpuFabricInfo_v3_t", "c_nvmlGpuFabricInfo_v2_t"):
        struct = getattr(pynvml, name, None)
        if versioned is None or struct is None:
            continue
        info = struct()
        try:
            versioned(h, ctypes.byref(info))
            return info
        except pynvml.NVMLError as e:
            if type(e).__name__ == "NVMLError_FunctionNotFound":
                break
            if not _older_driver(e):
                raise
    info = pynvml.c_nvmlGpuFabricInfo_t()
    pynvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(info))
    return info


def decode_fabric_health(mask: int) -> tuple[str, ...]:
    """The problems a fabric health mask names (empty: healthy), by nvidia-smi's words."""
    found = []
    for shift, width, names in FABRIC_HEALTH_BITS:
        name = names.get((mask >> shift) & width)
        if name:
            found.append(name)
    return tuple(found)


def _fabric(pynvml: Any, h: Any, gpu: str) -> tuple[Any, ...] | Unavailable:
    """(state, status, health problems, health summary) of the GPU's NVSwitch fabric
    registration; NOT_SUPPORTED without one. The health facts are NOT_SUPPORTED where the
    driver (or binding) reports none."""
    info = _fabric_info(pynvml, h)
    state = FABRIC_STATES.get(int(info.state) & 0xFF)  # a char in nvml.h, a c_uint in pynvml
    if state is None:
        return Unavailable(Reason.NOT_SUPPORTED, f"{gpu} has no NVSwitch fabric (fabric state "
                           "N/A): Fabric Manager is not needed")
    code = int(info.status)
    fields = {name for name, *_ in getattr(info, "_fields_", ())}
    old = Unavailable(Reason.NOT_SUPPORTED, f"{gpu} fabric health: this driver's NVML (or "
                      "nvidia-ml-py) reports none (nvmlDeviceGetGpuFabricInfoV)")
    health = decode_fabric_health(int(info.healthMask)) if "healthMask" in fields else old
    summary: str | Unavailable = old
    if "healthSummary" in fields:
        summary = FABRIC_SUMMARIES.get(int(info.healthSummary) & 0xFF) or Unavailable(
            Reason.NOT_SUPPORTED, f"{gpu} fabric health summary: not reported by the driver")
    return state, "Success" if code == 0 else str(pynvml.NVMLError(code)), health, summary


def process_struct_mismatch(pynvml: Any, driver_version: str) -> str | None:
    """Why this binding misreads the driver's process entries, or None. Drivers write 24-byte
    nvmlProcessInfo_t entries, except 535.43-535.86, which wrote 32 (with the confidential-
    computing memory field nvidia-ml-py 12.535.77 declares)."""
    struct = getattr(pynvml, "c_nvmlProcessInfo_v3_t", None) or getattr(
        pynvml, "c_nvmlProcessInfo_t", None)
    if struct is None:
        return None
    size = ctypes.sizeof(struct)
    m = re.match(r"(\d+)\.(\d+)", driver_version)
    r535_early = m is not None and int(m.group(1)) == 535 and int(m.group(2)) < 98
    if size == PROCESS_ENTRY_SIZE or (size == 32 and r535_early):
        return None
    from gpudoctor.compat.wheels import package_line  # lazy: only a wrong binding says it

    upgrade = package_line(f"nvidia-ml-py>={PROCESS_STRUCT_FIXED_IN}", upgrade=True)
    return (f"this nvidia-ml-py reads process entries as {size} bytes, driver "
            f"{driver_version or '?'} writes {PROCESS_ENTRY_SIZE}: every entry after the first "
            f"would be a wrong pid: {upgrade}")


def own_pids(proc: Path | None = None, known: Collection[int] = ()) -> Callable[[int], bool]:
    """Whether a pid is gpudoctor's own: this process, a child it started (`childproc.live()`
    now or in `known`, taken before the query: a child that just exited), or a descendant of
    this process (its parent chain in /proc reaches this pid). In a container NVML gives the
    host's pids and /proc the container's: a host pid that happens to equal one of ours is
    taken for ours (and one of ours, under its host pid, is listed)."""
    me, ours = os.getpid(), set(known) | set(childproc.live())

    def is_own(pid: int) -> bool:
        seen = 0
        while pid > 1 and seen < 64:
            if pid == me or pid in ours:
                return True
            pid = _parent(pid, proc or PROC)
            seen += 1
        return False

    return is_own


def _parent(pid: int, proc: Path) -> int:
    """The parent pid from /proc/PID/stat (0 when it cannot be read)."""
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _running(pynvml: Any, kind: str, h: Any) -> list[Any]:
    """One kind of running processes: the _v3 query; its _v2 form on a driver without _v3
    (R470: the binding raises NVMLLibraryMismatchError, or FunctionNotFound when called
    versioned)."""
    name = "Compute" if kind == "C" else "Graphics"
    older_driver = (pynvml.NVMLError_FunctionNotFound, *library_mismatch(pynvml))
    try:
        return list(getattr(pynvml, f"nvmlDeviceGet{name}RunningProcesses")(h))
    except older_driver:
        older = getattr(pynvml, f"nvmlDeviceGet{name}RunningProcesses_v2", None)
        if older is None:
            raise
        return list(older(h))


def _processes(pynvml: Any, h: Any, gpu: str = "GPU",
               driver_version: str = "") -> tuple[GpuProcess, ...] | Unavailable:
    """Compute and graphics processes on the GPU, one entry per pid; gpudoctor's own left
    out."""
    why = process_struct_mismatch(pynvml, driver_version)
    if why:
        return Unavailable(Reason.ERROR, f"{gpu} process list: {why}")
    before = childproc.live()
    found: dict[int, GpuProcess] = {}
    listed = [(kind, p) for kind in ("C", "G") for p in _running(pynvml, kind, h)]
    is_own = own_pids(known=before)
    for kind, p in listed:
        pid = int(p.pid)
        if is_own(pid):
            continue
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
        from gpudoctor.compat.wheels import package_line  # lazy: only an old binding says it

        return Unavailable(Reason.NOT_SUPPORTED, f"{what}: this nvidia-ml-py binding lacks the "
                           "query (older than the driver): "
                           f"{package_line('nvidia-ml-py', upgrade=True)}", detail=repr(e))


def _same(value: Any) -> Any:
    return value


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

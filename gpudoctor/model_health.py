"""A GPU's health facts (`GpuHealth`, `GpuProcess`): a leaf of the model, imported by it.

Kept apart from `gpudoctor.model` to hold that module under its size limit; everything here is
re-exported there, so `from gpudoctor.model import GpuHealth` is the way to reach it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.model_base import NOT_RECORDED, Unavailable


@dataclass(frozen=True, slots=True)
class GpuProcess:
    """A process that holds memory on a GPU (`nvmlDeviceGet{Compute,Graphics}RunningProcesses`,
    or the Processes section of `nvidia-smi -q`)."""

    pid: int  # as the driver sees it: the host's pid, even inside a container
    # /proc/PID/comm (or nvidia-smi's process name); "pid N (not visible from this namespace)"
    # when this process cannot see it (a container, another user's process under hidepid)
    name: str
    used_memory: int | Unavailable  # bytes; NOT_SUPPORTED where the driver does not say
    kind: str = "C"  # "C" compute, "G" graphics, "C+G" both


@dataclass(frozen=True, slots=True)
class GpuHealth:
    """A GPU's memory-error and clock-event state, as `nvidia-smi -q` (or `-q -x`) shows it.

    A counter the GPU does not have is Unavailable(NOT_SUPPORTED) ("N/A": ECC on a GeForce,
    remapped rows before Ampere); one the output does not show is Unavailable(NOT_REPORTED).
    """

    ecc_mode: str | Unavailable  # "Enabled", "Disabled" (current mode)
    ecc_volatile_uncorrectable: int | Unavailable  # since the last driver load
    ecc_aggregate_uncorrectable: int | Unavailable  # over the GPU's life
    ecc_volatile_correctable: int | Unavailable
    ecc_aggregate_correctable: int | Unavailable
    retired_pages_single_bit: int | Unavailable  # pre-Ampere page retirement
    retired_pages_double_bit: int | Unavailable
    retired_pages_pending: bool | Unavailable  # a retirement waits for the next driver load
    remapped_rows_correctable: int | Unavailable  # Ampere and later row remapping
    remapped_rows_uncorrectable: int | Unavailable
    remapped_rows_pending: bool | Unavailable  # a remap waits for a GPU reset
    remapped_rows_failure: bool | Unavailable  # a remap failed: the GPU needs service
    clock_events: tuple[str, ...] | Unavailable  # active: "HW Slowdown", … (not "Idle")
    gpu_idle: bool | Unavailable = NOT_RECORDED  # the "GPU Idle" clock event is active
    ecc_mode_pending: str | Unavailable = NOT_RECORDED  # the mode after the next reboot
    temperature: int | Unavailable = NOT_RECORDED  # °C, the GPU die
    temperature_slowdown: int | Unavailable = NOT_RECORDED  # °C: the GPU slows its clocks
    temperature_shutdown: int | Unavailable = NOT_RECORDED  # °C: the GPU shuts down
    power_draw: float | Unavailable = NOT_RECORDED  # W
    power_limit: float | Unavailable = NOT_RECORDED  # W, the enforced limit
    pcie_gen: int | Unavailable = NOT_RECORDED  # the link's current PCIe generation
    pcie_gen_max: int | Unavailable = NOT_RECORDED  # the most the GPU and its slot both reach
    pcie_width: int | Unavailable = NOT_RECORDED  # current lanes (x16 = 16)
    pcie_width_max: int | Unavailable = NOT_RECORDED
    pcie_replays: int | Unavailable = NOT_RECORDED  # PCIe replays since the driver loaded
    # the driver's own verdict (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION; nvidia-smi -q "GPU Recovery
    # Action"): "None", "Reset", "Reboot", "Drain P2P", "Drain and Reset"; NOT_SUPPORTED before
    # driver 550-series
    recovery_action: str | Unavailable = NOT_RECORDED
    # NVSwitch fabric registration (nvmlDeviceGetGpuFabricInfo): "Not Started", "In Progress",
    # "Completed"; NOT_SUPPORTED on a GPU without NVSwitch (fabric state N/A)
    fabric_state: str | Unavailable = NOT_RECORDED
    fabric_status: str | Unavailable = NOT_RECORDED  # "Success", or NVML's error text
    # the fabric's health (nvmlDeviceGetGpuFabricInfoV's health mask, drivers from 550): the
    # problems it names ("Degraded Bandwidth", "Route Unhealthy", "Incorrect Configuration:
    # No Partition", …; () when healthy); NOT_SUPPORTED from an older driver or without NVSwitch
    fabric_health: tuple[str, ...] | Unavailable = NOT_RECORDED
    # the health summary (v3 struct): "Healthy", "Unhealthy", "Limited Capacity"
    fabric_health_summary: str | Unavailable = NOT_RECORDED
    processes: tuple[GpuProcess, ...] | Unavailable = NOT_RECORDED  # holding memory on it

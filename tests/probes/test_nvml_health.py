"""The NVML probe's health reads (gpudoctor.probes.nvml_health) through the real nvidia-ml-py
binding against the compiled fake libnvidia-ml.so.1, one test per branch: every field read,
NOT_SUPPORTED per query and per GPU, a failing query, an old driver without the newer query
name, and the FAKE_NVML_STATE file the recorded-state replays use.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpudoctor.model import GpuFacts, GpuHealth, GpuProcess, NvmlFacts, Reason
from gpudoctor.probes.nvml_health import decode_clock_events, process_name
from tests.probes.test_nvml import H100, RTX3090, RunNvml, run_probe, unavailable


@pytest.fixture
def nvml(fake_nvml: Path) -> RunNvml:
    return lambda **fake: run_probe(fake_nvml, **fake)


def healths(facts: object) -> list[GpuHealth]:
    assert isinstance(facts, NvmlFacts), facts
    out = []
    for g in facts.gpus:
        assert isinstance(g, GpuFacts), g
        assert isinstance(g.health, GpuHealth), g.health
        out.append(g.health)
    return out


@pytest.mark.slow
@pytest.mark.subprocess
def test_every_field_read(nvml: RunNvml) -> None:
    (h,) = healths(nvml(
        ecc_vol_unc="2", ecc_agg_unc="9", ecc_vol_corr="5", ecc_agg_corr="40", retired_sbe="3",
        retired_dbe="1", retired_pending="1", remap_corr="4", remap_unc="2", remap_pending="1",
        remap_failure="0", clock_events="0x4c", temp="81", temp_slowdown="85",
        temp_shutdown="90", power_mw="612345", power_limit_mw="700000", pcie_gen="3",
        pcie_gen_max="5", pcie_width="8", pcie_width_max="16", pcie_replays="77",
        ecc_pending="0"))
    assert h == GpuHealth(
        ecc_mode="Enabled", ecc_volatile_uncorrectable=2, ecc_aggregate_uncorrectable=9,
        ecc_volatile_correctable=5, ecc_aggregate_correctable=40, retired_pages_single_bit=3,
        retired_pages_double_bit=1, retired_pages_pending=True, remapped_rows_correctable=4,
        remapped_rows_uncorrectable=2, remapped_rows_pending=True, remapped_rows_failure=False,
        clock_events=("SW Power Cap", "HW Slowdown", "HW Thermal Slowdown"), gpu_idle=False,
        ecc_mode_pending="Disabled", temperature=81, temperature_slowdown=85,
        temperature_shutdown=90, power_draw=612.345, power_limit=700.0, pcie_gen=3,
        pcie_gen_max=5, pcie_width=8, pcie_width_max=16, pcie_replays=77,
        recovery_action="None", fabric_state=h.fabric_state, fabric_status=h.fabric_status,
        fabric_health=h.fabric_health, fabric_health_summary=h.fabric_health_summary,
        processes=())
    unavailable(h.fabric_state, Reason.NOT_SUPPORTED)  # no NVSwitch by default


@pytest.mark.slow
@pytest.mark.subprocess
def test_healthy_defaults(nvml: RunNvml) -> None:
    (h,) = healths(nvml())
    assert (h.ecc_mode, h.ecc_volatile_uncorrectable, h.remapped_rows_pending) == (
        "Enabled", 0, False)
    assert (h.clock_events, h.gpu_idle) == ((), True)


@pytest.mark.slow
@pytest.mark.subprocess
def test_geforce_has_no_ecc_or_remapping(nvml: RunNvml) -> None:
    """ECC and row remapping are NOT_SUPPORTED on a GeForce; the rest is still read."""
    (h,) = healths(nvml(gpus=RTX3090, ecc_mode="NA", remap_corr="NA", retired_sbe="NA",
                        retired_dbe="NA", retired_pending="NA"))
    for value in (h.ecc_mode, h.ecc_mode_pending, h.ecc_volatile_uncorrectable,
                  h.ecc_aggregate_correctable, h.remapped_rows_correctable,
                  h.remapped_rows_failure, h.retired_pages_single_bit, h.retired_pages_pending):
        u = unavailable(value, Reason.NOT_SUPPORTED)
        assert u.detail == "NVMLError_NotSupported: Not Supported"
    assert unavailable(h.ecc_mode, Reason.NOT_SUPPORTED).message == (
        "GPU 0 ECC mode is not supported by this GPU or driver")
    assert (h.temperature, h.pcie_width) == (35, 16)


@pytest.mark.slow
@pytest.mark.subprocess
def test_per_gpu_values_and_isolation(nvml: RunNvml) -> None:
    """FAKE_NVML_<KEY>_<index> sets one GPU; a lost GPU leaves the others' health read."""
    facts = nvml(gpus=f"{H100};{H100};{H100}", remap_pending_2="1", temp_0="NA", lost_gpu="1")
    assert isinstance(facts, NvmlFacts)
    first, lost, third = facts.gpus
    unavailable(lost, Reason.ERROR)
    assert isinstance(first, GpuFacts) and isinstance(first.health, GpuHealth)
    assert isinstance(third, GpuFacts) and isinstance(third.health, GpuHealth)
    unavailable(first.health.temperature, Reason.NOT_SUPPORTED)
    assert (first.health.remapped_rows_pending, third.health.remapped_rows_pending) == (False, True)


@pytest.mark.slow
@pytest.mark.subprocess
def test_one_failing_query_is_one_unavailable_field(nvml: RunNvml) -> None:
    (h,) = healths(nvml(fail="nvmlDeviceGetRemappedRows=999,nvmlDeviceGetPowerUsage=4"))
    u = unavailable(h.remapped_rows_pending, Reason.ERROR)
    assert u.message == "GPU 0 remapped rows: NVML said Unknown Error"
    assert h.remapped_rows_failure == u  # one query, four fields
    unavailable(h.power_draw, Reason.PERMISSION_DENIED)
    assert h.power_limit == 700.0


@pytest.mark.slow
@pytest.mark.subprocess
def test_old_driver_falls_back_to_throttle_reasons(fake_nvml_old: Path) -> None:
    """Before driver 535 the query is nvmlDeviceGetCurrentClocksThrottleReasons."""
    (h,) = healths(run_probe(fake_nvml_old, clock_events="0x21"))
    assert (h.clock_events, h.gpu_idle) == (("SW Thermal Slowdown",), True)


@pytest.mark.slow
@pytest.mark.subprocess
def test_state_file(nvml: RunNvml, tmp_path: Path) -> None:
    """FAKE_NVML_STATE: NAME=value lines become FAKE_NVML_NAME; the environment wins."""
    state = tmp_path / "state"
    state.write_text("# a recorded state\nDRIVER=535.161.08\nGPUS=" + H100 + ";" + H100 +
                     "\nCLOCK_EVENTS_1=0x88\nPERSISTENCE_1=0\nTEMP=50\n\nnot a line\n")
    facts = nvml(state=str(state), temp="60")
    assert isinstance(facts, NvmlFacts)
    assert facts.driver_version == "535.161.08"
    first, second = healths(facts)
    assert (first.clock_events, second.clock_events) == ((), ("HW Slowdown",
                                                              "HW Power Brake Slowdown"))
    assert (first.temperature, second.temperature) == (60, 60)
    assert isinstance(facts.gpus[1], GpuFacts) and facts.gpus[1].persistence_mode is False


@pytest.mark.slow
@pytest.mark.subprocess
def test_missing_state_file_is_ignored(nvml: RunNvml, tmp_path: Path) -> None:
    facts = nvml(state=str(tmp_path / "absent"))
    assert isinstance(facts, NvmlFacts) and len(facts.gpus) == 1


def test_decode_clock_events() -> None:
    assert decode_clock_events(0x0) == ()
    assert decode_clock_events(0x1) == ()  # GPU Idle is kept apart
    assert decode_clock_events(0x1FE) == (
        "Applications Clocks Setting", "SW Power Cap", "HW Slowdown", "Sync Boost",
        "SW Thermal Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown",
        "Display Clock Setting")


@pytest.mark.slow
@pytest.mark.subprocess
def test_compute_mode(nvml: RunNvml) -> None:
    facts = nvml(gpus=f"{H100};{H100};{H100}", compute_mode_1="2", compute_mode_2="NA")
    assert isinstance(facts, NvmlFacts)
    modes = [g.compute_mode for g in facts.gpus if isinstance(g, GpuFacts)]
    assert modes[:2] == ["Default", "Prohibited"]
    unavailable(modes[2], Reason.NOT_SUPPORTED)


def test_pci_driver_binding_fact(tmp_path: Path) -> None:
    """The host probe names the kernel driver bound to each NVIDIA GPU (/sys/bus/pci)."""
    from gpudoctor.probes.host import probe_host
    from gpudoctor.probes.interface import Deps

    devices = tmp_path / "sys" / "bus" / "pci" / "devices"
    for address, driver in (("0000:01:00.0", "nouveau"), ("0000:02:00.0", None)):
        d = devices / address
        d.mkdir(parents=True)
        for name, value in (("vendor", "0x10de"), ("class", "0x030000"), ("device", "0x2684")):
            (d / name).write_text(value + "\n")
        if driver:
            target = tmp_path / "sys" / "bus" / "pci" / "drivers" / driver
            target.mkdir(parents=True)
            (d / "driver").symlink_to(target)
    facts = probe_host(Deps(root=tmp_path, environ={}))
    assert facts.pci_gpu_drivers == (("0000:01:00.0", "nouveau"), ("0000:02:00.0", ""))


def test_binding_older_than_the_driver() -> None:
    """A binding without a query (nvidia-ml-py before 11.450 has no nvmlDeviceGetRemappedRows,
    before 12.535 no …ClocksEventReasons): that field is NOT_SUPPORTED naming the upgrade, the
    others are read, and the clock events come through the older name. The stand-in binding
    is what an old nvidia-ml-py module exposes; the probe reads nothing else from it."""
    from types import SimpleNamespace

    from gpudoctor.probes.nvml_health import read_health

    class NVMLError(Exception):
        pass

    class NVMLError_FunctionNotFound(NVMLError):
        pass

    old = SimpleNamespace(
        NVMLError=NVMLError, NVMLError_FunctionNotFound=NVMLError_FunctionNotFound,
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x8,
        nvmlDeviceGetTemperature=lambda h, sensor: 71)
    h = read_health(old, object(), 3, lambda fn, what: fn())
    assert (h.clock_events, h.gpu_idle, h.temperature) == (("HW Slowdown",), False, 71)
    u = unavailable(h.remapped_rows_pending, Reason.NOT_SUPPORTED)
    assert u.message == ("GPU 3 remapped rows: this nvidia-ml-py binding lacks the query (older "
                         "than the driver): pip install -U nvidia-ml-py")
    assert "nvmlDeviceGetRemappedRows" in (u.detail or "")
    unavailable(h.pcie_replays, Reason.NOT_SUPPORTED)


@pytest.mark.gpu
def test_real_gpu_health() -> None:
    facts = run_probe(None)
    assert isinstance(facts, NvmlFacts), facts
    for h in healths(facts):
        assert isinstance(h.temperature, int) and 0 < h.temperature < 120
        assert isinstance(h.pcie_width, int) or h.pcie_width.reason is Reason.NOT_SUPPORTED
        assert isinstance(h.clock_events, tuple)


# ------------------------------------------------------------- recovery, fabric, processes


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("code", "name"), [
    ("0", "None"), ("1", "Reset"), ("2", "Reboot"), ("3", "Drain P2P"), ("4", "Drain and Reset"),
    ("9", "unknown action 9")])
def test_recovery_action(nvml: RunNvml, code: str, name: str) -> None:
    """nvmlDeviceGetFieldValues(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION), decoded to -q's names."""
    (h,) = healths(nvml(recovery_action=code))
    assert h.recovery_action == name


@pytest.mark.slow
@pytest.mark.subprocess
def test_recovery_action_not_supported(nvml: RunNvml) -> None:
    """A driver without the field answers NOT_SUPPORTED in the field's own return code."""
    (h,) = healths(nvml(recovery_action="NA"))
    u = unavailable(h.recovery_action, Reason.NOT_SUPPORTED)
    assert u.message == "GPU 0 recovery action is not supported by this GPU or driver"
    (h,) = healths(nvml(fail="nvmlDeviceGetFieldValues=999"))
    unavailable(h.recovery_action, Reason.ERROR)


@pytest.mark.slow
@pytest.mark.subprocess
def test_fabric_states(nvml: RunNvml) -> None:
    facts = nvml(gpus=f"{H100};{H100};{H100};{H100}", fabric_state="3", fabric_state_1="1",
                 fabric_status_2="999", fabric_state_3="NA")
    hs = healths(facts)
    assert [(h.fabric_state, h.fabric_status) for h in hs[:3]] == [
        ("Completed", "Success"), ("Not Started", "Success"), ("Completed", "Unknown Error")]
    unavailable(hs[3].fabric_state, Reason.NOT_SUPPORTED)
    (h,) = healths(nvml())  # state 0: no NVSwitch
    assert unavailable(h.fabric_state, Reason.NOT_SUPPORTED).message.startswith(
        "GPU 0 has no NVSwitch fabric")


@pytest.mark.slow
@pytest.mark.subprocess
def test_processes(nvml: RunNvml) -> None:
    """Compute and graphics processes merge by pid; names come from /proc/PID/comm (a real
    child here), and a pid this process cannot see says so."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        gone = 2 ** 22 + 7  # above the kernel's pid_max: never a live process
        (h,) = healths(nvml(procs=f"{child.pid}:{5 << 30}:C,{gone}:NA:G,{child.pid}:1:G"))
    finally:
        child.kill()
        child.wait()
    assert h.processes[0] == GpuProcess(child.pid, "sleep", 5 << 30, "C+G")  # type: ignore[index]
    other = h.processes[1]  # type: ignore[index]
    assert (other.pid, other.name, other.kind) == (
        gone, f"pid {gone} (not visible from this namespace)", "G")
    unavailable(other.used_memory, Reason.NOT_SUPPORTED)


@pytest.mark.slow
@pytest.mark.subprocess
def test_processes_none_and_not_supported(nvml: RunNvml) -> None:
    (h,) = healths(nvml())
    assert h.processes == ()
    (h,) = healths(nvml(procs="NA"))
    unavailable(h.processes, Reason.NOT_SUPPORTED)


def test_process_name(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "comm").write_text("python3\n")
    assert process_name(42, tmp_path) == "python3"
    assert process_name(43, tmp_path) == "pid 43 (not visible from this namespace)"
    assert process_name(os.getpid()) == Path(f"/proc/{os.getpid()}/comm").read_text().strip()

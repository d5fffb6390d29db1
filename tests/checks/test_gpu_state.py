"""GD111-GD113 (recovery action, NVSwitch fabric, processes holding GPU memory), GD110 with a
process on an exclusive GPU, and GD101 on an NVML timeout.

Hand-built facts for each branch; real `nvidia-smi -q` / `-q -x` dumps read by gpudoctor's
readers; and a recorded state replayed through the real NVML probe and the compiled fake
libnvidia-ml in a `python -m gpudoctor check` subprocess.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import runner

from gpudoctor.checks import driver, gpu_state, health
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    GpuProcess,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import NO_LIBCUDA, env, gpu, nvml
from tests.checks.test_health import NA, REPO_ROOT, healthy, machine, run

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

STATES = REPO_ROOT / "tests" / "fixtures" / "gpu_states"
GIB = 1 << 30


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def dump(name: str) -> Any:
    return read_reports([(name, (STATES / name).read_text(encoding="utf-8"))])


# ---------------------------------------------------------------------------- GD111


@pytest.mark.parametrize(("action", "status", "fix"), [
    ("None", Status.PASS, None),
    ("Reset", Status.FAIL, "sudo nvidia-smi -r -i 0"),
    ("Reboot", Status.FAIL, "reboot the node"),
    ("Drain P2P", Status.FAIL, "peer-to-peer"),
    ("Drain and Reset", Status.FAIL, "drain the node"),
    ("Something New", Status.FAIL, "Xid 154"),
])
def test_recovery_action(tables: Tables, action: str, status: Status, fix: str | None) -> None:
    f = run(gpu_state.check_recovery_action, machine(healthy(recovery_action=action)), tables)
    assert f.status is status, f
    if fix:
        assert f"'{action}'" in f.message and "GPU 0" in f.message
        assert fix in (f.fix or ""), f.fix


def test_recovery_action_names_the_gpu(tables: Tables) -> None:
    e = machine(healthy(recovery_action="None"), healthy(recovery_action="Reset"))
    f = run(gpu_state.check_recovery_action, e, tables)
    assert f.status is Status.FAIL and f.message.startswith("GPU 1 ")
    assert "nvidia-smi -r -i 1" in (f.fix or "")


def test_recovery_action_not_reported_skips(tables: Tables) -> None:
    old = Unavailable(Reason.NOT_SUPPORTED, "GPU 0 recovery action is not supported")
    f = run(gpu_state.check_recovery_action, machine(healthy(recovery_action=old)), tables)
    assert f.status is Status.SKIP and "550" in f.message


# ---------------------------------------------------------------------------- GD112


@pytest.mark.parametrize(("state", "status_text", "status", "words"), [
    ("Completed", "Success", Status.PASS, "registered"),
    ("In Progress", "N/A", Status.FAIL, "'In Progress'"),
    ("Not Started", "Success", Status.FAIL, "'Not Started'"),
    ("Completed", "Unknown Error", Status.FAIL, "failed: Unknown Error"),
])
def test_fabric(tables: Tables, state: str, status_text: str, status: Status,
                words: str) -> None:
    e = machine(healthy(fabric_state=state, fabric_status=status_text))
    f = run(gpu_state.check_fabric, e, tables)
    assert f.status is status, f
    assert words in f.message
    if status is Status.FAIL:
        assert "systemctl enable --now nvidia-fabricmanager" in (f.fix or "")
        assert "580.65.06" in (f.fix or "")  # the version Fabric Manager must match


@pytest.mark.parametrize(("health", "summary", "status", "words"), [
    ((), "Healthy", Status.PASS, "registered"),
    (("Route Unhealthy",), "Unhealthy", Status.FAIL, "unhealthy (Route Unhealthy)"),
    ((), "Limited Capacity", Status.WARN, "degraded: limited capacity"),
    (("Degraded Bandwidth",), NA, Status.WARN, "degraded: Degraded Bandwidth"),
    (NA, NA, Status.PASS, "registered"),  # a driver without the health fields
])
def test_fabric_health(tables: Tables, health: Any, summary: Any, status: Status,
                       words: str) -> None:
    """Registered (Completed, Success), the fabric's own health decides (nvmlDeviceGet
    GpuFabricInfoV: health mask and summary)."""
    e = machine(healthy(fabric_state="Completed", fabric_status="Success",
                        fabric_health=health, fabric_health_summary=summary))
    f = run(gpu_state.check_fabric, e, tables)
    assert f.status is status, f
    assert words in f.message
    if status is not Status.PASS:
        assert "nvidia-smi nvlink -s" in (f.fix or "")


def test_fabric_without_nvswitch_skips(tables: Tables) -> None:
    e = machine(healthy(fabric_state=NA, fabric_status=NA))
    f = run(gpu_state.check_fabric, e, tables)
    assert f.status is Status.SKIP and "no NVSwitch" in f.message


@pytest.mark.slow
def test_fabric_from_real_dumps(tables: Tables) -> None:
    """An 8x H100 HGX prints "Fabric State : Completed / Status : Success"; RTX 4090s N/A."""
    f = run(gpu_state.check_fabric, dump("throttle-8x-h100-hw-power-brake.txt"), tables)
    assert f.status is Status.PASS and f.message.startswith("8 GPU(s)"), f
    assert run(gpu_state.check_fabric, dump("healthy-8x-rtx4090-idle.txt"),
               tables).status is Status.SKIP


# ---------------------------------------------------------------------------- GD113


def procs(*entries: tuple[int, int | Unavailable, str]) -> tuple[GpuProcess, ...]:
    return tuple(GpuProcess(pid, f"job{pid}", used, kind) for pid, used, kind in entries)


def test_processes_none(tables: Tables) -> None:
    f = run(gpu_state.check_processes, machine(healthy(processes=()), healthy(processes=())),
            tables)
    assert f.status is Status.PASS and "2 GPU(s)" in f.message


def test_processes_listed_as_a_note(tables: Tables) -> None:
    e = machine(healthy(processes=procs((4242, 2 * GIB, "C"), (77, NA, "G"))))
    f = run(gpu_state.check_processes, e, tables)
    assert f.status is Status.WARN and f.severity is Severity.INFO, f
    assert "2 process(es) hold 2.0 GiB" in f.message
    assert "pid 4242 job4242 (2.0 GiB)" in f.message and "memory n/a" in f.message


def test_processes_holding_most_of_a_gpu(tables: Tables) -> None:
    """An H100 80GB with 60 GiB taken: WARN, naming the holder and a free GPU."""
    e = machine(healthy(processes=procs((4242, 60 * GIB, "C"))), healthy(processes=()))
    f = run(gpu_state.check_processes, e, tables)
    assert f.status is Status.WARN and f.severity is not Severity.INFO, f  # the check's own
    assert f.message.startswith("GPU 0 ") and "hold 60.0 GiB of its" in f.message
    assert "training may run out of memory" in f.message and "pid 4242" in f.message
    assert "CUDA_VISIBLE_DEVICES=1" in (f.fix or "")


def test_processes_not_listed_skips(tables: Tables) -> None:
    none = Unavailable(Reason.NOT_SUPPORTED, "GPU 0 process list is not supported")
    f = run(gpu_state.check_processes, machine(healthy(processes=none)), tables)
    assert f.status is Status.SKIP and "process list is not supported" in f.message


def test_processes_from_a_real_dump(tables: Tables) -> None:
    """8 RTX 4090s, each with one python process; GPU 1's holds 21.4 GiB of 24."""
    f = run(gpu_state.check_processes, dump("healthy-8x-rtx4090-idle.txt"), tables)
    assert f.status is Status.WARN and f.severity is not Severity.INFO, f  # the check's own
    assert "GPU 1 (NVIDIA GeForce RTX 4090): other processes hold 21.4 GiB" in f.message
    assert "/opt/conda/bin/python" in f.message


# ---------------------------------------------------------------------------- GD110, GD101


@pytest.mark.parametrize(("kind", "status"), [("C", Status.FAIL), ("G", Status.WARN)])
def test_exclusive_gpu_already_held(tables: Tables, kind: str, status: Status) -> None:
    g = dataclasses.replace(gpu("H100"), compute_mode="Exclusive_Process",
                            health=healthy(processes=procs((4242, GIB, kind))))
    f = run(health.check_compute_mode, env(nvml=nvml("580.65.06", 13000, g)), tables)
    assert f.status is status, f
    if status is Status.FAIL:
        assert "accepts one process, and pid 4242 holds it" in f.message
        assert "pid 4242 (job4242)" in (f.fix or "") and "-c DEFAULT" in (f.fix or "")


def test_exclusive_gpu_held_behind_a_graphics_process(tables: Tables) -> None:
    """A display server listed first does not hide the CUDA process behind it."""
    g = dataclasses.replace(gpu("H100"), compute_mode="Exclusive_Process", health=healthy(
        processes=procs((725, GIB, "G"), (4242, GIB, "C"))))
    f = run(health.check_compute_mode, env(nvml=nvml("580.65.06", 13000, g)), tables)
    assert f.status is Status.FAIL and "pid 4242 holds it" in f.message, f


def test_nvml_timeout_is_a_driver_not_responding(tables: Tables) -> None:
    timeout = Unavailable(Reason.TIMEOUT, "NVML did not answer within 30 s: the driver is not "
                          "responding", detail="nvmlInit or a query blocked")
    for libcuda in (NO_LIBCUDA, None):  # libcuda's version query answers even then
        e = env(nvml=timeout, **({"libcuda": libcuda} if libcuda else {}))
        f = run(driver.check_driver_present, e, tables)
        assert f.status is Status.FAIL, f
        assert f.message.startswith("the NVIDIA driver is not responding (NVML did not answer "
                                    "within 30 s)")
        assert "install" not in (f.fix or "") and "dmesg" in (f.fix or "")
        assert "reboot" in (f.fix or "")


# ---------------------------------------------------------------------------- replay


@pytest.mark.slow
def test_replay_through_the_real_probe(fake_nvml: Path, tmp_path: Path) -> None:
    """The real probe reads each fact through nvidia-ml-py from the fake; the CLI exits 1."""
    state = tmp_path / "state"
    h100 = "NVIDIA H100 80GB HBM3:9.0:85899345920"
    state.write_text("\n".join([
        "DRIVER=580.65.06", f"GPUS={h100};{h100};{h100}", "CUDA=13000",
        "RECOVERY_ACTION_1=1", "FABRIC_STATE=3", "FABRIC_STATE_2=1", "FABRIC_SUMMARY_0=2",
        f"PROCS_0=4194311:{70 * GIB}:C", "COMPUTE_MODE_0=3"]) + "\n")
    environ = {"LD_LIBRARY_PATH": str(fake_nvml), "FAKE_NVML_STATE": str(state)}
    result = runner.gpudoctor("check", "--no-torch", "--format", "json", "--only",
                              "GD110,GD111,GD112,GD113", env=environ, timeout=120)
    assert result.returncode == 1, result.stderr
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert {i: f["status"] for i, f in findings.items()} == {
        "GD110": "fail", "GD111": "fail", "GD112": "fail", "GD113": "warn"}
    assert "pid 4194311 holds it" in findings["GD110"]["message"]
    assert "GPU 1" in findings["GD111"]["message"] and "'Reset'" in findings["GD111"]["message"]
    assert "GPU 2" in findings["GD112"]["message"] and "'Not Started'" in findings["GD112"][
        "message"]
    assert "GPU 0" in findings["GD112"]["message"] and "unhealthy" in findings["GD112"][
        "message"]  # the health summary, read through nvmlDeviceGetGpuFabricInfoV
    assert "pid 4194311 (not visible from this namespace)" in findings["GD113"]["message"]


# ---------------------------------------------------------------------------- the -q readers


def test_readers_processes_and_recovery_action(tables: Tables) -> None:
    """-q -x: a process_info per process; a dump before the recovery action lacks it."""
    e = dump("pcie-a10g-x8-of-x16.xml")
    (h,) = [g.health for g in e.nvml.gpus]
    assert h.processes == (GpuProcess(725, "/usr/lib/xorg/Xorg", 22 << 20, "G"),)
    assert h.recovery_action.reason is Reason.NOT_REPORTED


@pytest.mark.parametrize(("file", "anchor", "line"), [
    ("healthy-a100-sxm4-mig.xml", "<uuid>", "<gpu_recovery_action>Reset</gpu_recovery_action>"),
    ("throttle-8x-h100-hw-power-brake.txt", "    GPU UUID",
     "    GPU Recovery Action                   : Reset"),
])
def test_readers_recovery_action(tables: Tables, file: str, anchor: str, line: str) -> None:
    """The field as recent drivers print it, added to a real dump before its UUID line."""
    text = "".join(f"{line}\n{row}" if row.lstrip().startswith(anchor.strip()) else row
                   for row in (STATES / file).read_text(encoding="utf-8").splitlines(True))
    e = read_reports([(file, text)])
    assert {g.health.recovery_action for g in e.nvml.gpus} == {"Reset"}
    f = run(gpu_state.check_recovery_action, e, tables)
    assert f.status is Status.FAIL and "nvidia-smi -r -i 0" in (f.fix or "")


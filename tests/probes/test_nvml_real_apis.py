"""The NVML probe against what real drivers and real nvidia-ml-py releases do (issue 17).

Each test runs the real probe through the real nvidia-ml-py binding (13.615 in the venv)
against the compiled fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c), scripted to behave as a
given driver does:

- R470 (and any driver without the `_v3` process queries): nvidia-ml-py 13 raises
  `NVMLLibraryMismatchError`, which is not an `NVMLError`;
- drivers from 535.98 on write 24-byte process entries, which nvidia-ml-py 12.535.77 read as 32;
- a MIG-enabled GPU read by a non-root user refuses the memory query (NoPermission);
- the versioned temperature and fabric queries that replace the ones NVIDIA retires with
  CUDA 14, and the fabric health they carry;
- gpudoctor's own CUDA processes (the torch probe's child) among the GPU's processes;
- the real-hardware tests finding libnvidia-ml.so.1 through LD_LIBRARY_PATH.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.model import GpuFacts, GpuHealth, NvmlFacts, Reason
from gpudoctor.probes.nvml import unavailable_from_nvml
from gpudoctor.probes.nvml_health import (
    PROCESS_STRUCT_FIXED_IN,
    decode_fabric_health,
    own_pids,
)
from tests.probes.test_nvml import H100, RunNvml, run_probe, unavailable

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def nvml(fake_nvml: Path) -> RunNvml:
    return lambda **fake: run_probe(fake_nvml, **fake)


def gpu0(facts: object) -> tuple[GpuFacts, GpuHealth]:
    assert isinstance(facts, NvmlFacts), facts
    g = facts.gpus[0]
    assert isinstance(g, GpuFacts), g
    assert isinstance(g.health, GpuHealth), g.health
    return g, g.health


# ------------------------------------------------------------- NVMLLibraryMismatchError (3)


def test_library_mismatch_is_not_an_nvml_error() -> None:
    """The binding's own class hierarchy: what the per-field guards must catch besides
    NVMLError."""
    import pynvml

    assert not issubclass(pynvml.NVMLLibraryMismatchError, pynvml.NVMLError)
    u = unavailable_from_nvml(pynvml.NVMLLibraryMismatchError("Unversioned function called"),
                              "GPU 0 process list")
    assert u.reason is Reason.NOT_SUPPORTED
    assert u.message.startswith("GPU 0 process list is not supported by this driver")
    assert u.detail == "NVMLLibraryMismatchError: Unversioned function called"


@pytest.mark.slow
@pytest.mark.subprocess
def test_driver_without_v3_process_queries_keeps_every_fact(nvml: RunNvml) -> None:
    """FUNCTION_NOT_FOUND from the _v3 queries (R470): nvidia-ml-py 13 raises
    NVMLLibraryMismatchError; before the fix it escaped every guard and the whole NVML fact
    was lost. Now the _v2 queries read the processes."""
    facts = nvml(procs="4242:1048576:C,4343:NA:G",
                 fail="nvmlDeviceGetComputeRunningProcesses_v3=13,"
                      "nvmlDeviceGetGraphicsRunningProcesses_v3=13")
    g, h = gpu0(facts)
    assert g.name == "NVIDIA H100 80GB HBM3"
    assert isinstance(h.processes, tuple)
    assert [(p.pid, p.kind) for p in h.processes] == [(4242, "C"), (4343, "G")]
    assert h.processes[0].used_memory == 1048576


@pytest.mark.slow
@pytest.mark.subprocess
def test_no_process_query_at_all_is_one_unavailable_field(nvml: RunNvml) -> None:
    facts = nvml(procs="4242:1:C", fail="nvmlDeviceGetComputeRunningProcesses_v3=13,"
                                         "nvmlDeviceGetComputeRunningProcesses_v2=13")
    g, h = gpu0(facts)
    u = unavailable(h.processes, Reason.NOT_SUPPORTED)
    assert u.message == "GPU 0 process list is not supported by this GPU or driver"
    assert h.temperature == 35 and g.mig_mode is False  # the rest is read


@pytest.mark.slow
@pytest.mark.subprocess
def test_old_driver_library(fake_nvml_old: Path) -> None:
    """A library without the _v3 process queries, nvmlDeviceGetTemperatureV and
    nvmlDeviceGetGpuFabricInfoV: the older forms answer."""
    facts = run_probe(fake_nvml_old, procs="77:2048:C", temp="44", fabric_state="3")
    _, h = gpu0(facts)
    assert isinstance(h.processes, tuple) and [p.pid for p in h.processes] == [77]
    assert h.temperature == 44
    assert (h.fabric_state, h.fabric_status) == ("Completed", "Success")
    u = unavailable(h.fabric_health, Reason.NOT_SUPPORTED)
    assert "reports none" in u.message


# ------------------------------------------------------------- process struct size (4)

# nvidia-ml-py 12.535.77's c_nvmlProcessInfo_t: 32 bytes (with usedGpuCcProtectedMemory)
OLD_STRUCT = """
import ctypes, pynvml
class Old(pynvml._PrintableStructure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint),
                ("usedGpuCcProtectedMemory", ctypes.c_ulonglong)]
pynvml.c_nvmlProcessInfo_v3_t = Old
"""


@pytest.mark.subprocess
def test_a_32_byte_binding_misreads_the_drivers_entries(fake_nvml: Path) -> None:
    """What the floor guards against: the binding itself, reading the 24-byte entries drivers
    from 535.98 on write with 12.535.77's 32-byte struct, gets a wrong second pid."""
    code = OLD_STRUCT + """
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
print([p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)])
"""
    env = {"LD_LIBRARY_PATH": str(fake_nvml), "FAKE_NVML_PROCS": "1111:1:C,2222:2:C,3333:3:C",
           "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    pids = json.loads(r.stdout)
    assert pids[0] == 1111 and pids[1:] != [2222, 3333]


@pytest.mark.slow
@pytest.mark.subprocess
def test_probe_refuses_wrong_pids_from_a_32_byte_binding(fake_nvml: Path) -> None:
    facts = run_probe(fake_nvml, prelude=OLD_STRUCT, driver="580.65.06",
                      procs="1111:1:C,2222:2:C,3333:3:C")
    _, h = gpu0(facts)
    u = unavailable(h.processes, Reason.ERROR)
    assert "reads process entries as 32 bytes, driver 580.65.06 writes 24" in u.message
    assert f"nvidia-ml-py>={PROCESS_STRUCT_FIXED_IN}" in u.message
    # the 535 drivers before 535.98 wrote 32-byte entries: that binding reads them right
    facts = run_probe(fake_nvml, prelude=OLD_STRUCT, driver="535.54.03", procs="")
    assert gpu0(facts)[1].processes == ()


def test_pyproject_floor_reads_24_byte_entries() -> None:
    text = (REPO_ROOT / "pyproject.toml").read_text()
    m = re.search(r'"nvidia-ml-py>=([\d.]+)"', text)
    assert m is not None
    floor = tuple(int(x) for x in m.group(1).split("."))
    assert floor >= tuple(int(x) for x in PROCESS_STRUCT_FIXED_IN.split("."))


# ------------------------------------------------------------- MIG memory refused (5)


@pytest.mark.slow
@pytest.mark.subprocess
def test_memory_refused_on_a_mig_gpu_keeps_the_gpu(nvml: RunNvml) -> None:
    """A MIG-enabled GPU read by a non-root user: nvmlDeviceGetMemoryInfo answers
    NoPermission. The GPU stays a fact (before: "no permission to talk to the driver" for the
    whole GPU), so GD507 still sees its MIG mode."""
    from gpudoctor.checks.container import check_mig_visible
    from gpudoctor.compat import load_tables
    from gpudoctor.model import Status
    from tests.smoke_kit import base_env

    facts = nvml(gpus=f"{H100};{H100}", mig_gpus="1", fail="nvmlDeviceGetMemoryInfo=4")
    assert isinstance(facts, NvmlFacts)
    mig = facts.gpus[1]
    assert isinstance(mig, GpuFacts), mig
    assert mig.mig_mode is True
    u = unavailable(mig.memory_total, Reason.PERMISSION_DENIED)
    assert mig.memory_free == u
    assert isinstance(mig.health, GpuHealth)
    env = dataclasses.replace(base_env(), nvml=facts)
    f = check_mig_visible.run(env, load_tables())
    assert f.status is Status.WARN and "MIG mode is on for GPU 1" in f.message


# ------------------------------------------------------------- retiring queries, fabric health


@pytest.mark.slow
@pytest.mark.subprocess
def test_temperature_through_the_versioned_query(nvml: RunNvml) -> None:
    """nvmlDeviceGetTemperature is retired with CUDA 14: a driver without it still gives the
    temperature through nvmlDeviceGetTemperatureV."""
    _, h = gpu0(nvml(temp="66", fail="nvmlDeviceGetTemperature=13"))
    assert h.temperature == 66


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("extra", "summary"), [
    ({}, "Limited Capacity"),
    ({"fabric_version": "2"}, None),  # a driver before the v3 struct: mask only
])
def test_fabric_through_the_versioned_query(nvml: RunNvml, extra: dict[str, str],
                                            summary: str | None) -> None:
    mask = (1 << 0) | (2 << 2) | (1 << 4) | (4 << 8) | (1 << 14)  # degraded, unhealthy route,
    facts = nvml(fabric_state="3", fabric_health_mask=str(mask),  # no partition
                 fabric_summary="3", fail="nvmlDeviceGetGpuFabricInfo=13", **extra)
    _, h = gpu0(facts)
    assert (h.fabric_state, h.fabric_status) == ("Completed", "Success")
    assert h.fabric_health == ("Degraded Bandwidth", "Route Unhealthy",
                               "Incorrect Configuration: No Partition")
    if summary is None:
        unavailable(h.fabric_health_summary, Reason.NOT_SUPPORTED)
    else:
        assert h.fabric_health_summary == summary


@pytest.mark.slow
@pytest.mark.subprocess
def test_fabric_health_healthy_and_no_nvswitch(nvml: RunNvml) -> None:
    _, h = gpu0(nvml(fabric_state="3"))
    assert (h.fabric_health, h.fabric_health_summary) == ((), "Healthy")
    _, h = gpu0(nvml())  # state 0: no NVSwitch
    unavailable(h.fabric_health, Reason.NOT_SUPPORTED)


def test_decode_fabric_health() -> None:
    assert decode_fabric_health(0) == ()
    assert decode_fabric_health(2 | (2 << 2) | (2 << 4) | (2 << 6) | (1 << 8) | (1 << 14)) == ()
    assert decode_fabric_health((1 << 6) | (2 << 14)) == (
        "Access Timeout Recovery In Progress", "Fabric Manager Disconnected")


# ------------------------------------------------------------- gpudoctor's own processes (9)

OWN = """
import os, sys
from gpudoctor import childproc
child = childproc.start([sys.executable, "-c", "import time; time.sleep(60)"])
grand = childproc.start([sys.executable, "-c",
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    "'import time; time.sleep(60)'], start_new_session=True); time.sleep(60)"])
import time
def parent(pid):  # a process may end between listdir and open (another test's, the CI's)
    try:
        return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]
    except OSError:
        return None
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    kids = [int(p) for p in os.listdir('/proc') if p.isdigit() and parent(p) == str(grand.pid)]
    if kids:
        break
    time.sleep(0.05)
os.environ["FAKE_NVML_PROCS"] = ",".join(f"{pid}:{i + 1}:C" for i, pid in enumerate(
    [os.getpid(), child.pid, kids[0], os.getppid()]))
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_own_processes_are_left_out(fake_nvml: Path) -> None:
    """The NVML probe runs while the torch probe's child holds a CUDA context: that child (and
    any process gpudoctor started, and its descendants, and gpudoctor itself) is not "another
    process holding the GPU" for GD113 and GD110. The parent of the probing process is."""
    import os

    _, h = gpu0(run_probe(fake_nvml, prelude=OWN))
    assert isinstance(h.processes, tuple)
    assert [p.pid for p in h.processes] == [os.getpid()]


def test_own_pids(tmp_path: Path) -> None:
    """The parent chain read from /proc/PID/stat (names with ')' and spaces included)."""
    import os

    me = os.getpid()
    for pid, ppid in ((500, me), (501, 500), (600, 1)):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a b) c) S {ppid} 1 1 0\n")
    is_own = own_pids(tmp_path, known=(700,))
    assert [is_own(p) for p in (me, 500, 501, 600, 700, 999)] == [
        True, True, True, False, True, False]


# ------------------------------------------------------------- the real-hardware tests (9)


@pytest.mark.slow
@pytest.mark.subprocess
def test_real_hardware_tests_keep_ld_library_path(fake_nvml: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_probe(None)` (test_real_driver, test_real_gpu_health) finds libnvidia-ml.so.1 the
    way this process does: NVIDIA's CUDA images put it on LD_LIBRARY_PATH only. The fake stands
    in for the real library here."""
    monkeypatch.setenv("LD_LIBRARY_PATH", str(fake_nvml))
    facts = run_probe(None)
    assert isinstance(facts, NvmlFacts), facts
    assert facts.driver_version == "580.65.06"

"""probe_nvml through the real nvidia-ml-py binding against a fake libnvidia-ml.so.1.

Each test runs the real probe in a new interpreter whose LD_LIBRARY_PATH holds the fake built
from tests/fakes/fake_nvml.c (the loader reads LD_LIBRARY_PATH only at process start). The
fake's behaviour is scripted by FAKE_NVML_* variables; see the C source. One test per
except-branch of the probe.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.model import NOT_RECORDED, GpuFacts, GpuHealth, NvmlFacts, Reason, Unavailable
from gpudoctor.snapshot import from_data

REPO_ROOT = Path(__file__).resolve().parents[2]
H100 = "NVIDIA H100 80GB HBM3:9.0:85899345920"
RTX3090 = "NVIDIA GeForce RTX 3090:8.6:25769803776"

CHILD = """
import json
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.nvml import probe_nvml
from gpudoctor.snapshot import to_data
print(json.dumps(to_data(probe_nvml(Deps()))))
"""

RunNvml = Callable[..., "NvmlFacts | Unavailable"]


def _system_has_nvml() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def run_probe(
    lib_dir: Path | None, extra_path: Path | None = None, prelude: str = "", **fake: str
) -> NvmlFacts | Unavailable:
    """Run probe_nvml in a child whose loader path holds `lib_dir`; `fake` sets FAKE_NVML_*.

    `lib_dir` None: the real driver, found as this process finds it: LD_LIBRARY_PATH is kept
    (NVIDIA's CUDA images find libnvidia-ml.so.1 only through it). `prelude`: Python run in the
    child before the probe."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FAKE_NVML_") and k != "PYTHONPATH"}
    if lib_dir is not None:
        env["LD_LIBRARY_PATH"] = str(lib_dir)
    env["PYTHONPATH"] = os.pathsep.join(
        str(p) for p in (extra_path, REPO_ROOT) if p is not None
    )
    env.update({f"FAKE_NVML_{k.upper()}": v for k, v in fake.items()})
    result = subprocess.run([sys.executable, "-c", prelude + CHILD], capture_output=True,
                            text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    # stdout holds nothing but the JSON line: the probe itself never prints
    return from_data(NvmlFacts | Unavailable, json.loads(result.stdout))  # type: ignore[no-any-return]


@pytest.fixture
def nvml(fake_nvml: Path) -> RunNvml:
    return lambda **fake: run_probe(fake_nvml, **fake)


def unavailable(value: object, reason: Reason) -> Unavailable:
    assert isinstance(value, Unavailable), value
    assert value.reason is reason, value
    return value


# ---------------------------------------------------------------------------- happy path


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_gpus_every_field(nvml: RunNvml) -> None:
    facts = nvml(gpus=f"{H100};{RTX3090}", driver="580.65.06", cuda="13000",
                 mig_gpus="0", not_supported="mig:1")
    assert isinstance(facts, NvmlFacts), facts
    assert facts.driver_version == "580.65.06"  # verbatim, leading zero kept
    assert facts.cuda_driver_version == 13000
    assert facts.nvml_version == "13.580.65.06"
    assert facts.binding.startswith("nvidia-ml-py ")
    h100, rtx = facts.gpus
    assert isinstance(h100, GpuFacts)
    assert isinstance(h100.health, GpuHealth)  # its fields: tests/probes/test_nvml_health.py
    assert h100.compute_mode == "Default"
    assert dataclasses.replace(h100, health=NOT_RECORDED, compute_mode=NOT_RECORDED) == GpuFacts(
        index=0,
        name="NVIDIA H100 80GB HBM3",
        uuid="GPU-fa4e0000-0000-4000-8000-000000000000",
        compute_capability="9.0",
        memory_total=85899345920,
        memory_free=85899345920 * 3 // 4,
        pci_bus_id="00000000:18:00.0",
        persistence_mode=True,
        mig_mode=True,
    )
    assert isinstance(rtx, GpuFacts)
    assert (rtx.index, rtx.name, rtx.compute_capability) == (1, "NVIDIA GeForce RTX 3090", "8.6")
    assert (rtx.memory_total, rtx.memory_free) == (25769803776, 25769803776 * 3 // 4)
    assert rtx.uuid.endswith("000000000001")
    assert rtx.pci_bus_id == "00000000:19:00.0"
    assert rtx.persistence_mode is True
    mig = unavailable(rtx.mig_mode, Reason.NOT_SUPPORTED)
    assert mig.message == "GPU 1 MIG mode is not supported by this GPU or driver"


@pytest.mark.slow
def test_no_gpus(nvml: RunNvml) -> None:
    facts = nvml(gpus="", driver="550.54.15", cuda="12040", persistence="0")
    assert isinstance(facts, NvmlFacts)
    assert (facts.driver_version, facts.cuda_driver_version, facts.gpus) == (
        "550.54.15", 12040, ())


# ---------------------------------------------------------------------------- nvmlInit


@pytest.mark.slow
def test_library_not_found_is_the_no_driver_case() -> None:
    if _system_has_nvml():
        pytest.skip("this machine has a real libnvidia-ml.so.1")
    facts = run_probe(None)
    u = unavailable(facts, Reason.NOT_INSTALLED)
    assert "libnvidia-ml.so.1 was not found" in u.message
    # the loader's own words: the probe loads the library before importing the binding
    assert u.detail == ("NVMLError_LibraryNotFound: libnvidia-ml.so.1: cannot open shared "
                        "object file: No such file or directory")


@pytest.mark.slow
@pytest.mark.subprocess
def test_no_driver_library_means_no_binding_import(tmp_path: Path) -> None:
    """Without libnvidia-ml.so.1 the probe answers before `import pynvml` (30-45 ms of a
    driverless `check`); with the (fake) library it imports the binding and reads it."""
    if _system_has_nvml():
        pytest.skip("this machine has a real libnvidia-ml.so.1")
    code = ("import sys; from gpudoctor.probes.interface import Deps; "
            "from gpudoctor.probes.nvml import probe_nvml; r = probe_nvml(Deps()); "
            "print(type(r).__name__, 'pynvml' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML_")}
    env.update(LD_LIBRARY_PATH=str(tmp_path), PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    assert done.stdout.split() == ["Unavailable", "False"]


@pytest.mark.slow
def test_library_present_but_unloadable(tmp_path: Path) -> None:
    (tmp_path / "libnvidia-ml.so.1").write_bytes(b"not an ELF file\n")
    u = unavailable(run_probe(tmp_path), Reason.ERROR)
    assert u.message == (
        "libnvidia-ml.so.1 was found but cannot be loaded: reinstall the NVIDIA driver"
    )
    assert u.detail is not None
    assert str(tmp_path / "libnvidia-ml.so.1") in u.detail


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("code", "reason", "message", "detail"),
    [
        ("9", Reason.DRIVER_NOT_LOADED, "the NVIDIA kernel driver is not loaded",
         "NVMLError_DriverNotLoaded: Driver Not Loaded"),
        ("18", Reason.VERSION_MISMATCH,
         "the driver's user-space library and kernel module differ: reboot, or reload the "
         "nvidia kernel module",
         "NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch."),
        ("4", Reason.PERMISSION_DENIED, "no permission to talk to the driver",
         "NVMLError_NoPermission: Insufficient Permissions"),
        ("3", Reason.NOT_SUPPORTED, "NVML is not supported here",
         "NVMLError_NotSupported: Not Supported"),
        ("13", Reason.NOT_SUPPORTED, "the driver's NVML lacks a function this query needs",
         "NVMLError_FunctionNotFound: Function Not Found"),
        ("999", Reason.ERROR, "nvmlInit: NVML said Unknown Error",
         "NVMLError_Unknown: Unknown Error"),
        # a code this binding has no class for: NVML's own nvmlErrorString text
        ("4242", Reason.ERROR, "nvmlInit: NVML said Fake NVML error 4242",
         "NVMLError: Fake NVML error 4242"),
    ],
    ids=["driver-not-loaded", "rm-mismatch", "no-permission", "not-supported",
         "function-not-found", "unknown", "unmapped-code"],
)
def test_init_errors(
    nvml: RunNvml, code: str, reason: Reason, message: str, detail: str
) -> None:
    u = unavailable(nvml(init_error=code), reason)
    assert (u.message, u.detail) == (message, detail)


# ---------------------------------------------------------------------------- after init


@pytest.mark.slow
@pytest.mark.subprocess
def test_driver_query_failing_after_init(nvml: RunNvml) -> None:
    u = unavailable(nvml(fail="nvmlSystemGetDriverVersion=999"), Reason.ERROR)
    assert u.message == "reading the driver version: NVML said Unknown Error"


@pytest.mark.slow
@pytest.mark.subprocess
def test_device_count_without_permission(nvml: RunNvml) -> None:
    u = unavailable(nvml(fail="nvmlDeviceGetCount_v2=4"), Reason.PERMISSION_DENIED)
    assert u.message == "no permission to talk to the driver"


@pytest.mark.slow
@pytest.mark.subprocess
def test_shutdown_error_keeps_the_facts(nvml: RunNvml) -> None:
    facts = nvml(fail="nvmlShutdown=999")
    assert isinstance(facts, NvmlFacts)
    assert len(facts.gpus) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_optional_system_queries_not_supported(nvml: RunNvml) -> None:
    facts = nvml(not_supported="cuda,nvmlversion")
    assert isinstance(facts, NvmlFacts)
    assert facts.driver_version == "580.65.06"
    cuda = unavailable(facts.cuda_driver_version, Reason.NOT_SUPPORTED)
    assert cuda.message == "reading the CUDA version is not supported by this GPU or driver"
    unavailable(facts.nvml_version, Reason.NOT_SUPPORTED)
    assert isinstance(facts.gpus[0], GpuFacts)


@pytest.mark.slow
@pytest.mark.subprocess
def test_old_driver_without_newer_functions(fake_nvml_old: Path) -> None:
    facts = run_probe(fake_nvml_old, gpus=RTX3090)
    assert isinstance(facts, NvmlFacts)
    cuda = unavailable(facts.cuda_driver_version, Reason.NOT_SUPPORTED)
    assert cuda.detail == "NVMLError_FunctionNotFound: Function Not Found"
    (gpu,) = facts.gpus
    assert isinstance(gpu, GpuFacts)
    assert gpu.persistence_mode is True
    unavailable(gpu.mig_mode, Reason.NOT_SUPPORTED)


# ---------------------------------------------------------------------------- per GPU


@pytest.mark.slow
@pytest.mark.subprocess
def test_lost_gpu_among_healthy_ones(nvml: RunNvml) -> None:
    facts = nvml(gpus=f"{H100};{H100};{RTX3090}", lost_gpu="1")
    assert isinstance(facts, NvmlFacts)
    first, lost, third = facts.gpus
    assert isinstance(first, GpuFacts)
    assert first.index == 0
    assert isinstance(third, GpuFacts)
    assert third.index == 2
    assert third.name == "NVIDIA GeForce RTX 3090"
    u = unavailable(lost, Reason.ERROR)
    assert u.message == "GPU 1: NVML said GPU is lost"
    assert u.detail == "NVMLError_GpuIsLost: GPU is lost"


@pytest.mark.slow
@pytest.mark.subprocess
def test_one_failing_query_marks_only_that_gpu(nvml: RunNvml) -> None:
    facts = nvml(gpus=f"{H100};{RTX3090}", fail="nvmlDeviceGetPciInfo_v3=4")
    assert isinstance(facts, NvmlFacts)
    for gpu in facts.gpus:
        unavailable(gpu, Reason.PERMISSION_DENIED)


@pytest.mark.slow
@pytest.mark.subprocess
def test_mig_and_persistence_not_supported_gpu_still_listed(nvml: RunNvml) -> None:
    facts = nvml(gpus=RTX3090, not_supported="mig,persistence")
    assert isinstance(facts, NvmlFacts)
    (gpu,) = facts.gpus
    assert isinstance(gpu, GpuFacts)
    assert (gpu.name, gpu.compute_capability) == ("NVIDIA GeForce RTX 3090", "8.6")
    p = unavailable(gpu.persistence_mode, Reason.NOT_SUPPORTED)
    assert p.message == "GPU 0 persistence mode is not supported by this GPU or driver"
    m = unavailable(gpu.mig_mode, Reason.NOT_SUPPORTED)
    assert m.detail == "NVMLError_NotSupported: Not Supported"


@pytest.mark.slow
@pytest.mark.subprocess
def test_persistence_disabled(nvml: RunNvml) -> None:
    facts = nvml(persistence="0")
    assert isinstance(facts, NvmlFacts)
    assert isinstance(facts.gpus[0], GpuFacts)
    assert facts.gpus[0].persistence_mode is False


# ---------------------------------------------------------------------------- the binding


@pytest.mark.slow
@pytest.mark.subprocess
def test_pynvml_that_is_not_nvidias_binding(tmp_path: Path, fake_nvml: Path) -> None:
    (tmp_path / "pynvml.py").write_text('"""an unrelated module named pynvml"""\n')
    u = unavailable(run_probe(fake_nvml, extra_path=tmp_path), Reason.ERROR)
    assert u.message == (
        "the 'pynvml' module is not NVIDIA's binding: pip uninstall pynvml && "
        "pip install --force-reinstall nvidia-ml-py"
    )
    assert u.detail == f"pynvml from {tmp_path / 'pynvml.py'}"


@pytest.mark.slow
@pytest.mark.subprocess
def test_pynvml_not_importable(tmp_path: Path, fake_nvml: Path) -> None:
    (tmp_path / "pynvml.py").write_text("raise ImportError('half-uninstalled')\n")
    u = unavailable(run_probe(fake_nvml, extra_path=tmp_path), Reason.NOT_INSTALLED)
    assert "pip install nvidia-ml-py" in u.message
    assert u.detail == "ImportError('half-uninstalled')"


# ---------------------------------------------------------------------------- real hardware


@pytest.mark.gpu
def test_real_driver() -> None:
    facts = run_probe(None)
    assert isinstance(facts, NvmlFacts), facts
    assert facts.gpus
    assert all(isinstance(g, GpuFacts) for g in facts.gpus)
    assert isinstance(facts.cuda_driver_version, int)
    assert facts.cuda_driver_version >= 10000

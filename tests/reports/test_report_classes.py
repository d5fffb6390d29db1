"""Reports as people really paste them (issue 20, "Found" 1-6), each class on real reports.

The reports are the blind half A of round 3 (tests/fixtures/heldout/round3/reports-A/, scored
once, development data since; each file's public source is in its index.toml and named here),
the corpus (tests/fixtures/reports/) and the explain fixtures (real error texts with their
links). Where no public report of a class was at hand, the text comes from the real program
that prints it (torch's own warning code, this machine's collect_env): said at the test.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    CudnnFacts,
    Environment,
    GpuFacts,
    GpuHealth,
    NvmlFacts,
    Reason,
    Severity,
    Status,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports import read_reports

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HELDOUT_A = FIXTURES / "heldout" / "round3" / "reports-A"
SOURCES = {e["file"]: e["source"] for e in tomllib.loads(
    (HELDOUT_A / "index.toml").read_text(encoding="utf-8"))["report"]}
RECORDED = Path(__file__).resolve().parent / "recorded"


def _read(path: Path) -> Environment:
    return read_reports([(path.name, path.read_text(encoding="utf-8"))])


def _a(name: str) -> Environment:
    assert SOURCES[name].startswith("https://github.com/")  # a real public report
    return _read(HELDOUT_A / name)


def _judged(env: Environment) -> dict[str, Any]:
    return {str(r.check_id): r.finding for r in run_checks(env, load_tables()).results}


def _nvml(env: Environment) -> NvmlFacts:
    assert isinstance(env.nvml, NvmlFacts), env.nvml
    return env.nvml


def _runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


# --------------------------------------------------------------------------- 1. nvidia-smi


@pytest.mark.parametrize("name", ["r2-047.txt", "r2-053.txt"])
def test_r610_header_kmd_and_cuda_umd_versions(name: str) -> None:
    """R610's banner: "NVIDIA-SMI 610.43.03  KMD Version: 610.43.03  CUDA UMD Version: 13.3"
    (projectbluefin/finpilot#160; r2-053 another R610 paste). Refused before ("no report
    recognised")."""
    env = _a(name)
    nvml = _nvml(env)
    assert (nvml.driver_version, nvml.cuda_driver_version) == ("610.43.03", 13030)
    found = _judged(env)
    assert {found[c].status for c in ("GD101", "GD102", "GD110")} == {Status.PASS}


@pytest.mark.parametrize(("name", "bus", "why"), [
    ("r2-005.md", "0000:0B:00.0", "Unknown Error"),  # the paste is only this line
    ("r2-007.md", "0000:B1:00.0", "Unknown Error"),  # Windows: "Unable to detect …"
    ("r2-008.md", "0000:07:00.0", "Unknown Error"),
    ("r2-012.md", "0000:02:00.0", "GPU is lost"),  # quoted in bold prose
    ("r2-064.md", "0000:01:00.0", "GPU is lost"),  # a log repeating it for every query
])
def test_device_handle_failure_alone_is_a_lost_gpu(name: str, bus: str, why: str) -> None:
    """"Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error" is all
    nvidia-smi printed: NVML started (the driver is loaded) and that GPU does not answer.
    Refused before."""
    env = _a(name)
    (gpu,) = _nvml(env).gpus  # once, however often the log repeats it
    assert isinstance(gpu, Unavailable) and bus in gpu.message and why in gpu.message
    found = _judged(env)
    assert found["GD101"].status is Status.PASS
    assert found["GD102"].status is Status.FAIL and bus in found["GD102"].message


def test_no_devices_found_is_a_driver_without_a_gpu() -> None:
    """`nvidia-smi` → "No devices were found" with NVRM's RmInitAdapter failure in the kernel
    log (NVIDIA/open-gpu-kernel-modules#862, an explain fixture): the driver is loaded, no GPU
    came up. It was a driver failure (GD101) before."""
    path = FIXTURES / "heldout" / "round3" / "explain-A" / "g1-098.txt"
    found = _judged(_read(path))
    assert found["GD101"].status is Status.PASS
    assert found["GD102"].status is Status.FAIL
    assert "No devices were found" in found["GD102"].message


def test_xml_with_a_fabric_health_summary_is_read_whole() -> None:
    """R590's -q -x has <summary> inside <fabric><health>, which is also a Markdown/HTML tag
    (telegraf dual_2070-v13.xml): the reader cut the XML there, read one GPU of two and none
    of the processes."""
    env = _a("r2-087.xml")
    assert len(_nvml(env).gpus) == 2
    found = _judged(env)
    assert found["GD113"].status is Status.PASS and found["GD102"].message.startswith("2 GPUs")


def test_corrupted_inforom_warning_fails_that_gpu() -> None:
    """"WARNING: infoROM is corrupted at gpu 0008:00:00.0" after an 8x V100 table
    (Azure/azhpc-diagnostics sample): GPU 7 (bus 00000008:00:00.0) has failed; the rest pass."""
    env = _a("r2-075.txt")
    gpus = _nvml(env).gpus
    assert [i for i, g in enumerate(gpus) if isinstance(g, Unavailable)] == [7]
    found = _judged(env)
    assert found["GD102"].status is Status.FAIL and "infoROM" in found["GD102"].message
    assert found["GD101"].status is Status.PASS


def test_err_in_the_mig_cell_is_no_failed_gpu_but_err_in_its_rows_is() -> None:
    """ERR! in the MIG M. cell (a 450 tool on a 418 driver, rapidsai-csp-utils#34) is no GPU
    failure; ERR! in the name, fan and power cells (r2-065) is one."""
    assert _judged(_a("r1-035.md"))["GD102"].status is Status.PASS
    found = _judged(_a("r2-065.txt"))
    assert found["GD102"].status is Status.FAIL and "ERR!" in found["GD102"].message


# -------------------------------------------------- the facts a table states (GD110, GD113)


def test_compute_mode_and_processes_from_the_table() -> None:
    """A whole pre-450 table (microsoft/pai#1396): Compute M. "Default" and one cntk process
    holding 489 MiB of 15245 MiB. GD110 skipped and GD113 skipped before."""
    env = _a("r2-041.txt")
    (gpu,) = _nvml(env).gpus
    assert isinstance(gpu, GpuFacts) and gpu.compute_mode == "Default"
    assert isinstance(gpu.health, GpuHealth) and isinstance(gpu.health.processes, tuple)
    ((pid, name, used, kind),) = [(p.pid, p.name, p.used_memory, p.kind)
                                  for p in gpu.health.processes]
    assert (pid, name, used, kind) == (23534, "cntk", 489 << 20, "C")
    found = _judged(env)
    assert found["GD110"].status is Status.PASS
    assert found["GD113"].status is Status.WARN and found["GD113"].severity is Severity.INFO


def test_no_running_processes_and_a_cut_process_list() -> None:
    """"No running processes found" (tensorflow#8877, R346) is a fact: no process holds a GPU.
    A table cut inside the process list (xmr-stak-nvidia#39) states none."""
    found = _judged(_a("r2-077.txt"))
    assert found["GD113"].status is Status.PASS and found["GD110"].status is Status.PASS
    (gpu,) = _nvml(_a("r2-014.txt")).gpus
    assert isinstance(gpu, GpuFacts) and isinstance(gpu.health, GpuHealth)
    assert isinstance(gpu.health.processes, Unavailable)
    assert gpu.health.processes.reason is Reason.NOT_REPORTED


# --------------------------------------------------------------------------- 2. no driver


def test_torch_found_no_nvidia_driver() -> None:
    """torch's "Found no NVIDIA driver on your system" alone (princeton-nlp/SimCSE#244): GD101
    leads with no driver. Before, nothing was recognised in it. A warning, not a failure: torch
    says the same on a machine without an NVIDIA GPU, and nothing here shows one."""
    env = _read(FIXTURES / "errors" / "simcse-found-no-nvidia-driver.txt")
    found = _judged(env)
    assert found["GD101"].status is Status.WARN and "no NVIDIA driver" in found["GD101"].message
    assert found["GD101"].severity is None  # the check's own severity: a warning, not a note
    assert found["GD403"].status is Status.SKIP  # counted once, in GD101
    assert _runtime(env).cuda_available is False


def test_collect_env_of_a_cuda_build_that_finds_no_driver() -> None:
    """This machine (no GPU, no driver, torch 2.14.1+cu130): `python -m torch.utils.collect_env`
    as recorded here (no public report of the kind was at hand): "Is CUDA available: False",
    GPU models and driver "Could not collect". The verdict names the missing driver instead of
    "reason not in the report". A warning, not a failure: this machine has no GPU, and a
    report cannot tell that apart from a GPU without its driver (set B's r1-040, a laptop
    without an NVIDIA GPU, and r1-062, a cluster login node, read the same)."""
    env = _read(RECORDED / "collect_env-gpuless-cu130.txt")
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_INSTALLED
    found = _judged(env)
    assert found["GD101"].status is Status.WARN
    assert "no working NVIDIA driver" in found["GD101"].message
    assert found["GD403"].status is Status.SKIP and "GD101" in found["GD403"].message


def test_no_driver_is_not_read_into_a_cpu_or_rocm_build() -> None:
    """The same "Could not collect" / "No CUDA" lines on a CPU build (pytorch#137846) and on a
    ROCm build (vllm#9713) say nothing of an NVIDIA driver: nothing fails."""
    from tests.reports.report_excerpts import COLLECT_ENV_WINDOWS_CPU

    cpu = read_reports([("pytorch-137846", COLLECT_ENV_WINDOWS_CPU)])
    assert isinstance(cpu.nvml, Unavailable) and cpu.nvml.reason is Reason.NOT_REPORTED
    for env in (cpu, _a("r1-009.txt")):
        assert not [c for c, f in _judged(env).items() if f.status is Status.FAIL]


def test_torch_error_804_is_why_cuda_is_unavailable() -> None:
    """Fooocus#2169: torch's "Unexpected error from cudaGetDeviceCount() … Error 804: forward
    compatibility was attempted on non supported HW" in the prose, nvidia-smi's table below:
    torch cannot use CUDA, for that reason (GD403 skipped before)."""
    found = _judged(_a("r1-063.md"))
    assert found["GD403"].status is Status.FAIL and "Error 804" in found["GD403"].message


def test_rocm_line_cut_mid_value_is_no_rocm_build() -> None:
    """lhotse#793: collect_env cut at "ROCM used to build PyTorch: N/" under torch's warning
    "found version 9010": "N/" is a cut "N/A", not a ROCm version, so torch 1.12.1+cu102 is
    a CUDA 10.2 build and the driver (CUDA 9.1) is too old (GD103 skipped, GD402 failed
    "a ROCm build" before)."""
    found = _judged(_a("r1-024.txt"))
    assert found["GD103"].status is Status.FAIL
    assert found["GD402"].status is not Status.FAIL


# ------------------------------------------------------ 3. tools from another driver release


def test_nvidia_smi_from_another_release_than_the_driver() -> None:
    """Colab: "NVIDIA-SMI 450.66  Driver Version: 418.67" (rapidsai-csp-utils#34): the image's
    nvidia-smi over the host's driver. Passed silently before."""
    found = _judged(_a("r1-035.md"))["GD101"]
    assert found.status is Status.WARN and "450.66" in found.message


@pytest.mark.parametrize("path", [
    HELDOUT_A / "r2-037.txt",  # NVIDIA-SMI 555.52.01, Driver Version 555.99 (WSL#11277)
    FIXTURES / "reports" / "nvidia_smi-wsl2-rtx3090-516.94.txt",  # 515.65.01 / 516.94
    FIXTURES / "reports" / "issue_body-wsl2-nvidia-smi-cuda-version-err.md",  # 545.46 / 546.80
])
def test_wsl_pairs_linux_tools_with_the_windows_driver(path: Path) -> None:
    """On WSL the banner shows the Windows driver's number beside the Linux tools: no flag."""
    env = _read(path)
    assert isinstance(_nvml(env).smi_version, str)
    assert _judged(env)["GD101"].status is Status.PASS


# --------------------------------------------------------------------- 4. several cuDNN copies


def test_two_cudnn_majors_in_one_folder_are_two_copies() -> None:
    """ogx-ai/ogx#1798 (corpus): /usr/lib64 holds cuDNN 8.9.2 and 9.7.1. Not reported before.
    The files' modes, links and sub-libraries are not in the report: those checks skip."""
    env = _read(FIXTURES / "reports" / "collect_env-8x-h100-pypi-cu124-driver535-minor-compat.txt")
    assert isinstance(env.cudnn, CudnnFacts)
    assert [(i.lib_dir, i.library_version) for i in env.cudnn.installs] == [
        ("/usr/lib64", "8.9.2"), ("/usr/lib64", "9.7.1")]
    found = _judged(env)
    assert found["GD307"].status is Status.PASS and "2 cuDNN copies" in found["GD307"].message
    assert {found[c].status for c in ("GD303", "GD304", "GD305", "GD306")} == {Status.SKIP}


def test_one_cudnn_major_in_two_folders_and_a_report_cut_at_its_top() -> None:
    """A GH200 collect_env whose stored copy starts at "Python version" (a continuation
    chunk, refused before): the distribution's cuDNN 9.0.0 and the CUDA 12.4 toolkit's."""
    env = _a("r1-083.txt")
    assert isinstance(env.cudnn, CudnnFacts) and len(env.cudnn.installs) == 2
    assert _runtime(env).cuda_available is True
    found = _judged(env)
    assert found["GD403"].status is Status.PASS and found["GD307"].status is Status.PASS


# ----------------------------------------------------------------------------------- 5. MIG


def test_mig_device_line_marks_its_gpu() -> None:
    """pytorch#57922: "GPU 0: A100-SXM4-40GB" then "  MIG 3g.20gb Device 0:". One GPU, in MIG
    mode; GD507 notes it (it skipped: the variables are not in a report)."""
    env = _a("r1-016.txt")
    (gpu,) = _nvml(env).gpus
    assert isinstance(gpu, GpuFacts) and gpu.mig_mode is True
    found = _judged(env)["GD507"]
    assert found.status is Status.WARN and found.severity is Severity.INFO


# --------------------------------------------------------- 6. torch's newer warning wording


def _torch_warning(device_cc: int, code_ccs: list[int], name: str) -> str:
    """The warning torch itself prints for a GPU its build has no code for (torch 2.8+,
    `torch.cuda._warn_unsupported_code`, "… of compute capability (CC) 7.0."), made by the
    installed torch: no public report with this wording was at hand."""
    cuda = pytest.importorskip("torch.cuda")
    warn = getattr(cuda, "_warn_unsupported_code", None)
    if warn is None:
        pytest.skip("this torch predates the compute capability (CC) warning")
    with mock.patch.object(cuda, "get_device_name", return_value=name), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn(0, device_cc, code_ccs)
    return "\n".join(str(w.message) for w in caught)


@pytest.mark.slow
def test_compute_capability_cc_wording_fails_a_v100_on_a_build_without_sm70() -> None:
    text = _torch_warning(70, [75, 80, 86, 90, 100, 120], "Tesla V100-SXM2-16GB")
    assert "compute capability (CC) 7.0" in text
    env = read_reports([("warning", text)])
    rt = _runtime(env)
    assert rt.warned_gpus == (("Tesla V100-SXM2-16GB", "7.0"),)
    assert isinstance(rt.arch_list, tuple) and "sm_70" not in rt.arch_list
    found = _judged(env)["GD404"]
    assert found.status is Status.FAIL and "V100" in found.message


def test_cc_wording_list_is_the_builds_arch_list() -> None:
    """The CCs the warning lists are the build's: judged by them, a GPU they cover passes
    (torch's own check would not have named it; this text is the same code's)."""
    text = _torch_warning(70, [50, 60, 70, 75], "Tesla V100-SXM2-16GB")
    rt = _runtime(read_reports([("warning", text)]))
    assert rt.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75")
    assert _judged(read_reports([("warning", text)]))["GD404"].status is Status.PASS

"""Reports as people really paste them (issue 20, "Found" 1-6), each class on real reports.

The reports are the blind half A of round 3 (tests/fixtures/heldout/round3/reports-A/, scored
once, development data since; each file's public source is in its index.toml and named here),
the corpus (tests/fixtures/reports/) and the explain fixtures (real error texts with their
links). Where no public report of a class was at hand, the text comes from the real program
that prints it (torch's own warning code, this machine's collect_env): said at the test.
The classes one reader reads alone are with that reader's tests: nvidia-smi's table and errors
in tests/reports/test_nvidia_smi.py, collect_env's cuDNN list in test_cudnn_list.py.
"""

from __future__ import annotations

import warnings
from unittest import mock

import pytest

from gpudoctor.model import (
    GpuFacts,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import (
    FIXTURES,
    RECORDED,
    heldout_a,
    judged,
    nvml_of,
    read_path,
    runtime_of,
)

# ------------------------------------------------------------------ 1. nvidia-smi (the -q -x one)


def test_xml_with_a_fabric_health_summary_is_read_whole() -> None:
    """R590's -q -x has <summary> inside <fabric><health>, which is also a Markdown/HTML tag
    (telegraf dual_2070-v13.xml): the reader cut the XML there, read one GPU of two and none
    of the processes."""
    env = heldout_a("r2-087.xml")
    assert len(nvml_of(env).gpus) == 2
    found = judged(env)
    assert found["GD113"].status is Status.PASS and found["GD102"].message.startswith("2 GPUs")


# --------------------------------------------------------------------------- 2. no driver


def test_torch_found_no_nvidia_driver() -> None:
    """torch's "Found no NVIDIA driver on your system" alone (princeton-nlp/SimCSE#244): GD101
    leads with no driver. Before, nothing was recognised in it. A warning, not a failure: torch
    says the same on a machine without an NVIDIA GPU, and nothing here shows one."""
    env = read_path(FIXTURES / "errors" / "simcse-found-no-nvidia-driver.txt")
    found = judged(env)
    assert found["GD101"].status is Status.WARN and "no NVIDIA driver" in found["GD101"].message
    assert found["GD101"].severity is None  # the check's own severity: a warning, not a note
    assert found["GD403"].status is Status.SKIP  # counted once, in GD101
    assert runtime_of(env).cuda_available is False


def test_collect_env_of_a_cuda_build_that_finds_no_driver() -> None:
    """This machine (no GPU, no driver, torch 2.14.1+cu130): `python -m torch.utils.collect_env`
    as recorded here (no public report of the kind was at hand): "Is CUDA available: False",
    GPU models and driver "Could not collect". The verdict names the missing driver instead of
    "reason not in the report". A warning, not a failure: this machine has no GPU, and a
    report cannot tell that apart from a GPU without its driver (set B's r1-040, a laptop
    without an NVIDIA GPU, and r1-062, a cluster login node, read the same)."""
    env = read_path(RECORDED / "collect_env-gpuless-cu130.txt")
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_INSTALLED
    found = judged(env)
    assert found["GD101"].status is Status.WARN
    assert "no working NVIDIA driver" in found["GD101"].message
    assert found["GD403"].status is Status.SKIP and "GD101" in found["GD403"].message


def test_no_driver_is_not_read_into_a_cpu_or_rocm_build() -> None:
    """The same "Could not collect" / "No CUDA" lines on a CPU build (pytorch#137846) and on a
    ROCm build (vllm#9713) say nothing of an NVIDIA driver: nothing fails."""
    from tests.reports.report_excerpts import COLLECT_ENV_WINDOWS_CPU

    cpu = read_reports([("pytorch-137846", COLLECT_ENV_WINDOWS_CPU)])
    assert isinstance(cpu.nvml, Unavailable) and cpu.nvml.reason is Reason.NOT_REPORTED
    for env in (cpu, heldout_a("r1-009.txt")):
        assert not [c for c, f in judged(env).items() if f.status is Status.FAIL]


def test_torch_error_804_is_why_cuda_is_unavailable() -> None:
    """Fooocus#2169: torch's "Unexpected error from cudaGetDeviceCount() … Error 804: forward
    compatibility was attempted on non supported HW" in the prose, nvidia-smi's table below:
    torch cannot use CUDA, for that reason (GD403 skipped before)."""
    found = judged(heldout_a("r1-063.md"))
    assert found["GD403"].status is Status.FAIL and "Error 804" in found["GD403"].message


def test_rocm_line_cut_mid_value_is_no_rocm_build() -> None:
    """lhotse#793: collect_env cut at "ROCM used to build PyTorch: N/" under torch's warning
    "found version 9010": "N/" is a cut "N/A", not a ROCm version, so torch 1.12.1+cu102 is
    a CUDA 10.2 build and the driver (CUDA 9.1) is too old (GD103 skipped, GD402 failed
    "a ROCm build" before)."""
    found = judged(heldout_a("r1-024.txt"))
    assert found["GD103"].status is Status.FAIL
    assert found["GD402"].status is not Status.FAIL


# ----------------------------------------------------------------------------------- 5. MIG


def test_mig_device_line_marks_its_gpu() -> None:
    """pytorch#57922: "GPU 0: A100-SXM4-40GB" then "  MIG 3g.20gb Device 0:". One GPU, in MIG
    mode; GD507 notes it (it skipped: the variables are not in a report)."""
    env = heldout_a("r1-016.txt")
    (gpu,) = nvml_of(env).gpus
    assert isinstance(gpu, GpuFacts) and gpu.mig_mode is True
    found = judged(env)["GD507"]
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
    rt = runtime_of(env)
    assert rt.warned_gpus == (("Tesla V100-SXM2-16GB", "7.0"),)
    assert isinstance(rt.arch_list, tuple) and "sm_70" not in rt.arch_list
    found = judged(env)["GD404"]
    assert found.status is Status.FAIL and "V100" in found.message


def test_cc_wording_list_is_the_builds_arch_list() -> None:
    """The CCs the warning lists are the build's: judged by them, a GPU they cover passes
    (torch's own check would not have named it; this text is the same code's)."""
    text = _torch_warning(70, [50, 60, 70, 75], "Tesla V100-SXM2-16GB")
    rt = runtime_of(read_reports([("warning", text)]))
    assert rt.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75")
    assert judged(read_reports([("warning", text)]))["GD404"].status is Status.PASS

"""torch's own messages quoted in a paste (gpudoctor.reports.torch_messages), and the verdicts
the corpus replay needed fixed: ROCm builds, a driver known only by its CUDA, a collect_env cut
off between its GPU list and its driver line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    Environment,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    Status,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports.read import ReportError, read_reports

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"

# torch/cuda/__init__.py's warnings as a user quoted them in a reply ("> "), after a log prefix
WARNINGS = """\
> /venv/lib/python3.12/site-packages/torch/cuda/__init__.py:262: UserWarning:
>     Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.
>     PyTorch no longer supports this GPU because it is too old.
>     The minimum cuda capability supported by this library is 7.5.
>
> /venv/lib/python3.12/site-packages/torch/cuda/__init__.py:287: UserWarning:
> NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
> The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
"""  # noqa: E501

COLLECT_ENV_CU121 = """\
Collecting environment information...
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A
"""


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def verdicts(env: Environment, tables: Tables) -> dict[str, tuple[Status, str]]:
    return {str(r.check_id): (r.finding.status, r.finding.message)
            for r in run_checks(env, tables).results}


def runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def test_warnings_alone_are_a_partial_report(tables: Tables) -> None:
    env = read_reports([("reply.md", WARNINGS)])
    rt = runtime(env)
    assert env.sources == ("torch's messages in reply.md",)
    assert rt.warned_gpus == (("NVIDIA GeForce GTX 1080 Ti", "6.1"),
                              ("NVIDIA GeForce RTX 5090", "12.0"))
    assert rt.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    # what the warnings do not state stays "not in the report", never guessed
    for fact in (rt.version, rt.cuda, rt.cuda_available, rt.devices):
        assert isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_REPORTED
    found = verdicts(env, tables)
    status, message = found["GD404"]
    assert status is Status.FAIL and "GTX 1080 Ti (sm_61)" not in message  # sm_60 cubin runs
    assert "RTX 5090 (sm_120)" in message and "version not in the report" in message
    assert found["GD402"][0] is Status.PASS  # torch prints the arch warning for CUDA builds only
    # the warnings are printed only after torch's CUDA initialised (torch.cuda's lazy init
    # runs _check_capability and _check_cubins after torch._C._cuda_init() succeeded): the
    # driver runs torch's CUDA, and CUDA is available, whichever version the build is
    assert found["GD103"][0] is Status.PASS and "printed only after" in found["GD103"][1]
    assert found["GD403"][0] is Status.PASS and "only after its CUDA initialised" in \
        found["GD403"][1]
    # torch saying CUDA is unavailable beside its warnings (another run): nothing inferred
    failed = read_reports([("reply.md", WARNINGS + "\nRuntimeError: No CUDA GPUs are available\n")])
    assert verdicts(failed, tables)["GD103"][0] is Status.SKIP


def test_driver_too_old_gives_the_drivers_cuda(tables: Tables) -> None:
    text = (COLLECT_ENV_CU121 + "UserWarning: CUDA initialization: The NVIDIA driver on your "
            "system is too old (found version 11040). Please update your GPU driver\n")
    env = read_reports([("issue.md", text)])
    assert isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version == 11040
    assert isinstance(env.libcuda.driver_version, Unavailable)
    status, message = verdicts(env, tables)["GD103"]
    assert status is Status.FAIL and "CUDA ≤ 11.4" in message and "12.1" in message


def test_same_major_driver_cuda_is_minor_version_compatibility(tables: Tables) -> None:
    text = COLLECT_ENV_CU121.replace("12.1", "12.4").replace("2.1.0+cu121", "2.5.1+cu124") + (
        "The NVIDIA driver on your system is too old (found version 12020).\n")
    status, message = verdicts(read_reports([("issue.md", text)]), tables)["GD103"]
    assert status is Status.WARN and "minor-version compatibility" in message


def test_rocm_build_without_nvidia_is_not_judged(tables: Tables) -> None:
    name = "collect_env-rocm60-7900xtx.txt"
    env = read_reports([(name, (REPORTS / name).read_text("utf-8"))])
    status, message = verdicts(env, tables)["GD402"]
    assert status is Status.SKIP and "ROCm build" in message and "NVIDIA stacks" in message


def test_rocm_build_beside_an_nvidia_gpu_fails(tables: Tables) -> None:
    names = ("collect_env-rocm60-7900xtx.txt", "nvidia_smi-rtx5090-plus-rtx4090-570.txt")
    env = read_reports([(n, (REPORTS / n).read_text("utf-8")) for n in names])
    status, message = verdicts(env, tables)["GD402"]
    assert status is Status.FAIL and "ROCm" in message and "570.124.04" in message


def test_collect_env_cut_between_gpu_list_and_driver_line(tables: Tables) -> None:
    text = (COLLECT_ENV_CU121.replace("2.1.0+cu121", "2.0.1+cu117").replace("12.1", "11.7")
            + "Is CUDA available: True\nGPU models and configuration: \n"
            "GPU 0: NVIDIA A100-SXM4-40GB\nGPU 1: NVIDIA A100-SXM4-40GB\nNvidia dri")
    env = read_reports([("cut.txt", text)])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 2
    assert isinstance(env.nvml.driver_version, Unavailable)
    found = verdicts(env, tables)
    assert found["GD101"][0] is Status.PASS and "not in the report" in found["GD101"][1]
    # no driver version, but torch's CUDA initialised on it: the driver runs torch's CUDA
    assert found["GD103"][0] is Status.PASS and "not in the report" in found["GD103"][1]
    assert found["GD404"][0] is Status.PASS  # 2.0 cu117 lists sm_80 (compat_tables)


@pytest.mark.parametrize("name", [
    "issue_body-devcontainer-host-nvidia-smi-535.md",
    "issue_body-driver-too-old-11040-rtx3050-nvidia-smi-470.md",
    "issue_body-nvidia-smi-one-line-450-cu102.md",
])
def test_table_cut_before_its_gpu_rows_is_not_a_gpu_less_driver(name: str, tables: Tables) -> None:
    """nvidia-smi prints 'No devices were found', never an empty table: a pasted table without
    GPU rows was cut off or trimmed, and says nothing about the GPUs."""
    env = read_reports([(name, (REPORTS / name).read_text("utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.gpus == ()
    found = verdicts(env, tables)
    assert found["GD101"][0] is Status.PASS
    assert found["GD102"][0] is Status.SKIP and "not in the report" in found["GD102"][1]


def test_a_cut_table_takes_the_gpus_collect_env_lists(tables: Tables) -> None:
    """The same cut table beside a complete collect_env whose GPU models (nvidia-smi -L's
    list) name two V100s: the table states the driver, collect_env the GPUs, and GD102 judges
    them."""
    name = "issue_body-pytorch1.6-v100-driver418-too-old.md"
    env = read_reports([(name, (REPORTS / name).read_text("utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "418.67"
    assert len(env.nvml.gpus) == 2
    found = verdicts(env, tables)
    assert (found["GD101"][0], found["GD102"][0]) == (Status.PASS, Status.PASS)


HELDOUT_D = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round5" / "reports-D"


def test_a_gpu_torch_calls_too_old_fails_gd404(tables: Tables) -> None:
    """torch 2.7's wording with its range (round 5's r6-026,
    https://github.com/mmartial/ComfyUI-Nvidia-Docker/issues/61): "Found GPU0 NVIDIA GeForce
    GTX 1080 Ti which is of cuda capability 6.1. Minimum and Maximum cuda capability supported
    by this version of PyTorch is (7.0) - (12.0)": no code of that build runs on sm_61 (PTX
    runs only forward), so GD404 fails on torch's own words, its arch list unknown."""
    env = read_reports([("r6-026.md", (HELDOUT_D / "r6-026.md").read_text(encoding="utf-8"))])
    assert runtime(env).too_old_gpus == (("NVIDIA GeForce GTX 1080 Ti", "6.1"),)
    status, message = verdicts(env, tables)["GD404"]
    assert status is Status.FAIL and "torch itself warns" in message


def test_the_older_wording_and_its_minimum() -> None:
    from gpudoctor.reports.torch_messages import too_old_gpus

    assert too_old_gpus(WARNINGS) == (("NVIDIA GeForce GTX 1080 Ti", "6.1"),)
    # a GPU inside the range is no "too old" one (torch 2.7 prints the range for it too)
    inside = ("Found GPU0 NVIDIA A10 which is of cuda capability 8.6.\n    Minimum and Maximum "
              "cuda capability supported by this version of PyTorch is\n    (7.0) - (12.0)\n")
    assert too_old_gpus(inside) == ()


# -------------------------------------------------------- wrapped, retyped, "not compiled"

HELDOUT_E = REPORTS.parent / "heldout" / "round6" / "reports-E"


def _statuses(name: str, tables: Tables) -> dict[str, Status]:
    env = read_reports([(name, (HELDOUT_E / name).read_text(encoding="utf-8"))])
    return {r.check_id: r.finding.status for r in run_checks(env, tables).results}


def test_a_warning_wrapped_across_lines_is_read(tables: Tables) -> None:
    """https://github.com/runpod/containers/issues/114: the warning and its arch list wrapped
    by the reporter ("is not compatible\\nwith the current PyTorch installation. The current
    PyTorch install\\nsupports …"): the B200 (sm_100) has no code in sm_50 … sm_90."""
    env = read_reports([("r10-001.md", (HELDOUT_E / "r10-001.md").read_text())])
    rt = env.torch.runtime  # type: ignore[union-attr]
    assert isinstance(rt, TorchRuntime)
    assert rt.warned_gpus == (("NVIDIA B200", "10.0"),)
    assert rt.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    assert _statuses("r10-001.md", tables)["GD404"] is Status.FAIL


def test_a_warning_retyped_in_lower_case_is_read() -> None:
    """https://github.com/HaoKang-Timmy/LatencySensitiveBench/issues/19: "nvidia geforce rtx
    5090 with cuda capabilities sm_120 is not compatible with the current Pytorch
    installation." (no arch list: GD404 cannot judge without torch's version)."""
    env = read_reports([("r11-014.md", (HELDOUT_E / "r11-014.md").read_text())])
    rt = env.torch.runtime  # type: ignore[union-attr]
    assert isinstance(rt, TorchRuntime) and rt.warned_gpus == (("nvidia geforce rtx 5090",
                                                                "12.0"),)


@pytest.mark.parametrize("name", ["r9-024.md", "r9-023.md"])
def test_torch_not_compiled_with_cuda_is_a_cpu_build(name: str, tables: Tables) -> None:
    """"AssertionError: Torch not compiled with CUDA enabled" (torch.cuda._lazy_init: torch._C
    has no CUDA bindings) beside the driver's nvidia-smi banner: a CPU build where a GPU is.
    https://github.com/gordicaleksa/pytorch-neural-style-transfer/issues/3 (r9-024: a
    traceback and a cut table); https://github.com/zai-org/ChatGLM-6B/issues/920 (r9-023: an
    environment list naming "PyTorch:2.0" only)."""
    env = read_reports([(name, (HELDOUT_E / name).read_text())])
    rt = env.torch.runtime  # type: ignore[union-attr]
    assert isinstance(rt, TorchRuntime) and rt.cuda is None and rt.cuda_available is False
    assert _statuses(name, tables)["GD402"] is Status.FAIL


def test_not_compiled_beside_a_cuda_builds_warning_is_not_a_cpu_build() -> None:
    """A paste with both (two environments, or a quoted older error): the arch warning only a
    CUDA build prints wins; the assertion is not read as this torch's."""
    env = read_reports([("x.txt", WARNINGS + "\nAssertionError: Torch not compiled with CUDA "
                         "enabled\n")])
    rt = env.torch.runtime  # type: ignore[union-attr]
    assert isinstance(rt, TorchRuntime) and isinstance(rt.cuda, Unavailable)


def test_error_803_is_the_drivers_library_and_module_of_two_releases(tables: Tables) -> None:
    """https://github.com/vladmandic/sdnext/issues/1065 (round 6's r10-025, an SD.Next log on an
    AWS instance): torch's CUDA initialisation fails with "Error 803: system has unsupported
    display driver / cuda driver combination" (cudaErrorSystemDriverMismatch): GD101 fails as a
    library/module mismatch, not 'driver not in the report'."""
    env = read_reports([("r10-025.md", (HELDOUT_E / "r10-025.md").read_text())])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.VERSION_MISMATCH
    assert _statuses("r10-025.md", tables)["GD101"] is Status.FAIL


def test_driver_too_old_wrapped_across_lines(tables: Tables) -> None:
    """https://github.com/andimarafioti/faster-qwen3-tts/pull/113 (r11-022): "The NVIDIA driver on
    your\\nsystem is too old (found version 12040)" — the driver runs CUDA ≤ 12.4, and torch's
    refusal fails GD103 though torch's CUDA is not in the text."""
    env = read_reports([("r11-022.md", (HELDOUT_E / "r11-022.md").read_text())])
    assert isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version == 12040
    assert _statuses("r11-022.md", tables)["GD103"] is Status.FAIL


ROUND10_I = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round10" / "reports-I"


def _gd404(name: str) -> tuple[Status, str]:
    env = read_reports([(name, (ROUND10_I / name).read_text(encoding="utf-8"))])
    result = next(r for r in run_checks(env, load_tables()).results if r.check_id == "GD404")
    return result.finding.status, result.finding.message


def test_the_incompatibility_warning_without_its_list_is_torchs_own_verdict() -> None:
    # https://github.com/HybridRobotics/berkeley-humanoid-lite/issues/49 (r22-003): the warning's
    # first sentence alone,
    # quoted in a Markdown list item and backticks: GD404 fails (on the arch list of the
    # build the words name beside it, "torch 2.5.1" from the cu121 index, since those are read
    # together; on torch's own check where no version is named)
    status, summary = _gd404("r22-003.md")
    assert status is Status.FAIL
    assert "NVIDIA GeForce RTX 5090 (sm_120)" in summary and "2.5.1+cu121" in summary
    text = (ROUND10_I / "r22-003.md").read_text(encoding="utf-8")
    env = read_reports([("warning only", "\n".join(
        line for line in text.splitlines() if "sm_120" in line or "RTX 5090" in line))])
    result = next(r for r in run_checks(env, load_tables()).results if r.check_id == "GD404")
    assert result.finding.status is Status.FAIL, result.finding
    assert "torch itself warns" in result.finding.message


def test_the_warning_wrapped_before_its_arch_is_read() -> None:
    # https://github.com/guoqincode/Open-AnimateAnyone/issues/114 (r22-028): "NVIDIA H100
    # PCIe with CUDA capability\nsm_90 is not compatible …", the list sm_37 … sm_86 (no sm_9x,
    # no PTX)
    status, summary = _gd404("r22-028.md")
    assert status is Status.FAIL and "NVIDIA H100 PCIe (sm_90)" in summary


def test_ray_workers_prefixes_are_taken_off_torchs_warning() -> None:
    # https://github.com/vllm-project/vllm/pull/39878, vLLM under Ray (r22-030): "(Worker
    # pid=369) " before each line of torch 2.8's CC list; a V100 (7.0) against 7.5 … 12.0
    status, summary = _gd404("r22-030.md")
    assert status is Status.FAIL and "Tesla V100-SXM2-32GB (sm_70)" in summary


HELDOUT_B = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round3" / "reports-B"


def test_no_cuda_gpus_raised_by_torch_cuda_init_is_its_reason(tables: Tables) -> None:
    """https://github.com/vllm-project/vllm/issues/26774 (round 3's r1-056): vLLM's collect_env
    dies in torch.cuda.init() with "RuntimeError: No CUDA GPUs are available" (c10's
    device_count_ensure_non_zero: no device counted). torch imports, is a CUDA build (its CUDA
    init ran), and CUDA is not available for that reason: GD403 fails with it."""
    env = read_reports([("r1-056.txt", (HELDOUT_B / "r1-056.txt").read_text())])
    rt = runtime(env)
    assert rt.cuda_available is False and rt.cuda_init_error == "No CUDA GPUs are available"
    found = verdicts(env, tables)
    assert found["GD403"][0] is Status.FAIL and "No CUDA GPUs are available" in found["GD403"][1]
    assert found["GD401"][0] is Status.PASS


@pytest.mark.parametrize(("line", "reason"), [
    # the rest of c10/cuda/CUDAFunctions.cpp's device_count_impl, raised as they are
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
     "CUDA driver initialization failed, you might not have a CUDA gpu."),
    ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, "
     "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
     "available devices to be zero.",
     "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing "
     "env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to "
     "be zero."),
    ("`RuntimeError: No CUDA GPUs are available`", "No CUDA GPUs are available"),
])
def test_the_other_device_count_errors_are_torchs_reasons(line: str, reason: str) -> None:
    env = read_reports([("x.txt", f"Traceback (most recent call last):\n{line}\n")])
    rt = runtime(env)
    assert rt.cuda_available is False and rt.cuda_init_error == reason


def test_no_cuda_gpus_in_prose_that_is_not_torchs_error_is_not_read() -> None:
    """The words inside a sentence are the reporter's, not torch's line."""
    with pytest.raises(ReportError):
        read_reports([("x.txt", "I think there are No CUDA GPUs are available here\n")])


HELDOUT_L = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13" / "reports-L"


@pytest.mark.parametrize(("name", "gpu"), [
    # r30-008 (apache/mahout#1320): the warning quoted with "> " a line, wrapped after "is"
    # ("sm_61 is\n> not compatible")
    ("r30-008.md", "NVIDIA GeForce GTX 1060 with Max-Q Design"),
    # r29-030 (jhj0517/Whisper-WebUI#653): wrapped inside "the current\nPyTorch installation", its
    # list cut
    ("r29-030.md", "NVIDIA GeForce GTX 1080 Ti"),
])
def test_the_incompatibility_warning_wrapped_anywhere(name: str, gpu: str,
                                                       tables: Tables) -> None:
    env = read_reports([(name, (HELDOUT_L / name).read_text(encoding="utf-8"))])
    assert runtime(env).incompatible_gpus == ((gpu, "6.1"),)
    assert verdicts(env, tables)["GD404"][0] is Status.FAIL


def test_torch_2_8s_list_of_ccs_joined_on_one_line(tables: Tables) -> None:
    """r29-029 (WeiyePlayer/TTcut#3): a Windows app's log that joined the warning's lines: "…
    (CC) 12.0. The following list shows the CCs … it supports: - 5.0 which supports hardware
    CC >=5.0,<6.0 except {5.3} - 6.0 which … - 9.0 which supports hardware CC >=9.0,<10.0
    Please follow …"."""
    env = read_reports([("r29-029.md", (HELDOUT_L / "r29-029.md").read_text(encoding="utf-8"))])
    assert runtime(env).arch_list == ("sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80",
                                      "sm_86", "sm_90")
    assert verdicts(env, tables)["GD404"][0] is Status.FAIL  # sm_120


def test_a_gpu_named_inside_the_reporters_sentence_is_the_gpu_not_the_sentence() -> None:
    """Round 8's r17-028 (its index.toml names the thread): "we are trying to run inference on
    rtx 5080 with torch using yolov8 facing issue like NVIDIA GeForce RTX 5080 with CUDA
    capability sm_120 is not compatible …": the GPU is "NVIDIA GeForce RTX 5080"."""
    path = HELDOUT_L.parents[1] / "round8" / "reports-G" / "r17-028.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert runtime(env).incompatible_gpus == (("NVIDIA GeForce RTX 5080", "12.0"),)
    long = "NVIDIA GeForce GTX 1060 with Max-Q Design with CUDA capability sm_61 is not " \
           "compatible with the current PyTorch installation."
    assert runtime(read_reports([("x", long)])).incompatible_gpus == (
        ("NVIDIA GeForce GTX 1060 with Max-Q Design", "6.1"),)


# -------------------------------------------------------- a kernel launch without code

HELDOUT = REPORTS.parent / "heldout"


def _heldout(path: str) -> Environment:
    return read_reports([(path, (HELDOUT / path).read_text(encoding="utf-8"))])


@pytest.mark.parametrize(("path", "gpu"), [
    # ComfyUI's Qwen3-TTS node on a GTX 1080 Ti (round 22's r48-011); GPT-SoVITS on a GTX
    # 650 (round 21's r46-016); a Quadro K5000 (round 9's r18-034)
    ("round22/reports-U/r48-011.md", "NVIDIA GeForce GTX 1080 Ti (sm_61)"),
    ("round21/reports-T/r46-016.md", "GeForce GTX 650 (sm_30)"),
    ("round9/reports-H/r18-034.md", "Quadro K5000 (sm_30)"),
])
def test_no_kernel_image_beside_the_one_gpu_named_fails_gd404(path: str, gpu: str,
                                                                tables: Tables) -> None:
    """torch's "CUDA error: no kernel image is available for execution on the device" with
    the one GPU the words name: a kernel launched (CUDA initialised) and no code for the GPU
    ran. These reports were refused before (nothing else states torch)."""
    env = _heldout(path)
    assert runtime(env).launch_error == ("no kernel image is available for execution on the "
                                         "device")
    assert runtime(env).cuda_available is True
    status, message = verdicts(env, tables)["GD404"]
    assert status is Status.FAIL and gpu in message and "kernel launch" in message


def test_no_kernel_image_from_a_named_extension_sets_nothing() -> None:
    """Round 16's r36-038 (PyG's torch_scatter on a Tesla M40 under torch 1.8.1, which has
    sm_52): the kernel is the extension's, so torch's error says nothing of torch's build."""
    from gpudoctor.reports import torch_messages

    text = (HELDOUT / "round16/reports-O/r36-038.md").read_text(encoding="utf-8")
    assert torch_messages.parse(text) is None
    alone = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    partial = torch_messages.parse(alone)
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    assert isinstance(partial.torch.runtime, TorchRuntime)
    assert partial.torch.runtime.launch_error is not None
    with_ext = alone + "\n  File \"/site-packages/flash_attn/flash_attn_interface.py\", line 9"
    assert torch_messages.parse(with_ext) is None


def test_no_kernel_image_beside_several_gpus_does_not_say_which(tables: Tables) -> None:
    """The words name two GPU models (a node shared by several): which one ran the kernel
    is not said, so GD404 does not fail on the error."""
    text = ("I usually get a Tesla V100, today a Tesla M40.\n\nRuntimeError: CUDA error: no "
            "kernel image is available for execution on the device\n")
    env = read_reports([("two", text)])
    assert verdicts(env, tables)["GD404"][0] is not Status.FAIL


def test_a_warning_cut_where_the_paste_ends_is_read() -> None:
    """Round 15's r33-024: the stored copy ends inside the warning ("… is not compatible with
    the current Py"): the GPU and its capability are whole."""
    env = _heldout("round15/reports-N/r33-024.md")
    assert runtime(env).incompatible_gpus == (("A100-SXM4-40GB", "8.0"),)


def test_torch_28s_list_with_other_bullets_and_cut_still_names_a_gpu_below_it(
        tables: Tables) -> None:
    """Round 24's r51-030 (Forge Neo on a GTX 1070 Ti): torch 2.8+'s warning with its CC list,
    pasted with "•" bullets and cut after two entries. The list is lowest first, and PTX runs
    only forward, so a 6.1 GPU below its first entry (7.5) has no code: GD404 fails."""
    from gpudoctor.reports.torch_messages import too_old_gpus

    text = ("UserWarning: Found GPU0 NVIDIA GeForce GTX 1070 Ti which is of compute capability "
            "(CC) 6.1. The following list shows the CCs this version of PyTorch was built for "
            "and the hardware CCs it supports:\n• 7.5 which supports hardware CC >=7.5,<8.0\n"
            "• 8.0 which supports hardware CC >=8.0,<9.0\n")
    assert too_old_gpus(text) == (("NVIDIA GeForce GTX 1070 Ti", "6.1"),)
    inside = text.replace("6.1.", "8.6.")  # a GPU the list reaches is not called too old here
    assert too_old_gpus(inside) == ()
    env = _heldout("round24/reports-W/r51-030.md")
    assert verdicts(env, tables)["GD404"][0] is Status.FAIL

"""collect_env output → the Environment: what it states is mapped, the rest NOT_REPORTED."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    CudnnFacts,
    Environment,
    GpuFacts,
    HostFacts,
    NvmlFacts,
    Reason,
    Status,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses
from tests.reports.report_excerpts import (
    COLLECT_ENV_4090_CU117,
    COLLECT_ENV_5090_CU126,
    COLLECT_ENV_ROCM,
    COLLECT_ENV_WINDOWS_CPU,
    COLLECT_ENV_WSL_4070,
)


def _runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def _not_reported(fact: object) -> bool:
    return isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED


def test_rtx4090_cu117() -> None:
    env = read_reports([("issue-726.md", COLLECT_ENV_4090_CU117)])
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.hip, rt.cuda_available) == ("2.0.0", "11.7", None, True)
    for fact in (rt.arch_list, rt.devices, rt.cudnn_version, rt.mapped_libraries,
                 rt.cudnn_conv, rt.device_count):
        assert _not_reported(fact), fact
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "530.30.02"
    (g,) = env.nvml.gpus
    assert isinstance(g, GpuFacts) and g.name == "NVIDIA GeForce RTX 4090"
    assert _not_reported(g.compute_capability) and _not_reported(g.memory_total)
    assert _not_reported(env.nvml.cuda_driver_version)  # collect_env omits the banner's CUDA
    # the system's cuDNN files (not torch's: it brings its own): one copy, known by name only
    assert isinstance(env.cudnn, CudnnFacts)
    (copy,) = env.cudnn.installs
    assert (copy.lib_dir, copy.library_version) == ("/usr/lib/x86_64-linux-gnu", "8.0.5")
    assert copy.libraries == () and _not_reported(copy.header_version)
    # "CUDA runtime version" is nvcc's: the toolkit on PATH, its location not in the report
    assert isinstance(env.toolkits, ToolkitsFacts) and env.toolkits.in_use is not None
    assert env.toolkits.in_use.version == "11.7" and "not in the report" in env.toolkits.in_use.root
    assert [r.value for r in env.toolkits.in_use.readings] == ["11.7.64"]
    # of the host only the machine's architecture (from Python's platform string) is stated
    assert isinstance(env.host, HostFacts) and env.host.machine == "x86_64"
    assert _not_reported(env.host.kernel) and "5.15.0-69-generic" in (env.host.kernel.detail or "")  # type: ignore[union-attr]
    # no "Versions of relevant libraries": the paste is cut off, and the header says so
    assert env.sources == ("collect_env (cut off) in issue-726.md",)
    verdicts = statuses(env)
    assert verdicts["GD404"] is Status.PASS  # sm_86 cubins of the cu117 wheel run on sm_89
    assert verdicts["GD101"] is Status.PASS and verdicts["GD103"] is Status.PASS
    assert verdicts["GD405"] is Status.SKIP and verdicts["GD501"] is Status.SKIP
    # the files' modes, links and sub-libraries are not in the report: not judged
    assert verdicts["GD307"] is Status.PASS
    assert {verdicts[c] for c in ("GD303", "GD304", "GD305", "GD306")} == {Status.SKIP}


def test_wsl_is_named_and_the_windows_driver_kept() -> None:
    env = read_reports([("vllm-9293", COLLECT_ENV_WSL_4070)])
    assert env.nvml.driver_version == "551.88"  # type: ignore[union-attr]
    assert isinstance(env.host, HostFacts)
    assert "(WSL)" in (env.host.kernel.detail or "")  # type: ignore[union-attr]
    assert _runtime(env).version == "2.4.0+cu121"


def test_rocm_build_is_not_read_as_nvidia() -> None:
    env = read_reports([("pr-44106", COLLECT_ENV_ROCM)])
    rt = _runtime(env)
    assert rt.cuda is None and rt.hip == "3.7.20315-077bcfa0"
    assert _not_reported(env.nvml)  # "Device 66a1" is torch's AMD device, not an NVIDIA GPU
    assert env.sources == ("collect_env in pr-44106",)  # complete: it has the pip list
    assert statuses(env)["GD404"] is Status.SKIP


def test_cpu_build_without_any_cuda() -> None:
    env = read_reports([("pr-137846", COLLECT_ENV_WINDOWS_CPU)])
    rt = _runtime(env)
    assert rt.cuda is None and rt.cuda_available is False
    assert _not_reported(rt.cuda_init_error)
    assert _not_reported(env.nvml) and "No CUDA" in (env.nvml.detail or "")  # type: ignore[union-attr]
    verdicts = statuses(env)
    assert verdicts["GD101"] is Status.SKIP  # the driver is not in the report: not "no driver"
    assert verdicts["GD402"] is Status.SKIP
    assert Status.FAIL not in verdicts.values()


def test_torchs_own_arch_list_from_its_warning() -> None:
    env = read_reports([("issue-150733", COLLECT_ENV_5090_CU126)])
    rt = _runtime(env)
    assert rt.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    assert env.sources == ("collect_env (cut off) in issue-150733",)
    f = {r.check_id: r.finding for r in run_checks(env, load_tables(), REGISTRY).results}
    assert f["GD404"].status is Status.FAIL and "sm_120" in f["GD404"].message


def test_cut_before_cuda_state_keeps_what_came_before() -> None:
    cut = COLLECT_ENV_4090_CU117.split("Is CUDA available")[0]
    env = read_reports([("cut.txt", cut)])
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("2.0.0", "11.7") and _not_reported(rt.cuda_available)
    assert env.sources == ("collect_env (cut off) in cut.txt",)
    verdicts = statuses(env)
    assert verdicts["GD403"] is Status.SKIP and verdicts["GD405"] is Status.SKIP
    assert verdicts["GD404"] is Status.SKIP  # the GPU list came after the cut


def test_a_missing_cuda_state_line_still_judges_the_arch() -> None:
    text = COLLECT_ENV_4090_CU117.replace("Is CUDA available: True\n", "")
    env = read_reports([("edited.txt", text)])
    assert _not_reported(_runtime(env).cuda_available)
    verdicts = statuses(env)
    assert verdicts["GD403"] is Status.SKIP and verdicts["GD404"] is Status.PASS


def test_cut_before_the_cuda_build_is_not_a_cpu_build() -> None:
    cut = COLLECT_ENV_4090_CU117.split("CUDA used to build")[0]
    env = read_reports([("cut.txt", cut)])
    assert isinstance(env.torch, TorchFacts) and _not_reported(env.torch.runtime)
    verdicts = statuses(env)
    assert verdicts["GD401"] is Status.SKIP and verdicts["GD402"] is Status.SKIP


@pytest.mark.slow
def test_this_machines_collect_env() -> None:
    """The real script of the torch in this venv, run here (no GPU, no driver), against what
    that torch says of itself."""
    p = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True,
                       text=True, timeout=300, check=False)
    if p.returncode != 0:
        pytest.skip(f"collect_env failed here: {p.stderr.strip()[-200:]}")
    code = ("import torch; print(torch.__version__); print(torch.version.cuda); "
            "print(torch.cuda.is_available())")
    facts = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300, check=True).stdout.split()
    env = read_reports([("collect_env.txt", p.stdout)])
    rt = _runtime(env)
    assert [rt.version, str(rt.cuda), str(rt.cuda_available)] == facts
    assert env.sources == ("collect_env in collect_env.txt",)


# vllm-project/vllm-omni#429 (round 12's r27-024, a false failure once): vLLM's sectioned
# collect_env of a machine without an NVIDIA GPU, the paste ending at the GPU line
VLLM_SECTIONED_NO_CUDA = """\
Collecting environment information...
==============================
       PyTorch Info
==============================
PyTorch version              : 2.9.0+cu128
Is debug build               : False
CUDA used to build PyTorch   : 12.8
ROCM used to build PyTorch   : N/A

==============================
       CUDA / GPU Info
==============================
Is CUDA available            : False
CUDA runtime version         : No CUDA
CUDA_MODULE_LOADING set to   : N/A
GPU models and configuration : No CUDA
"""


def test_no_cuda_in_the_gpu_field_stands_for_the_driver_line_cut_off() -> None:
    """collect_env writes "No CUDA" into every CUDA field at once (driver, GPUs, toolkit all
    missing): a paste cut before the driver line still states that nvidia-smi found nothing,
    so GD403 defers to GD101's note instead of failing on a reason "not in the report"."""
    env = read_reports([("vllm-omni-429", VLLM_SECTIONED_NO_CUDA)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_INSTALLED
    found = statuses(env)
    assert Status.FAIL not in found.values()
    # a driver line cut off without "No CUDA" beside it stays unknown, as before
    cut = VLLM_SECTIONED_NO_CUDA.replace("GPU models and configuration : No CUDA\n", "")
    assert read_reports([("cut", cut)]).nvml.reason is Reason.NOT_REPORTED  # type: ignore[union-attr]


def test_a_collect_env_cut_before_its_cuda_line_takes_the_versions_tag() -> None:
    """Round 18's r40-016 (LLaMA-Factory's env lines without their bullets; its thread in
    round18/reports-Q/index.toml): "PyTorch version: 2.7.1+cu128" starts a collect_env-like
    block with no "CUDA used to build PyTorch" line: the tag states the CUDA build (GD402
    passes; it skipped). Holding no other collect_env field, the block is not collect_env: the
    lines are LLaMA-Factory's list, whose "GPU type: NVIDIA GeForce RTX 5090" GD404 judges (the
    2.7.1 cu128 wheel holds sm_120: it passes)."""

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round18"
            / "reports-Q" / "r40-016.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("2.7.1+cu128", "12.8")
    assert statuses(env)["GD402"] is Status.PASS
    assert statuses(env)["GD404"] is Status.PASS
    cpu = read_reports([("c", "PyTorch version: 2.1.0+cpu\nIs debug build: False\n")])
    assert _runtime(cpu).cuda is None


def test_another_programs_pytorch_version_line_is_not_collect_env() -> None:
    """Round 22's r47-026 (leggedrobotics/legged_gym#5): Isaac Gym prints "PyTorch version
    1.10.0+cu113" and "Device count 1" at start-up, under the reporter's plain list ("Nvidia
    Driver: 470.82.00", "Graphics: RTX 3060 Laptop", "Pytorch: 1.10.0+cu113"). Read as a
    collect_env cut off after its first line it hid the list: no driver, GD103 and GD404
    skipped. A block holding none of collect_env's other fields is not collect_env."""
    from pathlib import Path

    from gpudoctor.reports import collect_env

    path = (Path(__file__).parents[1] / "fixtures" / "heldout" / "round22" / "reports-U"
            / "r47-026.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert env.sources and "collect_env" not in env.sources[0]
    found = statuses(env)
    # 470.82 runs CUDA 11.3; the 1.10.0 cu113 wheel holds sm_86
    assert (found["GD103"], found["GD404"]) == (Status.PASS, Status.PASS)
    assert collect_env.parse("PyTorch version 1.10.0+cu113\nDevice count 1\n") is None
    assert collect_env.parse("PyTorch version: 2.1.0\nIs debug build: False\n") is not None
    assert collect_env.parse(
        "Collecting environment information...\nPyTorch version: 2.1.0\n") is not None


def test_an_interpreter_sessions_prints_are_not_collect_env() -> None:
    """Round 24's r51-027 (FramePack on an RTX 3050 Ti): `print("PyTorch version:",
    torch.__version__)` and `print("cuDNN version:", …)` at the prompt print two of
    collect_env's field names; the echoed print() calls say it is a session, not collect_env,
    so the GPU the words name is read and GD402 fails on the CPU build."""
    path = (Path(__file__).parents[1] / "fixtures" / "heldout" / "round24" / "reports-W"
            / "r51-027.md")
    from gpudoctor.reports import collect_env

    text = path.read_text(encoding="utf-8")
    assert collect_env.parse("PyTorch version: 2.6.0+cpu\nprint(\"cuDNN version:\", v)\n"
                             "cuDNN version: None\n") is None
    env = read_reports([(path.name, text)])
    found = {r.check_id: r.finding.status for r in run_checks(env, load_tables()).results}
    assert found["GD402"] is Status.FAIL

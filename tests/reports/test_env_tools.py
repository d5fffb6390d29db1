"""Other tools' environment reports (detectron2, OpenMMLab, SGLang, Lightning, nnDetection)
and a bare `nvcc --version`, read as the collect_env facts they restate. Every report is a
real one from half A of round 3 (tests/fixtures/heldout/round3/reports-A/, its source in the
index and named at each test); each was refused ("no report recognised") before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    Environment,
    GpuFacts,
    NvmlFacts,
    Status,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports import env_tools
from gpudoctor.reports.read import read_reports

HELDOUT_A = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round3" / "reports-A"


def _a(name: str) -> Environment:
    return read_reports([(name, (HELDOUT_A / name).read_text(encoding="utf-8"))])


def _judged(env: Environment) -> dict[str, Any]:
    return {str(r.check_id): r.finding.status for r in run_checks(env, load_tables()).results}


def _runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def _gpus(env: Environment) -> list[tuple[str, str | None]]:
    assert isinstance(env.nvml, NvmlFacts)
    return [(g.name, g.compute_capability if isinstance(g.compute_capability, str) else None)
            for g in env.nvml.gpus if isinstance(g, GpuFacts)]


def _toolkit(env: Environment) -> str | None:
    tk = env.toolkits.in_use if isinstance(env.toolkits, ToolkitsFacts) else None
    return tk.version if tk is not None and isinstance(tk.version, str) else None


def test_detectron2_with_the_gpus_arch() -> None:
    """conansherry/detectron2#30 (Windows): "PyTorch 1.8.0+cu111 @C:\\…", "GPU available Yes",
    "GPU 0  NVIDIA GeForce RTX 3060 Laptop GPU (arch=8.6)"."""
    env = _a("r1-107.txt")
    assert env.sources == ("detectron2's collect_env in r1-107.txt",)
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("1.8.0+cu111", "11.1", True)
    assert _gpus(env) == [("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6")]
    found = _judged(env)
    assert found["GD402"] is Status.PASS and found["GD403"] is Status.PASS


def test_detectron2_driver_and_cut_build_flags() -> None:
    """detectron2#4313: "Driver version 512.13" is judged (GD103); the build's arch flags end
    where the paste ends ("code=sm_8"), so they are no arch list and GD404 cannot fail on them."""
    env = _a("r1-106.txt")
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "512.13"
    assert isinstance(_runtime(env).arch_list, Unavailable)
    found = _judged(env)
    assert found["GD103"] is Status.PASS and found["GD404"] is not Status.FAIL


def test_detectron2_in_a_training_log() -> None:
    """detectron2#195: the table printed by the trainer under a log prefix, "GPU 0,…,7  Tesla
    V100-PCIE-32GB", "NVCC  Cuda compilation tools, release 10.1, V10.1.243"."""
    env = _a("r1-006.txt")
    assert _gpus(env) == [("Tesla V100-PCIE-32GB", None)] * 8
    assert _toolkit(env) == "10.1" and _runtime(env).cuda_available is True
    assert _judged(env)["GD403"] is Status.PASS


def test_detectron2_cpu_build() -> None:
    """pytorch#41598 (r1-057): detectron2's table of a CPU run, "PyTorch 1.5.1+cpu", "GPU
    available False": a CPU build, and nothing to fail."""
    env = _a("r1-057.md")
    rt = _runtime(env)
    assert rt.cuda is None and rt.cuda_available is False
    assert not [c for c, s in _judged(env).items() if s is Status.FAIL]


def test_openmmlab_build_flags_are_torchs_arch_list() -> None:
    """mmdet's collect_env (r1-094): "PyTorch: 1.7.1" and its build configuration ("CUDA
    Runtime 10.2", "NVCC architecture flags: -gencode;arch=compute_37,code=sm_37;…;
    code=compute_37"): a V100S (sm_70) is in it."""
    env = _a("r1-094.txt")
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("1.7.1", "10.2")
    assert rt.arch_list == ("sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "compute_37")
    assert _judged(env)["GD404"] is Status.PASS


HELDOUT_G = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round8" / "reports-G"


def _g(name: str) -> Environment:
    return read_reports([(name, (HELDOUT_G / name).read_text(encoding="utf-8"))])


def test_openmmlab_build_configuration_names_the_cudnn_torch_runs() -> None:
    """mmseg's collect_env (r15-003, https://github.com/open-mmlab/mmsegmentation/issues/466):
    torch 1.6.0's build configuration says "- CuDNN 7.6.3" (cudnnGetVersion(): the cuDNN torch
    runs). cuDNN 7.6.3 stops at sm_75, so the RTX 3090 (sm_86) fails GD311."""
    env = _g("r15-003.txt")
    assert _runtime(env).cudnn_version == 7603
    assert _judged(env)["GD311"] is Status.FAIL


def test_openmmlab_gpu_line_without_its_index() -> None:
    """A poster trimmed mmseg's collect_env to "GPU: Tesla V100-PCIE-32GB" (r15-004,
    https://github.com/MengyangPu/EDTER/issues/29): the GPU is read, so GD404 and GD311 judge
    it (sm_70 is in the build flags and in cuDNN 7.6.3's range), and the report is OpenMMLab's,
    not Lightning's."""
    env = _g("r15-004.txt")
    assert _gpus(env) == [("Tesla V100-PCIE-32GB", None)]
    judged = _judged(env)
    assert (judged["GD404"], judged["GD311"]) == (Status.PASS, Status.PASS)


def test_sglang_check_env() -> None:
    """sglang#3817 (r1-074): "GPU 0,…,7: NVIDIA H200", "… Compute Capability: 9.0", "CUDA Driver
    Version: 550.127.05" (the NVIDIA driver), "NVCC: … release 12.4", "PyTorch: 2.5.1+cu124"."""
    env = _a("r1-074.txt")
    assert _gpus(env) == [("NVIDIA H200", "9.0")] * 8
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "550.127.05"
    assert _toolkit(env) == "12.4"
    found = _judged(env)
    assert {found[c] for c in ("GD103", "GD104", "GD402", "GD403", "GD404")} == {Status.PASS}


def test_sglang_check_env_pasted_into_one_line() -> None:
    """sglang#13198 (r1-073): check_env's output flattened into one Markdown paragraph after
    "My envs: `python3 -m sglang.check_env", torch's GB10 warning inside it: re-cut at its
    keys, it states torch 2.9.1+cu130, driver 580.95.05, nvcc 13.0 and the GB10's CC 12.1."""
    env = _a("r1-073.md")
    assert _runtime(env).version == "2.9.1+cu130" and _toolkit(env) == "13.0"
    assert _gpus(env) == [("NVIDIA GB10", "12.1")]
    found = _judged(env)
    assert {found[c] for c in ("GD103", "GD104", "GD402", "GD403")} == {Status.PASS}


def test_nndetection_arch_list_and_current_device() -> None:
    """nnDetection's dump (r1-021): "PyTorch CUDA Arch List: ['sm_37', …, 'compute_37']" and
    "PyTorch Current Device Capability: (8, 6)", no GPU name."""
    env = _a("r1-021.txt")
    assert _runtime(env).arch_list[-2:] == ("sm_86", "compute_37")  # type: ignore[index]
    assert [cc for _, cc in _gpus(env)] == ["8.6"]
    assert _judged(env)["GD404"] is Status.PASS


@pytest.mark.parametrize(("name", "version", "gpus"), [
    ("r1-086.txt", "2.1.0", 4),  # pytorch-lightning#19261: "* CUDA: - GPU: - NVIDIA …"
    ("r1-087.txt", "1.4.0+cu100", 1),  # pytorch-lightning#1234: tab-indented, "pyTorch_version"
])
def test_lightning_env_details(name: str, version: str, gpus: int) -> None:
    env = _a(name)
    rt = _runtime(env)
    assert rt.version == version and rt.cuda_available is True and isinstance(rt.cuda, str)
    assert len(_gpus(env)) == gpus and all(n.startswith(("NVIDIA", "GeForce"))
                                           for n, _ in _gpus(env))


def test_bare_nvcc_version_is_the_toolkit() -> None:
    """DeepLearningExamples#308: `nvcc --version` ("release 10.1, V10.1.243") above nvidia-smi's
    table (driver 430.50): GD104 judges the two (it skipped)."""
    env = _a("r2-062.md")
    assert _toolkit(env) == "10.1"
    assert _judged(env)["GD104"] is Status.PASS


def test_a_tool_report_without_torch_or_gpus_is_not_a_report() -> None:
    """A line that starts such a report, alone, states nothing: refused as before."""
    from gpudoctor.reports.read import ReportError

    with pytest.raises(ReportError):
        read_reports([("notes", "sys.platform: linux\nnothing else\n")])


HELDOUT_H = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round9" / "reports-H"


def _h(name: str) -> Environment:
    return read_reports([(name, (HELDOUT_H / name).read_text(encoding="utf-8"))])


@pytest.mark.parametrize(("name", "version", "gpu"), [
    ("r19-007.txt", "2.0.1+cu118", ("Tesla P100-PCIE", "6.0")),  # xformers#939, on Kaggle
    ("r19-008.txt", "2.12.1+cu130", ("NVIDIA GeForce RTX 5070", "12.0")),  # xformers#1399
])
def test_xformers_info(name: str, version: str, gpu: tuple[str, str]) -> None:
    """`python -m xformers.info`: "pytorch.version", "pytorch.cuda: available", and the current
    device's "gpu.name" and "gpu.compute_capability"; its operators' lines are no facts here."""
    env = _h(name)
    assert env.sources == (f"xFormers' info in {name}",)
    rt = _runtime(env)
    assert (rt.version, rt.cuda_available) == (version, True)
    assert _gpus(env) == [gpu]
    judged = _judged(env)
    assert (judged["GD402"], judged["GD403"], judged["GD404"]) == (Status.PASS,) * 3


def test_ds_report_rows_with_dot_leaders() -> None:
    """DeepSpeed's ds_report (deepspeedai/DeepSpeed#6762): "torch version .... 2.3.0+cu121",
    "torch cuda version .... 12.1", "nvcc version .... 12.0" (the toolkit), and "shared memory
    (/dev/shm) size .... 125.77 GB" (GD504 judges it); no GPU or driver is printed."""
    env = _h("r19-006.txt")
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("2.3.0+cu121", "12.1")
    assert _toolkit(env) == "12.0"
    judged = _judged(env)
    assert (judged["GD203"], judged["GD504"]) == (Status.PASS, Status.PASS)


def test_detectron2s_first_table_without_sys_platform() -> None:
    """detectron2's first releases printed no sys.platform row above the table (r18-018,
    https://github.com/facebookresearch/detectron2/issues/7): its "Detectron2 Compiler" row
    starts the report; torch 1.3.0 (CUDA 10.1) with sm_35/sm_50 cubins and compute_50 PTX runs
    on a P100 (sm_60) by PTX JIT."""
    env = _h("r18-018.txt")
    assert env.sources == ("detectron2's collect_env in r18-018.txt",)
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("1.3.0", "10.1", True)
    assert rt.arch_list == ("sm_35", "sm_50", "compute_50")
    assert _judged(env)["GD404"] is Status.PASS


ROUND9_H = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round9" / "reports-H"


def test_fastai_show_install() -> None:
    # https://github.com/fastai/fastai/issues/1566: fastai 1's show_install above an
    # nvidia-smi table cut after its header: "torch version : 1.0.0", "torch cuda ver :
    # 9.0.176", "torch cuda is : available", "torch cudnn ver : 7401", "- gpu0 : 7949MB |
    # GeForce RTX 2080"
    env = read_reports([("r18-002.txt", (ROUND9_H / "r18-002.txt").read_text(encoding="utf-8"))])
    assert env.sources[0] == "fastai's show_install in r18-002.txt"
    torch = env.torch
    assert isinstance(torch, TorchFacts) and isinstance(torch.runtime, TorchRuntime)
    assert (torch.runtime.version, torch.runtime.cuda, torch.runtime.cuda_available) == (
        "1.0.0", "9.0.176", True)
    assert torch.runtime.cudnn_version == 7401
    assert torch.python_version == "3.7.0"
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "415.25"
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["GeForce RTX 2080"]
    found = _judged(env)
    assert {found[c] for c in ("GD103", "GD402", "GD403")} == {Status.PASS}



def test_sglang_check_env_cut_before_torchs_line_still_says_cuda_is_available() -> None:
    """SGLang's check_env cut before its PyTorch line (round 15's r34-022): "CUDA available:
    True" is torch's own answer, so torch is a CUDA build whose CUDA initialised, of a version
    the report does not show: GD403 passes (before, torch was unread and it skipped)."""
    from tests.reports.reading_kit import statuses

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round15"
            / "reports-N" / "r34-022.txt")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.cuda_available is True
    assert isinstance(env.torch.runtime.version, Unavailable)
    got = statuses(env)
    assert got["GD403"] is Status.PASS and got["GD103"] is Status.PASS


REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def test_monai_print_debug_info() -> None:
    """Project-MONAI/MONAI#8789 (tests/fixtures/reports/): MONAI's print_debug_info() with its
    GPU section: torch's version, "Has CUDA", torch's CUDA and cuDNN, its arch list, and each
    GPU's name and compute capability."""
    name = "issue_body-monai-print-debug-info-7x-rtx4090-cu128.md"
    env = read_reports([(name, (REPORTS / name).read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.10.0+cu128", "12.8", True)
    assert rt.arch_list == ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
    assert rt.cudnn_version == 91002
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 7
    assert all(isinstance(g, GpuFacts) and (g.name, g.compute_capability)
               == ("NVIDIA GeForce RTX 4090", "8.9") for g in env.nvml.gpus)
    judged = _judged(env)
    assert judged["GD404"] is Status.PASS and judged["GD103"] is Status.PASS


def test_monai_print_config_of_a_cpu_build() -> None:
    """Round 15's r33-034 (Project-MONAI/MONAILabel, its thread in round15/reports-N/index.toml):
    print_config's first three lines only, a CPU-only torch."""
    path = HELDOUT_A.parents[1] / "round15" / "reports-N" / "r33-034.md"
    env = read_reports([("r33-034.md", path.read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("2.6.0+cpu", None)
    assert env.sources[0].startswith("MONAI's print_config")


def test_a_cuda_version_row_is_torchs_only_in_monais_report() -> None:
    """MONAI prints torch.version.cuda as "CUDA version"; in another tool's rows it may be the
    toolkit's or the driver's, and is not read as torch's."""
    monai = read_reports([("m", "MONAI version: 1.3.0\nPytorch version: 2.1.0\nHas CUDA: True\n"
                                "CUDA version: 12.1\n")])
    assert _runtime(monai).cuda == "12.1"
    other = read_reports([("o", "sys.platform: linux\nPyTorch: 2.1.0\nCUDA available: True\n"
                                "CUDA version: 12.1\n")])
    assert _runtime(other).cuda != "12.1"


@pytest.mark.parametrize(("name", "torch", "driver", "cuda"), [
    ("r37-003.txt", "1.8.0+cu111", "510.60.02", 11060),  # NVIDIA/MinkowskiEngine (index.toml)
    ("r37-004.txt", "1.12.1+cu113", "537.42", 12020),  # under WSL2, cut inside its nvcc section
])
def test_minkowski_engine_print_diagnostics(name: str, torch: str, driver: str,
                                            cuda: int) -> None:
    """Round 17's MinkowskiEngine `print_diagnostics()`: torch's version alone under its
    "Pytorch" header, and nvidia-smi -q's version fields with their colon dropped ("Driver
    Version 510.60.02"): the driver answered (GD101 passes, GD103 from its CUDA); it names no
    GPU, so nothing says which GPUs there are (GD102 and GD404 skip, saying so)."""
    path = HELDOUT_A.parents[1] / "round17" / "reports-P" / name
    env = read_reports([(name, path.read_text(encoding="utf-8"))])
    assert env.sources[0].startswith("MinkowskiEngine's print_diagnostics")
    rt = _runtime(env)
    assert (rt.version, rt.cuda_available) == (torch, True)
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.gpus == ()
    assert (env.nvml.driver_version, env.nvml.cuda_driver_version) == (driver, cuda)
    results = {str(r.check_id): r.finding for r in run_checks(env, load_tables()).results}
    assert results["GD101"].status is Status.PASS and results["GD103"].status is Status.PASS
    assert results["GD102"].status is Status.SKIP and results["GD404"].status is Status.SKIP
    assert "not in the report" in results["GD404"].message


def test_minkowski_sections_without_the_driver_state_no_driver() -> None:
    """nvidia-smi that printed nothing (no driver) leaves the section empty: no driver is
    stated, and nothing fails for it."""
    env = read_reports([("me", "==========Pytorch==========\n2.1.0+cu121\n"
                               "torch.cuda.is_available(): False\n"
                               "==========NVIDIA-SMI==========\n/usr/bin/nvidia-smi\n"
                               "==========NVCC==========\n")])
    assert _runtime(env).cuda_available is False
    assert not isinstance(env.nvml, NvmlFacts)


def test_torchs_build_configuration_writes_cudnn_9_10_in_cudnn_8s_formula() -> None:
    """Round 18's r39-034 (lmdeploy's check_env, its thread in round18/reports-Q/index.toml):
    torch 2.8.0's build configuration prints "- CuDNN 91.0.2" for cuDNN 9.10.2 (it splits
    91002 as cuDNN 8's MAJOR*1000 + MINOR*100 + PATCH). Read as 9.10.2, GD309 passes (it
    failed, reading a cuDNN "91.0.2" older than the 9.10.2.21 the wheel was built with)."""
    path = HELDOUT_A.parents[1] / "round18" / "reports-Q" / "r39-034.txt"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert _runtime(env).cudnn_version == 91002
    assert _judged(env)["GD309"] is Status.PASS
    old = read_reports([("o", "sys.platform: linux\nPyTorch: 1.8.0+cu111\nCUDA available: True\n"
                              "PyTorch compiling details: PyTorch built with:\n  - CuDNN 8.0.5\n")])
    assert _runtime(old).cudnn_version == 8005


def test_openmmlabs_environment_printed_as_a_python_dict() -> None:
    """Round 18's r39-020 (opencompass printing mmengine's collect_env() dict, its thread in
    round18/reports-Q/index.toml): "{'CUDA available': True, 'CUDA_HOME': …, 'GPU
    0,1,2,3,4,5,6,7': 'NVIDIA A100-SXM4-80GB', …", padded by the terminal. Read as the text
    form's "key: value" lines: CUDA available (GD403 passes; it was refused)."""
    path = HELDOUT_A.parents[1] / "round18" / "reports-Q" / "r39-020.txt"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert _runtime(env).cuda_available is True
    assert _judged(env)["GD403"] is Status.PASS
    # pprint's form: one item a line, a long string in adjacent literals with escapes
    printed = ("before\n{'sys.platform': 'linux',\n 'CUDA available': True,\n"
               " 'GPU 0': 'NVIDIA GeForce RTX 3090',\n 'PyTorch': '1.8.0+cu111',\n"
               " 'PyTorch compiling details': 'PyTorch built with:\\n'\n"
               "                              '  - CuDNN 8.0.5\\n',\n"
               " 'TorchVision': '0.9.0+cu111'}\nafter")
    lines = env_tools.undict(printed.split("\n"))
    assert lines[0] == "before" and lines[-1] == "after"
    assert "GPU 0: NVIDIA GeForce RTX 3090" in lines and "  - CuDNN 8.0.5" in lines
    read = read_reports([("p", printed)])
    assert _runtime(read).version == "1.8.0+cu111" and _runtime(read).cudnn_version == 8005
    # a dict that is not OpenMMLab's environment is left as it is
    assert env_tools.undict(["{'a': 1}"]) == ["{'a': 1}"]
    # in Markdown's inline code (round 20's r43-008: mmcv's check on an RTX A6000, refused
    # before): the same facts, GD403 and GD404 pass as labelled
    path = HELDOUT_A.parents[1] / "round20" / "reports-S" / "r43-008.txt"
    coded = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert _runtime(coded).version == "2.0.0+cu117" and _runtime(coded).cuda_available is True
    assert _judged(coded)["GD403"] is Status.PASS and _judged(coded)["GD404"] is Status.PASS


@pytest.mark.parametrize(("name", "driver", "gpu", "toolkit"), [
    ("r41-015.txt", "419.72", "Quadro P600", "10.1"),
    ("r41-016.txt", "431.60", "GeForce RTX 2060", "10.0"),
    ("r41-028.txt", "431.36", "GeForce GTX 1060", "9.0"),
])
def test_faceswaps_system_information(name: str, driver: str, gpu: str, toolkit: str) -> None:
    """Round 19's three faceswap reports (Windows 10, their threads in round19/reports-R/
    index.toml): "gpu_driver: 419.72", "gpu_devices: GPU_0: Quadro P600", "gpu_cuda: 10.1" (the
    globally installed CUDA). Each was refused; now GD101 and GD104 pass as labelled."""
    path = HELDOUT_A.parents[1] / "round19" / "reports-R" / name
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == driver
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == [gpu]
    assert isinstance(env.toolkits, ToolkitsFacts)
    assert env.toolkits.toolkits[0].version == toolkit
    got = _judged(env)
    assert got["GD101"] is Status.PASS and got["GD104"] is Status.PASS

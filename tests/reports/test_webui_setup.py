"""kohya_ss's and SD.Next's start-up torch check (`gpudoctor.reports.webui_setup`): real logs of
the held-out rounds 13 and 14 (development data since their scoring; sources in their
index.toml, named at each test), each of which GD404 skipped or no reader recognised before."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Status
from gpudoctor.reports import webui_setup
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import read_path, runtime_of, statuses

HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"


@pytest.mark.parametrize(("path", "gpu", "cc"), [
    # bmaltais/kohya_ss#2072: "Torch 2.1.2+cu118", "Torch backend: nVidia CUDA 11.8 cuDNN
    # 8905", "Torch detected GPU: NVIDIA GeForce RTX 4060 Laptop GPU VRAM 8188 Arch (8, 9)"
    (HELDOUT / "round13" / "reports-L" / "r30-005.txt", "NVIDIA GeForce RTX 4060 Laptop GPU",
     "8.9"),
    # bmaltais/kohya_ss#2115: the same, its GPU line wrapped by the console before "Arch (8, 6)"
    (HELDOUT / "round14" / "reports-M" / "r31-008.md", "NVIDIA GeForce RTX 3090", "8.6"),
])
def test_kohyas_torch_check_is_torchs_view(path: Path, gpu: str, cc: str) -> None:
    env = read_path(path)
    rt = runtime_of(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.1.2+cu118", "11.8", True)
    assert isinstance(env.nvml, NvmlFacts)
    assert [(g.name, g.compute_capability) for g in env.nvml.gpus] == [(gpu, cc)]
    status = statuses(env)
    assert (status["GD402"], status["GD404"]) == (Status.PASS, Status.PASS)


def test_sdnexts_device_line_names_the_driver_and_the_gpus_capability() -> None:
    # vladmandic/sdnext#3896: "Device: device=NVIDIA GeForce RTX 5090 n=1 arch=sm_90
    # capability=(12, 0) cuda=12.6 cudnn=90501" and, wrapped, "driver=576.02"
    env = read_path(HELDOUT / "round14" / "reports-M" / "r31-001.md")
    rt = runtime_of(env)
    assert (rt.cuda, rt.cudnn_version, rt.device_count) == ("12.6", 90501, 1)
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "576.02"
    assert [(g.name, g.compute_capability) for g in env.nvml.gpus] == [
        ("NVIDIA GeForce RTX 5090", "12.0")]
    assert statuses(env)["GD103"] is Status.PASS


def test_kohyas_cpu_torch_that_found_no_cuda() -> None:
    # bmaltais/kohya_ss#2010: "Torch 2.2.1+cpu", "Torch reports CUDA not available"
    env = read_path(HELDOUT / "round13" / "reports-L" / "r30-026.txt")
    rt = runtime_of(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.2.1+cpu", None, False)


@pytest.mark.parametrize("text", [
    "Torch detected GPU: AMD Radeon RX 7900 XTX\n",  # DirectML's line: no VRAM, no Arch
    "INFO     Torch 2.1.2+cu118\nINFO     Torch 2.2.0+cu121\n"
    "INFO     Torch backend: nVidia CUDA 11.8 cuDNN 8905\n",  # two versions: two logs
])
def test_what_is_notread_path(text: str) -> None:
    assert webui_setup.parse(text) is None
    with pytest.raises(ReportError):
        read_reports([("x.log", text)])


def test_a_tagged_version_alone_is_the_words_not_the_setup_log() -> None:
    # kohya_ss's "Torch 2.1.2+cu118" alone: not its setup log (nothing of CUDA or a GPU), but
    # a version with its tag states release and build, read as the reporter's words
    text = "INFO     Torch 2.1.2+cu118\n"
    assert webui_setup.parse(text) is None
    env = read_reports([("x.log", text)])
    assert runtime_of(env).version == "2.1.2+cu118"
    assert not isinstance(env.nvml, NvmlFacts)


def test_the_checks_nvidia_toolkit_line_is_a_gpu_sign() -> None:
    """kohya_ss's check_torch logs "nVidia toolkit detected" where shutil.which('nvidia-smi')
    finds it (or System32 holds nvidia-smi.exe): the driver's tools are installed. Round 13's
    r30-026 (bmaltais/kohya_ss#2010) then logs "Torch 2.2.1+cpu": a CPU build on a machine
    meant for the GPU, so GD402 fails (it skipped: no GPU sign), naming the sign. The driver's
    state stays unknown: GD101 does not pass on it."""
    env = read_path(HELDOUT / "round13" / "reports-L" / "r30-026.txt")
    got = statuses(env)
    assert got["GD402"] is Status.FAIL and got["GD101"] is not Status.PASS
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.gpus == ()
    # without the line, the same log shows no GPU sign
    text = (HELDOUT / "round13" / "reports-L" / "r30-026.txt").read_text(encoding="utf-8")
    plain = read_reports([("x.log", text.replace("nVidia toolkit detected", "Using CPU-only "
                                                                           "Torch"))])
    assert statuses(plain)["GD402"] is Status.SKIP

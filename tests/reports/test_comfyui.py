"""ComfyUI's system information and start-up log (`gpudoctor.reports.comfyui`): real reports of
tests/fixtures/heldout/round13/reports-L/ (their sources in its index.toml, named at each test),
each of which GD404 skipped ("the NVIDIA driver is not in the report") before this reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Status
from gpudoctor.reports import comfyui
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import read_path, runtime_of, statuses

HELDOUT_L = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13" / "reports-L"


@pytest.mark.parametrize(("name", "version", "gpu", "gd404"), [
    # https://github.com/Comfy-Org/ComfyUI/issues/15199: the frontend's System Information
    ("r30-001.md", "2.7.1+cu128", "NVIDIA GeForce RTX 4060 Ti", Status.PASS),
    # https://github.com/Comfy-Org/ComfyUI/issues/9705: a GTX 1070 (sm_61) on 2.8.0+cu129,
    # whose list starts at sm_70
    ("r30-002.md", "2.8.0+cu129", "NVIDIA GeForce GTX 1070", Status.FAIL),
    # https://github.com/Comfy-Org/ComfyUI/issues/10468: a GTX 1080 on 2.10.0+cu130 (no CUDA 13
    # build can hold sm_61 code)
    ("r30-010.md", "2.10.0+cu130", "NVIDIA GeForce GTX 1080", Status.FAIL),
    # https://github.com/Comfy-Org/ComfyUI/issues/8010: the start-up log ("pytorch version:",
    # "Device: cuda:0 NVIDIA GeForce RTX 4090 : native")
    ("r30-031.txt", "2.7.0+cu128", "NVIDIA GeForce RTX 4090", Status.PASS),
])
def test_comfyuis_device_is_torchs_gpu(name: str, version: str, gpu: str, gd404: Status) -> None:
    env = read_path(HELDOUT_L / name)
    rt = runtime_of(env)
    assert (rt.version, rt.cuda_available) == (version, True)
    assert isinstance(env.nvml, NvmlFacts) and [g.name for g in env.nvml.gpus] == [gpu]
    status = statuses(env)
    assert (status["GD404"], status["GD403"], status["GD101"]) == (gd404, Status.PASS,
                                                                   Status.PASS)


def test_a_rocm_builds_amd_device_is_no_nvidia_gpu() -> None:
    # https://github.com/Comfy-Org/ComfyUI/issues/14881: torch 2.9.1+rocm7.2.1, a Radeon named
    # "cuda:0 AMD Radeon …" as ROCm builds name their devices
    env = read_path(HELDOUT_L / "r30-028.md")
    assert runtime_of(env).hip is not None
    assert not isinstance(env.nvml, NvmlFacts) or not env.nvml.gpus
    assert Status.FAIL not in statuses(env).values()


@pytest.mark.parametrize("text", [
    "Device: cpu\npytorch version: 2.7.0+cpu\n",  # ComfyUI's name for a device of another type
    "- **Name:** cuda:0\n",  # no GPU name after the torch device
    "Device: cuda:0 NVIDIA GeForce RTX 4090 : native\npytorch version: 2.7.0+cu128\n"
    "pytorch version: 2.6.0+cu126\n",  # two versions: two environments, neither read as this
])
def test_what_is_not_comfyuis_cuda_device(text: str) -> None:
    partial = comfyui.parse(text)
    assert partial is None or partial.torch is None
    if partial is None and "+cpu" not in text:
        with pytest.raises(ReportError):
            read_reports([("paste.txt", text)])
    elif partial is None:  # the tagged version alone is read as the reporter's words
        assert read_reports([("paste.txt", text)]).torch.runtime.version == "2.7.0+cpu"  # type: ignore[union-attr]


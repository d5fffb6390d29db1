"""Unsloth's start-up banner (`gpudoctor.reports.unsloth`): real reports of
tests/fixtures/heldout/round13/reports-L/ (their sources in its index.toml, named at each test),
each refused ("no report recognised") before this reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Status
from gpudoctor.reports import unsloth
from tests.reports.reading_kit import read_path, runtime_of, statuses

HELDOUT_L = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13" / "reports-L"


@pytest.mark.parametrize(("name", "version", "gpu", "cc", "count"), [
    # https://github.com/unslothai/unsloth/issues/1856 (r30-033): 2025's banner ("Num GPUs =",
    # "Torch: … CUDA: 12.0. CUDA Toolkit: 12.8."), printed twice
    ("r30-033.txt", "2.8.0.dev20250331+cu128", "NVIDIA GeForce RTX 5090", "12.0", 1),
    # https://github.com/unslothai/unsloth/issues/434 (r30-034): 2024's ("GPU: …", "Pytorch:
    # 2.3.0. CUDA = 7.5. CUDA Toolkit = 12.1.")
    ("r30-034.txt", "2.3.0", "NVIDIA GeForce RTX 2060 SUPER", "7.5", None),
])
def test_unsloths_banner_is_torchs_first_gpu(name: str, version: str, gpu: str, cc: str,
                                             count: int | None) -> None:
    env = read_path(HELDOUT_L / name)
    rt = runtime_of(env)
    assert (rt.version, rt.cuda_available) == (version, True)
    assert rt.device_count == count or count is None
    assert isinstance(env.nvml, NvmlFacts)
    assert [(g.name, g.compute_capability) for g in env.nvml.gpus] == [(gpu, cc)]
    status = statuses(env)
    assert (status["GD402"], status["GD404"]) == (Status.PASS, Status.PASS)
    assert status["GD102"] is Status.SKIP  # one GPU torch named is not NVML's every GPU


@pytest.mark.parametrize("text", [
    # "No GPU detected": no GPU line
    "==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching.\n   \\\\   /|    No GPU detected. "
    "Platform: Linux.\nO^O/ \\_/ \\    Torch: 2.6.0+cpu. Bfloat16 = FALSE.\n",
    # the GPU line without the torch line (cut)
    "   \\\\   /|    NVIDIA GeForce RTX 5090. Num GPUs = 1. Max memory: 31.367 GB. "
    "Platform: Linux.\n",
])
def test_what_is_no_unsloth_banner(text: str) -> None:
    assert unsloth.parse(text) is None

"""Coqui TTS's `TTS/bin/collect_env_info.py` (`gpudoctor.reports.coqui_tts`), on real pastes:
round 23's r49-003.txt (coqui-ai/TTS, an RTX 2060 with CUDA available) and round 22's
r48-024.md (coqui-ai/TTS#1806, a CPU-only torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Status, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports import coqui_tts
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout"
AVAILABLE = HELDOUT / "round23" / "reports-V" / "r49-003.txt"
CPU = HELDOUT / "round22" / "reports-U" / "r48-024.md"


def _report(torch: str, available: bool, cuda: str | None, gpus: list[str]) -> str:
    return "$ python collect_env_info.py\n" + json.dumps({
        "CUDA": {"GPU": gpus, "available": available, "version": cuda},
        "Packages": {"PyTorch_debug": False, "PyTorch_version": torch, "TTS": "0.22.0"},
        "System": {"OS": "Linux", "python": "3.10.12"}}, indent=4, sort_keys=True) + "\n"


def test_a_cuda_build_with_its_gpu() -> None:
    """"available": true with torch's device names: a CUDA 12.1 build whose CUDA initialised
    on the RTX 2060 torch named (its sm_75 is in the 2.4.0 cu121 wheel)."""
    partial = coqui_tts.parse(AVAILABLE.read_text(encoding="utf-8"))
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.4.0+cu121", "12.1", True)
    assert partial.torch.python_version == "3.10.12"
    assert isinstance(partial.nvml, NvmlFacts)
    assert [g.name for g in partial.nvml.gpus if not isinstance(g, Unavailable)] == [
        "NVIDIA GeForce RTX 2060"]
    found = statuses(read_reports([(AVAILABLE.name, AVAILABLE.read_text(encoding="utf-8"))]))
    assert [found[c] for c in ("GD103", "GD402", "GD403", "GD404")] == [Status.PASS] * 4


def test_a_cpu_build() -> None:
    """"1.7.1+cpu", "available": false and no GPU: a CPU-only torch, and no driver named."""
    partial = coqui_tts.parse(CPU.read_text(encoding="utf-8"))
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime) and (rt.cuda, rt.cuda_available) == (None, False)
    assert partial.nvml is None
    found = statuses(read_reports([(CPU.name, CPU.read_text(encoding="utf-8"))]))
    assert Status.FAIL not in found.values()


def test_cuda_not_available_names_no_gpu() -> None:
    partial = coqui_tts.parse(_report("2.1.0+cu118", False, "11.8", []))
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime) and (rt.cuda, rt.cuda_available) == ("11.8", False)
    assert partial.nvml is None


@pytest.mark.parametrize("text", [
    _report("2.1.0+cu118", True, "12.1", ["NVIDIA A100"]),  # tag and torch.version.cuda differ
    _report("2.1.0+cu118", False, "11.8", ["NVIDIA A100"]),  # GPUs named, CUDA unavailable
    _report("2.1.0+cu118", True, "11.8", ["\x1b[31mA100"]),  # not a name torch prints
    _report("2.1.0+cu118", True, "11.8", ["A100"] * 65),  # more GPUs than a machine has
    _report("2.1.0+cu118", True, "11.8", ["A"]) + _report("2.2.0+cu121", True, "12.1", ["A"]),
    _report("torch", True, "11.8", []),  # not a version
    '{\n "Packages": {"PyTorch_version": "2.1.0+cu118"}\n',  # cut before its end
    "no report here\n",
])
def test_what_is_not_the_scripts_print_is_unread(text: str) -> None:
    assert coqui_tts.parse(text) is None

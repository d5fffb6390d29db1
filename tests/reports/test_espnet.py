"""ESPnet's `tools/check_install.py` (`gpudoctor.reports.espnet`), on a real paste: round 22's
r48-003.md (espnet/espnet#6186), with the RTX 4090 the reporter's own print names."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import Status, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports import espnet
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

PATH = Path(__file__).parents[1] / "fixtures" / "heldout" / "round22" / "reports-U" / "r48-003.md"


def _runtime(text: str) -> TorchRuntime:
    partial = espnet.parse(text)
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    assert isinstance(partial.torch.runtime, TorchRuntime)
    return partial.torch.runtime


def test_the_checks_torch_lines() -> None:
    """"[x] torch cuda=12.6" is printed only where torch.cuda.is_available(): a CUDA 12.6
    build whose CUDA initialised; "[x] torch cudnn=90501" its cuDNN."""
    rt = _runtime(PATH.read_text(encoding="utf-8"))
    assert (rt.version, rt.cuda, rt.cuda_available, rt.cudnn_version) == (
        "2.7.1+cu126", "12.6", True, 90501)
    env = read_reports([(PATH.name, PATH.read_text(encoding="utf-8"))])
    found = statuses(env)
    assert (found["GD103"], found["GD402"], found["GD403"], found["GD404"]) == (
        Status.PASS,) * 4  # the 2.7.1 cu126 wheel's sm_86 cubin runs on the 4090's sm_89


def test_cuda_not_available() -> None:
    """"[ ] torch cuda": is_available() is False; the tag still says the build's CUDA."""
    rt = _runtime("[x] torch=2.1.0+cu118\n[ ] torch cuda\n[x] torch cudnn=8700\n")
    assert (rt.cuda, rt.cuda_available) == ("11.8", False)
    partial = espnet.parse("[x] torch=2.1.0\n[ ] torch cuda\n")
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    assert isinstance(partial.torch.runtime, Unavailable)  # whether a CUDA build: not said


@pytest.mark.parametrize("text", [
    "[x] torch=2.1.0+cu118\n",  # no CUDA line: not the check's whole torch section
    "[x] torch=2.1.0+cu118\n[x] torch cuda\n",  # "[x]" without the version it prints
    "[x] torch=2.1.0+cu118\n[x] torch cuda=12.1\n",  # the tag and torch.version.cuda differ
    "[x] torch=2.1.0\n[x] torch=2.2.0\n[x] torch cuda=12.1\n",  # two torches
])
def test_what_is_not_the_checks_print_is_unread(text: str) -> None:
    assert espnet.parse(text) is None

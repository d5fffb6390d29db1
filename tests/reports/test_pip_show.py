"""`pip show torch`: the version, and PyPI's CUDA build told by NVIDIA's runtime wheel among its
requirements (gpudoctor/reports/pip_show.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.model import Status, TorchFacts, TorchRuntime
from gpudoctor.reports import pip_show
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

ROUND17 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round17" / "reports-P"
SHOW = """Name: torch
Version: {v}
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Home-page: https://pytorch.org/
Location: /usr/lib/python3/site-packages
Requires: filelock, {req}sympy, typing-extensions
Required-by: torchvision
"""


def _runtime(text: str) -> TorchRuntime | None:
    partial = pip_show.parse(text, load_tables())
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    return rt if isinstance(rt, TorchRuntime) else None


def test_round17s_pip_show_is_pypis_cuda_12_1_build() -> None:
    """Round 17's r38-011 (its thread in round17/reports-P/index.toml): torch 2.1.2 requiring
    nvidia-cuda-runtime-cu12 and the other CUDA 12 wheels is PyPI's cu121 build (GD402)."""
    path = ROUND17 / "r38-011.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert (env.torch.runtime.version, env.torch.runtime.cuda) == ("2.1.2", "12.1")
    assert statuses(env)["GD402"] is Status.PASS


@pytest.mark.parametrize(("version", "requires", "cuda"), [
    ("2.1.2", "nvidia-cuda-runtime-cu12, nvidia-cudnn-cu12, ", "12.1"),
    ("1.13.1", "nvidia-cuda-runtime-cu11, nvidia-cudnn-cu11, ", "11.7"),
    ("2.4.0+cu118", "nvidia-cuda-runtime-cu11, ", "11.8"),  # the tag wins
])
def test_the_build_is_the_tag_or_the_cuda_wheel_it_needs(version: str, requires: str,
                                                         cuda: str) -> None:
    rt = _runtime(SHOW.format(v=version, req=requires))
    assert rt is not None and rt.cuda == cuda


@pytest.mark.parametrize(("version", "requires"), [
    ("2.1.2", ""),  # a CPU wheel, a Windows wheel, a conda package: nothing said
    ("2.1.2", "nvidia-cuda-runtime-cu11, "),  # not the release's PyPI default's major
    ("2.1.2", "nvidia-cuda-runtime-cu11, nvidia-cuda-runtime-cu12, "),
    ("9.9.9", "nvidia-cuda-runtime-cu12, "),  # a release the tables do not know
])
def test_anything_else_leaves_the_build_open(version: str, requires: str) -> None:
    assert _runtime(SHOW.format(v=version, req=requires)) is None


def test_two_shows_that_differ_state_none() -> None:
    text = SHOW.format(v="2.1.2", req="") + "\n" + SHOW.format(v="2.3.0", req="")
    assert pip_show.parse(text, load_tables()) is None
    assert pip_show.parse("Name: torchvision\nVersion: 0.16.2\n", load_tables()) is None

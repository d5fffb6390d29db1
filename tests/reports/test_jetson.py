"""jetson-stats' reports (`gpudoctor.reports.jetson`), on real ones: round 22's r47-018.md
(NVIDIA-ISAAC-ROS/isaac_ros_common#163, `jtop`'s library and hardware lists on an Orin Nano)
and r47-033.md (rbonghi/jetson_stats#677, an AGX Orin's board list with "CUDA Arch BIN: 8.7")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Status, Unavailable
from gpudoctor.reports import jetson
from gpudoctor.reports.read import read_reports
from gpudoctor.views import PROSE
from tests.reports.reading_kit import statuses

HELDOUT_U = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round22" / "reports-U"


def _text(name: str) -> str:
    return (HELDOUT_U / name).read_text(encoding="utf-8")


def test_jtop_names_the_module_as_the_reporters_words_do() -> None:
    """The module, bound as words are (named, not shown to answer): GD101 does not judge it,
    and nothing of the stack fails on a healthy board."""
    env = read_reports([("r47-018.md", _text("r47-018.md"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    assert [g.name for g in env.nvml.gpus] == ["Jetson Orin Nano"]  # type: ignore[union-attr]
    found = statuses(env)
    assert found["GD101"] is Status.SKIP
    assert Status.FAIL not in found.values()


def test_the_boards_arch_is_its_compute_capability() -> None:
    partial = jetson.parse(_text("r47-033.md"))
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    gpu = partial.nvml.gpus[0]
    assert not isinstance(gpu, Unavailable)
    assert (gpu.name, gpu.compute_capability) == ("Jetson AGX Orin", "8.7")


@pytest.mark.parametrize(("old", "new"), [
    ("L4T", "LFT"),  # no L4T release named: a word about a Jetson, not jetson-stats' report
    ("Module: NVIDIA Jetson AGX Orin", "Module: NVIDIA Jetson Xavier NX"),  # two modules
])
def test_what_is_not_one_jetsons_report_is_unread(old: str, new: str) -> None:
    assert jetson.parse(_text("r47-033.md").replace(old, new)) is None


def test_a_module_named_more_fully_elsewhere_is_the_same_module() -> None:
    """"Model: NVIDIA Jetson AGX Orin Developer Kit" and "Module: NVIDIA Jetson AGX Orin" are
    one board."""
    text = "Model: NVIDIA Jetson Orin Nano Developer Kit - Jetpack 6.0 [L4T 36.3.0]\n" \
           " - Module: NVIDIA Jetson Orin Nano (Developer kit)\n"
    partial = jetson.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    assert [g.name for g in partial.nvml.gpus] == ["Jetson Orin Nano"]  # type: ignore[union-attr]

"""gpustat's listing → the driver and every GPU NVML lists. Real text: round 7's r14-008
(wookayin/gpustat#157, development data since), and its rows reworded."""

from __future__ import annotations

from pathlib import Path

from gpudoctor.model import GpuFacts, NvmlFacts, Status, Unavailable
from gpudoctor.reports import gpustat
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

ROUND7 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round7" / "reports-F"


def test_a_real_listing_in_an_issue_body() -> None:
    text = (ROUND7 / "r14-008.md").read_text(encoding="utf-8")
    env = read_reports([("r14-008.md", text)])
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.driver_version == "535.54.03"
    gpus = [g for g in env.nvml.gpus if isinstance(g, GpuFacts)]
    assert [g.index for g in gpus] == list(range(8))
    assert {g.name for g in gpus} == {"NVIDIA GeForce RTX 4090"}
    assert gpus[6].memory_total == 24564 * gpustat.MIB
    assert gpus[6].memory_free == (24564 - 13) * gpustat.MIB
    got = statuses(env)
    assert got["GD101"] is Status.PASS
    assert got["GD102"] is Status.PASS


def test_rows_without_the_header_and_unknown_values() -> None:
    text = ("[0] Tesla V100-SXM2-16GB | 41'C,   0 % |    10 / 16160 MB |\n"
            "[1] Tesla V100-SXM2-16GB |  ?'C,   ? % |     ? /     ? MB |\n")
    partial = gpustat.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    assert isinstance(partial.nvml.driver_version, Unavailable)
    first, second = partial.nvml.gpus
    assert isinstance(first, GpuFacts) and first.memory_total == 16160 * gpustat.MIB
    assert isinstance(second, GpuFacts) and isinstance(second.memory_total, Unavailable)


def test_used_above_total_is_not_taken() -> None:
    partial = gpustat.parse("[0] NVIDIA A100 | 30°C, 0 % | 90000 / 81920 MB | x(1M)\n")
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    (gpu,) = partial.nvml.gpus
    assert isinstance(gpu, GpuFacts) and isinstance(gpu.memory_free, Unavailable)

"""`nvidia-smi --query-gpu=… --format=csv` (gpudoctor.reports.nvidia_smi_csv), and the print
of several torch expressions in one call (gpudoctor.reports.torch_prints), on real pastes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor import views as V
from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import NvmlFacts, Status
from gpudoctor.reports import nvidia_smi_csv
from gpudoctor.reports.interface import NOT_EVERY_GPU
from gpudoctor.reports.read import read_reports

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# https://github.com/runpod/containers/issues/114: noheader rows, then torch's own prints
RUNPOD = FIXTURES / "heldout" / "round6" / "reports-E" / "r10-001.md"
# https://github.com/huggingface/candle/issues/353: the header form, with compute_cap
CANDLE = FIXTURES / "errors" / "candle-353-named-symbol-not-found-bf16.txt"


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def test_noheader_rows_take_the_command_lines_fields(tables: Tables) -> None:
    env = read_reports([("r10-001.md", RUNPOD.read_text())])
    assert V.driver_version(env) == "580.126.09"
    assert [g.name for g in V.gpus(env)] == ["NVIDIA B200", "NVIDIA B200"]
    # `print(torch.__version__, torch.version.cuda)` → "2.4.1+cu124 12.4"
    assert V.torch_version(env) == "2.4.1+cu124" and V.torch_cuda(env) == "12.4"
    status = {r.check_id: r.finding.status for r in run_checks(env, tables).results}
    assert status["GD101"] is status["GD102"] is status["GD103"] is Status.PASS
    assert status["GD404"] is Status.FAIL  # sm_100 in sm_50 … sm_90: torch's own warning


def test_the_header_names_the_fields() -> None:
    env = read_reports([("candle.txt", CANDLE.read_text())])
    gpus = V.gpus(env)
    assert [(g.name, g.compute_capability) for g in gpus] == [
        ("NVIDIA GeForce RTX 2080 Ti", "7.5")] * 2
    assert V.driver_version(env) == "535.161.07"


def test_units_values_it_could_not_read_and_a_chosen_gpu() -> None:
    text = ("$ nvidia-smi --query-gpu=index,name,memory.total,persistence_mode,pci.bus_id "
            "--format=csv -i 1\n"
            "index, name, memory.total [MiB], persistence_mode, pci.bus_id\n"
            "1, NVIDIA A100-SXM4-80GB, 81920 MiB, [N/A], 00000000:07:00.0\n")
    partial = nvidia_smi_csv.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    (gpu,) = partial.nvml.gpus
    assert gpu.index == 1 and gpu.memory_total == 81920 * 1024 * 1024  # type: ignore[union-attr]
    assert gpu.pci_bus_id == "00000000:07:00.0"  # type: ignore[union-attr]
    assert not isinstance(gpu.persistence_mode, bool)  # type: ignore[union-attr]
    assert partial.nvml.binding in NOT_EVERY_GPU  # -i: not every GPU, GD102 does not judge


@pytest.mark.parametrize("text", [
    "name, version\nfoo, 1.0\n",  # two words and a comma: not the query's header
    "$ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader\n$ echo done\n",
    "$ nvidia-smi --query-gpu=name,driver_version --format=csv\n",  # no header, no rows
])
def test_what_is_not_a_query_answer(text: str) -> None:
    assert nvidia_smi_csv.parse(text) is None


def test_rows_past_one_machines_gpus_are_not_read() -> None:
    """100,000 rows (1.9 MB, under the input bound) took 110 s through the checks: at most
    MOST_GPUS are read, as for sections of -q alone."""
    text = ("$ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader\n"
            + "NVIDIA A100-SXM4-80GB, 535.104.05\n" * 100_000)
    partial = nvidia_smi_csv.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    assert len(partial.nvml.gpus) == nvidia_smi_csv.MOST_GPUS == 64

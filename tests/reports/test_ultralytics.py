"""`gpudoctor.reports.ultralytics`: the device banner of Ultralytics and YOLOv5. Real banners
from public issues (round 15's reports-N, scored blind before this reader, development data
since), and lines of them."""

from __future__ import annotations

from pathlib import Path

from gpudoctor.model import GpuFacts, NvmlFacts, Status, TorchFacts, TorchRuntime
from gpudoctor.reports import ultralytics
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

ROUND15 = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round15" / "reports-N"


def _read(name: str):  # type: ignore[no-untyped-def]
    return read_reports([(name, (ROUND15 / name).read_text(encoding="utf-8"))])


def test_yolo_checks_banner_names_torch_and_its_cuda_device() -> None:
    """`yolo checks` on Windows (r33-005): torch-2.1.1+cu121 CUDA:0 (NVIDIA GeForce GTX 1650
    SUPER, 4096MiB): a CUDA build that opened the GPU."""
    env = _read("r33-005.txt")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    rt = env.torch.runtime
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.1.1+cu121", "12.1", True)
    assert env.torch.python_version == "3.11.6"
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == [
        "NVIDIA GeForce GTX 1650 SUPER"]
    got = statuses(env)
    assert got["GD402"] is Status.PASS and got["GD404"] is Status.PASS


def test_two_runs_the_last_ones_cpu_build_beside_the_gpu_the_first_opened() -> None:
    """r33-002: YOLOv8.0.53 with torch-1.8.1+cu111 on CUDA:0 (RTX 3070), then YOLOv8.0.54 with
    torch-2.0.0+cpu on the CPU, "same environment": the last run's torch is a CPU build on a
    machine whose GPU the first run opened (GD402)."""
    env = _read("r33-002.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.0.0+cpu"
    assert statuses(env)["GD402"] is Status.FAIL


def test_yolov5_multi_gpu_lines_and_older_forks() -> None:
    text = ("YOLOv5 🚀 v7.0-72-g064365d Python-3.10.6 torch-1.13.1+cu117 CUDA:0 (Tesla V100-SXM2"
            "-16GB, 16161MiB)\n                                                          CUDA:1 "
            "(Tesla V100-SXM2-16GB, 16161MiB)\n")
    partial = ultralytics.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    assert len(partial.nvml.gpus) == 2
    old = ultralytics.parse("Using torch 1.7.0 CUDA:0 (GeForce RTX 2080 Ti, 11019MB)\n")
    assert old is not None and isinstance(old.nvml, NvmlFacts) and len(old.nvml.gpus) == 1
    assert ultralytics.parse("installed torch 2.1.0 and it works\n") is None  # no device

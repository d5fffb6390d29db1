"""benchmarks/gpu_validation.py: its CPU-side logic here, the whole run with --run-gpu.

The validation itself needs an NVIDIA GPU; what decides its verdict (the GPU's file name, the
spread over repeated runs, the cuDNN evidence in the profiler's output, the time budget, the
no-GPU exit) is plain Python and is tested on any machine.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_validation.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_validation", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_validation"] = module
    spec.loader.exec_module(module)
    return module


gv = _load()


def _has_gpu_driver() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def smoke(*medians: tuple[str, float], kernels: tuple[str, ...] = ()) -> dict[str, object]:
    """A smoke-test JSON as the command writes it, reduced to what the script reads."""
    return {"smoke": {"models": [
        {"model": model, "configs": [
            {"name": "native", "timing": {"median_ms": ms * 2}},
            {"name": "cudnn", "timing": {"median_ms": ms}, "cudnn_kernels": list(kernels)}]}
        for model, ms in medians]}}


def test_gpu_slug() -> None:
    assert gv.gpu_slug(["NVIDIA H100 80GB HBM3"] * 8) == "h100-80gb-hbm3-x8"
    assert gv.gpu_slug(["NVIDIA A100-SXM4-80GB"]) == "a100-sxm4-80gb-x1"
    assert gv.gpu_slug(["Tesla V100-SXM2-32GB", "Tesla V100-SXM2-32GB", "NVIDIA T4"]) == (
        "tesla-v100-sxm2-32gb-x3")


def test_spread() -> None:
    assert gv.spread([10.0, 10.2, 9.9]) == pytest.approx(0.3 / 10.0)
    assert gv.spread([5.0]) is None
    assert gv.spread([0.0, 4.0]) is None  # a missing run is not a 100% spread


def test_gpus_from_probe() -> None:
    assert gv.gpus_from_probe({"driver_version": "580.65.06", "gpus": [
        {"index": 0, "name": "NVIDIA H100 80GB HBM3"}, {"reason": "error", "message": "lost"}]}
    ) == (["NVIDIA H100 80GB HBM3"], "")
    names, why = gv.gpus_from_probe({"reason": "not-installed", "message": "no driver"})
    assert (names, why) == ([], "no driver")
    assert gv.gpus_from_probe({"gpus": []})[1] == "the driver is loaded but sees no GPU"
    assert gv.gpus_from_probe(None)[0] == []


def test_smoke_readers() -> None:
    data = smoke(("lenet", 1.5), ("convnet", 12.0), kernels=("cudnn::conv_fwd", "sm90_xmma"))
    assert gv.cudnn_medians(data) == {"lenet": 1.5, "convnet": 12.0}
    assert gv.cudnn_kernels(data) == ["cudnn::conv_fwd", "sm90_xmma"]
    assert gv.cudnn_medians({"smoke": None}) == {}


def test_plan_covers_every_gpu_path() -> None:
    steps = gv.plan(gpus=4, runs=3, trace_dir="/tmp/t")
    names = [s.name for s in steps]
    assert names[0] == "pytest --run-gpu -m gpu" and "check --smoke" in names
    assert sum(n.startswith("smoke-test float32 run") for n in names) == 3
    assert sum(n.startswith("smoke-test bfloat16 run") for n in names) == 3
    dist = steps[-1].argv
    assert "--nproc-per-node=4" in dist and "--distributed" in dist
    assert "--profile" in next(s.argv for s in steps if s.name == "smoke-test --profile")


def test_judge_spread_and_cudnn_evidence() -> None:
    steps = gv.plan(gpus=1, runs=3, trace_dir="/tmp/t")
    for s in steps:
        s.rc, s.ok = 0, True
        if s.name.startswith("smoke-test float32"):
            s.data = smoke(("convnet", 10.0))
        if s.name.startswith("smoke-test bfloat16"):
            s.data = smoke(("convnet", 10.0 if "run 1" in s.name else 11.0))
    prof = next(s for s in steps if s.name == "smoke-test --profile")
    prof.data = smoke(("convnet", 10.0))  # no cuDNN kernel in the convolutions
    verdict = gv.judge(steps)
    assert verdict["spread"] == {"float32 convnet": 0.0,
                                 "bfloat16 convnet": pytest.approx(0.1 / 1.1)}
    bad = {s.name for s in steps if not s.ok}
    assert bad == {"smoke-test bfloat16 run 1", "smoke-test bfloat16 run 2",
                   "smoke-test bfloat16 run 3", "smoke-test --profile"}
    assert verdict["cudnn_kernels"] == []


def test_run_step_real_command_and_budget() -> None:
    step = gv.run_step(gv.Step("echo", [sys.executable, "-c", "print('{\"a\": 1}')"]),
                       time.monotonic() + 60)
    assert (step.rc, step.ok, step.data) == (0, True, {"a": 1})
    late = gv.run_step(gv.Step("late", [sys.executable, "-c", "pass"]), time.monotonic() + 1)
    assert (late.rc, late.ok) == (None, False) and "budget" in late.note
    slow = gv.run_step(gv.Step("slow", [sys.executable, "-c", "import time; time.sleep(30)"]),
                       time.monotonic() + 6)
    assert (slow.rc, slow.ok) == (124, False)


@pytest.mark.parametrize(("flags", "code"), [((), 1), (("--allow-no-gpu",), 0)])
def test_no_gpu_exit(flags: tuple[str, ...], code: int, tmp_path: Path) -> None:
    if _has_gpu_driver():
        pytest.skip("this machine has an NVIDIA driver")
    r = subprocess.run([sys.executable, str(SCRIPT), *flags, "--results", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == code, r.stderr
    assert r.stdout.startswith("no NVIDIA GPU: nothing to validate (")
    assert not any(tmp_path.iterdir())  # nothing written, nothing claimed


@pytest.mark.gpu
def test_full_validation_on_a_real_gpu(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), "--results", str(tmp_path / "results"),
                        "--snapshots", str(tmp_path / "envs")],
                       capture_output=True, text=True, timeout=660, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    (result,) = (tmp_path / "results").glob("gpu_validation-*.json")
    data = json.loads(result.read_text())
    assert data["cudnn_kernels"], "no cuDNN kernel seen by the profiler"
    assert all(v is None or v <= 0.05 for v in data["spread"].values())

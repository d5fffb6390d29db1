"""benchmarks/gpu_validation.py: its CPU-side logic here, its dry run on this GPU-less machine,
the whole run with --run-gpu.

The validation itself needs an NVIDIA GPU; what decides its verdict (the GPU's file name, the
spread over repeated runs, the cuDNN evidence in the profiler's output, each step's deadline
and what it leaves behind, the results written after every step, the no-GPU exit) is plain
Python and is tested on any machine; the dry run runs every step against the fake NVML and
the CPU/CUDA-build torch and shows each one wired, stopping where a GPU is needed.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

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


def script_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != gv.TAG}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def smoke(*medians: tuple[str, float], kernels: tuple[str, ...] = (),
          ops: tuple[str, ...] = ()) -> dict[str, object]:
    """A smoke-test JSON as the command writes it, reduced to what the script reads."""
    return {"smoke": {"models": [
        {"model": model, "configs": [
            {"name": "native", "timing": {"median_ms": ms * 2},
             "conv_kernels": ["im2col_kernel"]},
            {"name": "cudnn", "timing": {"median_ms": ms}, "cudnn_kernels": list(kernels),
             "conv_ops": list(ops), "conv_kernels": [*kernels, "cutlass_x"]}]}
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
    data = smoke(("lenet", 1.5), ("convnet", 12.0), kernels=("cudnn::conv_fwd", "sm90_xmma"),
                 ops=("aten::cudnn_convolution",))
    assert gv.cudnn_medians(data) == {"lenet": 1.5, "convnet": 12.0}
    assert gv.kernels(data) == {"conv_ops": ["aten::cudnn_convolution"],
                                "cudnn_kernels": ["cudnn::conv_fwd", "sm90_xmma"],
                                "conv_kernels": ["cudnn::conv_fwd", "cutlass_x", "sm90_xmma"]}
    assert gv.cudnn_medians({"smoke": None}) == {}


# --------------------------------------------------------------------------- the plan


def test_plan_covers_every_gpu_path(tmp_path: Path) -> None:
    steps = gv.plan(gpus=4, runs=3, work=tmp_path)
    names = [s.name for s in steps]
    assert names[:3] == ["preflight", "snapshot", "check --smoke"]  # most telling first
    assert sum(n.startswith("smoke-test float32 run") for n in names) == 3
    assert sum(n.startswith("smoke-test bfloat16 run") for n in names) == 3
    assert "--profile" in next(s.argv for s in steps if s.kind == "profile")
    dist = next(s.argv for s in steps if s.kind == "distributed")
    # torchrun of the interpreter under test, not whichever `torchrun` PATH finds
    assert dist[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nproc-per-node=4" in dist and "--distributed" in dist
    assert all(s.limit <= 240 for s in steps)  # every step has a deadline of its own


def test_pytest_step_deselects_the_validation_itself(tmp_path: Path) -> None:
    (step,) = [s for s in gv.plan(gpus=1, runs=2, work=tmp_path) if s.kind == "pytest"]
    assert step.argv[step.argv.index("--deselect") + 1] == (
        "tests/test_gpu_validation.py::test_full_validation_on_a_real_gpu")
    assert gv.SELF_TEST.split("::")[1] == test_full_validation_on_a_real_gpu.__name__


@pytest.mark.slow
def test_pytest_step_cannot_collect_itself(tmp_path: Path) -> None:
    """The recursion: `pytest --run-gpu -m gpu` collected the test that runs the script again.
    The step's exact argv, with --collect-only, under the step's own environment."""
    (step,) = [s for s in gv.plan(gpus=1, runs=2, work=tmp_path) if s.kind == "pytest"]
    r = subprocess.run([*step.argv, "--collect-only"], capture_output=True, text=True,
                       env=gv.step_env("collect-check"), timeout=300, check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "test_real_driver" in r.stdout  # the gpu tests are there
    assert "test_full_validation_on_a_real_gpu" not in r.stdout


@pytest.mark.slow
@pytest.mark.subprocess
def test_refuses_to_run_inside_a_validation_run(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), "--results", str(tmp_path)],
                       capture_output=True, text=True, timeout=60, check=False,
                       env=script_env(**{gv.TAG: "outer"}))
    assert r.returncode == 2
    assert "refusing to run inside a validation run" in r.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_full_validation_test_skips_under_the_tag() -> None:
    """Even collected (deselection bypassed), the test that runs the script does not run
    inside a validation run."""
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--run-gpu", "-rs", f"{SCRIPT.parent.parent / gv.SELF_TEST}"],
                       capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
                       env=script_env(**{gv.TAG: "outer"}))
    assert "1 skipped" in r.stdout, r.stdout[-2000:]
    assert "inside a validation run" in r.stdout


# --------------------------------------------------------------------------- deadlines


GRANDCHILD = """
import subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                     start_new_session=True)
print(p.pid, flush=True)
time.sleep(float(sys.argv[1]))
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.parametrize(("sleep", "rc"), [("300", 124), ("0", 0)],
                         ids=["past-its-deadline", "exits-leaving-a-process"])
def test_a_step_leaves_nothing_behind(sleep: str, rc: int) -> None:
    """A grandchild in a session of its own (what gpudoctor's smoke child and torchrun's
    workers are) outlives a kill of the step's process group; the tag finds it."""
    tag = f"test-{os.getpid()}-{time.time_ns()}"
    step = gv.Step("grandchild", "preflight", [sys.executable, "-c", GRANDCHILD, sleep], 60)
    start = time.monotonic()
    gv.run_step(step, time.monotonic() + 4, gv.step_env(tag), tag, min_step=1)
    assert time.monotonic() - start < 15
    assert (step.rc, step.killed_after) == (rc, 1)
    if rc == 124:
        assert step.verdict == "FAIL" and "timed out" in step.note
    assert not gv.tagged(tag)


def test_a_step_without_budget_is_not_run() -> None:
    step = gv.Step("late", "preflight", [sys.executable, "-c", "pass"], 60)
    gv.run_step(step, time.monotonic() + 1, gv.step_env("t"), "t")
    assert (step.rc, step.verdict) == (None, "not run") and "budget" in step.note


@pytest.mark.needs_torch
@pytest.mark.slow
def test_results_written_after_every_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """Each step finds the results of the steps before it on disk: a lease that ends
    mid-run keeps what was measured. A step the budget cannot fit is "not run": exit 1."""
    results = tmp_path / "results"
    path = results / "gpu_validation-h100-80gb-hbm3-x1.json"
    reader = (f"import json; d = json.load(open({str(path)!r})); "
              "print(json.dumps({'findings': [], 'seen': [s['verdict'] for s in d['steps']]}))")
    steps = [gv.Step("first", "preflight", [sys.executable, "-c", gv._PREFLIGHT], 60),
             gv.Step("second", "check", [sys.executable, "-c", f"import time; time.sleep(4); "
                                         f"{reader}"], 60),
             gv.Step("third", "check", [sys.executable, "-c", "pass"], 60)]
    monkeypatch.setattr(gv, "plan", lambda gpus, runs, work: steps)
    monkeypatch.setattr(gv, "detect_gpus", lambda env: (["NVIDIA H100 80GB HBM3"], ""))
    # 18 s: the first two start with 15 s or more left, the third with less (MIN_STEP)
    code = gv.main(["--budget", "18", "--results", str(results),
                    "--snapshots", str(tmp_path / "envs")])
    assert code == 1  # "third" could not run within the budget
    data = json.loads(path.read_text())
    assert [s["verdict"] for s in data["steps"]] == ["ok", "ok", "not run"]
    assert data["complete"] is False
    assert data["cannot_show"] == ["NCCL communication between GPUs: this machine has one GPU"]


# --------------------------------------------------------------------------- verdicts


def test_one_gpu_cannot_show_nccl_communication() -> None:
    one = {"distributed": {"world_size": 1, "ranks": [{"rank": 0, "state": "ok"}]},
           "findings": []}
    assert gv.verdict_of("distributed", 0, one, "", False)[0] == "not shown"
    two = {"distributed": {"world_size": 2, "ranks": [{"state": "ok"}, {"state": "ok"}]}}
    assert gv.verdict_of("distributed", 0, two, "", False) == ("ok", "")


def test_no_gpu_for_torch_is_a_failure_on_a_gpu_machine() -> None:
    data = {"smoke": {"failure": {"message": "cuda:0 cannot be used: no driver"}}}
    assert gv.verdict_of("smoke", 1, data, "", True)[0] == "needs a GPU"
    assert gv.verdict_of("smoke", 1, data, "", False)[0] == "FAIL"
    assert gv.verdict_of("smoke", 2, {}, "Usage: …", True)[0] == "FAIL"  # a wiring error


def test_judge_spread_and_cudnn_evidence(tmp_path: Path) -> None:
    """The spread gates the conv-heavy model only: LeNet's ~1 ms step is launch-bound."""
    steps = gv.plan(gpus=1, runs=3, work=tmp_path)
    for s in steps:
        s.rc, s.verdict = 0, "ok"
        if s.name.startswith("smoke-test float32"):
            s.data = smoke(("convnet", 10.0), ("lenet", 1.0 if "run 1" in s.name else 1.3))
        if s.name.startswith("smoke-test bfloat16"):
            s.data = smoke(("convnet", 10.0 if "run 1" in s.name else 11.0))
    prof = next(s for s in steps if s.kind == "profile")
    prof.data = smoke(("convnet", 10.0), ops=("aten::_slow_conv2d_forward",))
    verdict = gv.judge(steps)
    assert verdict["spread"]["float32 convnet"]["spread"] == 0.0
    assert verdict["spread"]["float32 lenet"] == {
        "spread": pytest.approx(0.3 / 1.3), "gated": False, "medians_ms": [1.0, 1.3, 1.3]}
    assert verdict["spread"]["bfloat16 convnet"]["spread"] == pytest.approx(1 / 11)
    bad = {s.name for s in steps if s.verdict == "FAIL"}
    assert bad == {"smoke-test bfloat16 run 1", "smoke-test bfloat16 run 2",
                   "smoke-test bfloat16 run 3", "smoke-test --profile"}
    assert verdict["profiler"]["cudnn_kernels"] == []


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("flags", "code"), [((), 1), (("--allow-no-gpu",), 0)])
def test_no_gpu_exit(flags: tuple[str, ...], code: int, tmp_path: Path) -> None:
    if _has_gpu_driver():
        pytest.skip("this machine has an NVIDIA driver")
    env = script_env()
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([sys.executable, str(SCRIPT), *flags, "--results", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, check=False, env=env)
    assert r.returncode == code, r.stderr
    assert r.stdout.startswith("no NVIDIA GPU: nothing to validate (")
    assert not any(tmp_path.iterdir())  # nothing written, nothing claimed


# --------------------------------------------------------------------------- the dry run


@pytest.mark.needs_torch
@pytest.mark.slow
def test_dry_run_wires_every_step(fake_nvml: Path, tmp_path: Path) -> None:
    """Every step runs for real here: against the fake NVML (an H100) and this machine's torch,
    which sees no GPU; each ends "ok" or "needs a GPU", none fails, none is left out, and the
    results and the snapshot are written."""
    if _has_gpu_driver():
        pytest.skip("this machine has an NVIDIA driver: run the validation itself")
    results, envs = tmp_path / "results", tmp_path / "envs"
    env = script_env(LD_LIBRARY_PATH=str(fake_nvml))
    r = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--runs", "2", "--results",
                        str(results), "--snapshots", str(envs)],
                       capture_output=True, text=True, timeout=600, check=False, env=env)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "dry run: 1 GPU(s): NVIDIA H100 80GB HBM3 -> h100-80gb-hbm3-x1" in r.stdout
    assert "NOT SHOWN: NCCL communication between GPUs" in r.stdout
    data: dict[str, Any] = json.loads(
        (results / "gpu_validation-h100-80gb-hbm3-x1.json").read_text())
    verdicts = {s["name"]: s["verdict"] for s in data["steps"]}
    assert verdicts == {
        "preflight": "ok", "snapshot": "ok", "check --smoke": "needs a GPU",
        "smoke-test float32 run 1": "needs a GPU", "smoke-test bfloat16 run 1": "needs a GPU",
        "smoke-test --profile": "needs a GPU", "smoke-test --distributed (1 GPU)": "needs a GPU",
        "pytest --run-gpu -m gpu": "needs a GPU", "smoke-test float32 run 2": "needs a GPU",
        "smoke-test bfloat16 run 2": "needs a GPU"}
    assert data["complete"] is True and data["mode"] == "dry-run"
    assert "test_full_validation_on_a_real_gpu" not in json.dumps(data["pytest"])
    assert any("test_real_driver" in t for t in data["pytest"]["passed"])  # the fake NVML
    snap = json.loads((envs / "h100-80gb-hbm3-x1.json").read_text())["environment"]
    assert snap["nvml"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert snap["smoke"]["device"]["name"] == "cpu"  # check --smoke's environment


# --------------------------------------------------------------------------- a real GPU


@pytest.mark.gpu
@pytest.mark.skipif(bool(os.environ.get(gv.TAG)),
                    reason="inside a validation run: it would start the validation again")
def test_full_validation_on_a_real_gpu(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), "--results", str(tmp_path / "results"),
                        "--snapshots", str(tmp_path / "envs")],
                       capture_output=True, text=True, timeout=540, check=False,
                       env=script_env())
    assert r.returncode == 0, r.stdout + r.stderr
    (result,) = (tmp_path / "results").glob("gpu_validation-*.json")
    data = json.loads(result.read_text())
    assert data["profiler"]["cudnn_kernels"] or "aten::cudnn_convolution" in (
        data["profiler"]["conv_ops"]), "no cuDNN seen by the profiler"
    assert all(v["spread"] is None or not v["gated"] or v["spread"] <= gv.MAX_SPREAD
               for v in data["spread"].values())


def test_step_env_makes_pythonpath_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    """`PYTHONPATH=.:.gpu-deps` (the README's way to bring gpudoctor's own dependencies to a
    GPU machine) must hold in children started from any directory."""
    monkeypatch.setenv("PYTHONPATH", f".{os.pathsep}.gpu-deps")
    env = gv.step_env("t")
    assert env["PYTHONPATH"].split(os.pathsep) == [
        str(ROOT), os.path.abspath("."), os.path.abspath(".gpu-deps")]
    assert env[gv.TAG] == "t"

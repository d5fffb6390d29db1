"""`gpudoctor.actions.smoke`: the real CPU torch in real child processes, broken torches on
PYTHONPATH, the child's helpers in-process, and the verdicts on hand-built reports."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.actions.smoke import (
    CHILD_SOURCE,
    SmokeOptions,
    SmokeProgress,
    _report,
    outcome_to_dict,
    parse_device,
    run_smoke,
    smoke_report,
)
from gpudoctor.model import Reason, SmokeFacts, SmokeFailure, Status
from gpudoctor.model_smoke import SmokeRun
from gpudoctor.snapshot import dumps, loads

FAST = {"steps": 3, "warmup": 1}


def statuses(outcome: SmokeFacts) -> dict[str, Status]:
    """The verdicts `smoke-test` gives: the registry's smoke checks over the outcome."""
    return {r.slug: r.finding.status for r in smoke_report(outcome).results}


def finding(outcome: SmokeFacts, slug: str) -> Any:
    return next(r.finding for r in smoke_report(outcome).results if r.slug == slug)


# --------------------------------------------------------------------------- parse_device


@pytest.mark.parametrize(
    ("text", "expected"),
    [("cpu", "cpu"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"), ("CUDA:1", "cuda:1"),
     (" cuda:3 ", "cuda:3"), ("cuda:007", "cuda:7")],
)
def test_parse_device_accepts(text: str, expected: str) -> None:
    assert parse_device(text) == expected


@pytest.mark.parametrize(
    "text", ["cuda:x", "gpu", "cuda:-1", "", "cuda:", "cpu:0", "cuda:0:1", "mps", "cuda:+1"],
    ids=lambda t: f"<{t}>",  # a bare "gpu" id would read as the gpu marker
)
def test_parse_device_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="is not a device"):
        parse_device(text)


def test_options_are_validated() -> None:
    assert SmokeOptions(device="cpu", model="lenet").models == ("lenet",)
    assert SmokeOptions(device="cpu").models == ("lenet", "convnet")
    for bad in ({"device": "cuda"}, {"model": "resnet"}, {"dtype": "float64"}, {"steps": 0},
                {"warmup": -1}, {"batch_size": 0}, {"timeout": 0}):
        with pytest.raises(ValueError, match=r"device|model|steps"):
            SmokeOptions(**bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- real CPU runs


@pytest.mark.slow
def test_cpu_both_models_pass(torch_cuda: str | None) -> None:
    seen: list[SmokeProgress] = []
    outcome = run_smoke(SmokeOptions(device="cpu", **FAST), seen.append)
    assert isinstance(outcome, SmokeRun), outcome
    assert [m.model for m in outcome.models] == ["lenet", "convnet"]
    lenet = outcome.models[0]
    assert lenet.input == (32, 3, 32, 32)
    assert lenet.parameters == 62006
    assert outcome.models[1].input == (4, 3, 56, 56)
    for m in outcome.models:
        assert m.error is None
        assert [c.name for c in m.configs] == ["cpu"]
        run = m.configs[0]
        assert len(run.losses) == 5
        assert all(math.isfinite(x) for x in run.losses)
        assert run.losses[-1] < run.losses[0]
        assert run.training_ok
        assert run.timing.clock == "perf_counter"
        assert run.timing.steps == 3
        assert 0 < run.timing.p10_ms <= run.timing.median_ms <= run.timing.p90_ms
        assert any("conv" in op for op in run.conv_ops)
        assert not run.cudnn_kernels
    assert outcome.matmul.device == "cpu"
    assert outcome.matmul.value > 0
    assert outcome.copy.unit == "GB/s"
    assert outcome.copy.max_rel_error == 0.0
    assert outcome.device.arch is None
    if torch_cuda is None:  # a CPU build has no cuDNN to map
        assert outcome.cudnn_libraries == ()
    else:  # a CUDA build maps its cuDNN at import, even for a CPU run
        assert all("libcudnn" in os.path.basename(p) for p in outcome.cudnn_libraries)
    assert statuses(outcome) == {
        "smoke-training-correct": Status.PASS, "smoke-cudnn-matches-native": Status.SKIP,
        "smoke-cudnn-used": Status.SKIP, "smoke-cudnn-faster": Status.SKIP,
        "smoke-device-usable": Status.PASS, "smoke-device-throughput": Status.PASS}
    assert "CUDA devices only" in finding(outcome, "smoke-cudnn-used").message
    # progress: labels as it goes, monotone, ending complete
    counted = [p for p in seen if p.total]
    assert seen[0].label == "importing torch"
    assert counted
    assert [p.done for p in counted] == sorted(p.done for p in counted)
    assert counted[-1].done == counted[-1].total
    assert any(p.label == "convnet · cpu · timing 3/3" for p in seen)
    json.dumps(outcome_to_dict(outcome))  # JSON-able
    env = smoke_report(outcome).environment  # a real outcome round-trips as the smoke fact
    assert env.smoke == outcome
    assert loads(dumps(env)) == env


@pytest.mark.needs_torch
@pytest.mark.slow
def test_cpu_bfloat16_and_profile(tmp_path: Path) -> None:
    outcome = run_smoke(SmokeOptions(device="cpu", model="lenet", dtype="bfloat16", batch_size=8,
                                     profile_dir=str(tmp_path / "traces"), **FAST))
    assert isinstance(outcome, SmokeRun), outcome
    assert outcome.dtype == "bfloat16"
    assert outcome.models[0].input[0] == 8
    trace = outcome.models[0].configs[0].trace
    assert trace is not None
    assert Path(trace).parent == tmp_path / "traces"
    assert "traceEvents" in json.loads(Path(trace).read_text())
    assert statuses(outcome)["smoke-training-correct"] is Status.PASS


@pytest.mark.slow
def test_cuda_here_is_torchs_reason(torch_cuda: str | None) -> None:
    outcome = run_smoke(SmokeOptions(device="cuda:0", model="lenet", **FAST))
    assert isinstance(outcome, SmokeFailure)
    if torch_cuda is None:  # torch's own words, for each build on a machine without a GPU
        assert "Torch not compiled with CUDA enabled" in outcome.message
        assert outcome.reason is Reason.NOT_SUPPORTED
    else:
        assert "Found no NVIDIA driver" in outcome.message
        assert outcome.reason is Reason.DRIVER_NOT_LOADED
    results = smoke_report(outcome).results
    assert [r.check_id for r in results] == [f"GD45{i}" for i in range(6)]
    gd454 = results[4].finding
    assert gd454.status is Status.FAIL
    assert "gpudoctor check" in (gd454.fix or "")
    assert all(r.finding.status is Status.SKIP for r in results if r.check_id != "GD454")


# --------------------------------------------------------------------------- broken stacks


def fake_torch(tmp_path: Path, body: str) -> dict[str, str]:
    pkg = tmp_path / "fake" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path / "fake")
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "timeout", "reason", "needle"),
    [
        ("raise RuntimeError('libcudnn_ops.so.9: cannot open shared object file')", 60,
         Reason.ERROR, "`import torch` failed: RuntimeError: libcudnn_ops.so.9"),
        ("import os\nos.abort()\n", 60, Reason.CRASHED, "crashed (SIGABRT) during: importing"),
        ("import time\ntime.sleep(600)\n", 3, Reason.TIMEOUT, "did not finish within 3 s"),
    ],
    ids=["raises", "aborts", "hangs"],
)
def test_broken_torch_is_a_finding(tmp_path: Path, body: str, timeout: float, reason: Reason,
                                   needle: str) -> None:
    env = fake_torch(tmp_path, body)
    outcome = run_smoke(SmokeOptions(device="cpu", timeout=timeout), environ=env)
    assert isinstance(outcome, SmokeFailure), outcome
    assert outcome.reason is reason
    assert needle in outcome.message
    assert statuses(outcome)["smoke-device-usable"] is Status.FAIL


@pytest.mark.subprocess
def test_missing_interpreter_and_missing_torch(tmp_path: Path) -> None:
    outcome = run_smoke(SmokeOptions(device="cpu", python=str(tmp_path / "no-python")))
    assert isinstance(outcome, SmokeFailure)
    assert outcome.reason is Reason.NOT_INSTALLED
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
                   check=True)
    bare = str(tmp_path / "venv" / "bin" / "python")
    outcome = run_smoke(SmokeOptions(device="cpu", python=bare))
    assert isinstance(outcome, SmokeFailure)
    assert outcome.reason is Reason.NOT_INSTALLED
    assert outcome.message == f"PyTorch is not installed for {bare}"
    # the install line itself comes from gpudoctor.compat.advice, through `recommend`
    assert f"gpudoctor recommend --python {bare}" in outcome.fix


# --------------------------------------------------------------------------- the child, in-process


@pytest.fixture(scope="module")
def child() -> dict[str, Any]:
    """The child script's functions (its main only runs as __main__)."""
    ns: dict[str, Any] = {"__name__": "gpudoctor_smoke_child"}
    exec(compile(CHILD_SOURCE, "_smoke_child.py", "exec"), ns)
    return ns


@pytest.mark.parametrize(
    ("major", "minor", "arch_list", "ok"),
    [
        (9, 0, ["sm_80", "sm_90"], True),
        (8, 6, ["sm_80"], True),  # a cubin runs on later minors of its major
        (8, 0, ["sm_86"], False),
        (12, 0, ["sm_80", "sm_90", "compute_90"], True),  # PTX JIT-compiles forward
        (12, 0, ["sm_80", "sm_90", "sm_100"], False),
        (6, 1, ["sm_70", "sm_75", "sm_80"], False),  # Pascal after torch dropped it
        (9, 0, ["sm_90a"], True),
        (10, 0, ["sm_100"], True),
        (9, 0, [], False),
    ],
)
def test_arch_supported(child: dict[str, Any], major: int, minor: int, arch_list: list[str],
                        ok: bool) -> None:
    assert child["arch_supported"](major, minor, arch_list) is ok


@pytest.mark.subprocess  # the first `import torch` of a process runs ldconfig -p
@pytest.mark.needs_torch
@pytest.mark.slow
def test_summarize_and_rel_diff(child: dict[str, Any]) -> None:
    t = child["summarize"]([float(x) for x in range(1, 12)], "perf_counter")  # 1..11 ms
    assert (t["median_ms"], t["p10_ms"], t["p90_ms"]) == (6.0, 2.0, 10.0)
    assert t["spread"] == pytest.approx(8 / 6)
    import torch

    a, b = torch.tensor([1.0, -4.0]), torch.tensor([1.0, -4.002])
    assert child["max_rel_diff"]([a, torch.zeros(0)], [b, torch.zeros(0)]) == pytest.approx(
        0.002 / 4.002, rel=1e-4)


@pytest.mark.subprocess  # the first `import torch` of a process runs ldconfig -p
@pytest.mark.needs_torch
def test_tf32_off_restores_flags(child: dict[str, Any]) -> None:
    import torch

    before = child["tf32_state"](torch)
    assert set(before) == {"conv", "matmul"}
    with child["tf32_off"](torch):
        assert child["tf32_state"](torch) == {"conv": False, "matmul": False}
    assert child["tf32_state"](torch) == before


@pytest.mark.subprocess  # the first `import torch` of a process runs ldconfig -p
@pytest.mark.needs_torch
def test_tf32_through_fp32_precision(child: dict[str, Any]) -> None:
    """torch >= 2.9: TF32 is switched through `fp32_precision` (the legacy `allow_tf32` flags
    are retiring), and read through it where the legacy flags refuse (conv and RNN set apart,
    a mix torch's own getters reject)."""
    import torch

    b = torch.backends
    if not hasattr(b.cudnn, "conv"):
        pytest.skip("this torch has no fp32_precision settings")
    with child["tf32_off"](torch):
        assert (b.cudnn.conv.fp32_precision, b.cuda.matmul.fp32_precision) == ("ieee", "ieee")
    assert (b.cudnn.conv.fp32_precision, b.cuda.matmul.fp32_precision) == ("tf32", "none")
    b.cudnn.conv.fp32_precision = "ieee"  # conv apart from rnn: cudnn.allow_tf32 refuses
    try:
        with pytest.raises(RuntimeError):
            _ = b.cudnn.allow_tf32
        assert child["tf32_state"](torch) == {"conv": False, "matmul": False}
    finally:
        b.cudnn.conv.fp32_precision = "tf32"


@pytest.mark.subprocess  # the first `import torch` of a process runs ldconfig -p
@pytest.mark.needs_torch
@pytest.mark.slow
def test_float16_scales_the_loss(child: dict[str, Any]) -> None:
    """float16 backpropagates loss x LOSS_SCALE, as GradScaler does (the first convolutions'
    gradients lie below float16's normal range otherwise), and unscales the gradients before
    the optimizer step; float32 and bfloat16 are left alone."""
    import torch

    seen: dict[str, tuple[float, Any]] = {}
    for dtype in ("float32", "float16"):
        cfg = {"batch_size": 8, "dtype": dtype, "warmup": 0, "steps": 1, "profile_dir": None}
        t = child["Trainer"](torch, cfg, "lenet", torch.device("cpu"), child["Progress"](1))
        logits: list[float] = []
        t.model[-1].register_full_backward_hook(
            lambda m, gi, go, out=logits: out.append(float(go[0].abs().max())))
        t.step(t.reset())
        seen[dtype] = (logits[0], t.model[0].weight.grad.clone())
    assert child["LOSS_SCALE"] == {"float16": 1024.0}
    assert seen["float16"][0] / seen["float32"][0] == pytest.approx(1024.0, rel=0.01)
    g32, g16 = seen["float32"][1], seen["float16"][1]
    assert float((g16 - g32).abs().max() / g32.abs().max()) < 0.1  # unscaled


@pytest.mark.subprocess  # the first `import torch` of a process runs ldconfig -p
@pytest.mark.needs_torch
@pytest.mark.slow
def test_cuda_configurations_plumbing_on_cpu(child: dict[str, Any],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The three CUDA configurations (native, cudnn, cudnn-benchmark) through the real child
    code on the CPU, where the cuDNN flags change nothing: the comparison, the timing, the
    parent's parsing and the verdicts all run as they would on a GPU."""
    import torch

    monkeypatch.setitem(child, "configs", lambda device, facts: [
        ("native", False, False), ("cudnn", True, False), ("cudnn-benchmark", True, True)])
    cfg = {"batch_size": 4, "steps": 2, "warmup": 1, "dtype": "float32", "profile_dir": None}
    with redirect_stdout(io.StringIO()) as out:
        model = child["run_model"](torch, cfg, "lenet", torch.device("cpu"), {},
                                   child["Progress"](3 * 8))
    assert torch.backends.cudnn.enabled
    assert not torch.backends.cudnn.benchmark
    assert out.getvalue().count("GPUDOCTOR:") == 3 * 8
    assert [c["name"] for c in model["configs"]] == ["native", "cudnn", "cudnn-benchmark"]
    # every path timed in IEEE FP32: TF32 off for cuDNN's convolutions and for the GEMMs alike
    # (under torch's defaults the timing gave cuDNN TF32 and the native GEMMs FP32)
    assert {(c["timing_tf32_conv"], c["timing_tf32_matmul"]) for c in model["configs"]} == {
        (False, False)}
    assert child["tf32_state"](torch) == {"conv": True, "matmul": False}  # defaults back
    assert model["configs"][0]["max_rel_diff"] is None
    assert all(c["max_rel_diff"] <= 1e-5 for c in model["configs"][1:])
    device = {"name": "cuda:0", "label": "NVIDIA Test GPU", "torch": "2.13.0+cu128",
              "cuda": "12.8", "capability": "9.0", "arch": "sm_90", "arch_list": ["sm_90"],
              "arch_supported": True, "total_memory": 80 << 30, "free_memory": 79 << 30,
              "cudnn_available": True, "cudnn_version": 91002, "tf32_conv": True,
              "tf32_matmul": False, "unknown_key": 1}
    figure = {"device": "cuda", "value": 1.0, "unit": "x", "setup": "", "max_rel_error": 0.0}
    report = _report({"device": device, "dtype": "float32", "models": [model],
                      "matmul": {"what": "matmul", **figure}, "copy": {"what": "copy", **figure},
                      "cudnn_libraries": ["/x/libcudnn.so.9"], "seconds": 1.0}, "python")
    assert report.device.arch_list == ("sm_90",)
    assert report.models[0].config("cudnn")
    got = statuses(report)
    assert got["smoke-training-correct"] is Status.PASS
    assert got["smoke-cudnn-matches-native"] is Status.PASS
    assert got["smoke-cudnn-used"] is Status.WARN  # CPU kernels: no aten::cudnn_convolution
    assert got["smoke-cudnn-faster"] in (Status.PASS, Status.WARN)  # CPU timing noise
    assert got["smoke-device-usable"] is Status.PASS


# --------------------------------------------------------------------------- verdicts
# The verdicts on hand-built CUDA reports are the smoke checks' tests:
# tests/checks/test_smoke.py (builders in tests/smoke_kit.py).


# --------------------------------------------------------------------------- a real GPU


@pytest.mark.gpu
@pytest.mark.skipif(not Path("/dev/nvidia0").exists(), reason="no NVIDIA GPU on this machine")
def test_real_gpu_passes() -> None:
    outcome = run_smoke(SmokeOptions(device="cuda:0"))
    assert isinstance(outcome, SmokeRun), outcome
    got = statuses(outcome)
    assert got["smoke-training-correct"] is Status.PASS
    assert got["smoke-cudnn-matches-native"] is Status.PASS
    assert got["smoke-cudnn-used"] is Status.PASS
    assert got["smoke-device-usable"] is Status.PASS
    assert outcome.cudnn_libraries

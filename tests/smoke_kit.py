"""Hand-built smoke-test outcomes for the smoke checks' and renderers' tests.

A GPU cannot run here, so CUDA outcomes are built from the shapes the child reports (see
`gpudoctor/actions/_smoke_child.py`); CPU outcomes come from real runs in the tests themselves.
`from tests.smoke_kit import report, run` (tests/ is a package).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.checks.smoke import CHECKS
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, Finding, SmokeFacts, Status, Unavailable
from gpudoctor.model_smoke import (
    ConfigRun,
    DeviceInfo,
    ModelRun,
    RunError,
    SmokeRun,
    StepTiming,
    Throughput,
)
from gpudoctor.snapshot import loads

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "envs"
SMOKE_IDS = [f"GD45{i}" for i in range(6)]


def run(name: str, median: float = 1.0, diff: float | None = 1e-6, **kw: Any) -> ConfigRun:
    """One configuration's run: healthy by default, cuDNN kernels unless `native`."""
    timing = StepTiming("cuda-events", 20, median, median * 0.98, median * 1.02, median * 0.97,
                        median * 1.05, 0.04)
    base: dict[str, Any] = {
        "name": name, "cudnn_enabled": name != "native", "benchmark": name.endswith("benchmark"),
        "losses": (2.30, 2.29, 2.27), "nonfinite_grads": (), "zero_grads": (),
        "max_rel_diff": None if name == "native" else diff, "timing": timing,
        "timed_losses_finite": True,
        "conv_ops": ("aten::cudnn_convolution",) if name != "native" else
        ("aten::_slow_conv2d_forward",),
        "cudnn_kernels": ("sm90_xmma_fprop_implicit_gemm_f32f32",) if name != "native" else (),
    }
    base.update(kw)
    return ConfigRun(**base)


def report(*configs: ConfigRun, dtype: str = "float32", error: RunError | None = None,
           **device: Any) -> SmokeRun:
    """A CUDA smoke report of one LeNet run on an H100; `device` overrides DeviceInfo fields."""
    dev = DeviceInfo(**{
        "name": "cuda:0", "label": "NVIDIA H100", "torch": "2.13.0+cu124", "cuda": "12.4",
        "capability": "9.0", "arch": "sm_90", "arch_list": ("sm_80", "sm_90"),
        "arch_supported": True, "total_memory": 80 << 30, "free_memory": 79 << 30,
        "cudnn_available": True, "cudnn_version": 90100, "tf32_conv": True,
        "tf32_matmul": False, **device})
    configs = configs or (run("native", 3.0), run("cudnn", 1.0), run("cudnn-benchmark", 0.8))
    model = ModelRun("lenet", 128, (128, 3, 32, 32), 62006, configs, error)
    mm = Throughput("matmul", "cuda", 50.0, "TFLOP/s", "8192x8192 float32", 1e-6, False)
    cp = Throughput("copy", "cuda", 2500.0, "GB/s", "256 MiB", 0.0)
    return SmokeRun(dev, dtype, "python", (model,), mm, cp, ("/lib/libcudnn.so.9",), 3.0)


def base_env(name: str = "h100-healthy") -> Environment:
    """A recorded environment (tests/fixtures/envs/NAME.json), smoke fact as recorded."""
    return loads((FIXTURES / f"{name}.json").read_text())


def env_with(outcome: SmokeFacts | Unavailable, name: str = "h100-healthy") -> Environment:
    """That environment with `outcome` as its smoke fact."""
    return dataclasses.replace(base_env(name), smoke=outcome)


def smoke_findings(env: Environment) -> dict[str, Finding]:
    """The smoke checks' findings over `env`, by slug, run from the one registry."""
    report = run_checks(env, load_tables(), tuple(c for c in REGISTRY if c in CHECKS))
    assert [r.check_id for r in report.results] == SMOKE_IDS
    return {r.slug: r.finding for r in report.results}


def statuses(outcome: SmokeFacts | Unavailable) -> dict[str, Status]:
    """Each smoke check's status for `outcome`, by slug."""
    return {slug: f.status for slug, f in smoke_findings(env_with(outcome)).items()}


def finding(outcome: SmokeFacts | Unavailable, slug: str) -> Finding:
    """One smoke check's finding for `outcome`."""
    return smoke_findings(env_with(outcome))[slug]

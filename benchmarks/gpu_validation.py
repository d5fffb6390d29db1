"""Validate every GPU path of gpudoctor on a real NVIDIA GPU, in one command, in < 10 minutes.

    python benchmarks/gpu_validation.py [--allow-no-gpu] [--budget 600] [--runs 3]

On a machine with an NVIDIA GPU and driver it runs, each step in a child process with a
deadline taken from one overall budget:

1. `pytest --run-gpu -m gpu`: the tests that need real hardware (the real NVML probe and its
   health reads, the real libcuda, torch on the GPU);
2. `gpudoctor check --smoke`: every check, the health checks (GD105-GD108) included, and the
   quick training smoke test;
3. `gpudoctor smoke-test` in float32 and bfloat16, `--runs` times each; every run times the
   models with cuDNN on and off, and the spread of the cuDNN medians over the runs must stay
   within 5%;
4. `smoke-test --profile`: the profiler's evidence that cuDNN kernels ran the convolutions;
5. `torchrun --nproc-per-node <GPUs> -m gpudoctor smoke-test --distributed`: NCCL all-reduce
   over every GPU present;

then writes what it measured to benchmarks/results/gpu_validation-<gpu>.json and a snapshot
of the machine to tests/fixtures/envs/<gpu>.json, both named after the GPU
("h100-80gb-hbm3-x1"). Exit 0: every step passed; 1: a step failed, or there is no NVIDIA GPU
("no NVIDIA GPU: nothing to validate", exit 0 with --allow-no-gpu: for CI runners that run it
unconditionally).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MAX_SPREAD = 0.05
NO_GPU = "no NVIDIA GPU: nothing to validate"
_PROBE = """
import json
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.nvml import probe_nvml
from gpudoctor.snapshot import to_data
print(json.dumps(to_data(probe_nvml(Deps(nvml_timeout=20)))))
"""


@dataclass
class Step:
    """One step's outcome."""

    name: str
    argv: list[str]
    rc: int | None = None  # None: not run (budget spent)
    seconds: float = 0.0
    ok: bool = False
    note: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def gpus_from_probe(data: Any) -> tuple[list[str], str]:
    """GPU names from the NVML probe's JSON, and why there are none."""
    if not isinstance(data, dict):
        return [], "the NVML probe gave no answer"
    if "gpus" not in data:
        return [], str(data.get("message") or "NVML is unavailable")
    names = [g["name"] for g in data["gpus"] if isinstance(g, dict) and "name" in g]
    return names, "" if names else "the driver is loaded but sees no GPU"


def detect_gpus(timeout: float = 60) -> tuple[list[str], str]:
    """The GPUs the real NVML probe sees on this machine (in a child: a wedged driver hangs)."""
    try:
        out = subprocess.run([PY, "-c", _PROBE], capture_output=True, text=True, timeout=timeout,
                             cwd=ROOT, check=False)
        return gpus_from_probe(json.loads(out.stdout))
    except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as e:
        return [], f"the NVML probe failed: {e}"


def gpu_slug(names: list[str]) -> str:
    """A file name for this machine's GPUs: "h100-80gb-hbm3-x8", "a100-sxm4-80gb-x1"."""
    name = max(set(names), key=names.count) if names else "unknown"
    base = re.sub(r"[^a-z0-9]+", "-", name.lower().replace("nvidia", "")).strip("-")
    return f"{base or 'gpu'}-x{len(names)}"


def spread(values: Iterable[float]) -> float | None:
    """(max - min) / median; None for fewer than two values."""
    vals = [v for v in values if v > 0]
    if len(vals) < 2:
        return None
    return (max(vals) - min(vals)) / statistics.median(vals)


def _configs(smoke: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    report = smoke.get("smoke") or {}
    for model in report.get("models") or ():
        for config in model.get("configs") or ():
            yield str(model.get("model")), config


def cudnn_medians(smoke: dict[str, Any]) -> dict[str, float]:
    """Per model, the cuDNN configuration's median step time (ms) of one smoke-test JSON."""
    return {m: float(c["timing"]["median_ms"]) for m, c in _configs(smoke)
            if c.get("name") == "cudnn" and isinstance(c.get("timing"), dict)}


def cudnn_kernels(smoke: dict[str, Any]) -> list[str]:
    """The kernels the profiler attributed to cuDNN in the convolutions."""
    return sorted({k for _, c in _configs(smoke) for k in c.get("cudnn_kernels") or ()})


def run_step(step: Step, deadline: float, env: dict[str, str] | None = None) -> Step:
    """Run one step's command, bounded by what is left of the budget."""
    left = deadline - time.monotonic()
    if left < 5:
        step.note = "not run: the time budget is spent"
        return step
    start = time.monotonic()
    try:
        proc = subprocess.run(step.argv, capture_output=True, text=True, timeout=left, cwd=ROOT,
                              env=env, check=False)
        step.rc = proc.returncode
        if proc.stdout.lstrip().startswith("{"):
            step.data = json.loads(proc.stdout)
        step.note = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    except subprocess.TimeoutExpired:
        step.rc, step.note = 124, "timed out: the time budget is spent"
    except json.JSONDecodeError as e:
        step.note = f"output is not JSON: {e}"
    step.seconds = round(time.monotonic() - start, 1)
    step.ok = step.rc == 0
    return step


def plan(gpus: int, runs: int, trace_dir: str) -> list[Step]:
    """Every step, in order."""
    g = [PY, "-m", "gpudoctor"]
    steps = [Step("pytest --run-gpu -m gpu", [PY, "-m", "pytest", "-q", "--run-gpu", "-m", "gpu",
                                             "-p", "no:cacheprovider", "tests"]),
             Step("check --smoke", [*g, "check", "--smoke", "--format", "json"])]
    for dtype in ("float32", "bfloat16"):
        steps += [Step(f"smoke-test {dtype} run {i + 1}",
                       [*g, "smoke-test", "--dtype", dtype, "--format", "json"])
                  for i in range(runs)]
    steps.append(Step("smoke-test --profile", [*g, "smoke-test", "--model", "convnet",
                                               "--profile", trace_dir, "--format", "json"]))
    torchrun = shutil.which("torchrun") or str(Path(PY).parent / "torchrun")
    steps.append(Step(f"smoke-test --distributed ({gpus} GPUs)",
                      [torchrun, f"--nproc-per-node={gpus}", "-m", "gpudoctor", "smoke-test",
                       "--distributed", "--format", "json"]))
    return steps


def judge(steps: list[Step]) -> dict[str, Any]:
    """The spreads over repeated runs and the cuDNN evidence; marks the steps that fail them."""
    out: dict[str, Any] = {"max_spread": MAX_SPREAD, "spread": {}}
    for dtype in ("float32", "bfloat16"):
        runs = [s for s in steps if s.name.startswith(f"smoke-test {dtype} run") and s.data]
        for model in sorted({m for s in runs for m in cudnn_medians(s.data)}):
            value = spread(cudnn_medians(s.data).get(model, 0.0) for s in runs)
            out["spread"][f"{dtype} {model}"] = value
            if value is not None and value > MAX_SPREAD:
                for s in runs:
                    s.ok, s.note = False, f"{model} cuDNN medians spread {value:.1%} > 5%"
    prof = next((s for s in steps if s.name == "smoke-test --profile"), None)
    if prof is not None and prof.rc is not None:
        out["cudnn_kernels"] = cudnn_kernels(prof.data)
        if not out["cudnn_kernels"]:
            prof.ok, prof.note = False, "the profiler shows no cuDNN kernel in the convolutions"
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the validation; the exit code says whether it passed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allow-no-gpu", action="store_true",
                    help="exit 0, not 1, on a machine without an NVIDIA GPU")
    ap.add_argument("--budget", type=float, default=570.0, help="seconds for all the steps")
    ap.add_argument("--runs", type=int, default=3, help="smoke-test runs per dtype")
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--snapshots", type=Path, default=ROOT / "tests" / "fixtures" / "envs")
    args = ap.parse_args(argv)
    deadline = time.monotonic() + args.budget
    names, why = detect_gpus()
    if not names:
        print(f"{NO_GPU} ({why})")
        return 0 if args.allow_no_gpu else 1
    slug = gpu_slug(names)
    print(f"validating {len(names)} GPU(s): {', '.join(sorted(set(names)))} -> {slug}")
    with tempfile.TemporaryDirectory(prefix="gpudoctor-traces-") as traces:
        steps = plan(len(names), args.runs, traces)
        for step in steps:
            run_step(step, deadline)
            print(f"  {'ok  ' if step.ok else 'FAIL'} {step.name} ({step.seconds} s) {step.note}")
        verdicts = judge(steps)
    args.results.mkdir(parents=True, exist_ok=True)
    args.snapshots.mkdir(parents=True, exist_ok=True)
    snap = run_step(Step("snapshot", [PY, "-m", "gpudoctor", "snapshot", "-o",
                                      str(args.snapshots / f"{slug}.json")]), deadline + 60)
    result = {"gpus": names, "slug": slug, "budget_s": args.budget, **verdicts,
              "snapshot": snap.ok, "steps": [asdict(s) | {"data": None} for s in steps],
              "smoke": {s.name: s.data.get("smoke") for s in steps if "smoke-test" in s.name}}
    path = args.results / f"gpu_validation-{slug}.json"
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"results: {path}; snapshot: {args.snapshots / (slug + '.json')}")
    return 0 if all(s.ok for s in steps) and snap.ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

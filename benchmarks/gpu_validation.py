"""Validate every GPU path of gpudoctor on a real NVIDIA GPU, in one command, within a lease.

    PYTHONPATH=. python benchmarks/gpu_validation.py            # on the GPU machine
    PYTHONPATH=. python benchmarks/gpu_validation.py --dry-run  # anywhere: is every step wired?

Each step is a child process started through gpudoctor's one runner (`gpudoctor.childproc`:
a process group of its own, a deadline, bounded output). A step's deadline is its own limit,
capped by what is left of one overall budget (--budget, 420 s: with detection and the final
writes the run ends within 8 minutes). At the deadline its process group is killed; then
every process that carries this run's tag in its environment (GPUDOCTOR_GPU_VALIDATION) is
killed too: gpudoctor's smoke children and torchrun's workers start sessions of their own,
which the group kill does not reach. The results JSON and the snapshot are written after
every step, so a lease that ends early still leaves what was measured.

Steps, the most telling first: preflight (the modules the steps import), `gpudoctor
snapshot`, `check --smoke` (its environment, smoke fact included, becomes the snapshot),
`smoke-test` in float32 and in bfloat16, `smoke-test --profile` (the cuDNN kernels the
profiler sees), `torch.distributed.run` of this interpreter over every GPU (`smoke-test
--distributed`), `pytest --run-gpu -m gpu` (this script's own test deselected, and refusing to
run under the tag: no recursion), then the repeated smoke-test runs for the spread.

Each step ends "ok", "FAIL", "needs a GPU" (only --dry-run: the step ran and stopped where a GPU
is required), "not shown" (one GPU cannot show NCCL communication between GPUs), or "not run"
(the budget was spent). Writes benchmarks/results/gpu_validation-<gpu>.json and a snapshot of
the machine to tests/fixtures/envs/<gpu>.json, named after the GPU ("h100-80gb-hbm3-x1");
--dry-run writes under a temporary directory unless told where. Exit 0: every step ran and
none failed; 1: a step failed or was not run, or there is no NVIDIA GPU ("no NVIDIA GPU:
nothing to validate"; 0 with --allow-no-gpu); 2: run inside a validation run, or a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpudoctor import childproc  # noqa: E402 - after the checkout is on sys.path

PY = sys.executable
TAG = "GPUDOCTOR_GPU_VALIDATION"
MAX_SPREAD = 0.05
# a step's median below this is bound by kernel-launch and Python overhead (LeNet: ~1 ms on an
# H100), whose jitter is a large share of it: its spread is recorded, not gated
SPREAD_GATE_MS = 5.0
MIN_STEP = 15.0  # seconds: a step with less left is not started
NO_GPU = "no NVIDIA GPU: nothing to validate"
SELF_TEST = "tests/test_gpu_validation.py::test_full_validation_on_a_real_gpu"
MODULES = ("typer", "rich", "pynvml", "packaging", "pytest", "torch")
_PROBE = """
import json
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.nvml import probe_nvml
from gpudoctor.snapshot import to_data
print(json.dumps(to_data(probe_nvml(Deps(nvml_timeout=20)))))
"""
_PREFLIGHT = ("import importlib.util, json; print(json.dumps({m: importlib.util.find_spec(m) "
              f"is not None for m in {MODULES!r}}}))")


@dataclass
class Step:
    """One step: what runs, for how long at most, and how it ended."""

    name: str
    kind: str  # preflight, snapshot, check, smoke, profile, distributed, pytest
    argv: list[str]
    limit: float  # seconds, before the budget caps it
    output: str | None = None  # a file the step writes its JSON to (else its stdout)
    rc: int | None = None  # None: not run
    seconds: float = 0.0
    verdict: str = "not run"
    note: str = ""
    killed_after: int = 0  # tagged processes still alive after it, killed
    data: dict[str, Any] = field(default_factory=dict)


def gpus_from_probe(data: Any) -> tuple[list[str], str]:
    """GPU names from the NVML probe's JSON, and why there are none."""
    if not isinstance(data, dict):
        return [], "the NVML probe gave no answer"
    if "gpus" not in data:
        return [], str(data.get("message") or "NVML is unavailable")
    names = [str(g["name"]) for g in data["gpus"] if isinstance(g, dict) and "name" in g]
    return names, "" if names else "the driver is loaded but sees no GPU"


def detect_gpus(env: dict[str, str], timeout: float = 60) -> tuple[list[str], str]:
    """The GPUs the real NVML probe sees (in a child: a wedged driver hangs)."""
    try:
        done = childproc.run([PY, "-c", _PROBE], timeout, env)
        return gpus_from_probe(json.loads(done.stdout))
    except (childproc.ChildTimeout, ValueError, OSError) as e:
        return [], f"the NVML probe failed: {e}"


def gpu_slug(names: list[str]) -> str:
    """A file name for this machine's GPUs: "h100-80gb-hbm3-x8", "a100-sxm4-80gb-x1"."""
    name = max(set(names), key=names.count) if names else "unknown"
    base = re.sub(r"[^a-z0-9]+", "-", name.lower().replace("nvidia", "")).strip("-")
    return f"{base or 'gpu'}-x{len(names)}"


def spread(values: Iterable[float]) -> float | None:
    """(max - min) / median; None for fewer than two values."""
    vals = sorted(v for v in values if v > 0)
    if len(vals) < 2:
        return None
    mid = len(vals) // 2
    median = vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2
    return (vals[-1] - vals[0]) / median


def step_env(tag: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Every step's environment: ours, the checkout first on PYTHONPATH (the entries already
    there made absolute: `PYTHONPATH=.:.gpu-deps`), the run's tag."""
    env = dict(os.environ)
    given = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *given])
    env["PYTHONUNBUFFERED"] = "1"
    env[TAG] = tag
    env.update(extra or {})
    return env


def tagged(tag: str, proc: Path = Path("/proc")) -> list[int]:
    """Live processes (not this one, not zombies) whose environment carries the run's tag."""
    needle = f"{TAG}={tag}\0".encode()
    found = []
    for d in proc.iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and needle in (d / "environ").read_bytes() + b"\0":
                found.append(int(d.name))
        except (OSError, IndexError):
            continue
    return found


def kill_tagged(tag: str, wait: float = 5.0) -> int:
    """SIGKILL every tagged process — what a step left behind in sessions of their own (a
    smoke child, torchrun's workers) — and wait up to `wait` s for them; how many there were."""
    pids = tagged(tag)
    for pid in pids:
        _kill(pid)
    until = time.monotonic() + wait
    while time.monotonic() < until and set(pids) & set(tagged(tag)):
        time.sleep(0.05)
    return len(pids)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def run_step(step: Step, deadline: float, env: dict[str, str], tag: str,
             dry_run: bool = False, min_step: float = MIN_STEP) -> Step:
    """Run one step within min(its limit, what is left of the budget); "{timeout}" in its
    argv becomes the seconds gpudoctor itself may take (15 s less: it reports its own hang
    first). Afterwards every tagged process still alive is killed."""
    left = min(step.limit, deadline - time.monotonic())
    if left < min_step:
        step.verdict, step.note = "not run", "not run: the time budget is spent"
        return step
    step.argv = argv = [a.replace("{timeout}", f"{max(left - 15, 10):.0f}") for a in step.argv]
    start = time.monotonic()
    stdout = stderr = ""
    try:
        done = childproc.run(argv, left, env)
        step.rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except childproc.ChildTimeout as e:
        step.rc, stdout, stderr = 124, e.result.stdout, e.result.stderr
    except OSError as e:
        step.rc, stderr = 127, f"cannot run {argv[0]}: {e}"
    step.seconds = round(time.monotonic() - start, 1)
    step.killed_after = kill_tagged(tag)
    step.data = read_junit(step.output) if step.kind == "pytest" else read_json(step.output,
                                                                                stdout)
    if step.rc == 124:
        step.verdict, step.note = "FAIL", f"timed out after {left:.0f} s: killed"
    else:
        step.verdict, step.note = verdict_of(step.kind, step.rc, step.data, stderr, dry_run)
    step.note = " ".join(step.note.split())  # one line
    return step


def read_json(path: str | None, stdout: str) -> dict[str, Any]:
    """A step's JSON: the file it wrote, else its stdout; {} when there is none."""
    text = stdout
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError:
            return {}
    try:
        data = json.loads(text[text.find("{"):]) if "{" in text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_junit(path: str | None) -> dict[str, Any]:
    """pytest's JUnit XML as {"passed": [...], "failed": [[name, message]...], "skipped"}."""
    try:
        root = ET.parse(path or "").getroot()  # pytest wrote it, in our own temporary dir
    except (OSError, ET.ParseError):
        return {}
    out: dict[str, Any] = {"passed": [], "failed": [], "skipped": []}
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            out["failed"].append([name, (bad.get("message") or "").split("\n")[0][:300]])
        else:
            out["skipped" if case.find("skipped") is not None else "passed"].append(name)
    return out


def _no_gpu(kind: str, data: dict[str, Any]) -> str | None:
    """Why a step that ran could not reach a GPU (torch sees none), from its own output."""
    smoke = data.get("smoke") if kind != "check" else (data.get("environment") or {}).get(
        "smoke")
    if isinstance(smoke, dict):
        failure = smoke.get("failure") if isinstance(smoke.get("failure"), dict) else None
        if failure and "cannot be used" in str(failure.get("message")):
            return str(failure["message"])
        if kind == "check" and (smoke.get("device") or {}).get("name") == "cpu":
            return "the smoke test ran on the CPU: torch sees no CUDA device"
    for r in (data.get("distributed") or {}).get("ranks") or ():
        if "is_available() is False" in str(r.get("error")):
            return f"rank {r.get('rank')}: {r.get('error')}"
    return None


def verdict_of(kind: str, rc: int | None, data: dict[str, Any], stderr: str,
               dry_run: bool) -> tuple[str, str]:
    """A finished step's verdict and note, from its exit status and its own output."""
    last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""
    if kind == "preflight":
        missing = [m for m, ok in data.items() if not ok] if data else ["?"]
        if rc == 0 and not missing:
            return "ok", f"{', '.join(data)} importable"
        return "FAIL", (f"not importable: {', '.join(missing)}: the steps need them (carry a "
                        "venv that has them, or pip install them from wheels)")
    if kind == "pytest":
        if not data or rc not in (0, 1):
            return "FAIL", f"pytest exited {rc}: {last}"
        counts = ", ".join(f"{len(data[k])} {k}" for k in ("passed", "failed", "skipped"))
        failed = "; ".join(f"{n.rsplit('::', 1)[-1]}: {m}" for n, m in data["failed"])[:600]
        if rc == 0:
            return "ok", counts
        return ("needs a GPU" if dry_run else "FAIL"), f"{counts}: {failed}"
    if not data:
        return "FAIL", f"exited {rc} without a JSON report: {last}"
    why = _no_gpu(kind, data)
    if why is not None:
        return ("needs a GPU", why) if dry_run else ("FAIL", f"{why} (NVML sees a GPU)")
    if kind == "distributed" and (data.get("distributed") or {}).get("world_size") == 1:
        ok = rc == 0 and all(r.get("state") == "ok" for r in data["distributed"]["ranks"])
        return ("not shown" if ok else "FAIL"), (
            "one GPU: NCCL communication between GPUs cannot be shown here (one rank "
            "initialised NCCL and all-reduced locally)" if ok else _failed(data) or last)
    return ("ok", "") if rc == 0 else ("FAIL", _failed(data) or f"exited {rc}: {last}")


def _failed(data: dict[str, Any]) -> str:
    return "; ".join(f"{f.get('id')} {f.get('message')}" for f in data.get("findings") or ()
                     if f.get("status") == "fail")[:600]


def plan(gpus: int, runs: int, work: Path) -> list[Step]:
    """Every step, the most telling first (a lease may end before the last)."""
    g = [PY, "-m", "gpudoctor"]

    def out(name: str) -> str:
        return str(work / f"{name}.json")

    def smoke(dtype: str, i: int) -> Step:
        return Step(f"smoke-test {dtype} run {i}", "smoke",
                    [*g, "smoke-test", "--dtype", dtype, "--timeout", "{timeout}", "--format",
                     "json", "-o", out(f"smoke-{dtype}-{i}")], 120, out(f"smoke-{dtype}-{i}"))

    steps = [
        Step("preflight", "preflight", [PY, "-c", _PREFLIGHT], 60),
        Step("snapshot", "snapshot", [*g, "snapshot", "--timeout", "{timeout}", "-o",
                                      out("snapshot")], 90, out("snapshot")),
        Step("check --smoke", "check", [*g, "check", "--smoke", "--timeout", "{timeout}",
                                        "--format", "json", "-o", out("check")], 150,
             out("check")),
        smoke("float32", 1), smoke("bfloat16", 1),
        Step("smoke-test --profile", "profile",
             [*g, "smoke-test", "--model", "convnet", "--profile", str(work / "traces"),
              "--timeout", "{timeout}", "--format", "json", "-o", out("profile")], 120,
             out("profile")),
        Step(f"smoke-test --distributed ({gpus} GPU{'s' if gpus != 1 else ''})", "distributed",
             [PY, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}",
              "-m", "gpudoctor", "smoke-test", "--distributed", "--timeout", "{timeout}",
              "--format", "json", "-o", out("distributed")], 150, out("distributed")),
        Step("pytest --run-gpu -m gpu", "pytest",
             [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--run-gpu", "-m", "gpu",
              "--deselect", SELF_TEST, "--junitxml", str(work / "pytest.xml"),
              str(ROOT / "tests")], 240, str(work / "pytest.xml")),
    ]
    for i in range(2, runs + 1):
        steps += [smoke("float32", i), smoke("bfloat16", i)]
    return steps


def _configs(smoke: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    report = smoke.get("smoke") or {}
    for model in report.get("models") or ():
        for config in model.get("configs") or ():
            yield str(model.get("model")), config


def cudnn_medians(smoke: dict[str, Any]) -> dict[str, float]:
    """Per model, the cuDNN configuration's median step time (ms) of one smoke-test JSON."""
    return {m: float(c["timing"]["median_ms"]) for m, c in _configs(smoke)
            if c.get("name") == "cudnn" and isinstance(c.get("timing"), dict)}


def kernels(smoke: dict[str, Any]) -> dict[str, Any]:
    """What the profiler saw in the cuDNN configurations: their conv ops, the kernels matched
    as cuDNN's, and every kernel of the convolutions (the names to commit and refine with)."""
    runs = [c for _, c in _configs(smoke) if str(c.get("name", "")).startswith("cudnn")]
    return {"conv_ops": sorted({o for c in runs for o in c.get("conv_ops") or ()}),
            "cudnn_kernels": sorted({k for c in runs for k in c.get("cudnn_kernels") or ()}),
            "conv_kernels": sorted({k for c in runs for k in c.get("conv_kernels") or ()})}


def judge(steps: list[Step]) -> dict[str, Any]:
    """Across steps: the spread of the cuDNN medians over the repeated runs (gated above
    SPREAD_GATE_MS), and the profiler's cuDNN evidence; marks the steps that fail them."""
    out: dict[str, Any] = {"max_spread": MAX_SPREAD, "spread_gate_ms": SPREAD_GATE_MS,
                           "spread": {}}
    for dtype in ("float32", "bfloat16"):
        runs = [s for s in steps if s.name.startswith(f"smoke-test {dtype} run") and s.data]
        for model in sorted({m for s in runs for m in cudnn_medians(s.data)}):
            medians = [cudnn_medians(s.data).get(model, 0.0) for s in runs]
            value = spread(medians)
            gated = bool(medians) and min(medians) >= SPREAD_GATE_MS
            out["spread"][f"{dtype} {model}"] = {"spread": value, "gated": gated,
                                                 "medians_ms": medians}
            if gated and value is not None and value > MAX_SPREAD:
                for s in runs:
                    s.verdict, s.note = "FAIL", (f"{model} cuDNN medians spread {value:.1%} > "
                                                 f"{MAX_SPREAD:.0%} over {len(runs)} runs")
    prof = next((s for s in steps if s.kind == "profile"), None)
    if prof is not None and prof.verdict == "ok":
        seen = out["profiler"] = kernels(prof.data)
        if not seen["cudnn_kernels"] and "aten::cudnn_convolution" not in seen["conv_ops"]:
            prof.verdict, prof.note = "FAIL", "the profiler shows no cuDNN in the convolutions"
    return out


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` whole: a lease that ends mid-write leaves the previous version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def snapshot_text(step: Step) -> str | None:
    """The machine's snapshot from a step's JSON (`snapshot`, or `check --smoke`, whose
    environment adds the smoke fact), through gpudoctor's own reader; None if it has none."""
    if step.kind not in ("snapshot", "check") or step.rc not in (0, 1) or not step.data:
        return None
    from gpudoctor.snapshot import dumps, loads

    try:
        return dumps(loads(json.dumps(step.data)))
    except (ValueError, TypeError, KeyError):
        return None


def result_of(steps: list[Step], head: dict[str, Any], verdicts: dict[str, Any]
              ) -> dict[str, Any]:
    smoke = {s.name: s.data.get("smoke") for s in steps if s.kind in ("smoke", "profile")}
    dist = next((s.data.get("distributed") for s in steps if s.kind == "distributed"), None)
    pytest_ = next((s.data for s in steps if s.kind == "pytest"), None)
    return {**head, **verdicts, "complete": all(s.verdict != "not run" for s in steps),
            "steps": [asdict(s) | {"data": None} for s in steps], "smoke": smoke,
            "distributed": dist, "pytest": pytest_}


def main(argv: list[str] | None = None) -> int:
    """Run the validation; the exit code says whether it passed."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--allow-no-gpu", action="store_true",
                    help="exit 0, not 1, on a machine without an NVIDIA GPU")
    ap.add_argument("--dry-run", action="store_true", help="run every step on a machine "
                    "without a GPU: each must run and stop where a GPU is needed")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds for all the steps")
    ap.add_argument("--runs", type=int, default=3, help="smoke-test runs per dtype (>= 2)")
    ap.add_argument("--results", type=Path, help="default benchmarks/results")
    ap.add_argument("--snapshots", type=Path, help="default tests/fixtures/envs")
    args = ap.parse_args(argv)
    if os.environ.get(TAG):
        print(f"gpu_validation: refusing to run inside a validation run ({TAG} is set): "
              "that would start it again from its own pytest step", file=sys.stderr)
        return 2
    tag = f"{os.getpid()}-{time.time_ns()}"
    env = step_env(tag)
    started = time.monotonic()
    deadline = started + args.budget
    work = Path(tempfile.mkdtemp(prefix="gpudoctor-validation-"))
    names, why = detect_gpus(env)
    if not names and not args.dry_run:
        print(f"{NO_GPU} ({why})")
        return 0 if args.allow_no_gpu else 1
    slug = gpu_slug(names) if names else "no-gpu"
    results = (args.results or (work / "results" if args.dry_run
                                else ROOT / "benchmarks" / "results")).resolve()
    snapshots = (args.snapshots or (work / "envs" if args.dry_run
                                    else ROOT / "tests" / "fixtures" / "envs")).resolve()
    result_path = results / f"gpu_validation-{slug}.json"
    snapshot_path = snapshots / f"{slug}.json"
    mode = "dry run" if args.dry_run else "validating"
    print(f"{mode}: {len(names)} GPU(s): {', '.join(sorted(set(names))) or why} -> {slug}",
          flush=True)
    head = {"schema": 1, "mode": "dry-run" if args.dry_run else "gpu", "gpus": names,
            "slug": slug, "python": PY, "budget_s": args.budget,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "cannot_show": [] if len(names) > 1 else [
                "NCCL communication between GPUs: this machine has one GPU"]}
    steps = plan(max(len(names), 1), max(args.runs, 1), work)
    try:
        for step in steps:
            run_step(step, deadline, env, tag, args.dry_run)
            verdicts = judge(steps)
            print(f"  {step.verdict:<11} {step.name} ({step.seconds} s) {step.note[:160]}",
                  flush=True)
            text = snapshot_text(step)
            if text is not None:
                write_atomic(snapshot_path, text)
            head["elapsed_s"] = round(time.monotonic() - started, 1)
            write_atomic(result_path, json.dumps(result_of(steps, head, verdicts), indent=1,
                                                 default=str) + "\n")
    finally:  # Ctrl-C, or SIGTERM at the end of a lease (childproc's handlers raise then)
        kill_tagged(tag)
    for line in head["cannot_show"]:
        print(f"  NOT SHOWN: {line}")
    bad = [s.name for s in steps if s.verdict in ("FAIL", "not run")]
    print(f"results: {result_path}\nsnapshot: {snapshot_path}"
          f"{'' if snapshot_path.exists() else ' (not written: no step gave one)'}")
    if bad:
        print(f"{'FAILED' if any(s.verdict == 'FAIL' for s in steps) else 'INCOMPLETE'}: "
              f"{', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    childproc.install_signal_handlers()  # SIGTERM at a lease's end: clean up, as on Ctrl-C
    sys.exit(main())

"""How fast is `gpudoctor check`, against what it is measured by, in the same run.

Prints the median wall time of each command over N runs (interleaved, so load drift hits
all of them alike) and the ratios issue 22 (item 6) sets as targets:

    gpudoctor check            ≤ 1.03 × python -c "import torch"
    gpudoctor check --no-torch ≤ 0.15 s
    gpudoctor check host       ≤ 0.30 s
    gpudoctor check, torch absent ≤ 0.30 s (`--python` names a fresh venv's interpreter
                               with no torch: the probe child finds no torch and returns)
    gpudoctor check / the torch child alone: no target, what gpudoctor adds to the facts it
                               must gather (on a GPU that includes a CUDA context and one
                               cuDNN convolution, which `import torch` never pays for)
    gpudoctor check host       < 1 s with an `import torch` that hangs (`--python` names an
                               interpreter whose torch import sleeps): host checks read no
                               torch fact, so the torch child is neither started nor awaited

    python benchmarks/check_speed.py [--runs 7] [--json results.json] [--baseline DIR]

`--baseline DIR` also times every gpudoctor command in another tree (made with `git archive
<commit> | tar -x -C DIR`), interleaved with this one's, so that before and after are compared
in the same run: on a loaded machine only such ratios mean anything. The load average and the
CPU are printed and written with the figures. Bytecode caches are warm (each command runs once
before the timed runs). `python -m torch.utils.collect_env` is timed too, as the tool people
run today.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import time_once

PY = sys.executable
ROOT = str(Path(__file__).resolve().parent.parent)  # `python -m gpudoctor` runs this tree
WORK = Path(tempfile.mkdtemp(prefix="gpudoctor-bench-"))
HANGING = WORK / "python"
NO_TORCH = WORK / "venv-no-torch" / "bin" / "python"
COMMANDS = {
    "import torch": [PY, "-c", "import torch"],
    "gpudoctor check": [PY, "-m", "gpudoctor", "check", "--format", "json", "-o", "/dev/null"],
    "gpudoctor check --no-torch": [PY, "-m", "gpudoctor", "check", "--no-torch", "--format",
                                   "json", "-o", "/dev/null"],
    "gpudoctor check host": [PY, "-m", "gpudoctor", "check", "host", "--format", "json", "-o",
                             "/dev/null"],
    "check host, torch hangs": [PY, "-m", "gpudoctor", "check", "host", "--python",
                                str(HANGING), "--format", "json", "-o", "/dev/null"],
    "check, torch absent": [PY, "-m", "gpudoctor", "check", "--python", str(NO_TORCH),
                            "--format", "json", "-o", "/dev/null"],
    "torch.utils.collect_env": [PY, "-m", "torch.utils.collect_env"],
    # the torch probe's child on its own: `import torch`, and where CUDA is available a CUDA
    # context and one cuDNN convolution, which `import torch` alone never pays for (on a GPU
    # machine ~0.5 s); check / this is gpudoctor's own cost on top of the facts it must gather
    "torch child alone": [PY, str(Path(ROOT) / "gpudoctor" / "probes" / "_torch_child.py")],
}


def make_hanging_python() -> None:
    """An interpreter that is this one, except that a program importing torch sleeps."""
    HANGING.write_text('#!/bin/sh\ncase "$*" in\n  *"import torch"*) sleep 600 ;;\nesac\n'
                       f'exec "{PY}" "$@"\n')
    HANGING.chmod(0o755)


def make_venv_without_torch() -> None:
    """A new virtual environment with nothing installed: where torch is absent."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(NO_TORCH.parent.parent)], check=True)


def cpu_model() -> str:
    """The CPU's model name (Linux), for the record."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def runs_of(baseline: str | None) -> dict[str, tuple[list[str], str]]:
    """Name → (argv, the directory it runs in): this tree's commands, and with `baseline` each
    gpudoctor command again, named "… [baseline]", run in that tree."""
    runs = {name: (argv, ROOT) for name, argv in COMMANDS.items()}
    if baseline:
        for name, argv in COMMANDS.items():
            if "gpudoctor" in argv:
                runs[f"{name} [baseline]"] = (argv, baseline)
    return runs


def report_targets(med: dict[str, float], suffix: str = "") -> dict[str, float]:
    """Print the targets' verdicts for this tree (or the baseline's, `suffix`)."""
    base = med["import torch"]
    ratio = med["gpudoctor check" + suffix] / base
    no_torch = med["gpudoctor check --no-torch" + suffix]
    absent = med["check, torch absent" + suffix]
    host, hanging = med["gpudoctor check host" + suffix], med["check host, torch hangs" + suffix]
    child = med["gpudoctor check" + suffix] / med["torch child alone"]
    print(f"check / import torch = {ratio:.3f}  (target ≤ 1.03: "
          f"{'met' if ratio <= 1.03 else 'MISSED'}){suffix}")
    print(f"check / torch child alone = {child:.3f}  (no target: gpudoctor's cost on top of "
          f"the torch facts it gathers, CUDA context and cuDNN included){suffix}")
    print(f"check --no-torch     = {no_torch:.3f} s (target ≤ 0.15: "
          f"{'met' if no_torch <= 0.15 else 'MISSED'}){suffix}")
    print(f"check, torch absent  = {absent:.3f} s (target ≤ 0.30: "
          f"{'met' if absent <= 0.30 else 'MISSED'}){suffix}")
    print(f"check host           = {host:.3f} s (target ≤ 0.30: "
          f"{'met' if host <= 0.30 else 'MISSED'}){suffix}")
    print(f"check host, torch hangs = {hanging:.3f} s (target < 1: "
          f"{'met' if hanging < 1.0 else 'MISSED'}){suffix}")
    return {"check_over_import_torch": ratio, "check_over_torch_child": child,
            "no_torch_seconds": no_torch,
            "check_host_seconds": host, "torch_absent_seconds": absent,
            "check_host_hanging_torch_seconds": hanging}


def main() -> None:
    """Run the benchmark and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--baseline", help="another tree whose gpudoctor is timed alongside")
    parser.add_argument("--note", default="", help="what the trees are, written with the figures")
    args = parser.parse_args()
    # the bytecode cache on, as users have it: a shell exporting PYTHONDONTWRITEBYTECODE=1
    # would time the compiling of every module gpudoctor changed since its caches were written
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    make_hanging_python()
    make_venv_without_torch()
    runs = runs_of(args.baseline and str(Path(args.baseline).resolve()))
    load_before = os.getloadavg()
    for argv, cwd in runs.values():  # warm the page cache and the bytecode caches once
        time_once(argv, cwd)
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.runs):
        for name, (argv, cwd) in runs.items():
            samples[name].append(time_once(argv, cwd))
    load_after = os.getloadavg()
    med = {name: statistics.median(s) for name, s in samples.items()}
    base = med["import torch"]
    print(f"{platform.node()}: {os.cpu_count()} × {cpu_model()}; load average (1, 5, 15 min) "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} before, "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} after")
    print(f"{'command':43} {'median s':>9} {'min s':>7} {'max s':>7} {'× import torch':>15}")
    for name, s in samples.items():
        print(f"{name:43} {med[name]:9.3f} {min(s):7.3f} {max(s):7.3f} {med[name] / base:15.3f}")
    print()
    figures = report_targets(med)
    baseline_figures = None
    if args.baseline:
        print()
        baseline_figures = report_targets(med, " [baseline]")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.node(), "cpus": os.cpu_count(), "cpu": cpu_model(),
                       "load_average_before": load_before, "load_average_after": load_after,
                       "python": platform.python_version(), "runs": args.runs,
                       "baseline": args.baseline, "note": args.note, "samples": samples,
                       "medians": med,
                       **figures, "baseline_figures": baseline_figures},
                      f, indent=2)


if __name__ == "__main__":
    main()

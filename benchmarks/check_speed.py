"""How fast is `gpudoctor check`, against what it is measured by, in the same run.

Prints the median wall time of each command over N runs (interleaved, so load drift hits
all of them alike) and the ratios the spine issue sets as targets:

    gpudoctor check            ≤ 1.10 × python -c "import torch"
    gpudoctor check --no-torch ≤ 0.30 s
    gpudoctor check host       ≤ 0.30 s
    gpudoctor check, torch absent ≤ 0.30 s (`--python` names a fresh venv's interpreter
                               with no torch: the probe child finds no torch and returns)
    gpudoctor check host       < 1 s with an `import torch` that hangs (`--python` names an
                               interpreter whose torch import sleeps): host checks read no
                               torch fact, so the torch child is neither started nor awaited

    python benchmarks/check_speed.py [--runs 7] [--json results.json]

`python -m torch.utils.collect_env` is timed too, as the tool people run today.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import time_once

PY = sys.executable
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
}


def make_hanging_python() -> None:
    """An interpreter that is this one, except that a program importing torch sleeps."""
    HANGING.write_text('#!/bin/sh\ncase "$*" in\n  *"import torch"*) sleep 600 ;;\nesac\n'
                       f'exec "{PY}" "$@"\n')
    HANGING.chmod(0o755)


def make_venv_without_torch() -> None:
    """A new virtual environment with nothing installed: where torch is absent."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(NO_TORCH.parent.parent)], check=True)



def main() -> None:
    """Run the benchmark and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    make_hanging_python()
    make_venv_without_torch()
    for argv in COMMANDS.values():  # warm the page cache once
        time_once(argv)
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, argv in COMMANDS.items():
            samples[name].append(time_once(argv))
    med = {name: statistics.median(s) for name, s in samples.items()}
    base = med["import torch"]
    print(f"{'command':32} {'median s':>9} {'min s':>7} {'max s':>7} {'× import torch':>15}")
    for name, s in samples.items():
        print(f"{name:32} {med[name]:9.3f} {min(s):7.3f} {max(s):7.3f} {med[name] / base:15.2f}")
    ratio = med["gpudoctor check"] / base
    no_torch = med["gpudoctor check --no-torch"]
    print()
    verdict = "met" if ratio <= 1.10 else "MISSED"
    print(f"check / import torch = {ratio:.2f}  (target ≤ 1.10: {verdict})")
    print(f"check --no-torch     = {no_torch:.3f} s (target ≤ 0.30: "
          f"{'met' if no_torch <= 0.30 else 'MISSED'})")
    absent = med["check, torch absent"]
    print(f"check, torch absent  = {absent:.3f} s (target ≤ 0.30: "
          f"{'met' if absent <= 0.30 else 'MISSED'})")
    host, hanging = med["gpudoctor check host"], med["check host, torch hangs"]
    print(f"check host           = {host:.3f} s (target ≤ 0.30: "
          f"{'met' if host <= 0.30 else 'MISSED'})")
    print(f"check host, torch hangs = {hanging:.3f} s (target < 1: "
          f"{'met' if hanging < 1.0 else 'MISSED'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.node(), "python": platform.python_version(),
                       "runs": args.runs, "samples": samples, "medians": med,
                       "check_over_import_torch": ratio, "no_torch_seconds": no_torch,
                       "check_host_seconds": host, "torch_absent_seconds": absent,
                       "check_host_hanging_torch_seconds": hanging},
                      f, indent=2)


if __name__ == "__main__":
    main()

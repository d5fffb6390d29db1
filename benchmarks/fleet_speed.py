"""How fast is `gpudoctor fleet` over 1,000 node reports, against just parsing them.

Generates N realistic `check --format json` reports (default 1,000) from the recorded
environments in tests/fixtures/envs/ — every one judged by the real checks, with its own host
name, and a few nodes given an older driver or another torch so there is something to find —
into a temporary directory, then times, interleaved over R runs, as subprocesses:

    gpudoctor fleet DIR --format json -o /dev/null      target: < 2 s for 1,000 reports
    python -c 'import json, glob; [json.load(open(f)) for f in glob.glob("DIR/*.json")]'

and prints the medians and their ratio (the baseline is the floor: every report must be
parsed once).

    python benchmarks/fleet_speed.py [--nodes 1000] [--runs 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
from pathlib import Path

from timing import time_once

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TARGET_S = 2.0


def reports(n: int, out: Path) -> None:
    """`n` reports into `out`: mostly the healthy H100 node, some of every other fixture."""
    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.compat import load_tables
    from gpudoctor.renderers.json import JsonRenderer
    from gpudoctor.snapshot import loads

    tables = load_tables()
    texts = {}
    for f in sorted((ROOT / "tests" / "fixtures" / "envs").glob("*.json")):
        env = loads(f.read_text())
        texts[f.stem] = json.loads(JsonRenderer().render(run_checks(env, tables, REGISTRY)))
    rng = random.Random(0)
    others = [k for k in texts if k != "h100-healthy"]
    for i in range(n):
        kind = "h100-healthy" if rng.random() < 0.95 else rng.choice(others)
        data = json.loads(json.dumps(texts[kind]))  # a fresh copy
        host = data["environment"]["host"]
        if isinstance(host, dict) and "unavailable" not in host:
            host["hostname"] = f"gpu{i:04d}"
        nvml = data["environment"]["nvml"]
        if kind == "h100-healthy" and rng.random() < 0.01 and isinstance(nvml, dict):
            nvml["driver_version"] = "570.124.06"
        (out / f"gpu{i:04d}.json").write_text(json.dumps(data, indent=2))



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpudoctor-fleet-") as tmp:
        d = Path(tmp)
        reports(args.nodes, d)
        size = sum(f.stat().st_size for f in d.iterdir())
        commands = {
            "gpudoctor fleet": [PY, "-m", "gpudoctor", "fleet", str(d), "--format", "json",
                                "-o", "/dev/null"],
            "json.load every report": [PY, "-c", "import json, glob; [json.load(open(f)) for f "
                                       f"in glob.glob({str(d / '*.json')!r})]"],
        }
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(time_once(argv))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["gpudoctor fleet"] / med["json.load every report"]
    print(f"{args.nodes} reports, {size / 2**20:.1f} MiB, {args.runs} runs, "
          f"{platform.node()} ({platform.processor() or platform.machine()})")
    for k, v in med.items():
        print(f"  {k:<24} median {v:.3f} s  (min {min(times[k]):.3f} s)")
    verdict = "meets" if med["gpudoctor fleet"] < TARGET_S else "MISSES"
    print(f"  fleet / baseline = {ratio:.2f}x; fleet {verdict} the < {TARGET_S:g} s target")
    if args.json:
        args.json.write_text(json.dumps({"nodes": args.nodes, "bytes": size, "runs": args.runs,
                                         "median_s": med, "ratio": ratio,
                                         "target_s": TARGET_S}, indent=2) + "\n")


if __name__ == "__main__":
    main()

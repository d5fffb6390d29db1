"""How fast `gpudoctor explain` matches a 16 MiB log, against a floor measured in the same run.

The logs are built here, reproducibly (seeded): training progress lines of a real shape
(timestamps, steps, losses, `cuda:0`, memory in MiB), with a few warnings, and a real error
text (a fixture of tests/fixtures/errors) placed

    at the end        the usual case: the run died, its last lines say why
    in the middle     the error is not the last thing the log says
    in dense noise    every line holds a trigger word ("WARNING ... deprecated"): the worst
                      case for the focus step, which then keeps its budget and the tail

The floor is what any reader of the text pays: `str.lower()` and a line count of the same
text. Prints, per log, the median seconds of `explain` (no probe: matching only) over N runs,
the floor's, and their ratio; the target is explain < 1 s for a 16 MiB log. Each explain run
must still find the error (its top diagnosis is checked), or the benchmark fails.

    python benchmarks/explain_speed.py [--runs 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpudoctor.compat import load_tables  # noqa: E402
from gpudoctor.explain import explain  # noqa: E402

SIZE = 16 * 2**20
ERROR = ROOT / "tests" / "fixtures" / "errors" / "pytorch-16417-oom-expandable.txt"
EXPECT = "out-of-memory"


def _noise(rng: random.Random, size: int, dense: bool) -> str:
    lines, n, step = [], 0, 0
    while n < size:
        step += 1
        if dense:
            line = (f"2024-05-01 12:{step % 60:02d}:{step % 59:02d} WARNING torch/utils/data: "
                    f"worker {step % 8} is deprecated, step {step}\n")
        elif step % 997 == 0:
            line = (f"2024-05-01 12:{step % 60:02d}:00 WARNING grad norm {rng.random():.3f} "
                    "is large\n")
        else:
            line = (f"2024-05-01 12:{step % 60:02d}:{step % 59:02d} INFO epoch {step // 5000} "
                    f"step {step} loss={rng.random():.4f} lr=3e-4 cuda:0 mem "
                    f"{rng.randint(9000, 23000)}MiB\n")
        lines.append(line)
        n += len(line)
    return "".join(lines)[:size]


def logs() -> dict[str, str]:
    """The three logs (see the module), each of SIZE characters plus the error."""
    rng = random.Random(19)
    error = ERROR.read_text(encoding="utf-8")
    quiet = _noise(rng, SIZE, dense=False)
    half = quiet.rfind("\n", 0, SIZE // 2) + 1
    return {
        "error at the end": quiet + error,
        "error in the middle": quiet[:half] + error + quiet[half:],
        "error in dense noise": _noise(rng, SIZE, dense=True) + error,
    }


def _median(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Time explain and the floor on each log; exit 1 if an error is not found."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    tables = load_tables()
    rows = {}
    for name, text in logs().items():
        expl = explain(text, tables, probe=None)
        got = expl.diagnoses[0].match.signature.cause_class if expl.found else ""
        if got != EXPECT:
            print(f"{name}: the error was not found (top class {got!r})", file=sys.stderr)
            return 1
        t = _median(lambda text=text: explain(text, tables, probe=None), args.runs)
        floor = _median(lambda text=text: (text.lower(), text.count("\n")), args.runs)
        rows[name] = {"mib": round(len(text) / 2**20, 2), "explain_s": round(t, 3),
                      "floor_s": round(floor, 3), "ratio": round(t / floor, 1)}
        print(f"{name:22} {rows[name]['mib']:6.2f} MiB  explain {t:6.3f} s  floor "
              f"{floor:6.3f} s  ratio {t / floor:5.1f}x  {'ok' if t < 1 else 'OVER 1 s'}")
    if args.json:
        args.json.write_text(json.dumps({"python": platform.python_version(),
                                         "machine": platform.machine(), "runs": args.runs,
                                         "logs": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

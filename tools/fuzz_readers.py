"""Fuzz every reader for longer than CI does: `python tools/fuzz_readers.py --examples 2000`.

The targets and strategies are `tests/fuzz/targets.py` (the CI test runs a few dozen examples
of each); here each target runs `--examples` examples with a fresh random seed (or `--seed`),
each bounded by `--per-example` seconds (a hang), and the outcome is counted: read (a result),
refused (a usage error: exit 2), or a crash, printed with the input hypothesis shrank it to.
Exit 0 when nothing crashed, 1 otherwise.

    python tools/fuzz_readers.py --examples 500 --only report snapshot
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]  # the tests package lives at the top of the repo

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzz.targets import TARGETS, bounded  # noqa: E402


def fuzz(name: str, examples: int, per_example: float, at: int | None) -> tuple[Counter[str],
                                                                                 str | None]:
    """Run one target; the outcome counts and the failure (None when none)."""
    strategy, target, _ = TARGETS[name]
    run = bounded(target, per_example)
    counts: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def prop(value: Any) -> None:
        try:
            counts[run(value)] += 1
        except BaseException:
            counts["crash"] += 1
            raise

    if at is not None:
        prop = seed(at)(prop)
    try:
        prop()
    except Exception:  # noqa: BLE001 - reported, with hypothesis's shrunk example
        return counts, traceback.format_exc()
    return counts, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="examples per target")
    parser.add_argument("--per-example", type=float, default=10.0,
                        help="seconds one example may take before it counts as a hang")
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), help="targets to run")
    parser.add_argument("--seed", type=int, default=None, help="reproduce a run")
    args = parser.parse_args(argv)
    failed = False
    for name in args.only or sorted(TARGETS):
        start = time.monotonic()
        counts, failure = fuzz(name, args.examples, args.per_example, args.seed)
        took = time.monotonic() - start
        print(f"{name:12} {sum(counts.values()):6} examples in {took:6.1f} s: "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())), flush=True)
        if failure:
            failed = True
            print(failure, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

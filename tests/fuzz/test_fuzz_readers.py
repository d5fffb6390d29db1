"""Every reader fuzzed (issue 18, Found 5): any bytes in → a result or a usage error, never a
crash or a hang. The strategies and targets are in `targets.py`; here each runs a bounded,
derandomized number of examples (about 20 s for all of them on a CI runner), each example
bounded in time. `tools/fuzz_readers.py --examples N` runs the same targets for longer."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz.targets import TARGETS, bounded

pytestmark = pytest.mark.slow  # hypothesis runs each reader over many examples: seconds each

PER_EXAMPLE = 10.0  # seconds; the slowest real example takes well under one


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_reader_never_crashes_or_hangs(name: str) -> None:
    strategy, target, examples = TARGETS[name]
    run = bounded(target, PER_EXAMPLE)
    outcomes: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def prop(value: Any) -> None:
        outcomes[run(value)] += 1

    prop()
    # both sides were reached: inputs read through every check and renderer, and refused ones
    assert outcomes["read"] and outcomes["refused"], outcomes

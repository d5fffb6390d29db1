"""The smoke fact through snapshots and JSON replays (the smoke checks' own tests are in
tests/checks/test_smoke.py)."""

from __future__ import annotations

import json

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    SMOKE_NOT_RUN,
    Status,
)
from gpudoctor.model_smoke import RunError
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import dumps, loads, to_data
from tests.checks.test_smoke import FAILURE
from tests.smoke_kit import (
    base_env,
    env_with,
    finding,
    report,
    run,
)

# --------------------------------------------------------------------------- snapshots, replays


@pytest.mark.parametrize("outcome", [report(), report(error=RunError(
    "convnet training", "OutOfMemoryError", True, 1 << 29, 8 << 30, "frame")), FAILURE],
    ids=["report", "model-error", "failure"])
def test_snapshot_round_trips_the_smoke_fact(outcome: object) -> None:
    env = env_with(outcome)  # type: ignore[arg-type]
    text = dumps(env)
    assert loads(text) == env
    assert dumps(loads(text)) == text
    assert json.loads(text)["environment"]["smoke"] == to_data(outcome)


def test_old_snapshot_without_smoke_loads_as_not_run() -> None:
    data = json.loads(dumps(base_env()))
    del data["environment"]["smoke"]
    assert loads(json.dumps(data)).smoke == SMOKE_NOT_RUN


def test_json_report_replays_the_smoke_verdicts() -> None:
    """`check --smoke --format json`, then `check --from-snapshot` on that file."""
    slow = report(run("native", 1.0), run("cudnn", 1.3))
    for outcome in (slow, FAILURE):
        first = run_checks(env_with(outcome), load_tables(), REGISTRY)
        replayed = run_checks(loads(JsonRenderer().render(first)), load_tables(), REGISTRY)
        assert replayed.results == first.results
    assert finding(slow, "smoke-cudnn-faster").status is Status.WARN


def _strict(text: str) -> object:
    def refuse(token: str) -> None:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_wrong_numbers_stay_strict_json_and_replay() -> None:
    """A NaN loss (the very failure GD450 reports) is written as "NaN", never as a bare NaN
    token that jq and JSON.parse refuse, and reads back as NaN: the replay fails alike."""
    nan = report(run("native"), run("cudnn", losses=(2.3, float("nan"), 2.2),
                                    diff=float("nan")))
    first = run_checks(env_with(nan), load_tables(), REGISTRY)
    text = JsonRenderer().render(first)
    configs = _strict(text)["environment"]["smoke"]["models"][0]["configs"]  # type: ignore[index]
    assert configs[1]["losses"][1] == "NaN" and configs[1]["max_rel_diff"] == "NaN"
    replayed = run_checks(loads(text), load_tables(), REGISTRY)
    assert replayed.results == first.results
    assert finding(nan, "smoke-training-correct").status is Status.FAIL
    assert finding(nan, "smoke-cudnn-matches-native").status is Status.FAIL
    assert dumps(loads(dumps(env_with(nan)))) == dumps(env_with(nan))
    _strict(dumps(env_with(nan)))

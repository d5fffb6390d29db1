"""The verdicts on every fixture and report equal the recording (issue 22, item 7).

`tools/record_verdicts.py` recorded, through the command line, what check, recommend, explain
and fleet say on every snapshot, pasted report and error text of tests/fixtures (the held-out
sets A and B included: they are development data). A refactor must leave every verdict and
exit code as recorded; a change that means to alter one re-records in its own commit and names
it. Messages and fixes are compared too, but may be re-recorded (`--update-text`) with a reason.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tools import record_verdicts as rv

pytestmark = pytest.mark.slow  # ~1,400 in-process commands: 15-20 s here

_SHOWN = 40


@pytest.fixture(scope="module")
def now() -> tuple[dict[str, Any], dict[str, Any]]:
    return rv.record()


def _recorded(path: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _explain(diffs: list[str], recorded: dict[str, Any], what: str) -> str:
    tables = ("" if recorded["tables"] == rv.tables_digest() else
              f" (the compat tables changed since the recording: {recorded['tables']} → "
              f"{rv.tables_digest()}; if the new rows mean these, re-record in that commit)")
    return (f"{len(diffs)} {what} differ from the recording{tables}:\n"
            + "\n".join(diffs[:_SHOWN]) + ("\n…" if len(diffs) > _SHOWN else ""))


@pytest.mark.parametrize("command", ["check", "recommend", "explain", "fleet"])
def test_verdicts_equal_the_recording(now: tuple[dict[str, Any], dict[str, Any]],
                                      command: str) -> None:
    recorded = _recorded(rv.VERDICTS)
    diffs = rv.differences(recorded[command], now[0][command], command)
    assert not diffs, _explain(diffs, recorded, "verdicts")


def test_texts_equal_the_recording(now: tuple[dict[str, Any], dict[str, Any]]) -> None:
    recorded = _recorded(rv.TEXTS)
    diffs = rv.differences({k: v for k, v in recorded.items() if k != "tables"},
                           {k: v for k, v in now[1].items() if k != "tables"})
    assert not diffs, _explain(diffs, recorded, "messages and fixes") + (
        "\nre-record with `python tools/record_verdicts.py --update-text` in a commit saying why")


def test_the_recording_covers_every_input() -> None:
    """Every fixture input is in the recording: a new report is judged too (and recorded)."""
    recorded = _recorded(rv.VERDICTS)
    reports = {p.relative_to(rv.FIXTURES).as_posix() for p in rv.inputs(rv.REPORT_DIRS)}
    errors = {p.relative_to(rv.FIXTURES).as_posix() for p in rv.inputs(rv.ERROR_DIRS)}
    assert set(recorded["check"]) == reports == set(recorded["recommend"])
    assert set(recorded["explain"]) == errors
    assert len(reports) > 300 and len(errors) > 450
    assert sum(len(v["checks"]) for v in recorded["check"].values()) > 15_000


def test_a_changed_verdict_is_found() -> None:
    """The comparison can fail: one status flipped, one exit code changed, one input dropped."""
    recorded = _recorded(rv.VERDICTS)
    changed = copy.deepcopy(recorded)
    name = "envs/h100-healthy.json"
    changed["check"][name]["checks"]["GD101"][0] = "warn"
    changed["recommend"][name]["exit"] = 2
    del changed["explain"][next(iter(changed["explain"]))]
    diffs = rv.differences(recorded, changed)
    assert len(diffs) == 3
    assert any(d.startswith(f"check/{name}/checks/GD101: ") for d in diffs)
    assert any("now missing" in d for d in diffs)

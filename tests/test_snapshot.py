"""Snapshots round-trip exactly, and bad files give one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.snapshot import SnapshotError, dumps, loads

FIXTURES = sorted((Path(__file__).resolve().parent / "fixtures" / "envs").glob("*.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_round_trip_exact(path: Path) -> None:
    text = path.read_text()
    env = loads(text)
    assert dumps(env) == text
    assert loads(dumps(env)) == env


def test_driver_string_kept_verbatim() -> None:
    env = loads((FIXTURES[0].parent / "h100-healthy.json").read_text())
    assert env.nvml.driver_version == "580.65.06"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("not json", "not JSON"),
        ("[]", "no 'environment'"),
        ('{"schema_version": 99, "environment": {}}', "schema_version 99"),
        ('{"schema_version": 1, "environment": {"gpudoctor_version": 1}}', "gpudoctor_version"),
    ],
)
def test_bad_snapshots(text: str, needle: str) -> None:
    with pytest.raises(SnapshotError, match=needle):
        loads(text)


def test_report_json_is_a_snapshot_too() -> None:
    data = json.loads((FIXTURES[0].parent / "lost-gpu.json").read_text())
    data["findings"] = []
    env = loads(json.dumps(data))
    assert env.nvml.gpus[1].reason.value == "error"  # type: ignore[union-attr]

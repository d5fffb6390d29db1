"""Snapshots round-trip exactly, and bad files give one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.snapshot import SnapshotError, dumps, loads

FIXTURES = sorted((Path(__file__).resolve().parent / "fixtures" / "envs").glob("*.json"))


def _contains(new: object, old: object, where: str = "$") -> None:
    """Every key and value of `old` is in `new` unchanged; `new` may add keys (fields added
    since `old` was written, at their defaults)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key} dropped"
            _contains(new[key], value, f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for i, (n, o) in enumerate(zip(new, old, strict=True)):
            _contains(n, o, f"{where}[{i}]")
    else:
        assert new == old, f"{where}: {old!r} became {new!r}"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_round_trip_exact(path: Path) -> None:
    """A snapshot loads; written again it keeps every value it had (an older snapshot gains
    only the fields added since, at their defaults); and that text round-trips exactly."""
    text = path.read_text()
    env = loads(text)
    _contains(json.loads(dumps(env)), json.loads(text))
    assert loads(dumps(env)) == env
    assert dumps(loads(dumps(env))) == dumps(env)


def test_old_snapshot_fields_stay_plain_values() -> None:
    """Fields that may now be Unavailable (a report lacks them) keep an old snapshot's plain
    values, and the new fields take their defaults."""
    env = loads((FIXTURES[0].parent / "h100-healthy.json").read_text())
    g = env.nvml.gpus[0]  # type: ignore[union-attr]
    assert g.compute_capability == "9.0" and isinstance(g.memory_total, int)  # type: ignore[union-attr]
    assert isinstance(env.torch.runtime.arch_list, tuple)  # type: ignore[union-attr]
    assert env.sources == ()


def test_unavailable_fields_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    """An Environment read from pasted reports — Unavailable(NOT_REPORTED) in GPU, torch and
    health fields, its sources — round-trips exactly."""
    from gpudoctor.reports import read_reports

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "reports"))
    from tests.reports.report_excerpts import COLLECT_ENV_4090_CU117, TABLE_460_V100_CUT
    from tests.reports.report_excerpts_q import Q_550_A10_HW_SLOWDOWN_CUT

    for items in ([("a.md", COLLECT_ENV_4090_CU117), ("b.txt", TABLE_460_V100_CUT)],
                  [("q.txt", Q_550_A10_HW_SLOWDOWN_CUT)]):
        env = read_reports(items)
        assert env.sources
        text = dumps(env)
        assert loads(text) == env
        assert dumps(loads(text)) == text
        assert '"unavailable": "not-reported"' in text


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

"""Snapshots round-trip exactly, and bad files give one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor import schemas
from gpudoctor.model import Environment
from gpudoctor.snapshot import FORMER_KEYS, SnapshotError, dumps, loads, to_data
from tests.checks.envbuilder import SCENARIOS

FIXTURES = sorted((Path(__file__).resolve().parent / "fixtures" / "envs").glob("*.json"))
# written by schema_version 1 (`environment.cuda`, not `toolkits`): never rewritten, they are
# the proof that older snapshots keep reading
V1_FIXTURES = [p for p in FIXTURES if json.loads(p.read_text())["schema_version"] == 1]
# recorded on real machines by benchmarks/gpu_validation.py, in the schema of their day
CURRENT_FIXTURES = [p for p in FIXTURES if p not in V1_FIXTURES]


def _renamed(old: dict[str, object]) -> dict[str, object]:
    """A version-1 document with its Environment keys as this gpudoctor writes them."""
    env = old["environment"]
    assert isinstance(env, dict)
    former = {key: name for (cls, name), key in FORMER_KEYS.items() if cls is Environment}
    renamed = {former.get(k, k): v for k, v in env.items()}
    return {**old, "schema_version": schemas.version(schemas.SNAPSHOT), "environment": renamed}


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
    _contains(json.loads(dumps(env)), _renamed(json.loads(text)))
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
    from gpudoctor.reports.read import read_reports

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


@pytest.mark.parametrize("path", V1_FIXTURES, ids=lambda p: p.stem)
def test_every_v1_snapshot_still_reads(path: Path) -> None:
    """A snapshot of schema_version 1 names the toolkits `cuda`: it reads, its toolkits are
    `Environment.toolkits` value for value, and it is the scenario it was written from."""
    data = json.loads(path.read_text())
    assert data["schema_version"] == 1
    assert "cuda" in data["environment"] and "toolkits" not in data["environment"]
    env = loads(path.read_text())
    read = to_data(env.toolkits)
    # keys added since v1 hold their defaults
    for toolkit in read.get("toolkits", ()) if isinstance(read, dict) else ():
        assert toolkit.pop("refused_archs") == []
    assert read == data["environment"]["cuda"]
    if path.stem in SCENARIOS:  # all but real-ci-no-driver-cpu-torch, recorded on a machine
        assert env == SCENARIOS[path.stem]


def test_the_version_1_fixtures_are_most_of_them() -> None:
    assert len(V1_FIXTURES) >= 16 and len(CURRENT_FIXTURES) >= 1


@pytest.mark.parametrize("path", CURRENT_FIXTURES, ids=lambda p: p.stem)
def test_a_real_machines_snapshot_round_trips(path: Path) -> None:
    """A snapshot gpu_validation wrote on a real GPU machine reads and writes back byte for
    byte (its environment, smoke fact included, is what gpudoctor writes today)."""
    text = path.read_text()
    assert json.loads(text)["schema_version"] == schemas.version(schemas.SNAPSHOT)
    env = loads(text)
    assert env.nvml.gpus and env.smoke is not None  # type: ignore[union-attr]
    assert dumps(env) == text


def test_a_new_snapshot_writes_toolkits() -> None:
    data = json.loads(dumps(SCENARIOS["h100-healthy"]))
    assert data["schema_version"] == 3 == schemas.version(schemas.SNAPSHOT)
    assert "toolkits" in data["environment"] and "cuda" not in data["environment"]
    assert loads(json.dumps(data)) == SCENARIOS["h100-healthy"]


def test_the_new_key_wins_over_the_former() -> None:
    """A document with both keys is read by the new one (the former is only a fallback)."""
    data = json.loads(dumps(SCENARIOS["h100-healthy"]))
    data["environment"]["cuda"] = {"unavailable": "not-installed", "message": "stale"}
    assert loads(json.dumps(data)) == SCENARIOS["h100-healthy"]


@pytest.mark.parametrize("extra", [{}, {"findings": []}, {"command": "smoke-test"},
                                   {"command": "smoke-test --distributed"}],
                         ids=["snapshot", "check", "smoke-test", "smoke-test-distributed"])
def test_every_environment_carrier_reads_1_to_3_and_refuses_4(extra: dict[str, object]) -> None:
    data = {**json.loads(dumps(SCENARIOS["h100-healthy"])), **extra}
    v1 = {**data, "schema_version": 1}
    v1["environment"] = {("cuda" if k == "toolkits" else k): v
                         for k, v in data["environment"].items()}
    v2 = {**data, "schema_version": 2}  # a probed host: every fact has its value
    assert loads(json.dumps(v1)) == loads(json.dumps(v2)) == loads(json.dumps(data)) \
        == SCENARIOS["h100-healthy"]
    with pytest.raises(SnapshotError, match="schema_version 4; this gpudoctor reads 1, 2, 3"):
        loads(json.dumps({**data, "schema_version": 4}))


def test_a_report_only_fact_is_written_only_where_it_is_stated() -> None:
    """`TorchRuntime.launch_error` (torch's "no kernel image" error a pasted report quotes) is
    left out of a snapshot where it is None, so a real machine's snapshot written before it
    existed reads back byte for byte; where stated it is written and read back."""
    from gpudoctor.reports.read import read_reports

    env = read_reports([("r", "I have an NVIDIA GeForce GTX 1080 Ti.\nRuntimeError: CUDA error: "
                               "no kernel image is available for execution on the device\n")])
    assert "launch_error" in dumps(env) and loads(dumps(env)) == env
    assert "launch_error" not in dumps(SCENARIOS["h100-healthy"])

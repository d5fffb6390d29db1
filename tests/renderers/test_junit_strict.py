"""`check --strict --format junit`: the suite fails exactly when the job does.

Under --strict a warning fails the job (exit 1), so it is a <failure type="warning"> in the
JUnit report; a note (the WARN of an INFO check) fails neither. Run through the real CLI on
recorded snapshots, the XML parsed with ElementTree.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import runner

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ENVS = Path(__file__).resolve().parents[1] / "fixtures" / "envs"
FIXTURES = sorted(ENVS.glob("*.json"))


def check(snapshot: Path, *args: str) -> tuple[int, ET.Element]:
    """`gpudoctor check --from-snapshot SNAPSHOT --format junit ARGS`: exit code and suite."""
    p = runner.gpudoctor("check", "--from-snapshot", str(snapshot), "--format", "junit", *args,
                         timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, ET.fromstring(p.stdout)


def statuses(snapshot: Path) -> dict[str, tuple[str, str]]:
    """id → (status, severity) of every check, from the same snapshot's JSON report."""
    p = runner.gpudoctor("check", "--from-snapshot", str(snapshot), "--format", "json",
                         timeout=120)
    return {f["id"]: (f["status"], f["severity"]) for f in json.loads(p.stdout)["findings"]}


def failures(suite: ET.Element) -> dict[str, ET.Element]:
    """check id → its <failure> element."""
    return {case.attrib["name"].split()[0]: fail for case in suite.iter("testcase")
            if (fail := case.find("failure")) is not None}


@pytest.fixture(name="warning_only")
def warning_only_fixture(tmp_path: Path) -> Path:
    """The healthy H100 server with persistence mode off: one warning (GD108), no failure."""
    text = (ENVS / "h100-healthy.json").read_text()
    assert text.count('"persistence_mode": true') == 1
    path = tmp_path / "persistence-off.json"
    path.write_text(text.replace('"persistence_mode": true', '"persistence_mode": false'))
    return path


def test_strict_makes_the_warning_a_failure(warning_only: Path) -> None:
    found = statuses(warning_only)
    warned = [i for i, (status, severity) in found.items()
              if status == "warn" and severity != "info"]
    assert warned == ["GD108"]
    assert not [i for i, (status, _) in found.items() if status == "fail"]

    code, suite = check(warning_only, "--strict")
    assert code == 1
    assert suite.attrib["failures"] == "1"
    failed = failures(suite)
    assert list(failed) == ["GD108"]
    assert failed["GD108"].attrib["type"] == "warning"
    assert "persistence mode is off" in failed["GD108"].attrib["message"]
    assert "--strict" in (failed["GD108"].text or "")


def test_without_strict_the_warning_stays_a_pass_with_a_note(warning_only: Path) -> None:
    code, suite = check(warning_only)
    assert code == 0
    assert suite.attrib["failures"] == "0"
    assert failures(suite) == {}
    case = next(c for c in suite.iter("testcase") if c.attrib["name"].startswith("GD108 "))
    out = case.find("system-out")
    assert out is not None
    assert (out.text or "").startswith("warning: persistence mode is off")


def test_notes_fail_neither_the_job_nor_the_suite() -> None:
    snapshot = ENVS / "gpu-less-build-host-cpu-torch.json"
    found = statuses(snapshot)
    notes = [i for i, (status, severity) in found.items() if status == "warn"]
    assert notes, "the fixture has notes (WARN of INFO checks)"
    assert all(found[i][1] == "info" for i in notes)
    assert not [i for i, (status, _) in found.items() if status == "fail"]
    code, suite = check(snapshot, "--strict")
    assert code == 0
    assert suite.attrib["failures"] == "0"
    assert failures(suite) == {}


@pytest.mark.parametrize("snapshot", FIXTURES, ids=lambda p: p.stem)
def test_strict_suite_counts_agree_with_the_exit_code(snapshot: Path) -> None:
    found = statuses(snapshot)
    expected = {i for i, (status, severity) in found.items()
                if status == "fail" or (status == "warn" and severity != "info")}
    code, suite = check(snapshot, "--strict")
    assert code == (1 if expected else 0)
    assert int(suite.attrib["failures"]) == len(expected)
    assert set(failures(suite)) == expected

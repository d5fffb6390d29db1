"""A gpudoctor snapshot or JSON report given as a report: read exactly as
`gpudoctor.snapshot.loads` reads it, a broken one named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.reports.read import ReportError, read_reports
from gpudoctor.reports.snapshot import looks_like, read
from gpudoctor.snapshot import dumps, loads
from tests.reports.report_excerpts import ISSUE

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"


def test_snapshot_read_exactly_as_today() -> None:
    text = (ENVS / "h100-healthy.json").read_text()
    assert read_reports([("h100-healthy.json", text)]) == loads(text)


def test_broken_snapshot_is_named() -> None:
    data = json.loads((ENVS / "h100-healthy.json").read_text())
    data["environment"]["nvml"]["gpus"][0]["compute_capability"] = 90
    with pytest.raises(ReportError, match=r"^broken\.json is not a usable gpudoctor snapshot"):
        read_reports([("broken.json", json.dumps(data))])


def test_a_report_snapshot_keeps_its_sources() -> None:
    env = read_reports([("issue-123.md", ISSUE)])
    again = read_reports([("snap.json", dumps(env))])
    assert again == env and again.sources == env.sources


@pytest.mark.parametrize(("text", "looks"), [
    ('{"schema_version": 3, "environment": {}}', True),
    ('  \n{"environment": null}', True),
    ('{"a": 1}', False),  # JSON, but no environment in it
    ('see "environment" below: {', False),  # does not start as a JSON object
    ("", False),
])
def test_a_snapshot_is_a_json_object_naming_an_environment(text: str, looks: bool) -> None:
    assert looks_like(text) is looks


@pytest.mark.parametrize("text", ['{"environment": ', '{"environment": 5}', "{" + "[" * 5000])
def test_an_unreadable_snapshot_is_a_report_error_naming_the_input(text: str) -> None:
    with pytest.raises(ReportError, match=r"^snap\.json is not a usable gpudoctor snapshot: "):
        read(text, "snap.json")


def test_read_returns_the_recorded_environment() -> None:
    text = (ENVS / "lost-gpu.json").read_text()
    assert read(text, "lost-gpu.json") == loads(text)

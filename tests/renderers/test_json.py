"""`gpudoctor.renderers.json`: `check --format json`, its schema's head and findings."""

from __future__ import annotations

import json

from gpudoctor.compat import known_until
from gpudoctor.model import Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import console, report


def test_json_schema() -> None:
    r = report("lost-gpu")
    data = json.loads(to_renderer(OutputFormat.JSON, console()).render(r))
    assert data["schema_version"] == 3
    assert list(data)[:4] == ["schema_version", "gpudoctor_version", "summary",
                              "compat_tables_known_until"]
    assert data["compat_tables_known_until"] == known_until().isoformat()
    assert data["summary"]["fail"] == r.count(Status.FAIL) >= 1
    gd102 = next(f for f in data["findings"] if f["id"] == "GD102")
    assert gd102["status"] == "fail" and gd102["fix"]
    assert gd102["docs_url"] == "docs/checks.md#gd102"
    assert data["environment"]["nvml"]["gpus"][1]["unavailable"] == "error"

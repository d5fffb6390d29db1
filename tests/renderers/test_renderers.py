"""Every renderer renders every recorded environment; formats are exhaustive."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import known_until, load_tables
from gpudoctor.model import Report, Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.snapshot import loads

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "envs").glob("*.json"))


def report(name: str) -> Report:
    env = loads((FIXTURES[0].parent / f"{name}.json").read_text())
    return run_checks(env, load_tables())


def console() -> Console:
    return Console(file=io.StringIO(), width=100, legacy_windows=False, no_color=True)


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_every_format_renders_every_fixture(fmt: OutputFormat, path: Path) -> None:
    r = run_checks(loads(path.read_text()), load_tables())
    text = to_renderer(fmt, console(), verbose=True).render(r)
    assert text.strip()
    for result in r.results:
        assert result.check_id in text


def test_text_shows_three_cuda_versions_labelled() -> None:
    text = to_renderer(OutputFormat.TEXT, console()).render(report("old-driver-new-torch"))
    assert "Driver (max CUDA it runs)" in text and "supports CUDA ≤ 12.2" in text
    assert "PyTorch (CUDA it was built with)" in text and "built with CUDA 13.0" in text
    assert "CUDA toolkit (nvcc, for building)" in text and "12.2 at /usr/local/cuda" in text
    assert "→ fix:" in text
    assert text.splitlines()[-1].strip()  # the tally is the CLI's stderr line, not the report's


def test_text_verbose_shows_evidence_and_skip_reasons() -> None:
    r = report("driver-lib-mismatch")
    quiet = to_renderer(OutputFormat.TEXT, console()).render(r)
    loud = to_renderer(OutputFormat.TEXT, console(), verbose=True).render(r)
    assert "· NVML:" in loud and "· NVML:" not in quiet
    skip = next(x for x in r.results if x.finding.status is Status.SKIP)
    assert skip.finding.message in quiet


def test_json_schema() -> None:
    r = report("lost-gpu")
    data = json.loads(to_renderer(OutputFormat.JSON, console()).render(r))
    assert data["schema_version"] == 1
    assert list(data)[:4] == ["schema_version", "gpudoctor_version", "summary",
                              "compat_tables_known_until"]
    assert data["compat_tables_known_until"] == known_until().isoformat()
    assert data["summary"]["fail"] == r.count(Status.FAIL) >= 1
    gd102 = next(f for f in data["findings"] if f["id"] == "GD102")
    assert gd102["status"] == "fail" and gd102["fix"]
    assert gd102["docs_url"] == "docs/checks.md#gd102"
    assert data["environment"]["nvml"]["gpus"][1]["unavailable"] == "error"


def test_junit_counts() -> None:
    r = report("no-driver-cuda-torch")
    root = ET.fromstring(to_renderer(OutputFormat.JUNIT, console()).render(r))
    assert root.tag == "testsuite"
    assert int(root.get("tests", "0")) == len(r.results)
    failures = int(root.get("failures", "-1"))
    assert len(root.findall("testcase/failure")) == r.count(Status.FAIL) == failures
    assert len(root.findall("testcase/skipped")) == r.count(Status.SKIP)


def test_markdown_table() -> None:
    text = to_renderer(OutputFormat.MARKDOWN, console()).render(report("pascal-gpu-cu130-torch"))
    assert "### PyTorch" in text and "| ❌ | `GD404`" in text

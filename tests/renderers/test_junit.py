"""`gpudoctor.renderers.junit`: `check --format junit`, one test case per check.

(`check --strict --format junit` through the real CLI: tests/renderers/test_junit_strict.py.)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpudoctor.model import Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import console, report


def test_junit_counts() -> None:
    r = report("no-driver-cuda-torch")
    root = ET.fromstring(to_renderer(OutputFormat.JUNIT, console()).render(r))
    assert root.tag == "testsuite"
    assert int(root.get("tests", "0")) == len(r.results)
    failures = int(root.get("failures", "-1"))
    assert len(root.findall("testcase/failure")) == r.count(Status.FAIL) == failures
    assert len(root.findall("testcase/skipped")) == r.count(Status.SKIP)

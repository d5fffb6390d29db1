"""JUnit XML: one testcase per check, for CI dashboards."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpudoctor.model import Report, Status
from gpudoctor.renderers.interface import clean, docs_url


class JunitRenderer:
    """FAIL → <failure>, SKIP → <skipped>, WARN → system-out (a pass with a note). Control
    characters, which XML 1.0 cannot carry at all, are shown escaped (`\\x1b`)."""

    def render(self, report: Report) -> str:
        """The report as a JUnit XML document."""
        suite = ET.Element(
            "testsuite",
            name="gpudoctor",
            tests=str(len(report.results)),
            failures=str(report.count(Status.FAIL)),
            skipped=str(report.count(Status.SKIP)),
            errors="0",
        )
        for r in report.results:
            case = ET.SubElement(suite, "testcase", classname=f"gpudoctor.{r.layer.value}",
                                 name=f"{r.check_id} {r.slug}")
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="docs_url", value=docs_url(r.check_id))
            f = r.finding
            message = clean(f.message)
            body = clean(f.message, newlines=True) + (
                f"\nfix: {clean(f.fix, newlines=True)}" if f.fix else "") + "".join(
                f"\n{clean(k)}: {clean(v, newlines=True)}" for k, v in f.evidence)
            if f.status is Status.FAIL:
                ET.SubElement(case, "failure", message=message).text = body
            elif f.status is Status.SKIP:
                ET.SubElement(case, "skipped", message=message)
            elif f.status is Status.WARN:
                ET.SubElement(case, "system-out").text = f"warning: {body}"
        ET.indent(suite)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(
            suite, encoding="unicode") + "\n"

"""JUnit XML: one testcase per check, for CI dashboards."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpudoctor.model import Report, Status


class JunitRenderer:
    """FAIL → <failure>, SKIP → <skipped>, WARN → system-out (a pass with a note)."""

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
            f = r.finding
            body = f.message + (f"\nfix: {f.fix}" if f.fix else "") + "".join(
                f"\n{k}: {v}" for k, v in f.evidence)
            if f.status is Status.FAIL:
                ET.SubElement(case, "failure", message=f.message).text = body
            elif f.status is Status.SKIP:
                ET.SubElement(case, "skipped", message=f.message)
            elif f.status is Status.WARN:
                ET.SubElement(case, "system-out").text = f"warning: {body}"
        ET.indent(suite)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(
            suite, encoding="unicode") + "\n"

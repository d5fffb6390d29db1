"""JUnit XML: one testcase per check, for CI dashboards."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpudoctor.model import Report, Result, Status
from gpudoctor.policy import fails
from gpudoctor.renderers.interface import clean, docs_url

# what XML 1.0 cannot hold at all, even as a reference: the surrogates (a lone one comes from a
# JSON snapshot's "\ud800"), U+FFFE and U+FFFF (C0 controls are `clean`'s)
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str, newlines: bool = False) -> str:
    """`text` as XML 1.0 can carry it: control characters escaped (`clean`), and the code
    points no XML document may hold shown as `\\uXXXX`."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", clean(text, newlines=newlines))


class JunitRenderer:
    """FAIL → <failure>, SKIP → <skipped>, WARN → system-out (a pass with a note). With
    `strict` (`check --strict`, where a warning fails the job) a warning is a <failure
    type="warning"> too, so the suite's counts agree with the exit code; a note (the WARN of an
    INFO check) never fails. Control characters, lone surrogates, U+FFFE and U+FFFF, which
    XML 1.0 cannot carry at all, are shown escaped (`\\x1b`, `\\ud800`): the document is
    always well-formed."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict

    def render(self, report: Report) -> str:
        """The report as a JUnit XML document."""
        failing = sum(1 for r in report.results if self._fails(r))
        suite = ET.Element(
            "testsuite",
            name="gpudoctor",
            tests=str(len(report.results)),
            failures=str(failing),
            skipped=str(report.count(Status.SKIP)),
            errors="0",
        )
        for r in report.results:
            case = ET.SubElement(suite, "testcase", classname=f"gpudoctor.{r.layer.value}",
                                 name=f"{r.check_id} {r.slug}")
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="docs_url", value=docs_url(r.check_id))
            f = r.finding
            message = xml_text(f.message)
            body = xml_text(f.message, True) + (
                f"\nfix: {xml_text(f.fix, True)}" if f.fix else "") + "".join(
                f"\n{xml_text(k)}: {xml_text(v, True)}" for k, v in f.evidence)
            if f.status is Status.FAIL:
                ET.SubElement(case, "failure", message=message).text = body
            elif self._fails(r):
                ET.SubElement(case, "failure", message=message, type="warning").text = (
                    f"warning (--strict): {body}")
            elif f.status is Status.SKIP:
                ET.SubElement(case, "skipped", message=message)
            elif f.status is Status.WARN:
                ET.SubElement(case, "system-out").text = f"warning: {body}"
        ET.indent(suite)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(
            suite, encoding="unicode") + "\n"

    def _fails(self, r: Result) -> bool:
        """Whether the result is a <failure>: what fails the run (`policy.fails`): a FAIL, or
        under --strict a warning (not a note)."""
        return fails(r, self.strict)

"""Line breaks in the text report are the renderer's own: a message, a fix, a title or a header
value from a snapshot shows its line breaks escaped; a multi-line evidence value (a captured
stderr) stays readable as a block whose lines are quoted behind a bar, so none of them can
pass for a line of the report."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Report, Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.console import QUOTE, evidence_lines
from gpudoctor.renderers.interface import OutputFormat, clean
from gpudoctor.snapshot import loads

ENVS = Path(__file__).resolve().parents[1] / "fixtures" / "envs"
TRACEBACK = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
             "ImportError: libcudnn.so.9: cannot open shared object file")


def text(report: Report, verbose: bool = True, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, legacy_windows=False, no_color=True)
    return to_renderer(OutputFormat.TEXT, console, verbose=verbose).render(report)


def crash_report(stderr: str) -> Report:
    """The torch-import-crash fixture with `stderr` as what `import torch` printed."""
    data = json.loads((ENVS / "torch-import-crash.json").read_text())
    data["environment"]["torch"]["runtime"]["detail"] = stderr
    return run_checks(loads(json.dumps(data)), load_tables())


def test_a_multi_line_message_and_fix_stay_on_their_lines() -> None:
    r = crash_report("")
    results = tuple(
        dataclasses.replace(x, finding=dataclasses.replace(
            x.finding, message=f"{x.finding.message}\n[✓] forged",
            fix=f"{x.finding.fix}\n→ fix: forged" if x.finding.fix else None))
        for x in r.results)
    lines = text(dataclasses.replace(r, results=results), width=400).splitlines()
    assert not [line for line in lines if line.lstrip().startswith(("[✓] forged", "→ fix: forged"))]
    gd401 = next(x for x in results if x.check_id == "GD401")
    assert gd401.finding.status is Status.FAIL
    assert f"      → fix: {clean(gd401.finding.fix or '')}" in lines
    assert f"      → fix: {clean(gd401.finding.fix or '')}".endswith("\\n→ fix: forged")
    assert any(line.endswith(f"{clean(gd401.finding.message)}") for line in lines)


def test_a_captured_stderr_is_a_quoted_block() -> None:
    lines = text(crash_report(TRACEBACK)).splitlines()
    i = lines.index("      · stderr: Traceback (most recent call last):")
    assert lines[i + 1:i + 3] == [
        f"        {QUOTE}   File \"<string>\", line 1, in <module>",
        f"        {QUOTE} ImportError: libcudnn.so.9: cannot open shared object file"]
    assert "· stderr:" not in text(crash_report(TRACEBACK), verbose=False)


def test_evidence_lines() -> None:
    assert evidence_lines("GPU 0", "H100", "  ") == ["  · GPU 0: H100"]
    assert evidence_lines("k", "a\n\n[✓] b\x1b", "  ") == [
        "  · k: a", f"    {QUOTE}", f"    {QUOTE} [✓] b\\x1b"]
    assert evidence_lines("k", "\u2028x", "") == ["· k: \\u2028x"]

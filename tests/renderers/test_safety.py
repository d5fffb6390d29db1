"""What any string may do to a renderer: nothing. Control characters come out escaped, rich
markup comes out as written, a narrow terminal never wraps a fix, no line ends in spaces, and a
stream that cannot encode a glyph gets an ASCII one."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat, clean
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import HOSTILE, console, hostile_report

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "envs").glob("*.json"))


def unmarkdown(text: str) -> str:
    """What a Markdown reader shows of the renderers' escapes (backslash, entities)."""
    text = re.sub(r"\\([\\`*_\[\]!|~$])", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_no_renderer_lets_a_control_character_through(fmt: OutputFormat) -> None:
    text = to_renderer(fmt, console(), verbose=True).render(hostile_report())
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in text, (fmt, repr(raw))
    if fmt is OutputFormat.JSON:
        data = json.loads(text)
        assert data["findings"][0]["message"].endswith(HOSTILE)  # the same string, escaped
    elif fmt is not OutputFormat.PROMETHEUS:  # metrics carry no messages; GPU names in labels:
        # tests/ci/test_prometheus.py
        shown = unmarkdown(text) if fmt is OutputFormat.MARKDOWN else text
        assert clean(HOSTILE) in shown  # markup: printed as written
    if fmt is OutputFormat.JUNIT:
        ET.fromstring(text)


def test_console_never_parses_markup() -> None:
    text = to_renderer(OutputFormat.TEXT, console(), verbose=True).render(hostile_report())
    assert "[red]red[/red] [/] [bold" in text


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
@pytest.mark.parametrize("width", [40, 100])
def test_text_lines_carry_no_trailing_spaces(path: Path, width: int) -> None:
    r = run_checks(loads(path.read_text()), load_tables())
    text = to_renderer(OutputFormat.TEXT, console(width), verbose=True).render(r)
    assert text.strip()
    assert all(line == line.rstrip() for line in text.splitlines()), path.stem


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_every_fix_is_one_whole_line(path: Path) -> None:
    """At 40 columns a fix is still on one line of its own, so it pastes whole."""
    r = run_checks(loads(path.read_text()), load_tables())
    lines = to_renderer(OutputFormat.TEXT, console(40)).render(r).splitlines()
    for x in r.results:
        if x.finding.fix and x.finding.status in (Status.FAIL, Status.WARN):
            assert f"      → fix: {clean(x.finding.fix)}" in lines, x.check_id


def test_messages_wrap_under_themselves() -> None:
    r = run_checks(loads((FIXTURES[0].parent / "pascal-gpu-cu130-torch.json").read_text()),
                   load_tables())
    lines = to_renderer(OutputFormat.TEXT, console(50)).render(r).splitlines()
    i = next(i for i, line in enumerate(lines) if " GD404 " in line)
    assert len(lines[i]) <= 50 and lines[i + 1].startswith("      ") and lines[i + 1][6] != " "

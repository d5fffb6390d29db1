"""What any string may do to a renderer: nothing. Control characters come out escaped, rich
markup comes out as written, a narrow terminal never wraps a fix, no line ends in spaces, and a
stream that cannot encode a glyph gets an ASCII one."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Report, Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.encoding import ASCII_GLYPHS, fit
from gpudoctor.renderers.interface import OutputFormat, clean
from gpudoctor.snapshot import loads

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "envs").glob("*.json"))
HOSTILE = "GPU\x1b]0;pwned\x07\x1b[2J\u202e\x9b31m [red]red[/red] [/] [bold"


def unmarkdown(text: str) -> str:
    """What a Markdown reader shows of the renderers' escapes (backslash, entities)."""
    text = re.sub(r"\\([\\`*_\[\]!|~$])", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def console(width: int = 100) -> Console:
    return Console(file=io.StringIO(), width=width, legacy_windows=False, no_color=True)


def hostile_report() -> Report:
    """A failing report whose message, fix and evidence all carry hostile text."""
    r = run_checks(loads((FIXTURES[0].parent / "pascal-gpu-cu130-torch.json").read_text()),
                   load_tables())
    results = tuple(
        dataclasses.replace(x, finding=dataclasses.replace(
            x.finding, message=f"{x.finding.message} {HOSTILE}",
            fix=f"run `{HOSTILE}`" if x.finding.status is Status.FAIL else x.finding.fix,
            evidence=(*x.finding.evidence, (HOSTILE, HOSTILE))))
        for x in r.results)
    return dataclasses.replace(r, results=results, notes=(HOSTILE,))


def test_clean_escapes_every_control_character() -> None:
    assert clean("a\x1b[2Jb\x07c\rd\x00e\x9bf\u202eg\th") == (
        "a\\x1b[2Jb\\x07c\\rd\\x00e\\x9bf\\u202eg\\th")
    assert clean("one\ntwo") == "one\\ntwo"
    assert clean("one\ntwo", newlines=True) == "one\ntwo"
    assert clean("ordinary ✓ text, ≤ 13.0") == "ordinary ✓ text, ≤ 13.0"


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


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "ANSI_X3.4-1968"])
def test_fit_makes_every_format_encodable(fmt: OutputFormat, encoding: str) -> None:
    text = to_renderer(fmt, console(), verbose=True).render(hostile_report())
    text += "\U0001f680 \udcff"  # an emoji and a lone surrogate (an undecodable file name)
    fitted = fit(text, fmt.value, encoding)
    fitted.encode(encoding)
    if fmt is OutputFormat.JSON:
        assert json.loads(fit(to_renderer(fmt, console()).render(hostile_report()), "json",
                              encoding)) == json.loads(to_renderer(fmt, console()).render(
                                  hostile_report()))
    if fmt is OutputFormat.JUNIT:
        ET.fromstring(fit(to_renderer(fmt, console()).render(hostile_report()), "junit",
                          encoding))


def test_fit_uses_ascii_glyphs_for_text() -> None:
    assert fit("[✓] ✗ – → … ≤ ≥ ·", "text", "ascii") == "[+] x - -> ... <= >= *"
    assert fit("| ⚠️ | ✅ | ❌ |", "markdown", "ascii") == "| [warn] | [pass] | [FAIL] |"
    assert fit("GPU 名", "text", "ascii") == "GPU \\u540d"
    assert fit("already fine", "text", "ascii") == "already fine"
    assert set(ASCII_GLYPHS.values()) == {v for v in ASCII_GLYPHS.values() if v.isascii()}

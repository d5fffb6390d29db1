"""`gpudoctor.renderers.encoding`: `fit` makes a rendered report encodable by the stream it goes
to (`PYTHONIOENCODING=ascii`, a latin-1 terminal) without changing what each format means:
ASCII glyphs for the text's symbols, escapes for the rest, JSON and JUnit still parse."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.console import QUOTE
from gpudoctor.renderers.encoding import ASCII_GLYPHS, fit
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import console, hostile_report


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


def test_the_quote_bar_has_an_ascii_form() -> None:
    assert fit(f"  {QUOTE} line ✓", "text", "ascii") == "  | line +"

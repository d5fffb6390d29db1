"""Rendered text made to fit a stream that cannot encode all of it (`PYTHONIOENCODING=ascii`,
`LC_ALL=C` without UTF-8 mode): the glyphs fall back to ASCII, JSON to `\\uXXXX` escapes, XML to
character references, so the output stays valid and readable and writing it never fails."""

from __future__ import annotations

import codecs
from collections.abc import Callable

from gpudoctor.renderers.interface import OutputFormat, assert_never

# the glyphs gpudoctor prints, and what an ASCII reader sees instead
ASCII_GLYPHS: dict[str, str] = {
    "✓": "+", "✗": "x", "–": "-", "—": "--", "−": "-", "→": "->", "←": "<-", "…": "...",
    "≤": "<=", "≥": ">=", "≈": "~", "×": "x", "·": "*", "•": "*", "µ": "u", "│": "|", "┆": ":",
    "‘": "'", "’": "'", "“": '"', "”": '"',
    "✅": "[pass]", "⚠️": "[warn]", "⚠": "[warn]", "❌": "[FAIL]", "➖": "[skip]",
    "ℹ️": "[note]", "ℹ": "[note]",
}


def fit(text: str, fmt: OutputFormat, encoding: str) -> str:  # noqa: RET503 - assert_never
    """`text` (rendered as `fmt`) in a form `encoding` can carry.

    Unchanged when it encodes; else JSON gets `\\uXXXX` escapes (the same document), JUnit
    XML gets `&#N;` references, and text, Markdown and Prometheus get ASCII glyphs, with
    anything else shown as a backslash escape.
    """
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "ascii"
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        pass
    match fmt:
        case OutputFormat.JSON:
            return _each_unencodable(text, encoding, _json_escape)
        case OutputFormat.JUNIT:
            return _each_unencodable(text, encoding, lambda c: f"&#{ord(c)};")
        case OutputFormat.TEXT | OutputFormat.MARKDOWN | OutputFormat.PROMETHEUS:
            return _ascii_glyphs(text, encoding)
    assert_never(fmt)


def _ascii_glyphs(text: str, encoding: str) -> str:
    for glyph in sorted(ASCII_GLYPHS, key=len, reverse=True):  # "⚠️" before "⚠"
        if glyph in text:
            try:
                glyph.encode(encoding)
            except UnicodeEncodeError:
                text = text.replace(glyph, ASCII_GLYPHS[glyph])
    return text.encode(encoding, errors="backslashreplace").decode(encoding)


def _each_unencodable(text: str, encoding: str, replace: Callable[[str], str]) -> str:
    out = []
    for c in text:
        if c < "\x80":
            out.append(c)
            continue
        try:
            c.encode(encoding)
            out.append(c)
        except UnicodeEncodeError:
            out.append(replace(c))
    return "".join(out)


def _json_escape(c: str) -> str:
    n = ord(c)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"

"""Renderers: a Report in, text out."""

from __future__ import annotations

from rich.console import Console

from gpudoctor.renderers.console import ConsoleRenderer
from gpudoctor.renderers.interface import OutputFormat, Renderer, assert_never
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.renderers.junit import JunitRenderer
from gpudoctor.renderers.markdown import MarkdownRenderer


def to_renderer(  # noqa: RET503 - assert_never ends it
    fmt: OutputFormat, console: Console, verbose: bool = False
) -> Renderer:
    """The renderer for an output format."""
    match fmt:
        case OutputFormat.TEXT:
            return ConsoleRenderer(console, verbose)
        case OutputFormat.JSON:
            return JsonRenderer()
        case OutputFormat.MARKDOWN:
            return MarkdownRenderer()
        case OutputFormat.JUNIT:
            return JunitRenderer()
    assert_never(fmt)

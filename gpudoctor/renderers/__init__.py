"""Renderers: a Report in, text out. Each is imported only when its format is asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.renderers.interface import OutputFormat, Renderer, assert_never

if TYPE_CHECKING:
    from rich.console import Console


def to_renderer(  # noqa: RET503 - assert_never ends it
    fmt: OutputFormat, console: Console | None = None, verbose: bool = False,
    strict: bool = False,
) -> Renderer:
    """The renderer for an output format; only the text format needs the console; `strict`
    (warnings fail the job) makes JUnit count warnings as failures."""
    match fmt:
        case OutputFormat.TEXT:
            from gpudoctor.renderers.console import ConsoleRenderer

            if console is None:
                raise TypeError("the text format renders for a console")
            return ConsoleRenderer(console, verbose)
        case OutputFormat.JSON:
            from gpudoctor.renderers.json import JsonRenderer

            return JsonRenderer()
        case OutputFormat.MARKDOWN:
            from gpudoctor.renderers.markdown import MarkdownRenderer

            return MarkdownRenderer()
        case OutputFormat.JUNIT:
            from gpudoctor.renderers.junit import JunitRenderer

            return JunitRenderer(strict)
        case OutputFormat.PROMETHEUS:
            from gpudoctor.renderers.prometheus import PrometheusRenderer

            return PrometheusRenderer()
    assert_never(fmt)

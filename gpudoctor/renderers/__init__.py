"""Renderers: a document in, text out. The one render dispatch of every command (`render`).

A command declares the formats it writes (`OutputFormat`s, its `--format` choices) and hands
`render` its document's `Renderings`: one closure per declared format, which imports its
renderer when it runs, so that only the format asked for costs anything. `check`'s Report has
its set here (`report_renderings`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.renderers.interface import OutputFormat, Renderer, assert_never

if TYPE_CHECKING:
    from rich.console import Console

    from gpudoctor.model import Report

__all__ = ["OutputFormat", "Renderings", "UnsupportedFormat", "render", "report_renderings",
           "to_renderer"]

Render = Callable[[], str]


class UnsupportedFormat(ValueError):
    """A document was asked for in a format it has no renderer for: the command declared a
    format it cannot write (a gpudoctor bug: its `--format` choices let it through)."""


@dataclass(frozen=True, slots=True)
class Renderings:
    """One document's renderers, by format (None: not written in that format)."""

    text: Render | None = None
    json: Render | None = None
    markdown: Render | None = None
    junit: Render | None = None
    prometheus: Render | None = None

    def of(self, fmt: OutputFormat) -> Render | None:  # noqa: RET503 - assert_never ends it
        """The renderer of `fmt`, None where there is none."""
        match fmt:
            case OutputFormat.TEXT:
                return self.text
            case OutputFormat.JSON:
                return self.json
            case OutputFormat.MARKDOWN:
                return self.markdown
            case OutputFormat.JUNIT:
                return self.junit
            case OutputFormat.PROMETHEUS:
                return self.prometheus
        assert_never(fmt)

    @property
    def formats(self) -> tuple[OutputFormat, ...]:
        """The formats this document is written in."""
        return tuple(f for f in OutputFormat if self.of(f) is not None)


def render(fmt: OutputFormat, renderings: Renderings) -> str:
    """The document rendered as `fmt`: only that renderer runs."""
    chosen = renderings.of(fmt)
    if chosen is None:
        raise UnsupportedFormat(f"no {fmt.value} renderer for this document (it is written as "
                                f"{', '.join(f.value for f in renderings.formats)})")
    return chosen()


def report_renderings(report: Report, console: Callable[[], Console], verbose: bool = False,
                      strict: bool = False) -> Renderings:
    """`check`'s Report in every format; `console` makes the console the text is rendered
    for (called only for text); `strict` (warnings fail the job) makes JUnit count warnings
    as failures."""

    def text() -> str:
        from gpudoctor.renderers.console import ConsoleRenderer

        return ConsoleRenderer(console(), verbose).render(report)

    def json() -> str:
        from gpudoctor.renderers.json import JsonRenderer

        return JsonRenderer().render(report)

    def markdown() -> str:
        from gpudoctor.renderers.markdown import MarkdownRenderer

        return MarkdownRenderer().render(report)

    def junit() -> str:
        from gpudoctor.renderers.junit import JunitRenderer

        return JunitRenderer(strict).render(report)

    def prometheus() -> str:
        from gpudoctor.renderers.prometheus import PrometheusRenderer

        return PrometheusRenderer().render(report)

    return Renderings(text=text, json=json, markdown=markdown, junit=junit,
                      prometheus=prometheus)


@dataclass(frozen=True, slots=True)
class _ReportRenderer:
    fmt: OutputFormat
    console: Console | None
    verbose: bool
    strict: bool

    def render(self, report: Report) -> str:
        def console() -> Console:
            if self.console is None:
                raise TypeError("the text format renders for a console")
            return self.console

        return render(self.fmt, report_renderings(report, console, self.verbose, self.strict))


def to_renderer(fmt: OutputFormat, console: Console | None = None, verbose: bool = False,
                strict: bool = False) -> Renderer:
    """A Report's renderer for `fmt` (through `render`); only the text format needs the
    console."""
    return _ReportRenderer(fmt, console, verbose, strict)

"""`gpudoctor checks`: the catalogue of checks, or one check's documentation."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    DOCUMENT_FORMATS,
    DebugOption,
    OutputOption,
    format_option,
    resolve_format,
)
from gpudoctor.cli.output import deliver
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.catalog import (
    CheckDoc,
    catalog_json,
    catalog_markdown,
    catalog_text,
    check_page,
)
from gpudoctor.renderers.interface import OutputFormat

FORMATS = DOCUMENT_FORMATS

HELP = """list every check, or print the documentation of the ones named

\b
examples:
  gpudoctor checks                     id, slug, layer and title of every check
  gpudoctor checks GD404               what GD404 checks, why it matters, how to fix it
  gpudoctor checks torch-cuda-available cudnn
                                       by slug, or every check of a layer
  gpudoctor checks --format json       the catalogue with every docstring
  gpudoctor checks --format markdown -o docs/checks.md
                                       regenerate docs/checks.md
"""


def check_docs(selectors: list[str] | None = None) -> tuple[CheckDoc, ...]:
    """The registry's checks as the catalogue shows them; with selectors, the ones they name
    (a selector naming none is a usage error, exit 2)."""
    from gpudoctor.checks import REGISTRY

    checks = common.selected(selectors, ()) if selectors else REGISTRY
    return tuple(CheckDoc(c.id, c.slug, c.title, c.layer.heading, c.severity.name.lower(),
                          c.needs, c.doc) for c in checks)


def checks(
    selectors: Annotated[
        list[str] | None,
        typer.Argument(help="check ids, slugs or layers to document (default: list all)",
                       show_default=False),
    ] = None,
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: OutputOption = "-",
    debug: DebugOption = False,
) -> None:
    fmt = resolve_format(fmt, FORMATS)
    docs = check_docs(selectors)
    deliver(render(fmt, Renderings(
        text=lambda: "\n".join(check_page(d) for d in docs) if selectors else catalog_text(docs),
        json=lambda: catalog_json(docs),
        markdown=lambda: catalog_markdown(docs))), output, fmt)
    raise typer.Exit(ExitCode.OK)


checks.__doc__ = HELP

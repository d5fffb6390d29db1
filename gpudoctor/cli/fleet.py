"""`gpudoctor fleet PATH…`: many node reports in one view; the nodes that differ or fail."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli.common import fail_usage
from gpudoctor.cli.options import (
    DOCUMENT_FORMATS,
    DebugOption,
    OutputOption,
    VerboseOption,
    format_option,
    report_console,
    resolve_format,
)
from gpudoctor.cli.output import deliver, say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat

FORMATS = DOCUMENT_FORMATS

HELP = """one view of many nodes' reports: the majority of each fact, the nodes that differ or fail

\b
PATH is a report file or a directory of them (its *.json files): `gpudoctor check --format
json -o reports/$(hostname).json` on every node. A report that is missing or cannot be read
is named and counts as a problem. Exit 0: every node read and none fails; 1: a node fails
or a report is unreadable; 2: usage error (no report at all), or the view could not be
written.

\b
examples:
  gpudoctor fleet reports/                     every node's report in the directory
  gpudoctor fleet reports/*.json -v            with the nodes x facts table
  gpudoctor fleet reports/ --format markdown -o fleet.md
"""


def fleet(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH...", help="report files or directories of them", show_default=False)],
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: OutputOption = "-",
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    fmt = resolve_format(fmt, FORMATS)
    from gpudoctor.cli.inputs import SNAPSHOT_LIMIT, InputError, read_input
    from gpudoctor.fleet import Node, NodeError, Unreadable, aggregate, expand, read_node
    from gpudoctor.renderers import fleet as renderer

    files, unreadable = expand(paths)
    if not files:
        raise fail_usage(f"no report found in {' '.join(paths)} (a directory is searched "
                         "for *.json files)")
    def node(f: str) -> Node | Unreadable:
        try:
            return read_node(f, read_input(f, SNAPSHOT_LIMIT, regular_only=True))
        except InputError as e:
            return Unreadable(f, str(e).removeprefix(f"{f}: "))
        except NodeError as e:
            return Unreadable(f, str(e))

    read = [node(f) for f in files]
    view = aggregate([n for n in read if isinstance(n, Node)],
                     [*unreadable, *(u for u in read if isinstance(u, Unreadable))])
    deliver(render(fmt, Renderings(
        text=lambda: renderer.render_text(view, report_console(output), verbose),
        json=lambda: renderer.render_json(view),
        markdown=lambda: renderer.render_markdown(view))), output, fmt)
    say(f"gpudoctor: {renderer.summary(view)}"
        + (f"; report written to {output}" if output != "-" else ""))
    raise typer.Exit(ExitCode.OK if view.ok else ExitCode.FAILURE)


fleet.__doc__ = HELP

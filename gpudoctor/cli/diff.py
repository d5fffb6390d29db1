"""`gpudoctor diff A B`: what differs between two snapshots or reports, and which verdicts."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli.common import fail_usage, load_reports
from gpudoctor.cli.options import (
    DOCUMENT_FORMATS,
    DebugOption,
    OutputOption,
    format_option,
    report_console,
    resolve_format,
)
from gpudoctor.cli.output import deliver, say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat

FORMATS = DOCUMENT_FORMATS

HELP = """what differs between two machines' snapshots or reports, layer by layer

\b
A and B are gpudoctor snapshots, `check --format json` reports, or pasted reports
(collect_env, nvidia-smi, an issue body); '-' reads one of them from stdin. Every check runs
over both. Exit 0: no verdict changes (facts may differ); 1: a difference changes a verdict;
2: usage error, an unreadable input, or the report could not be written.

\b
examples:
  gpudoctor diff mine.json theirs.json       works on my machine: what differs
  gpudoctor snapshot | gpudoctor diff - node7.json
  gpudoctor diff a.json b.json --format markdown -o diff.md
"""


def diff(
    a: Annotated[str, typer.Argument(metavar="A",
                                     help="the first snapshot or report ('-': stdin)")],
    b: Annotated[str, typer.Argument(metavar="B", help="the second one ('-': stdin)")],
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: OutputOption = "-",
    debug: DebugOption = False,
) -> None:
    fmt = resolve_format(fmt, FORMATS)
    if a == "-" and b == "-":
        raise fail_usage("only one of A and B can be '-' (stdin)")
    from gpudoctor.compat import load_tables
    from gpudoctor.diff import diff_environments
    from gpudoctor.renderers import diff as renderer

    env_a, env_b = load_reports([a]), load_reports([b])
    name_a, name_b = ("stdin" if a == "-" else a), ("stdin" if b == "-" else b)
    d = diff_environments(env_a, env_b, load_tables())
    deliver(render(fmt, Renderings(
        text=lambda: renderer.render_text(d, name_a, name_b, report_console(output)),
        json=lambda: renderer.render_json(d, name_a, name_b),
        markdown=lambda: renderer.render_markdown(d, name_a, name_b))), output, fmt)
    say(f"gpudoctor: {renderer.summary(d)}"
        + (f"; report written to {output}" if output != "-" else ""))
    raise typer.Exit(ExitCode.FAILURE if d.verdict_changed else ExitCode.OK)


diff.__doc__ = HELP

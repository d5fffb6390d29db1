"""`gpudoctor recommend`: the PyTorch wheel and cuDNN tarball the tables say fit this machine."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    TEXT_JSON,
    CudaHomeOption,
    DebugOption,
    FromReportOption,
    PythonOption,
    TimeoutOption,
    format_option,
    resolve_format,
)
from gpudoctor.cli.output import deliver
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat

FORMATS = TEXT_JSON

HELP = """the PyTorch install line and cuDNN tarball that fit this machine's driver, GPUs and CUDA

\b
Exit 0: a PyTorch wheel fits; 1: nothing in the tables fits; 2: usage error.

\b
examples:
  gpudoctor recommend                          for this machine
  gpudoctor recommend --from-snapshot n1.json  for a saved snapshot
  gpudoctor recommend --from-report issue.md   for the machine an issue reports
  gpudoctor recommend --format json -v         every field, with sources
"""


def recommend(
    ctx: typer.Context,
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show sources")] = False,
    from_report: FromReportOption = None,
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
    debug: DebugOption = False,
) -> None:
    from gpudoctor.compat import load_tables
    from gpudoctor.compat.recommend import recommend as pick
    from gpudoctor.renderers.compat import recommendation_json, recommendation_text

    fmt = resolve_format(fmt, FORMATS)
    if from_report:  # read as check reads it (`gpudoctor.reports.read.read_inputs`)
        common.refuse_with(ctx, "--from-report / --from-snapshot", (
            "python", "cuda_home", "timeout", "no_torch"))
    env = common.load_reports(from_report) if from_report else common.environment(
        cuda_home, common.interpreter(python, timeout), timeout, no_torch)
    rec = pick(env, load_tables())
    deliver(render(fmt, Renderings(text=lambda: recommendation_text(rec, verbose),
                                   json=lambda: recommendation_json(rec))), "-", fmt)
    raise typer.Exit(ExitCode.OK if rec.torch else ExitCode.FAILURE)


recommend.__doc__ = HELP

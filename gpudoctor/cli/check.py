"""`gpudoctor check`: parse, probe (or load), judge, render, exit."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from gpudoctor.cli import ci, common
from gpudoctor.cli.options import (
    REPORT_FORMATS,
    CudaHomeOption,
    DebugOption,
    FromReportOption,
    PythonOption,
    ReportOutputOption,
    TimeoutOption,
    format_option,
    resolve_format,
)
from gpudoctor.policy import exit_code
from gpudoctor.renderers.interface import OutputFormat

FORMATS = REPORT_FORMATS

HELP = """check every layer of the NVIDIA stack and say how to fix what is wrong

\b
The report goes to stdout (or -o FILE), the summary line to stderr. Exit 0: no failure;
1: a failure (with --strict, a warning too); 2: usage error, or the report could not be
written; 3: a gpudoctor bug; 130: interrupted.

\b
examples:
  gpudoctor check                              every check on this machine
  gpudoctor check cudnn GD403                  only the cuDNN layer and GD403
  gpudoctor check --skip "Driver & GPUs"       layers by name or heading
  gpudoctor check --format junit -o gd.xml     for a CI dashboard
  gpudoctor check --require 'gpus>=8,cuda>=12.1'
                                               fail the job unless the runner has them
  gpudoctor check --format prometheus -o /var/lib/node_exporter/textfile/gpudoctor.prom
                                               for node_exporter's textfile collector
  gpudoctor check --from-snapshot node1.json   judge a saved snapshot
  gh issue view 123 --json body -q .body | gpudoctor check --from-report -
                                               judge the machine an issue reports
  gpudoctor check --python ~/venv/bin/python   diagnose another environment's torch
"""


def check(
    ctx: typer.Context,
    selectors: Annotated[
        list[str] | None,
        typer.Argument(help="check ids, slugs or layers to run (default: all)", show_default=False),
    ] = None,
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: ReportOutputOption = "-",
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="show every check one by one, each list whole, and the evidence "
        "(the facts each check used)")] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="warnings fail too (exit 1)", envvar="GPUDOCTOR_STRICT")
    ] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="run only these ids / slugs / layers")
    ] = None,
    skip: Annotated[
        list[str] | None, typer.Option("--skip", help="leave out these ids / slugs / layers")
    ] = None,
    from_report: FromReportOption = None,
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
    smoke: Annotated[
        bool, typer.Option("--smoke", help="finish with the quick LeNet training smoke test")
    ] = False,
    require: ci.RequireOption = None,
    npd: ci.NpdOption = False,
    debug: DebugOption = False,
) -> None:
    fmt = resolve_format(fmt, FORMATS)
    if from_report:  # what only a probe of this machine uses: a usage error, not ignored
        common.refuse_with(ctx, "--from-report / --from-snapshot", (
            "smoke", "python", "cuda_home", "timeout", "no_torch"))
    required = ci.requirements(require)
    checks = common.selected(ci.with_required([*(selectors or ()), *common.split(only, "--only")],
                                              required), common.split(skip, "--skip"))
    common.warm_up(fmt)
    interpreter: str | None = None  # the resolved --python, where this machine is probed
    if from_report:
        env = common.load_reports(from_report)
    else:
        interpreter = common.interpreter(python, timeout)
        env = common.environment(cuda_home, interpreter, timeout, no_torch,
                                 common.fields_read(checks, smoke))
    if required:  # they travel to the checks as data (GD601-GD607, GD101)
        env = dataclasses.replace(env, requirements=required)
    if smoke and interpreter is not None and "smoke" in common.fields_read(checks):
        env = common.with_smoke(env, interpreter, timeout)  # only when a selected check reads it
    report = common.judge(env, checks)
    if common.smoke_pending(env) and common.cuda_usable(env):
        report = dataclasses.replace(report, notes=(
            "CUDA works: prove it trains with `gpudoctor check --smoke` "
            "(or `gpudoctor smoke-test --device cuda:0` for the full run)",))
    if npd:  # node-problem-detector: the report only to -o FILE, one line on stdout
        if output != "-":
            common.emit(report, fmt, output, verbose, strict)
        ci.npd(report, strict)
    common.emit(report, fmt, output, verbose, strict)
    ci.github_actions(report)
    raise typer.Exit(exit_code(report, strict))


check.__doc__ = HELP

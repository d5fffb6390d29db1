"""`gpudoctor check` and `gpudoctor checks`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    CudaHomeOption,
    FormatOption,
    OutputFormat,
    OutputOption,
    PythonOption,
    TimeoutOption,
    stderr_console,
    stdout_console,
)
from gpudoctor.exitcodes import ExitCode


def check(
    selectors: Annotated[
        list[str] | None,
        typer.Argument(help="check ids, slugs or layers to run (default: all)", show_default=False),
    ] = None,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = "-",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show the evidence")] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="warnings fail too (exit 1)", envvar="GPUDOCTOR_STRICT")
    ] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="run only these ids / slugs / layers")
    ] = None,
    skip: Annotated[
        list[str] | None, typer.Option("--skip", help="leave out these ids / slugs / layers")
    ] = None,
    from_snapshot: Annotated[
        Path | None,
        typer.Option("--from-snapshot", "--from-json",
                     help="judge a saved snapshot (or JSON report) instead of this machine"),
    ] = None,
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
    smoke: Annotated[
        bool, typer.Option("--smoke", help="finish with the quick LeNet training smoke test")
    ] = False,
) -> None:
    """check every layer of the NVIDIA stack and say how to fix what is wrong"""
    env = common.environment(from_snapshot, cuda_home, python, timeout, no_torch)
    wanted = [*(selectors or ()), *common.split(only)]
    report = common.judge(env, wanted, common.split(skip))
    if smoke and from_snapshot is None:
        report = common.with_smoke(report, python, timeout)
    elif common.cuda_usable(env):
        report = dataclasses.replace(report, notes=(
            "CUDA works: prove it trains with `gpudoctor check --smoke` "
            "(or `gpudoctor smoke-test --device cuda:0` for the full run)",))
    err = stderr_console()
    for sel in report.unknown_selectors:
        err.print(f"gpudoctor: warning: {sel!r} names no check (see `gpudoctor checks`)")
    common.emit(report, fmt, output, verbose)
    code = common.exit_code(report, strict)
    if output != "-" or fmt is not OutputFormat.TEXT:
        err.print(f"gpudoctor: {common.tally(report)}"
                  + (f"; report written to {output}" if output != "-" else ""))
    raise typer.Exit(code)


def list_checks(
    fmt: FormatOption = OutputFormat.TEXT,
) -> None:
    """list every check: id, title, layer and what it reads"""
    from gpudoctor.actions.smoke_checks import SMOKE_CHECKS
    from gpudoctor.checks import REGISTRY

    rows = [
        {"id": c.id, "slug": c.slug, "title": c.title, "layer": c.layer.value,
         "severity": c.severity.name.lower(), "needs": c.needs, "doc": c.doc}
        for c in REGISTRY
    ] + [
        {"id": c.id, "slug": c.slug, "title": c.title, "layer": "pytorch",
         "severity": c.severity.name.lower(), "needs": "check --smoke / smoke-test",
         "doc": (c.run.__doc__ or "").strip()}
        for c in SMOKE_CHECKS
    ]
    if fmt is OutputFormat.JSON:
        import json

        print(json.dumps(rows, indent=2))
        raise typer.Exit(ExitCode.OK)
    from rich.table import Table

    table = Table("id", "slug", "title", "layer", "needs", box=None, pad_edge=False)
    for row in rows:
        table.add_row(row["id"], row["slug"], row["title"], row["layer"], row["needs"])
    stdout_console().print(table)
    raise typer.Exit(ExitCode.OK)

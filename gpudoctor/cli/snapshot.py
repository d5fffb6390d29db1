"""`gpudoctor snapshot`: write every fact as JSON, to be checked anywhere later."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    CudaHomeOption,
    DebugOption,
    OutputOption,
    PythonOption,
    TimeoutOption,
)
from gpudoctor.cli.output import deliver
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers.interface import OutputFormat

HELP = """save this machine's facts as JSON (replay with `check --from-snapshot FILE`)

\b
The snapshot is JSON only (no --format). Exit 0: written; 2: usage error, or it could not
be written whole.

\b
examples:
  gpudoctor snapshot -o node1.json             save the facts
  gpudoctor check --from-snapshot node1.json   judge them, here or anywhere
  gpudoctor snapshot --no-torch | gzip > s.gz  without probing PyTorch
"""


def snapshot(
    output: OutputOption = "-",
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
    debug: DebugOption = False,
) -> None:
    from gpudoctor.snapshot import dumps

    env = common.environment(cuda_home, common.interpreter(python, timeout), timeout, no_torch)
    deliver(dumps(env), output, OutputFormat.JSON)
    raise typer.Exit(ExitCode.OK)


snapshot.__doc__ = HELP

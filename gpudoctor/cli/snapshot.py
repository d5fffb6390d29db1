"""`gpudoctor snapshot`: write every fact as JSON, to be checked anywhere later."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import CudaHomeOption, PythonOption, TimeoutOption, write_output
from gpudoctor.exitcodes import ExitCode


def snapshot(
    output: Annotated[str, typer.Option("--output", "-o", help="file to write ('-' is stdout)")]
    = "-",
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
) -> None:
    """save this machine's facts as JSON (replay with `check --from-snapshot FILE`)"""
    from gpudoctor.snapshot import dumps

    env = common.environment(None, cuda_home, python, timeout, no_torch)
    try:
        write_output(dumps(env), output)
    except OSError as e:
        raise common.fail_usage(f"cannot write {output}: {e.strerror or e}") from None
    raise typer.Exit(ExitCode.OK)

"""Options shared by several commands, and the consoles the CLI writes to."""


from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpudoctor.renderers.interface import OutputFormat

__all__ = ["OutputFormat"]  # re-exported for the command modules

FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="output format", envvar="GPUDOCTOR_FORMAT",
                 case_sensitive=False),
]
OutputOption = Annotated[
    str,
    typer.Option("--output", "-o", help="write the report to this file ('-' is stdout)",
                 envvar="GPUDOCTOR_OUTPUT"),
]
CudaHomeOption = Annotated[
    Path | None,
    typer.Option("--cuda-home", help="CUDA toolkit to check first (default: CUDA_HOME, nvcc, "
                 "/usr/local/cuda)", envvar="GPUDOCTOR_CUDA_HOME"),
]
PythonOption = Annotated[
    str | None,
    typer.Option("--python", help="interpreter whose torch to diagnose (default: this one)",
                 envvar="GPUDOCTOR_PYTHON"),
]
TimeoutOption = Annotated[
    float,
    typer.Option("--timeout", help="seconds to wait for `import torch` before calling it hung",
                 envvar="GPUDOCTOR_TIMEOUT", min=1.0),
]


def no_color() -> bool:
    """NO_COLOR (https://no-color.org) set to anything non-empty turns colour off."""
    return bool(os.environ.get("NO_COLOR"))


def stdout_console() -> Console:
    """Where reports go."""
    console = Console(no_color=no_color(), highlight=False, soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = 100  # piped or captured: rich's default 80 wraps the fix lines
    return console


def stderr_console() -> Console:
    """Where summaries, progress and errors go."""
    return Console(stderr=True, no_color=no_color(), highlight=False, soft_wrap=True)


def write_output(text: str, output: str) -> None:
    """Write a rendered report to stdout ('-') or a file, opened only now."""
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(output)
    if target.exists() and not target.is_file():  # /dev/null, a FIFO: write through
        target.write_text(text, encoding="utf-8")
        return
    # a report is written whole or not at all: a full disk must not leave half a JSON file
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        os.fchmod(fd, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

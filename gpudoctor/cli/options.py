"""Options shared by several commands, their bounds, and the consoles the CLI writes to."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from gpudoctor.cli.output import write_output
from gpudoctor.renderers.interface import OutputFormat

if TYPE_CHECKING:  # rich is imported when a console is made: JSON output never needs it
    from rich.console import Console

__all__ = ["OutputFormat", "write_output"]  # re-exported for the command modules

MAX_SECONDS = 86400.0  # a day: longer is a typo, and past ~1e9 s some waits overflow
FORMAT_ENV = "GPUDOCTOR_FORMAT"


class TextOrJson(str, Enum):
    """The formats of the commands that write text or JSON only."""

    TEXT = "text"
    JSON = "json"

    def __str__(self) -> str:
        return self.value


class CatalogFormat(str, Enum):
    """`gpudoctor checks`: a table, JSON, or the Markdown of docs/checks.md."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"

    def __str__(self) -> str:
        return self.value


E = TypeVar("E", bound=Enum)

_FORMAT_HELP = f"output format (default: {FORMAT_ENV} when it names one of these, else text)"
ReportFormatOption = Annotated[
    OutputFormat | None,
    typer.Option("--format", "-f", help=_FORMAT_HELP, case_sensitive=False, show_default=False),
]
TextOrJsonOption = Annotated[
    TextOrJson | None,
    typer.Option("--format", "-f", help=_FORMAT_HELP, case_sensitive=False, show_default=False),
]
CatalogFormatOption = Annotated[
    CatalogFormat | None,
    typer.Option("--format", "-f", help=_FORMAT_HELP, case_sensitive=False, show_default=False),
]


def resolve_format(value: E | None, formats: type[E]) -> E:
    """The format asked for: `--format`, else GPUDOCTOR_FORMAT when this command writes that
    format (a format only other commands write is ignored here, so one variable can serve a
    whole CI job), else text. A variable naming no format at all is a usage error."""
    if value is not None:
        return value
    wanted = os.environ.get(FORMAT_ENV, "").strip().lower()
    if wanted:
        for member in formats:
            if member.value == wanted:
                return member
        if wanted not in {f.value for f in OutputFormat}:
            known = ", ".join(f.value for f in OutputFormat)
            raise typer.BadParameter(f"{FORMAT_ENV}={wanted!r} is not a format ({known})",
                                     param_hint="--format")
    return formats("text")


def seconds(value: float | None) -> float | None:
    """The bound of every seconds option (a typer callback): finite, > 0, at most a day."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise typer.BadParameter(f"{value!r} is not a number of seconds above 0 and at most "
                                 f"{MAX_SECONDS:.0f}")
    return value


def _debug(value: bool) -> bool:
    if value:
        from gpudoctor import cli

        cli._DEBUG[0] = True
    return value


ReportOutputOption = Annotated[  # `check`'s report: GPUDOCTOR_OUTPUT may name the file
    str,
    typer.Option("--output", "-o", help="write the report to this file ('-' is stdout)",
                 envvar="GPUDOCTOR_OUTPUT"),
]
OutputOption = Annotated[
    str, typer.Option("--output", "-o", help="write to this file ('-' is stdout)"),
]
FromReportOption = Annotated[  # check's and recommend's: one reader entry for both
    list[str] | None,
    typer.Option("--from-report", "--from-snapshot", "--from-json", metavar="FILE",
                 help="judge a pasted report instead of this machine: a snapshot or JSON "
                 "report, collect_env or nvidia-smi output, or an issue body holding them "
                 "('-' reads stdin; repeat to merge several)"),
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
    typer.Option("--timeout", help="seconds to wait for `import torch` (and for --python to "
                 f"answer) before calling it hung (above 0, at most {MAX_SECONDS:.0f})",
                 envvar="GPUDOCTOR_TIMEOUT",
                 callback=seconds),
]
DebugOption = Annotated[
    bool,
    typer.Option("--debug", help="show the traceback of an internal error",
                 envvar="GPUDOCTOR_DEBUG", callback=_debug),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="show the evidence (the facts each check used)")
]


def no_color() -> bool:
    """NO_COLOR (https://no-color.org) set to anything non-empty turns colour off."""
    return bool(os.environ.get("NO_COLOR"))


def stdout_console() -> Console:
    """The console reports are rendered for: stdout's colours and width (100 columns when
    piped, so messages wrap as a reader expects; fix lines never wrap). It renders into
    memory: only `gpudoctor.cli.output` writes to stdout, so a failing stdout is one error."""
    from rich.console import Console

    probe = Console(no_color=no_color())
    width = probe.width if probe.is_terminal or "COLUMNS" in os.environ else 100
    return Console(file=io.StringIO(), force_terminal=probe.is_terminal,
                   color_system=probe.color_system,  # type: ignore[arg-type]
                   no_color=no_color(), width=width,
                   highlight=False, soft_wrap=False, emoji=False, markup=False,
                   legacy_windows=False)


def file_console() -> Console:
    """The console a report written to a file is rendered for: no colour, 100 columns."""
    from rich.console import Console

    return Console(file=io.StringIO(), color_system=None, no_color=True, width=100,
                   highlight=False, emoji=False, markup=False, legacy_windows=False)


def report_console(output: str) -> Console:
    """The console a report bound for `output` is rendered for: stdout's ('-'), else a file's."""
    return stdout_console() if output == "-" else file_console()


def render_as(fmt: CatalogFormat, output: str, *, json: Callable[[], str],
              markdown: Callable[[], str], text: Callable[[Console], str]) -> str:
    """A report in the format asked for (`explain`, `fleet`, `diff`): only the renderer of
    `fmt` runs, and the text one gets the console of `output`."""
    if fmt is CatalogFormat.JSON:
        return json()
    if fmt is CatalogFormat.MARKDOWN:
        return markdown()
    return text(report_console(output))


def stderr_console() -> Console:
    """Where progress bars go."""
    from rich.console import Console

    return Console(stderr=True, no_color=no_color(), highlight=False, soft_wrap=True,
                   emoji=False, markup=False)

"""Options shared by several commands, their bounds, and the consoles the CLI writes to."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer._types import TyperChoice  # typer's own Choice (0.26-0.28 vendor click; pinned)

from gpudoctor.cli.output import say, write_output
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers.interface import OutputFormat

if TYPE_CHECKING:  # rich is imported when a console is made: JSON output never needs it
    from rich.console import Console

__all__ = ["OutputFormat", "write_output"]  # re-exported for the command modules

MAX_SECONDS = 86400.0  # a day: longer is a typo, and past ~1e9 s some waits overflow
FORMAT_ENV = "GPUDOCTOR_FORMAT"


# The formats each kind of command writes (its `--format` choices, in this order)
REPORT_FORMATS = tuple(OutputFormat)  # check: text json markdown junit prometheus
DOCUMENT_FORMATS = (OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MARKDOWN)
TEXT_JSON = (OutputFormat.TEXT, OutputFormat.JSON)

_FORMAT_HELP = f"output format (default: {FORMAT_ENV} when it names one of these, else text)"


def _pick(value: str, supported: tuple[OutputFormat, ...]) -> OutputFormat:
    """The format `--format VALUE` names (any case), if this command writes it; else a
    one-line usage error (exit 2) that says which formats it writes."""
    wanted = value.strip().lower()
    for fmt in supported:
        if fmt.value == wanted:
            return fmt
    choices = ", ".join(f.value for f in supported)
    what = "a format this command writes" if wanted in _NAMES else "a format"
    raise _usage(f"invalid value for --format: {value!r} is not {what} ({choices})")


def _usage(message: str) -> typer.Exit:
    say(f"gpudoctor: error: {message}")
    return typer.Exit(ExitCode.USAGE)


_NAMES = frozenset(f.value for f in OutputFormat)


class _FormatChoice(TyperChoice[OutputFormat]):
    """`--format`'s type: the help and the completion offer the command's own formats, and
    any other value is the one-line usage error of `_pick`."""

    def __init__(self, supported: tuple[OutputFormat, ...]) -> None:
        super().__init__(supported, case_sensitive=False)

    def convert(self, value: Any, param: Any, ctx: Any) -> OutputFormat:
        return _pick(value.value if isinstance(value, OutputFormat) else str(value),
                     tuple(self.choices))


def format_option(supported: tuple[OutputFormat, ...]) -> Any:
    """The `--format/-f` option of a command that writes the formats `supported`: use as
    `fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None`, then
    `resolve_format(fmt, FORMATS)`."""
    return typer.Option("--format", "-f", help=_FORMAT_HELP, click_type=_FormatChoice(supported),
                        show_default=False)


def resolve_format(value: OutputFormat | None, supported: tuple[OutputFormat, ...]
                   ) -> OutputFormat:
    """The format asked for: `--format`, else GPUDOCTOR_FORMAT when this command writes that
    format (a format only other commands write is ignored here, so one variable can serve a
    whole CI job), else text. A variable naming no format at all is a usage error (exit 2)."""
    if value is not None:
        return _pick(value.value, supported)
    wanted = os.environ.get(FORMAT_ENV, "").strip().lower()
    if wanted and wanted not in _NAMES:
        raise _usage(f"{FORMAT_ENV}={wanted!r} is not a format "
                     f"({', '.join(f.value for f in OutputFormat)})")
    if wanted in {f.value for f in supported}:
        return OutputFormat(wanted)
    return OutputFormat.TEXT


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


def stderr_console() -> Console:
    """Where progress bars go."""
    from rich.console import Console

    return Console(stderr=True, no_color=no_color(), highlight=False, soft_wrap=True,
                   emoji=False, markup=False)

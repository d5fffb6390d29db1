"""`gpudoctor explain`: parse, read the text, match and confirm, render, exit."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    DOCUMENT_FORMATS,
    CudaHomeOption,
    DebugOption,
    OutputOption,
    PythonOption,
    TimeoutOption,
    format_option,
    report_console,
    resolve_format,
)
from gpudoctor.cli.output import deliver, say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat

if TYPE_CHECKING:
    from gpudoctor.model import Environment

FORMATS = DOCUMENT_FORMATS

HELP = """say what an error means and whether its cause is on this machine

\b
Give the error text, a file holding a log or a whole bug report (or `<(...)`), or '-' for stdin;
a single word that looks like a path (a '/', or .log / .txt / .out / .err) must exist: quote an
error text. Each known error found is confirmed with the checks that test its cause: against
--from-report FILE, else against a collect_env / nvidia-smi block in the same text, else against
this machine (only the facts those checks read are probed; --no-probe probes nothing). Exit 0: a
known error was found; 1: none was (run `gpudoctor check`); 2: usage error.

\b
examples:
  gpudoctor explain "CUDA error: no kernel image is available for execution on the device"
  gpudoctor explain traceback.log              a log or an issue body in a file
  gh issue view 123 --json body -q .body | gpudoctor explain -
                                               the cause, confirmed on the reporter's machine
  gpudoctor explain err.txt --from-report env.txt --format markdown
"""


def explain(
    ctx: typer.Context,
    text: Annotated[
        list[str] | None,
        typer.Argument(help="the error text, a file holding it, or '-' for stdin",
                       show_default=False),
    ] = None,
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: OutputOption = "-",
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="show the checks' evidence and the sources")
    ] = False,
    from_report: Annotated[
        list[str] | None,
        typer.Option("--from-report", metavar="FILE",
                     help="confirm against a pasted report (snapshot, collect_env, nvidia-smi, "
                     "issue body; '-' reads stdin) instead of the text's or this machine's"),
    ] = None,
    no_probe: Annotated[
        bool, typer.Option("--no-probe", help="never probe this machine to confirm a cause")
    ] = False,
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    debug: DebugOption = False,
) -> None:
    from gpudoctor.compat import load_tables
    from gpudoctor.explain import explain as run
    from gpudoctor.renderers import explain as renderer

    fmt = resolve_format(fmt, FORMATS)
    if from_report or no_probe:  # nothing of this machine is probed: these would be ignored
        common.refuse_with(ctx, "--from-report" if from_report else "--no-probe",
                           ("python", "cuda_home", "timeout"))
    body, name = _read(text or [])
    report = None
    if from_report:
        env = common.load_reports(from_report)
        report = (env, "; ".join(env.sources) or ", ".join(from_report))

    def probe(fields: frozenset[str]) -> Environment:
        return common.environment(cuda_home, common.interpreter(python, timeout), timeout,
                                  False, fields)

    expl = run(body, load_tables(), report=report, probe=None if no_probe else probe,
               text_name=name)
    deliver(render(fmt, Renderings(
        text=lambda: renderer.explain_text(expl, report_console(output), verbose),
        json=lambda: renderer.explain_json(expl),
        markdown=lambda: renderer.explain_markdown(expl))), output, fmt)
    say(renderer.summary(expl))
    raise typer.Exit(ExitCode.OK if expl.found else ExitCode.FAILURE)


def _read(args: list[str]) -> tuple[str, str]:
    """The text to explain and what to call it: stdin for '-'; when the one argument names an
    existing path of any kind (a file, /dev/fd/N of `<(...)`, a FIFO, a directory), that
    input, read like any other (bounded; a directory or an endless stream is refused); when it
    only looks like a path (`_looks_like_path`), a usage error; else the arguments themselves
    (joined), bounded like any input."""
    from gpudoctor.cli.inputs import SNAPSHOT_LIMIT, InputError, mib, read_input

    if not args:
        raise common.fail_usage("give the error text, a file holding it, or '-' for stdin "
                                "(see `gpudoctor explain --help`)")
    if len(args) == 1 and (args[0] == "-" or _names_path(args[0])):
        try:
            return read_input(args[0], SNAPSHOT_LIMIT), "stdin" if args[0] == "-" else args[0]
        except InputError as e:
            raise common.fail_usage(f"cannot read {e}") from None
    if len(args) == 1 and _looks_like_path(args[0]):
        raise common.fail_usage(f"no such file: {args[0]}; to explain a text, quote it")
    body = " ".join(args)
    if len(body.encode("utf-8", "surrogatepass")) > SNAPSHOT_LIMIT:
        raise common.fail_usage(f"the text is larger than {mib(SNAPSHOT_LIMIT)}, the most "
                                "gpudoctor reads")
    if not body.strip():
        raise common.fail_usage("the text is empty")
    return body, "the pasted text"


_PATH_SUFFIXES = (".log", ".txt", ".out", ".err")


def _names_path(arg: str) -> bool:
    """Whether a one-line argument names something that exists (a dangling symlink too: its
    reading then says what is missing)."""
    if not arg or "\n" in arg or "\0" in arg:
        return False
    try:
        return os.path.lexists(arg)
    except (OSError, ValueError):  # a name too long, or one the OS cannot take
        return False


def _looks_like_path(arg: str) -> bool:
    """A single word, not a sentence of an error: it holds a '/' or ends like a log file."""
    return bool(arg) and not any(c.isspace() for c in arg) and (
        "/" in arg or arg.lower().endswith(_PATH_SUFFIXES))


explain.__doc__ = HELP

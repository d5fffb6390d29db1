"""`gpudoctor compat cuda|cudnn|driver|torch|gpu ...`: ask the compat tables one question."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from gpudoctor.cli.options import FormatOption, stderr_console, write_output
from gpudoctor.compat_query import QUERIES, Answer, NotInTables, QueryError
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers.interface import OutputFormat

app = typer.Typer(
    help="answer compatibility questions from the bundled tables (text or json)",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="show each row's source URL and note")
]


def render_text(answer: Answer, verbose: bool) -> str:
    """The answer as indented text; rows that are not verified say their status."""
    lines = [answer.subject]
    for section in answer.sections:
        lines += ["", section.title]
        for row in section.rows:
            lines.append(f"  {row.text}" + ("" if row.verified else f"  [{row.status}]"))
            if verbose:
                lines.append(f"      source: {row.source}")
                lines += [f"      note: {row.note}"] if row.note else []
        if section.note:
            lines.append(f"  ({section.note})")
        elif not section.rows:
            lines.append("  none in the tables")
    return "\n".join(lines) + "\n"


def render_json(answer: Answer) -> str:
    """The answer as a JSON document (`Answer.to_dict`)."""
    return json.dumps(answer.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _answer(kind: str, query: str, fmt: OutputFormat, verbose: bool) -> None:
    from gpudoctor.compat import load_tables

    if fmt not in (OutputFormat.TEXT, OutputFormat.JSON):
        raise typer.BadParameter(f"compat writes text or json, not {fmt}", param_hint="--format")
    try:
        answer = QUERIES[kind](load_tables(), query)
    except QueryError as e:
        hint = "SM_OR_NAME" if kind == "gpu" else "VERSION"
        raise typer.BadParameter(str(e), param_hint=hint) from None
    except NotInTables as e:
        stderr_console().print(f"gpudoctor: {e}", markup=False)
        raise typer.Exit(ExitCode.FAILURE) from None
    write_output(render_json(answer) if fmt is OutputFormat.JSON else render_text(answer, verbose),
                 "-")
    raise typer.Exit(ExitCode.OK)


@app.command("cuda")
def cuda(
    version: Annotated[str, typer.Argument(metavar="VERSION", help="CUDA version: 10.1, 12.4.1")],
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: VerboseOption = False,
) -> None:
    """minimum driver, cuDNN builds (with tarball names) and PyTorch wheels for a CUDA version"""
    _answer("cuda", version, fmt, verbose)


@app.command("cudnn")
def cudnn(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="cuDNN version: 7.6.5, 8.9.7.29")],
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: VerboseOption = False,
) -> None:
    """CUDA builds, tarball names, minimum drivers and GPUs of a cuDNN release"""
    _answer("cudnn", version, fmt, verbose)


@app.command("driver")
def driver(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="Linux driver version: 470.82.01")],
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: VerboseOption = False,
) -> None:
    """highest CUDA a driver runs and the newest PyTorch wheels it runs, with pip lines"""
    _answer("driver", version, fmt, verbose)


@app.command("torch")
def torch(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="PyTorch version: 2.1.0, 2.1.0+cu121")],
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: VerboseOption = False,
) -> None:
    """CUDA variants, index URLs, bundled cuDNN, torchvision and Pythons of a PyTorch release"""
    _answer("torch", version, fmt, verbose)


@app.command("gpu")
def gpu(
    gpu: Annotated[str, typer.Argument(metavar="SM_OR_NAME",
                                       help="compute capability (sm_86, 8.6) or product name")],
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: VerboseOption = False,
) -> None:
    """architecture, toolkits, cuDNN and PyTorch wheels that support a GPU"""
    _answer("gpu", gpu, fmt, verbose)

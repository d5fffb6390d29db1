"""`gpudoctor compat cuda|cudnn|driver|torch|gpu ...`: ask the compat tables one question."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudoctor.cli.options import TEXT_JSON, DebugOption, format_option, resolve_format
from gpudoctor.cli.output import deliver, say
from gpudoctor.compat.query import QUERIES, NotInTables, QueryError
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat

FORMATS = TEXT_JSON
FormatOption = Annotated[OutputFormat | None, format_option(FORMATS)]

app = typer.Typer(
    help="""answer compatibility questions from the bundled tables (text or json)

\b
Exit 0: answered; 1: the value is not in the tables (the nearest known are named);
2: usage error. GPUDOCTOR_FORMAT applies when it is text or json, else it is ignored.

\b
examples:
  gpudoctor compat cuda 10.1           minimum driver, cuDNN builds, torch wheels
  gpudoctor compat cudnn 7.6.5         CUDA builds and tarball names of a cuDNN release
  gpudoctor compat driver 470.82.01    the highest CUDA and newest wheels it runs
  gpudoctor compat torch 2.1.0 -v      variants and index URLs, with sources
  gpudoctor compat gpu sm_86           or: gpudoctor compat gpu "RTX 3090"
""",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="show each row's source URL and note")
]


def _answer(kind: str, query: str, fmt: OutputFormat | None, verbose: bool) -> None:
    from gpudoctor.compat import load_tables
    from gpudoctor.renderers.compat import answer_json, answer_text

    fmt = resolve_format(fmt, FORMATS)
    try:
        answer = QUERIES[kind](load_tables(), query)
    except QueryError as e:
        hint = "SM_OR_NAME" if kind == "gpu" else "VERSION"
        raise typer.BadParameter(str(e), param_hint=hint) from None
    except NotInTables as e:
        say(f"gpudoctor: {e}")
        raise typer.Exit(ExitCode.FAILURE) from None
    deliver(render(fmt, Renderings(text=lambda: answer_text(answer, verbose),
                                   json=lambda: answer_json(answer))), "-", fmt)
    raise typer.Exit(ExitCode.OK)


@app.command("cuda")
def cuda(
    version: Annotated[str, typer.Argument(metavar="VERSION", help="CUDA version: 10.1, 12.4.1")],
    fmt: FormatOption = None,
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    """minimum driver, cuDNN builds (with tarball names) and PyTorch wheels for a CUDA version

    \b
    examples:
      gpudoctor compat cuda 10.1
      gpudoctor compat cuda 12.4 --format json
    """
    _answer("cuda", version, fmt, verbose)


@app.command("cudnn")
def cudnn(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="cuDNN version: 7.6.5, 8.9.7.29")],
    fmt: FormatOption = None,
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    """CUDA builds, tarball names, minimum drivers and GPUs of a cuDNN release

    \b
    examples:
      gpudoctor compat cudnn 7.6.5
      gpudoctor compat cudnn 8.9.7.29 -v
    """
    _answer("cudnn", version, fmt, verbose)


@app.command("driver")
def driver(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="Linux driver version: 470.82.01")],
    fmt: FormatOption = None,
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    """highest CUDA a driver runs and the newest PyTorch wheels it runs, with pip lines

    \b
    examples:
      gpudoctor compat driver 470.82.01
      gpudoctor compat driver 535.104.05 --format json
    """
    _answer("driver", version, fmt, verbose)


@app.command("torch")
def torch(
    version: Annotated[str, typer.Argument(metavar="VERSION",
                                           help="PyTorch version: 2.1.0, 2.1.0+cu121")],
    fmt: FormatOption = None,
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    """CUDA variants, index URLs, bundled cuDNN, torchvision and Pythons of a PyTorch release

    \b
    examples:
      gpudoctor compat torch 2.1.0
      gpudoctor compat torch 2.5.1+cu124 -v
    """
    _answer("torch", version, fmt, verbose)


@app.command("gpu")
def gpu(
    gpu: Annotated[str, typer.Argument(metavar="SM_OR_NAME",
                                       help="compute capability (sm_86, 8.6) or product name")],
    fmt: FormatOption = None,
    verbose: VerboseOption = False,
    debug: DebugOption = False,
) -> None:
    """architecture, toolkits, cuDNN and PyTorch wheels that support a GPU

    \b
    examples:
      gpudoctor compat gpu sm_86
      gpudoctor compat gpu "RTX 3090"
    """
    _answer("gpu", gpu, fmt, verbose)

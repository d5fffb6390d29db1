"""The `gpudoctor` command line. Only this package touches argv, streams and exit codes."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from gpudoctor import __version__
from gpudoctor.exitcodes import ExitCode

HELP = """\
a doctor for the NVIDIA deep-learning stack: driver, CUDA, cuDNN, PyTorch

\b
examples:
  gpudoctor check                          check every layer of this machine
  gpudoctor check --format json -o r.json  machine-readable report for CI
  gpudoctor check --python ~/venv/bin/python
                                           diagnose another environment's torch
  gpudoctor smoke-test --device cuda:0     train a CNN with cuDNN on and off
  gpudoctor install-cudnn --tarball cudnn-10.1-linux-x64-v7.6.5.32.tgz --prefix /usr/local/cuda
  gpudoctor compat cuda 10.1               minimum driver, cuDNN builds, torch wheels
  gpudoctor snapshot -o node1.json         save the facts; replay: check --from-snapshot
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"gpudoctor {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="show tracebacks of internal errors",
                           envvar="GPUDOCTOR_DEBUG")
    ] = False,
) -> None:
    _DEBUG[0] = debug


_DEBUG = [False]


def _register() -> None:
    from gpudoctor.cli import check, install, smoke, snapshot

    app.command("check", no_args_is_help=False)(check.check)
    app.command("checks")(check.list_checks)
    app.command("snapshot")(snapshot.snapshot)
    app.command("smoke-test")(smoke.smoke_test)
    app.command("install-cudnn")(install.install_cudnn)
    app.command("uninstall-cudnn")(install.uninstall_cudnn)

    from gpudoctor.cli import compat, recommend

    app.add_typer(compat.app, name="compat")
    app.command("recommend")(recommend.recommend)


_register()


def main() -> None:
    """Console-script entry point: run the app, map crashes to exit 3 and Ctrl-C to 130."""
    try:
        rc = app(standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print("gpudoctor: interrupted", file=sys.stderr)
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:  # the CLI's last line of defence (STYLE.md §6)
        kinds = {k.__name__ for k in type(e).__mro__}
        if "ClickException" in kinds:  # click's or typer's vendored click: a usage error
            e.show()  # type: ignore[attr-defined]
            sys.exit(e.exit_code)  # type: ignore[attr-defined]
        if "Abort" in kinds:
            print("gpudoctor: aborted", file=sys.stderr)
            sys.exit(ExitCode.INTERRUPTED)
        if _DEBUG[0] or "--debug" in sys.argv:
            raise
        print(
            f"gpudoctor {__version__}: internal error: {type(e).__name__}: {e}\n"
            "This is a gpudoctor bug. Please report it with the output of "
            "`gpudoctor --debug <same command>` and `gpudoctor snapshot`.",
            file=sys.stderr,
        )
        sys.exit(ExitCode.INTERNAL)
    sys.exit(rc if isinstance(rc, int) else ExitCode.OK)

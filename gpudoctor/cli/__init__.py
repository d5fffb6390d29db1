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

def _version(value: bool) -> None:
    if value:
        print(f"gpudoctor {__version__}")
        raise typer.Exit(ExitCode.OK)


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

# command name → (module under gpudoctor.cli, attribute, kind)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("check", "check", "command"),
    "checks": ("check", "list_checks", "command"),
    "snapshot": ("snapshot", "snapshot", "command"),
    "smoke-test": ("smoke", "smoke_test", "command"),
    "install-cudnn": ("install", "install_cudnn", "command"),
    "uninstall-cudnn": ("install", "uninstall_cudnn", "command"),
    "recommend": ("recommend", "recommend", "command"),
    "compat": ("compat", "app", "group"),
}


def build_app(only: str | None = None) -> typer.Typer:
    """The Typer app with every command, or with just `only` (what `main` is about to run):
    importing one command's module instead of all of them keeps `check` fast."""
    from importlib import import_module

    application = typer.Typer(
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    application.callback()(_root)
    for name, (module, attr, kind) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(import_module(f"gpudoctor.cli.{module}"), attr)
        if kind == "group":
            application.add_typer(target, name=name)
        else:
            application.command(name)(target)
    return application


def __getattr__(name: str) -> typer.Typer:
    """`gpudoctor.cli.app`: the full app, built on first use (tests, CliRunner)."""
    if name == "app":
        globals()["app"] = full = build_app()
        return full
    raise AttributeError(name)


def main() -> None:
    """Console-script entry point: run the app, map crashes to exit 3 and Ctrl-C to 130."""
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    application = build_app(command if command in COMMANDS else None)
    try:
        rc = application(standalone_mode=False)
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

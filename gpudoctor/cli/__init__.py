"""The `gpudoctor` command line. Only this package touches argv, streams and exit codes."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Annotated, NoReturn

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
  gpudoctor explain "no kernel image is available for execution on the device"
                                           what an error means, confirmed on this machine
"""

def _version(value: bool) -> None:
    if value:
        from gpudoctor.cli.output import deliver
        from gpudoctor.compat import CompatTableError, known_until
        from gpudoctor.renderers.interface import OutputFormat

        try:
            tables = f"compat tables known until {known_until().isoformat()}"
        except CompatTableError as exc:  # a broken install: say so, never a traceback
            tables = f"compat tables unreadable: {exc}"
        deliver(f"gpudoctor {__version__} ({tables})\n", "-", OutputFormat.TEXT)
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
    "checks": ("checks", "checks", "command"),
    "snapshot": ("snapshot", "snapshot", "command"),
    "smoke-test": ("smoke", "smoke_test", "command"),
    "install-cudnn": ("install", "install_cudnn", "command"),
    "uninstall-cudnn": ("install", "uninstall_cudnn", "command"),
    "recommend": ("recommend", "recommend", "command"),
    "compat": ("compat", "app", "group"),
    "explain": ("explain", "explain", "command"),
    "diff": ("diff", "diff", "command"),
    "fleet": ("fleet", "fleet", "command"),
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
    """Run the app, map crashes to exit 3 and Ctrl-C to 130 (SIGTERM 143, SIGHUP 129), every
    child process group killed first. Called by the entry point (`gpudoctor.__main__`), which
    has installed the signal handlers already, first thing: they are installed there only."""
    from gpudoctor import childproc

    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    application = build_app(command if command in COMMANDS else None)
    try:
        rc = application(standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt as e:
        _interrupted(e)
    except OSError as e:
        if e.errno not in _OUTPUT_ERRNOS:
            _internal_error(e)
        _output_failed(e)
    except Exception as e:  # noqa: BLE001 - the CLI's last line of defence (STYLE.md §6)
        if childproc.interrupted() is not None:  # e.g. a RuntimeError wrapping the Ctrl-C
            _interrupted(e)
        kinds = {k.__name__ for k in type(e).__mro__}
        if "ClickException" in kinds:  # click's or typer's vendored click: a usage error
            import io

            from gpudoctor.cli.output import say

            shown = io.StringIO()  # then on stderr escaped: argv may hold control characters
            e.show(file=shown)  # type: ignore[attr-defined]
            say(*shown.getvalue().rstrip("\n").split("\n"))
            sys.exit(e.exit_code)  # type: ignore[attr-defined]
        if "Abort" in kinds:
            _interrupted(e)
        _internal_error(e)
    if rc == ExitCode.INTERRUPTED or childproc.interrupted() is not None:
        _interrupted(None)  # Typer turned the KeyboardInterrupt into a bare 130
    _flush_stdout()
    childproc.finishing()  # a signal from here on: exit at once, no traceback
    _exit_now(rc if isinstance(rc, int) else ExitCode.OK)


def _exit_now(code: int) -> NoReturn:
    """End the process without Python's teardown of every module and object (~15 ms after
    each run, 5% of `check --no-torch`). What the teardown would do that matters is done
    first: stdout was flushed (where a failure is still reported), stderr is, and the exit
    handlers run (the child runner's kill of what is left, logging's flush)."""
    import atexit

    if sys.stderr is not None:  # None: started with fd 2 closed
        with contextlib.suppress(OSError, ValueError):  # closed or gone: nothing left to say
            sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _interrupted(e: BaseException | None) -> NoReturn:
    """Ctrl-C, SIGTERM, SIGHUP: every child's group is killed and reaped, one line says so
    (or says what the command had already done), and the process ends at once: os._exit, so
    that no thread stuck in a driver call can hold it (cleanup such as an install's rollback
    ran while the exception unwound)."""
    import os

    from gpudoctor import childproc
    from gpudoctor.cli.output import say

    code, message = childproc.settle(e)
    say(f"gpudoctor: {message}")
    with contextlib.suppress(OSError, ValueError):
        if sys.stdout is not None:
            sys.stdout.flush()
    os._exit(code)


# errors of writing to a stream that is full, gone or closed by its reader: the outside world's
# doing, so exit 2 with one line (a closed pipe quietly), never "a gpudoctor bug"
_OUTPUT_ERRNOS = {errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _internal_error(e: BaseException) -> NoReturn:
    if _DEBUG[0] or "--debug" in sys.argv:
        raise e
    from gpudoctor.cli.output import say

    say(f"gpudoctor {__version__}: internal error: {type(e).__name__}: {e}",
        "This is a gpudoctor bug. Please report it with the output of "
        "`gpudoctor --debug <same command>` and `gpudoctor snapshot`.")
    sys.exit(ExitCode.INTERNAL)


def _output_failed(e: OSError) -> NoReturn:
    """A write to stdout (help text, a message) failed: say so once, exit 2; fd 1 is pointed
    at /dev/null so that Python's own flush at exit cannot fail again."""
    from gpudoctor.cli.output import say, stdout_to_devnull

    stdout_to_devnull()
    if e.errno != errno.EPIPE:
        say(f"gpudoctor: error: cannot write the output: {e.strerror or e}")
    sys.exit(ExitCode.USAGE)


def _flush_stdout() -> None:
    """Flush stdout now, where a failure can still be reported, not in Python's shutdown."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except OSError as e:
        _output_failed(e)
    except ValueError:  # closed
        pass

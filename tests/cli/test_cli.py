"""`gpudoctor.cli` (its __init__): the app built with every command or only the one about to
run, `gpudoctor.cli.app` built once on first use, `--version`, and `main`'s last line of
defence: a crash is exit 3 with two lines (the traceback with --debug), a usage error exit 2
on one escaped line, Ctrl-C 130, a stdout that cannot be written exit 2. `main` ends the
process itself (os._exit), so it runs here in a child process with the failure injected.
(The whole command line's contract: tests/cli/test_contract.py, tests/hostile/.)"""

from __future__ import annotations

import errno
import subprocess
import sys
from typing import Any

import pytest
import runner
import typer
from runner import invoke

import gpudoctor.cli as cli
from gpudoctor import __version__
from gpudoctor.cli import COMMANDS, build_app
from gpudoctor.compat import known_until


def names(app: typer.Typer) -> set[str]:
    group: Any = typer.main.get_command(app)
    return set(group.commands)


def test_every_command_is_registered_under_its_name() -> None:
    assert names(build_app()) == set(COMMANDS)
    from importlib import import_module

    for name, (module, attr, kind) in COMMANDS.items():
        target = getattr(import_module(f"gpudoctor.cli.{module}"), attr)
        assert isinstance(target, typer.Typer) == (kind == "group"), name


def test_the_app_for_one_command_has_only_that_one() -> None:
    assert names(build_app("check")) == {"check"}
    assert names(build_app("compat")) == {"compat"}


def test_the_full_app_is_built_once_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(vars(cli), "app", raising=False)
    first = cli.app
    assert cli.app is first and names(first) == set(COMMANDS)
    with pytest.raises(AttributeError):
        cli.no_such_thing  # noqa: B018


def test_version() -> None:
    r = invoke("--version")
    assert r.exit_code == 0
    assert r.stdout == (f"gpudoctor {__version__} (compat tables known until "
                        f"{known_until().isoformat()})\n")


def test_an_internal_error_is_exit_3_with_two_lines(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "_DEBUG", [False])
    monkeypatch.setattr(sys, "argv", ["gpudoctor", "check"])
    with pytest.raises(SystemExit) as e:
        cli._internal_error(RuntimeError("boom\nforged line"))
    assert e.value.code == 3
    assert capsys.readouterr().err.splitlines() == [
        f"gpudoctor {__version__}: internal error: RuntimeError: boom\\nforged line",
        "This is a gpudoctor bug. Please report it with the output of `gpudoctor --debug "
        "<same command>` and `gpudoctor snapshot`."]
    monkeypatch.setattr(sys, "argv", ["gpudoctor", "check", "--debug"])
    with pytest.raises(RuntimeError, match="boom"):  # --debug: the traceback
        cli._internal_error(RuntimeError("boom"))


@pytest.mark.parametrize(("err", "said"), [
    (errno.EPIPE, []),  # the reader went away: quietly
    (errno.ENOSPC, ["gpudoctor: error: cannot write the output: No space left on device"]),
])
def test_a_stdout_that_cannot_be_written_is_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], err: int,
        said: list[str]) -> None:
    class Full:
        def flush(self) -> None:
            raise OSError(err, "No space left on device" if err == errno.ENOSPC else "pipe")

    monkeypatch.setattr(sys, "stdout", Full())
    with pytest.raises(SystemExit) as e:
        cli._flush_stdout()
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines() == said
    monkeypatch.setattr(sys, "stdout", None)
    cli._flush_stdout()  # started with fd 1 closed: nothing to flush


# `main` in a child: the `checks` command's catalogue replaced by what the test injects
MAIN = """
import sys
import gpudoctor.cli as cli
import gpudoctor.cli.checks as checks
def injected(selectors=None):
    {body}
checks.check_docs = injected
sys.argv = ["gpudoctor", *sys.argv[1:]]
cli.main()
"""


def main(body: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", MAIN.format(body=body), *args],
                          env=runner.environment(), capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.mark.slow
@pytest.mark.subprocess
def test_main_maps_each_ending_to_its_exit_code() -> None:
    ok = main("return ()", "checks", "--format", "json")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "[]\n", "")
    failed = main("import typer; raise typer.Exit(1)", "checks")  # a command's own exit code
    assert (failed.returncode, failed.stderr) == (1, "")
    crash = main("raise ZeroDivisionError('x')", "checks")
    assert crash.returncode == 3 and "Traceback" not in crash.stderr
    assert crash.stderr.splitlines()[0] == (f"gpudoctor {__version__}: internal error: "
                                            "ZeroDivisionError: x")
    debug = main("raise ZeroDivisionError('x')", "--debug", "checks")
    assert debug.returncode == 1 and "Traceback" in debug.stderr  # Python's own, in full
    ctrl_c = main("raise KeyboardInterrupt", "checks")
    assert (ctrl_c.returncode, ctrl_c.stderr) == (130, "gpudoctor: interrupted\n")
    usage = main("return ()", "checks", "--no-such\x1b[2J")
    assert usage.returncode == 2 and "\x1b" not in usage.stderr
    assert "No such option: --no-such\\x1b[2J" in usage.stderr

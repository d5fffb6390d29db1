"""The entry point (`gpudoctor.__main__`): its reading of argv agrees with the commands'; it
starts the torch child early only when a selected check reads torch, under the interpreter the
command will resolve, and the probe then takes that child; the signal handlers go in once
(issue 22 item 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import runner
import typer
from runner import environment

import gpudoctor.__main__ as entry
from gpudoctor.__main__ import _needs_torch, _selection
from gpudoctor.cli import build_app
from gpudoctor.interpreters import locate
from gpudoctor.probes import gather, prestart
from gpudoctor.probes.interface import Deps


def value_options(command: str) -> set[str]:
    """Every name of the options of `command` that take a value (flags do not)."""
    cmd: Any = typer.main.get_command(build_app(command)).commands[command]  # type: ignore[attr-defined]
    return {name for p in cmd.params if p.param_type_name == "option"
            and not p.is_flag and not p.count for name in (*p.opts, *p.secondary_opts)}


def test_the_entry_points_valued_options_are_the_commands() -> None:
    """`_VALUED` is written out (importing the CLI to ask would cost the early start): an
    option that takes a value, added to `check` or `snapshot` and not there, or left there
    after it is gone, fails here."""
    assert value_options("snapshot") <= value_options("check")
    assert value_options("check") == entry._VALUED


@pytest.mark.parametrize(("args", "positional", "values"), [
    (["GD101", "-o", "r.json", "--python=py", "host"], ["GD101", "host"],
     {"-o": ["r.json"], "--python": ["py"]}),
    (["--only", "a", "--only=b", "--format"], [], {"--only": ["a", "b"], "--format": [""]}),
    (["-v", "--strict", "x"], ["x"], {}),
])
def test_parse_reads_values_as_the_command_does(args: list[str], positional: list[str],
                                                 values: dict[str, list[str]]) -> None:
    assert entry._parse(args) == (positional, values)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The interpreters `prestart` is asked to start the torch child under."""
    calls: list[str] = []
    monkeypatch.setattr(prestart, "prestart", lambda python, environ: calls.append(python))
    monkeypatch.delenv("GPUDOCTOR_PYTHON", raising=False)
    return calls


def test_the_early_child_runs_the_interpreter_the_command_resolves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list[str]) -> None:
    """A bare name (from PATH) and a relative path were not started early (only an absolute
    path was), so the probe started its own child later; the key of the early child is the
    path `interpreters.resolve` returns, or the probe would not take it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "py3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.chdir(tmp_path)
    for value in ("py3", "bin/py3", str(bin_dir / "py3")):
        entry._prestart_torch(["gpudoctor", "check", "--python", value])
    monkeypatch.setenv("GPUDOCTOR_PYTHON", "bin/py3")
    entry._prestart_torch(["gpudoctor", "snapshot"])
    wanted = locate("py3", {"PATH": str(bin_dir)})
    assert started == [wanted] * 4


def test_no_early_child_for_what_is_no_interpreter(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   started: list[str]) -> None:
    for value in ("no-such-python-here", str(tmp_path), str(tmp_path / "missing")):
        entry._prestart_torch(["gpudoctor", "check", "--python", value])
    assert started == []
    monkeypatch.setenv("GPUDOCTOR_PYTHON", "")  # empty: unset, as the option reads it
    entry._prestart_torch(["gpudoctor", "check"])
    assert started == [sys.executable]


_COUNT = """
import sys
from gpudoctor import childproc

install = childproc.install_signal_handlers

def counted():
    sys.stderr.write("signal handlers installed\\n")
    sys.stderr.flush()
    install()

childproc.install_signal_handlers = counted
sys.argv = ["gpudoctor", "checks", "GD101"]
from gpudoctor.__main__ import main
main()
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_signal_handlers_are_installed_once() -> None:
    """The entry point installs them first thing; the CLI it runs installed them again."""
    p = subprocess.run([sys.executable, "-c", _COUNT], env=environment(), capture_output=True,
                       text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("GD101")
    assert p.stderr.splitlines().count("signal handlers installed") == 1, p.stderr


@pytest.mark.parametrize(("args", "only", "skip"), [
    ([], [], []),
    (["host"], ["host"], []),
    (["-v", "host", "--format", "json", "GD101"], ["host", "GD101"], []),
    (["--python", "/x/python", "--only", "a,b", "--skip=c", "-o", "r.json"], ["a", "b"],
     ["c"]),
    (["--only=pytorch", "--timeout", "5"], ["pytorch"], []),
])
@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_selection_reads_check_arguments(args: list[str], only: list[str],
                                         skip: list[str]) -> None:
    assert _selection(args) == (only, skip)


@pytest.mark.parametrize(("args", "needs"), [
    ([], True),
    (["host"], False),
    (["cudnn", "cuda"], True),  # GD203, GD307 and GD309 compare with torch
    (["GD201", "GD301", "host"], False),
    (["--skip", "pytorch"], True),  # GD101 and others read torch's build
    (["pytorch"], True),
    (["host", "--smoke"], True),
    (["GD502", "--format", "json"], False),
])
@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_torch_is_prestarted_only_when_needed(args: list[str], needs: bool) -> None:
    assert _needs_torch(args) is needs


def _counting_python(tmp_path: Path) -> tuple[Path, Path]:
    """An interpreter that is this one, and appends a line to a log each time it is started
    with the torch probe's program."""
    import sys

    log = tmp_path / "torch-children.log"
    script = tmp_path / "python"
    script.write_text(  # the program comes on stdin (`python -`, gpudoctor.childargv)
        '#!/bin/sh\nprog=""\nfor a in "$@"; do\n  if [ "$a" = "-" ]; then prog=$(cat); break; fi\n'
        'done\ncase "$prog $*" in\n'
        f'  *"Child-process half of the PyTorch probe"*) echo started >> "{log}" ;;\n'
        f'esac\nif [ -n "$prog" ]; then printf \'%s\\n\' "$prog" | exec "{sys.executable}" "$@"; '
        f'fi\nexec "{sys.executable}" "$@"\n')
    script.chmod(0o755)
    return script, log


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("args", "children"), [
    (["check"], 1),  # prestarted by the entry point, then taken by the probe: one child
    (["check", "GD101"], 1),
    (["check", "host"], 0),  # host checks read no torch fact: none started
    (["snapshot"], 1),
])
def test_the_prestarted_child_is_the_one_the_probe_uses(tmp_path: Path, args: list[str],
                                                        children: int) -> None:

    python, log = _counting_python(tmp_path)
    proc = runner.gpudoctor(*args, "--python", str(python), "-o", str(tmp_path / "out"),
                            timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    started = log.read_text().splitlines() if log.exists() else []
    assert len(started) == children, (started, proc.stderr)


class _Stop(Exception):
    """Raised by the stand-in of `collect`: the test has what it asked."""


@pytest.fixture
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CUDA_HOME", "PYTHON", "TIMEOUT"):
        monkeypatch.delenv(f"GPUDOCTOR_{name}", raising=False)


@pytest.mark.parametrize(("args", "early"), [
    (["check"], True),
    (["check", "--no-torch", "-f", "json", "-o", "r.json", "--strict", "-v"], True),
    (["check", "--smoke", "--require", "gpus>=1"], True),
    (["snapshot", "--no-torch"], True),
    (["check", "host"], False),  # a selection: the command starts the probes it reads
    (["check", "--only", "GD101"], False),
    (["check", "--skip=host"], False),
    (["check", "--python", sys.executable], False),  # other inputs: left to the command
    (["check", "--cuda-home", "/usr/local/cuda"], False),
    (["check", "--timeout", "5"], False),
    (["check", "--from-report", "r.txt"], False),
    (["check", "--help"], False),
    (["checks"], False),
    (["explain", "text"], False),
])
def test_the_probes_start_early_for_a_plain_check_or_snapshot(
        monkeypatch: pytest.MonkeyPatch, plain_environment: None, args: list[str],
        early: bool) -> None:
    started: list[Deps] = []
    monkeypatch.setattr(gather, "start_early", lambda deps, fields=None: started.append(deps))
    entry._prestart_probes(["gpudoctor", *args])
    assert len(started) == (1 if early else 0)


@pytest.mark.parametrize("variable", ["GPUDOCTOR_CUDA_HOME", "GPUDOCTOR_PYTHON",
                                      "GPUDOCTOR_TIMEOUT"])
def test_no_early_probes_when_the_environment_sets_their_inputs(
        monkeypatch: pytest.MonkeyPatch, plain_environment: None, variable: str) -> None:
    started: list[Deps] = []
    monkeypatch.setattr(gather, "start_early", lambda deps, fields=None: started.append(deps))
    monkeypatch.setenv(variable, "5")
    entry._prestart_probes(["gpudoctor", "check"])
    assert started == []


@pytest.mark.parametrize("args", [
    ["check"], ["check", "--no-torch", "--strict", "-f", "json"], ["check", "--smoke"],
    ["snapshot"], ["snapshot", "--no-torch"],
])
def test_the_early_probes_have_the_inputs_the_command_asks_for(
        monkeypatch: pytest.MonkeyPatch, plain_environment: None, tmp_path: Path,
        args: list[str]) -> None:
    """What the entry point starts is what the command's `collect` then asks for (Deps and
    probes), else `gather.start` would not take it: a default of the commands (the timeout)
    changed without `_TIMEOUT`, or a Deps field the command sets, fails here."""
    from typer.testing import CliRunner

    started: list[tuple[Deps, frozenset[str]]] = []
    asked: list[tuple[Deps | None, frozenset[str]]] = []

    def collect(deps: Deps | None = None, fields: Any = None) -> Any:
        asked.append((deps, gather.probed(fields)))
        raise _Stop

    monkeypatch.setattr(gather, "start_early",
                        lambda deps, fields=None: started.append((deps, gather.probed(fields))))
    monkeypatch.setattr(gather, "collect", collect)
    entry._prestart_probes(["gpudoctor", *args])
    result = CliRunner().invoke(build_app(args[0]), [*args, "-o", str(tmp_path / "out")])
    assert isinstance(result.exception, _Stop), result.output
    assert asked == started
    assert len(started) == 1


def _toolkit_logging_nvcc(tmp_path: Path) -> tuple[Path, Path]:
    """A toolkit whose nvcc (on PATH) appends a line to a log each time it runs."""
    log, kit = tmp_path / "nvcc.log", tmp_path / "kit"
    (kit / "bin").mkdir(parents=True)
    (kit / "version.json").write_text('{"cuda": {"version": "12.4.1"}}')
    nvcc = kit / "bin" / "nvcc"
    nvcc.write_text(f'#!/bin/sh\necho run >> "{log}"\n'
                    'echo "Cuda compilation tools, release 12.4, V12.4.131"\n')
    nvcc.chmod(0o755)
    return kit / "bin", log


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("args", [["check", "--no-torch"], ["snapshot", "--no-torch"],
                                  ["check", "cuda", "--no-torch"]])
def test_the_probes_run_once_whether_started_early_or_not(tmp_path: Path,
                                                          args: list[str]) -> None:
    """Started by the entry point (a plain check or snapshot) and taken by the command, or
    started by the command (a selection): the toolkit probe ran nvcc once."""
    import os

    bin_dir, log = _toolkit_logging_nvcc(tmp_path)
    proc = runner.gpudoctor(*args, "-o", str(tmp_path / "out"), timeout=120,
                            env={"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"},
                            drop=("GPUDOCTOR_",))
    assert proc.returncode in (0, 1), proc.stderr
    assert log.read_text().splitlines() == ["run"], proc.stderr


def test_the_entry_point_starts_the_probes_before_it_imports_the_cli(
        monkeypatch: pytest.MonkeyPatch, plain_environment: None) -> None:
    import gpudoctor.cli
    from gpudoctor import childproc

    order: list[str] = []
    monkeypatch.setattr(childproc, "install_signal_handlers", lambda: None)
    monkeypatch.setattr(prestart, "prestart", lambda python, environ: order.append("torch"))
    monkeypatch.setattr(gather, "start_early", lambda deps, fields=None: order.append("probes"))
    monkeypatch.setattr(gpudoctor.cli, "main", lambda: order.append("cli"))
    monkeypatch.setattr(sys, "argv", ["gpudoctor", "check"])
    entry._run([])
    assert order == ["torch", "probes", "cli"]


@pytest.mark.parametrize(("command", "collects"), [
    ("check", False), ("snapshot", False), ("checks", True), ("fleet", True), ("smoke-test", True),
])
def test_the_garbage_collector_is_off_only_for_check_and_snapshot(
        monkeypatch: pytest.MonkeyPatch, plain_environment: None, command: str,
        collects: bool) -> None:
    import gc

    import gpudoctor.cli
    from gpudoctor import childproc

    monkeypatch.setattr(childproc, "install_signal_handlers", lambda: None)
    monkeypatch.setattr(prestart, "prestart", lambda python, environ: None)
    monkeypatch.setattr(gather, "start_early", lambda deps, fields=None: None)
    monkeypatch.setattr(gpudoctor.cli, "main", lambda: None)
    monkeypatch.setattr(sys, "argv", ["gpudoctor", command])
    try:
        entry._run([])
        assert gc.isenabled() is collects
    finally:
        gc.enable()

"""`gpudoctor.probes.prestart`: the torch child started before the rest of gpudoctor loads, and
taken by the probe only when it was started with exactly the interpreter and environment the
probe would use (else the probe starts its own). `childproc.start` is replaced: no process runs
(the real early start through the CLI: tests/test___main__.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from gpudoctor.probes import prestart
from gpudoctor.probes.interface import Deps

SOURCE = (Path(prestart.__file__).parent / "_torch_child.py").read_text(encoding="utf-8")


class Started:
    """What `childproc.start` was asked to start, in place of a child."""

    def __init__(self, argv: list[str], env: Mapping[str, str]) -> None:
        self.argv, self.env = argv, dict(env)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Started]:
    """Every child `prestart` starts, none of them real; no child left from another test."""
    children: list[Started] = []

    def start(argv: list[str], env: Mapping[str, str]) -> Started:
        children.append(Started(argv, env))
        return children[-1]

    monkeypatch.setattr(prestart.childproc, "start", start)
    monkeypatch.setattr(prestart, "_PRESTARTED", {})
    return children


def test_the_child_runs_the_torch_childs_program() -> None:
    assert prestart.child_argv("/opt/py/bin/python") == ["/opt/py/bin/python", "-c", SOURCE]
    assert prestart.child_source() is prestart.child_source()  # read once
    assert "Child-process half of the PyTorch probe" in SOURCE


def test_the_childs_environment_is_unbuffered_without_a_startup_file() -> None:
    environ = {"PATH": "/usr/bin", "PYTHONSTARTUP": "/home/u/.pythonrc", "PYTHONUNBUFFERED": ""}
    assert prestart.child_env(environ) == {"PATH": "/usr/bin", "PYTHONUNBUFFERED": "1"}
    assert environ["PYTHONSTARTUP"] == "/home/u/.pythonrc"  # the caller's mapping is left as is


def test_the_probe_takes_the_child_started_early_once(started: list[Started]) -> None:
    environ = {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0"}
    prestart.prestart("/opt/py/bin/python", environ)
    assert len(started) == 1 and started[0].argv[0] == "/opt/py/bin/python"
    deps = Deps(environ=dict(reversed(environ.items())), python="/opt/py/bin/python")
    assert prestart.take(deps.python, deps.child_env()) is started[0]  # the probe's own key
    assert len(started) == 1
    assert prestart.take(deps.python, deps.child_env()) is started[1]  # gone: a new one
    assert started[1].env == started[0].env


@pytest.mark.parametrize(("python", "environ"), [
    ("/usr/bin/python3", {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0"}),
    ("/opt/py/bin/python", {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "1"}),
    ("/opt/py/bin/python", {"PATH": "/usr/bin"}),
    ("/opt/py/bin/python", {"PATH": "/opt/py/bin:/usr/bin", "CUDA_VISIBLE_DEVICES": "0"}),
], ids=["another-interpreter", "another-value", "one-variable-less", "another-path"])
def test_a_child_started_for_another_world_is_not_taken(started: list[Started], python: str,
                                                        environ: dict[str, str]) -> None:
    prestart.prestart("/opt/py/bin/python", {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0"})
    child = prestart.take(python, prestart.child_env(environ))
    assert child is started[1]
    assert child.argv == [python, "-c", SOURCE] and child.env == prestart.child_env(environ)


def test_a_child_that_cannot_start_early_is_left_to_the_probe(
        monkeypatch: pytest.MonkeyPatch, started: list[Started]) -> None:
    def refuse(argv: list[str], env: Mapping[str, str]) -> Started:
        raise PermissionError(13, "Permission denied", argv[0])

    monkeypatch.setattr(prestart.childproc, "start", refuse)
    prestart.prestart("/opt/py/bin/python", {"PATH": "/usr/bin"})  # no exception
    assert prestart._PRESTARTED == {}
    with pytest.raises(PermissionError):  # the probe meets the error itself and reports it
        prestart.take("/opt/py/bin/python", prestart.child_env({"PATH": "/usr/bin"}))

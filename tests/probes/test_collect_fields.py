"""collect(fields=...): only the probes the selected checks read run; the rest are "not
gathered". And the entry point starts the torch child early only when a selected check reads
torch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import runner

import gpudoctor.probes.gather
from gpudoctor.__main__ import _needs_torch, _selection
from gpudoctor.model import Environment, Reason, Unavailable
from gpudoctor.probes.gather import PROBES, collect
from gpudoctor.probes.interface import Deps

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace every probe by one that notes it ran and returns a marker."""
    ran: list[str] = []

    def fake(name: str) -> Callable[[Deps], Any]:
        def probe(deps: Deps) -> Any:
            ran.append(name)
            return Unavailable(Reason.ERROR, f"ran {name}")
        return probe

    monkeypatch.setattr(gpudoctor.probes.gather, "PROBES",
                        tuple((name, fake(name)) for name, _ in PROBES))
    return ran


def test_only_the_probes_of_the_fields_run(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    env = collect(Deps(root=tmp_path), fields={"host", "nvml"})
    assert sorted(ran) == ["host", "nvml"]
    assert isinstance(env, Environment)
    for name, _ in PROBES:
        fact = getattr(env, name)
        assert isinstance(fact, Unavailable)
        assert fact.message == (f"ran {name}" if name in ("host", "nvml")
                                else "not gathered: no selected check reads it")


def test_no_fields_runs_every_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    collect(Deps(root=tmp_path))
    assert sorted(ran) == sorted(name for name, _ in PROBES)


def test_fields_that_no_probe_fills_are_ignored(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    collect(Deps(root=tmp_path), fields={"smoke", "host"})
    assert ran == ["host"]


@pytest.mark.parametrize(("args", "only", "skip"), [
    ([], [], []),
    (["host"], ["host"], []),
    (["-v", "host", "--format", "json", "GD101"], ["host", "GD101"], []),
    (["--python", "/x/python", "--only", "a,b", "--skip=c", "-o", "r.json"], ["a", "b"],
     ["c"]),
    (["--only=pytorch", "--timeout", "5"], ["pytorch"], []),
])
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

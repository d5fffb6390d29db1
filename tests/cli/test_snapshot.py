"""`gpudoctor.cli.snapshot`: this machine's facts as JSON, to stdout or a file, that `check
--from-snapshot` reads back whole; the probe options reach the probes. (The real command on
this machine, then replayed: tests/cli/test_check_cli.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer

from gpudoctor.cli import common
from gpudoctor.cli import snapshot as command
from gpudoctor.model import Environment
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES


@pytest.fixture(name="probed")
def probed_fixture(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """`common.environment` answers with the recorded H100 server, and records its arguments."""
    calls: list[tuple[object, ...]] = []
    recorded = loads((FIXTURES[0].parent / "h100-healthy.json").read_text())

    def environment(*args: object) -> Environment:
        calls.append(args)
        return recorded

    monkeypatch.setattr(common, "environment", environment)
    return calls


def test_the_facts_written_read_back_whole(probed: list[tuple[object, ...]], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "node1.json"
    with pytest.raises(typer.Exit) as e:
        command.snapshot(str(target), cuda_home=Path("/opt/cuda"), python=None, timeout=7.5,
                         no_torch=True)
    assert e.value.exit_code == 0
    assert probed == [(Path("/opt/cuda"), sys.executable, 7.5, True)]
    recorded = loads((FIXTURES[0].parent / "h100-healthy.json").read_text())
    assert loads(target.read_text(encoding="utf-8")) == recorded
    assert capsys.readouterr() == ("", "")  # nothing else said


def test_to_stdout(probed: list[tuple[object, ...]], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit):
        command.snapshot("-", None, None, 60.0, False)
    out = capsys.readouterr().out
    assert out.startswith("{") and loads(out).host == loads(
        (FIXTURES[0].parent / "h100-healthy.json").read_text()).host
    assert probed[0][3] is False  # torch probed


def test_an_unwritable_output_is_exit_2(probed: list[tuple[object, ...]], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as e:
        command.snapshot(str(tmp_path / "no" / "s.json"), None, None, 60.0, True)
    assert e.value.exit_code == 2
    assert capsys.readouterr().err.startswith(f"gpudoctor: error: cannot write {tmp_path}/no/")


def test_a_python_that_is_not_one_is_refused_before_probing(
        probed: list[tuple[object, ...]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as e:
        command.snapshot("-", None, str(tmp_path / "python9"), 60.0, False)
    assert e.value.exit_code == 2 and probed == []
    assert capsys.readouterr().out == ""

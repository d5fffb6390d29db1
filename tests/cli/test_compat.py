"""`gpudoctor.cli.compat`: each `compat` subcommand asks its own query of the tables and writes
the answer the renderer makes; a value not in the tables exits 1 with one line, a malformed one
is a usage error naming the argument. (The published answers through the CLI:
tests/cli/test_compat_cli.py.)"""

from __future__ import annotations

import json

import pytest
import typer

from gpudoctor.cli import compat as command
from gpudoctor.compat import load_tables
from gpudoctor.compat.query import QUERIES
from gpudoctor.renderers.compat import answer_json, answer_text
from gpudoctor.renderers.interface import OutputFormat

ASKED = {"cuda": "12.4", "cudnn": "8.9.7", "driver": "535.104.05", "torch": "2.5.1",
         "gpu": "sm_86"}


def run(kind: str, query: str, fmt: OutputFormat | None = None, verbose: bool = False) -> int:
    with pytest.raises(typer.Exit) as e:
        getattr(command, kind)(query, fmt, verbose)
    return int(e.value.exit_code)


@pytest.mark.parametrize("kind", sorted(ASKED), ids=lambda k: f"compat-{k}")  # not `gpu`:
def test_each_subcommand_answers_its_own_question(  # the marker that needs a GPU
        kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    answer = QUERIES[kind](load_tables(), ASKED[kind])
    assert answer.kind == kind
    assert run(kind, ASKED[kind], OutputFormat.JSON) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(answer_json(answer))
    assert run(kind, ASKED[kind], OutputFormat.TEXT, verbose=True) == 0
    assert capsys.readouterr().out == answer_text(answer, verbose=True)


def test_the_format_variable_applies(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUDOCTOR_FORMAT", "json")
    assert run("cuda", "12.4") == 0
    assert json.loads(capsys.readouterr().out)["query"] == "12.4"
    monkeypatch.setenv("GPUDOCTOR_FORMAT", "junit")  # not one compat writes: text
    assert run("cuda", "12.4") == 0
    assert capsys.readouterr().out.startswith("CUDA 12.4")


def test_a_value_not_in_the_tables_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("cuda", "99.9") == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("gpudoctor: ") and "99.9" in line


@pytest.mark.parametrize(("kind", "hint"), [("cuda", "VERSION"), ("torch", "VERSION"),
                                            ("gpu", "SM_OR_NAME")])
def test_a_malformed_value_is_a_usage_error_naming_the_argument(kind: str, hint: str) -> None:
    with pytest.raises(typer.BadParameter) as e:
        getattr(command, kind)("１２.４" if kind != "gpu" else "", None, False)
    assert e.value.param_hint == hint

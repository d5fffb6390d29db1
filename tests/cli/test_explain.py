"""`gpudoctor.cli.explain`: what to explain (the text given, a file or stdin it names, a word that
only looks like a path refused), what to confirm it against (a pasted report, else this
machine's facts of the confirming checks only, or nothing with --no-probe), and the exit code.
(The command in real processes, with hostile inputs: tests/explain/test_explain_cli.py,
tests/hostile/test_selection_and_explain_inputs.py.)"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import typer
from runner import invoke

from gpudoctor.checks import REGISTRY
from gpudoctor.cli import common
from gpudoctor.cli import explain as command
from gpudoctor.cli.inputs import SNAPSHOT_LIMIT
from gpudoctor.model import Environment
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES

NO_KERNEL = "CUDA error: no kernel image is available for execution on the device"
PASCAL = FIXTURES[0].parent / "pascal-gpu-cu130-torch.json"


def refused(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    with pytest.raises(typer.Exit) as e:
        command._read(args)
    assert e.value.exit_code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_read_the_words_given(capsys: pytest.CaptureFixture[str]) -> None:
    assert command._read(["CUDA", "error:", "out", "of", "memory"]) == (
        "CUDA error: out of memory", "the pasted text")
    assert command._read([NO_KERNEL]) == (NO_KERNEL, "the pasted text")
    assert refused(capsys, []).startswith("gpudoctor: error: give the error text")
    assert refused(capsys, [" ", "\t"]) == "gpudoctor: error: the text is empty"
    assert refused(capsys, ["x" * (SNAPSHOT_LIMIT + 1)]).startswith(
        "gpudoctor: error: the text is larger than ")


def test_read_a_file_or_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"step 1\n{NO_KERNEL}\n")
    assert command._read([str(log)]) == (f"step 1\n{NO_KERNEL}\n", str(log))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"from stdin\n")))
    assert command._read(["-"]) == ("from stdin\n", "stdin")
    assert refused(capsys, [str(tmp_path)]).startswith(f"gpudoctor: error: cannot read {tmp_path}")


@pytest.mark.parametrize("arg", ["train.log", "logs/err", "OUT.TXT", "/tmp/nowhere/x"])
def test_a_missing_file_is_not_taken_for_a_text(arg: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert command._looks_like_path(arg) and not command._names_path(arg)
    assert refused(capsys, [arg]) == (f"gpudoctor: error: no such file: {arg}; to explain a "
                                      "text, quote it")


def test_what_names_or_looks_like_a_path(tmp_path: Path) -> None:
    dangling = tmp_path / "link"
    dangling.symlink_to(tmp_path / "gone")
    assert command._names_path(str(dangling)) and command._names_path(str(tmp_path))
    for arg in ("", "a\nb", "a\0b", "x" * 5000):
        assert not command._names_path(arg)
    for arg in (NO_KERNEL, "error", "", "see /tmp/x.log please"):
        assert not command._looks_like_path(arg)


@pytest.fixture(name="probed")
def probed_fixture(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    """`common.environment` answers with the recorded Pascal machine, recording the fields."""
    fields: list[frozenset[str]] = []

    def environment(cuda_home: object, python: str, timeout: float, no_torch: bool,
                    wanted: frozenset[str]) -> Environment:
        fields.append(frozenset(wanted))
        return loads(PASCAL.read_text())

    monkeypatch.setattr(common, "environment", environment)
    return fields


def test_confirmed_on_this_machine_with_only_the_facts_its_checks_read(
        probed: list[frozenset[str]]) -> None:
    r = invoke("explain", NO_KERNEL, "--format", "json")
    assert r.exit_code == 0, r.stderr
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["state"] == "confirmed" and [c["id"] for c in d["checks"]] == ["GD404"]
    (fields,) = probed
    gd404 = next(c for c in REGISTRY if c.id == "GD404")
    assert fields == gd404.reads != common.fields_read(REGISTRY)


def test_no_probe_and_a_pasted_report_probe_nothing(probed: list[frozenset[str]]) -> None:
    r = invoke("explain", "--no-probe", NO_KERNEL, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["diagnoses"][0]["state"] == "unchecked"
    r = invoke("explain", NO_KERNEL, "--from-report", str(PASCAL), "--format", "json")
    data = json.loads(r.stdout)
    assert data["checked_against"] and data["diagnoses"][0]["state"] == "confirmed"
    assert probed == []
    r = invoke("explain", "--no-probe", "--timeout", "5", NO_KERNEL)
    assert r.exit_code == 2 and "--timeout cannot be used with --no-probe" in r.stderr


def test_nothing_known_exits_1(probed: list[frozenset[str]]) -> None:
    r = invoke("explain", "all is well")
    assert r.exit_code == 1 and probed == []
    assert r.stderr == "gpudoctor: no known error in the text; run `gpudoctor check`\n"

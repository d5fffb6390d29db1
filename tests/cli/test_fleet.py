"""`gpudoctor.cli.fleet`: node reports read (a directory's *.json files, or the files named),
aggregated and written; exit 0 when every node was read and none fails, 1 when one fails or a
report cannot be read (named in the view), 2 when there is no report at all. (Reports written by
the real `check`, through the CLI: tests/fleet/test_fleet.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from gpudoctor.cli import fleet as command
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import console, report


def node_report(directory: Path, fixture: str, host: str) -> Path:
    """`check --format json` of a recorded machine, as node `host` wrote it."""
    data = json.loads(to_renderer(OutputFormat.JSON, console()).render(report(fixture)))
    data["environment"]["host"]["hostname"] = host
    path = directory / f"{host}.json"
    path.write_text(json.dumps(data))
    return path


def run(paths: list[str], fmt: OutputFormat = OutputFormat.JSON, output: str = "-",
        verbose: bool = False) -> int:
    with pytest.raises(typer.Exit) as e:
        command.fleet(paths, fmt, output, verbose)
    return int(e.value.exit_code)


def test_a_healthy_directory_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for host in ("gpu0", "gpu1"):
        node_report(tmp_path, "h100-healthy", host)
    (tmp_path / "notes.txt").write_text("not a report")  # not *.json: not read
    assert run([str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert [n["node"] for n in data["nodes"]] == ["gpu0", "gpu1"] and data["unreadable"] == []
    assert err == "gpudoctor: 2 nodes: 0 failing, 0 deviating\n"


def test_a_failing_node_and_an_unreadable_report_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = node_report(tmp_path, "h100-healthy", "gpu0")
    bad = node_report(tmp_path, "old-driver-new-torch", "gpu1")
    broken = tmp_path / "gpu2.json"
    broken.write_text("{ not json")
    missing = tmp_path / "gone.json"
    assert run([str(good), str(bad), str(broken), str(missing)]) == 1
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["failing"][0]["node"] == "gpu1" and "GD103" in data["failing"][0]["checks"]
    assert {u["path"] for u in data["unreadable"]} == {str(broken), str(missing)}
    assert err.startswith("gpudoctor: 2 nodes: 1 failing, ") and "2 unreadable" in err
    assert run([str(good)]) == 0
    assert run([str(good), str(broken)]) == 1  # an unreadable report alone: a problem too
    capsys.readouterr()


def test_the_view_in_markdown_to_a_file(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    node_report(reports, "h100-healthy", "gpu0")
    target = tmp_path / "fleet.md"
    assert run([str(reports)], OutputFormat.MARKDOWN, str(target)) == 0
    assert target.read_text(encoding="utf-8").startswith("## gpudoctor ")
    out, err = capsys.readouterr()
    assert out == "" and err.rstrip("\n").endswith(f"; report written to {target}")


def test_no_report_at_all_is_a_usage_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"gpudoctor: error: no report found in {tmp_path} (a directory is searched for *.json "
        "files)\n")
    assert run([str(tmp_path / "gone.json")]) == 2  # a path that is not there is none either
    assert capsys.readouterr().err.startswith("gpudoctor: error: no report found in ")

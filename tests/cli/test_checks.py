"""`gpudoctor.cli.checks`: the catalogue of checks and one check's documentation, each check
as the registry holds it; a selector naming none is a usage error. (The command's contract
through the CLI, and docs/checks.md kept current: tests/cli/test_contract.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from gpudoctor.checks import REGISTRY
from gpudoctor.cli import checks as command
from gpudoctor.cli.checks import check_docs
from gpudoctor.renderers.catalog import catalog_markdown, catalog_text, check_page
from gpudoctor.renderers.interface import OutputFormat


def run(selectors: list[str] | None, fmt: OutputFormat, output: str = "-") -> None:
    with pytest.raises(typer.Exit) as e:
        command.checks(selectors, fmt, output)
    assert e.value.exit_code == 0


def test_check_docs_are_the_registrys_checks() -> None:
    docs = check_docs()
    assert [d.id for d in docs] == [c.id for c in REGISTRY]
    gd404 = next(c for c in REGISTRY if c.id == "GD404")
    (d,) = check_docs(["gpu-arch-in-torch-build"])
    assert (d.id, d.slug, d.title, d.layer, d.severity, d.needs, d.doc) == (
        "GD404", gd404.slug, gd404.title, gd404.layer.heading, gd404.severity.name.lower(),
        gd404.needs, gd404.doc)
    assert [d.id for d in check_docs(["cudnn"])] == [c.id for c in REGISTRY
                                                    if c.layer.value == "cudnn"]


def test_a_selector_naming_no_check_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as e:
        check_docs(["GD999"])
    assert e.value.exit_code == 2
    assert capsys.readouterr().err.startswith("gpudoctor: error: 'GD999': no such check")


def test_the_catalogue_and_the_pages(capsys: pytest.CaptureFixture[str]) -> None:
    run(None, OutputFormat.TEXT)
    assert capsys.readouterr().out == catalog_text(check_docs())
    run(["GD404", "GD101"], OutputFormat.TEXT)
    (gd101,), (gd404,) = check_docs(["GD101"]), check_docs(["GD404"])
    assert capsys.readouterr().out == check_page(gd101) + "\n" + check_page(gd404)
    run(["GD404"], OutputFormat.JSON)
    data = json.loads(capsys.readouterr().out)
    assert json.dumps(data).count('"GD404"') >= 1 and '"GD101"' not in json.dumps(data)


def test_markdown_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "checks.md"
    run(None, OutputFormat.MARKDOWN, str(target))
    assert target.read_text(encoding="utf-8") == catalog_markdown(check_docs())
    assert capsys.readouterr() == ("", "")

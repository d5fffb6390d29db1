"""`gpudoctor.cli.options`: the options several commands share. `--format` and
GPUDOCTOR_FORMAT resolved against the formats a command writes (anything else a one-line usage
error naming them), the bound of every seconds option, NO_COLOR, and the consoles reports are
rendered for. (Each command's options through the CLI: tests/cli/test_contract.py.)"""

from __future__ import annotations

import math

import pytest
import typer

from gpudoctor.cli import options
from gpudoctor.cli.options import (
    DOCUMENT_FORMATS,
    FORMAT_ENV,
    REPORT_FORMATS,
    TEXT_JSON,
    format_option,
    resolve_format,
    seconds,
)
from gpudoctor.renderers.interface import OutputFormat


def usage_error(capsys: pytest.CaptureFixture[str], call: object) -> str:
    """The one stderr line of a usage error (exit 2) that `call()` raises."""
    with pytest.raises(typer.Exit) as e:
        call()  # type: ignore[operator]
    assert e.value.exit_code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_each_kind_of_command_writes_its_formats_text_first() -> None:
    assert tuple(OutputFormat) == REPORT_FORMATS
    assert DOCUMENT_FORMATS == (OutputFormat.TEXT, OutputFormat.JSON, OutputFormat.MARKDOWN)
    assert TEXT_JSON == (OutputFormat.TEXT, OutputFormat.JSON)


def test_format_given_on_the_command_line(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(FORMAT_ENV, "markdown")  # the option wins over the variable
    assert resolve_format(OutputFormat.JSON, TEXT_JSON) is OutputFormat.JSON
    line = usage_error(capsys, lambda: resolve_format(OutputFormat.JUNIT, TEXT_JSON))
    assert line == ("gpudoctor: error: invalid value for --format: 'junit' is not a format this "
                    "command writes (text, json)")


def test_the_option_type_takes_any_case_and_refuses_the_rest(
        capsys: pytest.CaptureFixture[str]) -> None:
    choice = format_option(TEXT_JSON).click_type
    assert list(choice.choices) == list(TEXT_JSON)
    assert choice.convert(" JSON ", None, None) is OutputFormat.JSON
    assert choice.convert(OutputFormat.TEXT, None, None) is OutputFormat.TEXT
    assert usage_error(capsys, lambda: choice.convert("yaml", None, None)) == (
        "gpudoctor: error: invalid value for --format: 'yaml' is not a format (text, json)")
    assert usage_error(capsys, lambda: choice.convert("markdown", None, None)).endswith(
        "'markdown' is not a format this command writes (text, json)")


@pytest.mark.parametrize(("value", "supported", "expected"), [
    (None, TEXT_JSON, OutputFormat.TEXT),
    ("", TEXT_JSON, OutputFormat.TEXT),
    ("json", TEXT_JSON, OutputFormat.JSON),
    (" JSON ", TEXT_JSON, OutputFormat.JSON),
    ("junit", TEXT_JSON, OutputFormat.TEXT),  # a format only other commands write: ignored
    ("junit", REPORT_FORMATS, OutputFormat.JUNIT),
    ("markdown", DOCUMENT_FORMATS, OutputFormat.MARKDOWN),
])
def test_the_variable_serves_every_command_that_writes_its_format(
        monkeypatch: pytest.MonkeyPatch, value: str | None,
        supported: tuple[OutputFormat, ...], expected: OutputFormat) -> None:
    if value is None:
        monkeypatch.delenv(FORMAT_ENV, raising=False)
    else:
        monkeypatch.setenv(FORMAT_ENV, value)
    assert resolve_format(None, supported) is expected


def test_a_variable_naming_no_format_is_a_usage_error(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(FORMAT_ENV, "YAML\n")
    assert usage_error(capsys, lambda: resolve_format(None, TEXT_JSON)) == (
        f"gpudoctor: error: {FORMAT_ENV}='yaml' is not a format "
        f"({', '.join(f.value for f in OutputFormat)})")


@pytest.mark.parametrize("value", [None, 0.001, 1.0, 60.0, options.MAX_SECONDS])
def test_seconds_in_bounds(value: float | None) -> None:
    assert seconds(value) == value


@pytest.mark.parametrize("value", [0.0, -1.0, math.inf, -math.inf, math.nan,
                                   options.MAX_SECONDS + 1, 1e300])
def test_seconds_out_of_bounds(value: float) -> None:
    with pytest.raises(typer.BadParameter, match="is not a number of seconds above 0 and at "
                                                 "most 86400"):
        seconds(value)


def test_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert options.no_color() is False
    monkeypatch.setenv("NO_COLOR", "")
    assert options.no_color() is False  # set to nothing: not set (no-color.org)
    monkeypatch.setenv("NO_COLOR", "1")
    assert options.no_color() is True


def test_consoles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report is rendered into memory (the CLI's one writer writes it): for a file at 100
    columns without colour; for stdout at its width when a terminal or COLUMNS says, else 100."""
    monkeypatch.delenv("COLUMNS", raising=False)
    f = options.file_console()
    assert (f.width, f.color_system, f.is_terminal) == (100, None, False)
    piped = options.stdout_console()  # pytest's stdout is no terminal
    assert piped.width == 100 and not piped.is_terminal
    monkeypatch.setenv("COLUMNS", "57")
    assert options.stdout_console().width == 57
    assert options.report_console("-").width == 57
    assert options.report_console("report.txt").width == 100
    for console in (f, piped, options.report_console("-")):
        console.print("[red]x[/red]")
        assert console.file.getvalue().endswith("[red]x[/red]\n")  # type: ignore[attr-defined]
    assert options.stderr_console().stderr

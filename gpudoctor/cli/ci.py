"""`check` in a CI job or on a node: `--require`, GitHub Actions annotations and job summary,
and node-problem-detector's status line (`--npd`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from gpudoctor.cli.common import fail_usage
from gpudoctor.cli.output import OutputError, say, write_output
from gpudoctor.exitcodes import ExitCode
from gpudoctor.policy import exit_code, problems
from gpudoctor.requirements import Requirement, RequirementError, parse_requirements

if TYPE_CHECKING:
    from gpudoctor.model import Report

RequireOption = Annotated[
    list[str] | None,
    typer.Option("--require", metavar="REQ", envvar="GPUDOCTOR_REQUIRE",
                 help="fail unless this machine meets it: gpus>=8, driver>=535, cuda>=12.1 "
                 "(the driver's), cudnn>=9, torch>=2.4, arch>=sm_80, gpu-memory>=40GiB "
                 "(operators >= > == != <= <; repeat or comma-separate)", show_default=False),
]
NpdOption = Annotated[
    bool,
    typer.Option("--npd", help="be a node-problem-detector custom plugin: one status line on "
                 "stdout, exit 0 OK, 1 problem, 2 unknown (the report only to -o FILE)"),
]


def requirements(values: list[str] | None) -> tuple[Requirement, ...]:
    """The `--require` values (and GPUDOCTOR_REQUIRE's), parsed; a malformed one is a usage
    error naming it."""
    try:
        return parse_requirements(values or ())
    except RequirementError as e:
        raise fail_usage(str(e)) from None


def with_required(selectors: list[str], reqs: tuple[Requirement, ...]) -> list[str]:
    """A selection (`check host`) plus the checks of the kinds required: a requirement is
    always judged. No selection means every check, those included."""
    from gpudoctor.checks.requirements import KIND_CHECKS

    if not selectors:
        return selectors
    return [*selectors, *dict.fromkeys(KIND_CHECKS[r.kind] for r in reqs)]


def github_actions(report: Report) -> None:
    """Under GitHub Actions (GITHUB_ACTIONS=true): the findings as workflow commands on
    stderr, and the Markdown report appended to $GITHUB_STEP_SUMMARY (a path that cannot be
    written is a warning: the check's verdict stands)."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    from gpudoctor.cli.output import announce
    from gpudoctor.renderers.github import step_summary, workflow_commands

    announce(workflow_commands(report))
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:  # appended: other steps wrote there too
            f.write(step_summary(report))
    except OSError as e:
        say(f"gpudoctor: warning: cannot append the job summary to {path}: "
            f"{e.strerror or e}")


def npd(report: Report, strict: bool) -> NoReturn:
    """The node-problem-detector plugin's answer: one line on stdout, exit 0 / 1."""
    from gpudoctor.renderers.npd import status_line

    code = exit_code(report, strict)
    try:
        write_output(status_line(report, problems(report.results, strict)) + "\n", "-")
    except OutputError:
        raise typer.Exit(ExitCode.USAGE) from None  # NPD: Unknown
    raise typer.Exit(code)

"""GitHub Actions: workflow commands that annotate the run, and the job summary.

`::error title=…::message` (a failure), `::warning` (a warning) and `::notice` (a note) show
on the run's page and in the pull request. The runner reads workflow commands from a step's
stdout and stderr alike; gpudoctor writes them to stderr, so that `--format json` on stdout
stays JSON. Data is escaped as GitHub's toolkit does: `%` → `%25`, CR → `%0D`, LF → `%0A`;
property values also `:` → `%3A` and `,` → `%2C`
(https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions).
The summary is the Markdown report, appended to `$GITHUB_STEP_SUMMARY`.
"""

from __future__ import annotations

from gpudoctor.model import Report, Result
from gpudoctor.policy import Verdict, verdict
from gpudoctor.renderers.interface import clean
from gpudoctor.renderers.markdown import MarkdownRenderer


def escape_data(text: str) -> str:
    """A workflow command's message."""
    return clean(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A workflow command's property value (`title=`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command_of(r: Result) -> str | None:
    """error, warning or notice for a finding worth showing; None for a pass or a skip."""
    return _COMMANDS.get(verdict(r))


_COMMANDS = {Verdict.FAILURE: "error", Verdict.WARNING: "warning", Verdict.NOTE: "notice"}


def workflow_commands(report: Report) -> str:
    """One workflow command per failure, warning and note: title `GD101 driver-present`,
    message the check's title, its finding and the fix."""
    lines = []
    for r in report.results:
        command = command_of(r)
        if command is None:
            continue
        f = r.finding
        message = f"{r.title}: {f.message}" + (f"\nfix: {f.fix}" if f.fix else "")
        lines.append(f"::{command} title={escape_property(f'{r.check_id} {r.slug}')}::"
                     f"{escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def step_summary(report: Report) -> str:
    """The Markdown appended to the job summary."""
    return MarkdownRenderer().render(report) + "\n"

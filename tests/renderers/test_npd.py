"""`gpudoctor.renderers.npd`: the one status line of a node-problem-detector plugin, cut to
NPD's 80 bytes. (`check --npd` through the real CLI: tests/ci/test_npd.py.)"""

from __future__ import annotations

import dataclasses

from gpudoctor.model import Status
from gpudoctor.renderers.npd import MAX_BYTES, fit_bytes, status_line
from tests.renderers.render_kit import report


def test_fit_bytes_cuts_at_a_character() -> None:
    text = "≤" * 100
    cut = fit_bytes(text)
    assert len(cut.encode()) <= MAX_BYTES and cut.endswith("…")
    assert fit_bytes("short") == "short"


def test_status_line_names_the_first_problem_and_counts_the_rest() -> None:
    r = report("pascal-gpu-cu130-torch")
    problems = tuple(x for x in r.results if x.finding.status is Status.FAIL)
    assert len(problems) > 1
    line = status_line(r, problems)
    assert line.startswith(f"{problems[0].check_id} ")
    assert line.endswith(f" (+{len(problems) - 1} more)")
    assert len(line.encode()) <= MAX_BYTES
    assert status_line(r, problems[:1]).endswith(("…", problems[0].finding.message[-5:]))
    assert "more)" not in status_line(r, problems[:1])
    assert status_line(r, ()).startswith("OK: ")


def test_a_message_with_line_breaks_stays_one_line() -> None:
    r = report("no-driver-cuda-torch")
    first = next(x for x in r.results if x.finding.status is Status.FAIL)
    evil = dataclasses.replace(first, finding=dataclasses.replace(
        first.finding, message="line one\nFAKE: second line\r\x1b[2J " + "≤" * 80))
    line = status_line(r, (evil,))
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert line.startswith(f"{first.check_id} line one\\nFAKE: second line\\r\\x1b[2J ")
    assert len(line.encode()) <= MAX_BYTES and line.endswith("…")

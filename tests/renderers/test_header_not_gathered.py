"""The header's three "CUDA versions" lines when a selector skipped their probes: a fact that
was not gathered says so ("not gathered (no selected check reads it)"), never "no driver" or
"none found"; a real absence still reads as one. Through the real CLI (its own process, this
machine's probes) and through a saved report read back; the rows on hand-built facts are
`cuda_versions`'s unit tests (tests/renderers/test_interface.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner import gpudoctor

from tests.renderers.render_kit import DRIVER, SHOWN, TOOLKIT, TORCH

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


def header(text: str) -> dict[str, str]:
    """The text report's header rows, label → value (they come before the first blank line)."""
    rows = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        for label in (DRIVER, TORCH, TOOLKIT):
            if line.startswith(label):
                rows[label] = line[len(label):].strip()
    assert set(rows) == {DRIVER, TORCH, TOOLKIT}, text
    return rows


@pytest.mark.slow
@pytest.mark.parametrize(("selector", "skipped"), [
    ("GD302", (DRIVER, TORCH, TOOLKIT)),  # reads only the cuDNN installs
    ("GD201", (DRIVER, TORCH)),  # the toolkit alone
    ("host", (TORCH, TOOLKIT)),  # the host facts and NVML
])
def test_cli_header_says_not_gathered(selector: str, skipped: tuple[str, ...]) -> None:
    p = gpudoctor("check", selector)
    assert p.returncode in (0, 1), p.stderr
    rows = header(p.stdout)
    for label in skipped:
        assert rows[label] == SHOWN, (label, rows)
    for label in set(rows) - set(skipped):  # gathered: this machine's own answer
        assert "not gathered" not in rows[label], (label, rows)


@pytest.mark.slow
def test_cli_markdown_header_says_not_gathered() -> None:
    p = gpudoctor("check", "GD302", "--format", "markdown")
    assert p.returncode in (0, 1), p.stderr
    for label in (DRIVER, TORCH, TOOLKIT):
        assert f"- **{label}**: {SHOWN}" in p.stdout, p.stdout


@pytest.mark.slow
def test_json_keeps_the_skipped_facts_and_a_read_back_report_says_not_gathered(
        tmp_path: Path) -> None:
    """`check GD302 --format json` records the facts it skipped as such; judging that report
    later (every check) shows them as not gathered, not as a machine without a driver."""
    p = gpudoctor("check", "GD302", "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    env = json.loads(p.stdout)["environment"]
    for name in ("nvml", "libcuda", "torch", "toolkits"):
        assert env[name]["unavailable"] == "skipped", (name, env[name])
    saved = tmp_path / "gd302.json"
    saved.write_text(p.stdout)
    again = gpudoctor("check", "--from-snapshot", str(saved))
    assert again.returncode in (0, 1), again.stderr
    rows = header(again.stdout)
    assert rows == {DRIVER: SHOWN, TORCH: SHOWN, TOOLKIT: SHOWN}, rows

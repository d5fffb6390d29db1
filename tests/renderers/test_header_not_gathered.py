"""The header's three "CUDA versions" lines when a selector skipped their probes: a fact that
was not gathered says so ("not gathered (no selected check reads it)"), never "no driver" or
"none found"; a real absence still reads as one. Through the real CLI (its own process, this
machine's probes), through a saved report read back, and on hand-built facts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from runner import gpudoctor

from gpudoctor.model import Environment, Reason, ToolkitsFacts, Unavailable
from gpudoctor.probes.gather import NOT_GATHERED
from gpudoctor.renderers.interface import cuda_versions
from gpudoctor.snapshot import loads

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

REPO_ROOT = Path(__file__).resolve().parents[2]
SHOWN = "not gathered (no selected check reads it)"
DRIVER, TORCH, TOOLKIT = ("Driver (max CUDA it runs)", "PyTorch (CUDA it was built with)",
                          "CUDA toolkit (nvcc, for building)")




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


def h100() -> Environment:
    """A recorded healthy machine: driver 580.65.06, torch 2.13.0+cu130, toolkit 13.0."""
    return loads((REPO_ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json").read_text())


def rows_of(env: Environment) -> dict[str, str]:
    return dict(cuda_versions(env))


def test_not_gathered_facts() -> None:
    env = dataclasses.replace(h100(), nvml=NOT_GATHERED, libcuda=NOT_GATHERED,
                              torch=NOT_GATHERED, toolkits=NOT_GATHERED)
    assert rows_of(env) == {DRIVER: SHOWN, TORCH: SHOWN, TOOLKIT: SHOWN}


def test_real_absences_unchanged() -> None:
    no_nvml = Unavailable(Reason.NOT_INSTALLED, "libnvidia-ml.so.1 was not found")
    no_libcuda = Unavailable(Reason.NOT_INSTALLED, "libcuda.so.1 was not found")
    no_cuda = Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found")
    rows = rows_of(dataclasses.replace(h100(), nvml=no_nvml, libcuda=no_libcuda,
                                       toolkits=no_cuda))
    assert rows[DRIVER] == f"no driver ({no_nvml.message})"
    assert rows[TOOLKIT] == "none found"
    recorded = h100().toolkits
    assert isinstance(recorded, ToolkitsFacts)
    no_in_use = ToolkitsFacts(tuple(dataclasses.replace(t, in_use=False)
                                for t in recorded.toolkits))
    assert rows_of(dataclasses.replace(h100(), toolkits=no_in_use))[TOOLKIT] == "none found"


def test_driver_from_libcuda_when_only_nvml_was_skipped() -> None:
    """A selector that reads libcuda but not NVML: libcuda's answer is the driver line."""
    no_libcuda = Unavailable(Reason.NOT_INSTALLED, "libcuda.so.1 was not found")
    env = dataclasses.replace(h100(), nvml=NOT_GATHERED, libcuda=no_libcuda)
    assert rows_of(env)[DRIVER] == f"no driver ({no_libcuda.message})"
    present = dataclasses.replace(h100(), nvml=NOT_GATHERED)  # libcuda answered
    assert rows_of(present)[DRIVER].startswith("580.65.06")


def test_other_unprobed_wording_kept() -> None:
    """--no-torch and a pasted report's missing facts keep their own words."""
    no_torch = Unavailable(Reason.SKIPPED, "PyTorch was not probed (--no-torch)")
    assert rows_of(dataclasses.replace(h100(), torch=no_torch))[TORCH] == no_torch.message
    said = Unavailable(Reason.NOT_REPORTED, "the report does not state the driver")
    env = dataclasses.replace(h100(), nvml=said, libcuda=said)
    assert rows_of(env)[DRIVER] == said.message

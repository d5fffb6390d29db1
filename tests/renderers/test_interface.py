"""`gpudoctor.renderers.interface`: what every renderer shares. `clean` escapes every control
character and line break a string may carry; `cuda_versions`, the header's three "CUDA
versions" rows, says when a fact was not gathered (a selector skipped its probe) and keeps a
real absence's words. (The same header through the real CLI:
tests/renderers/test_header_not_gathered.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.model import Environment, Reason, ToolkitsFacts, Unavailable
from gpudoctor.probes.gather import NOT_GATHERED
from gpudoctor.renderers.interface import clean, cuda_versions
from gpudoctor.reports.read import read_reports
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import DRIVER, SHOWN, TOOLKIT, TORCH

REPO_ROOT = Path(__file__).resolve().parents[2]
SEPARATORS = {"\n": "\\n", "\r": "\\r", "\v": "\\x0b", "\f": "\\x0c", "\x1c": "\\x1c",
              "\x1d": "\\x1d", "\x1e": "\\x1e", "\x85": "\\x85", "\u2028": "\\u2028",
              "\u2029": "\\u2029"}


@pytest.mark.parametrize(("sep", "escaped"), SEPARATORS.items(), ids=[
    "lf", "cr", "vt", "ff", "fs", "gs", "rs", "nel", "ls", "ps"])
def test_clean_escapes_every_line_break(sep: str, escaped: str) -> None:
    assert clean(f"a{sep}b") == f"a{escaped}b"
    kept = clean(f"a{sep}b", newlines=True)
    assert kept == ("a\nb" if sep == "\n" else f"a{escaped}b")
    assert len(kept.splitlines()) == (2 if sep == "\n" else 1)


def test_clean_escapes_every_control_character() -> None:
    assert clean("a\x1b[2Jb\x07c\rd\x00e\x9bf\u202eg\th") == (
        "a\\x1b[2Jb\\x07c\\rd\\x00e\\x9bf\\u202eg\\th")
    assert clean("one\ntwo") == "one\\ntwo"
    assert clean("one\ntwo", newlines=True) == "one\ntwo"
    assert clean("ordinary ✓ text, ≤ 13.0") == "ordinary ✓ text, ≤ 13.0"


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


def test_a_release_named_without_its_build_is_neither_cpu_only_nor_a_failed_import() -> None:
    # round 21's r45-030 (NVIDIA/TensorRT's template): "PyTorch Version: 1.8.1", no tag, no
    # CUDA: the header printed "CPU-only build (no CUDA) — import failed"
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round21" / "reports-T" / \
        "r45-030.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    torch = dict(cuda_versions(env))[TORCH]
    assert torch.startswith("1.8.1 (whether torch 1.8.1 is a CUDA build is not in the report")
    assert "CPU-only" not in torch and "import failed" not in torch

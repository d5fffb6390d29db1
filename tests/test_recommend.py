"""`gpudoctor recommend` through the CLI, on the recorded machines (the pick itself, of
gpudoctor.compat.recommend, is tested in tests/compat/test_recommend.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner import invoke

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures" / "envs"


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_cli_on_every_snapshot(path: Path) -> None:
    result = invoke("recommend", "--from-snapshot", str(path))
    assert result.exit_code in (0, 1), result.output
    data = json.loads(invoke("recommend", "--from-snapshot", str(path), "-f",
                             "json").stdout)
    assert data["schema_version"] == 1
    assert result.exit_code == (0 if data["torch"] else 1)
    if data["torch"]:
        assert data["torch"]["command"] in result.stdout


def test_cli_pascal_text() -> None:
    result = invoke("recommend", "--from-snapshot",
                    str(FIXTURES / "pascal-gpu-cu130-torch.json"))
    assert result.exit_code == 0
    assert "whl/cu126" in result.stdout and "to keep torch 2.13.0" in result.stdout
    assert "does not include sm_61" in result.stdout


def test_cli_rejects_markdown_and_bad_snapshot(tmp_path: Path) -> None:
    snap = str(FIXTURES / "h100-healthy.json")
    assert invoke("recommend", "--from-snapshot", snap, "-f", "junit").exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert invoke("recommend", "--from-snapshot", str(bad)).exit_code == 2


def test_cli_no_driver_text_names_the_driver_needed() -> None:
    result = invoke("recommend", "--from-snapshot",
                    str(FIXTURES / "no-driver-cuda-torch.json"))
    assert result.exit_code == 0, result.output
    assert "it needs an NVIDIA driver ≥" in result.stdout and "GD101" in result.stdout

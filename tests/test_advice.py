"""Tests left here by the move of gpudoctor.compat.advice's to tests/compat/test_advice.py
(issue 22 item 4): the torch probe reading companions (probes/pytorch.py) and GD402's fix for
a shadowing torch folder (checks), for their own shares to file."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import TorchFacts, TorchStatic
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.pytorch import probe_torch
from gpudoctor.snapshot import dumps, loads


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_probe_reads_companions_from_metadata(tmp_path: Path) -> None:
    """The real child, under this interpreter, reads torchvision's dist-info beside a torch
    package (one that does not import: the static facts come first, and survive)."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('not a real torch')\n")
    info = tmp_path / "torchvision-0.20.1+cu124.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\n"
                                   "Version: 0.20.1+cu124\n")
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    facts = probe_torch(Deps(environ={**environ, "PYTHONPATH": str(tmp_path)}))
    assert isinstance(facts, TorchFacts) and isinstance(facts.static, TorchStatic)
    assert ("torchvision", "0.20.1+cu124") in facts.static.companions
    assert all(name in ("torchvision", "torchaudio") for name, _ in facts.static.companions)
    env = dataclasses.replace(B.env(), torch=facts)
    assert loads(dumps(env)) == env  # the new field round-trips through a snapshot


def test_a_shadowing_torch_folder_is_the_fix_not_a_reinstall(tables: Tables) -> None:
    """torch imports from ./torch, a CPU-only source checkout, while pip installed a CUDA
    build beneath it: no install can help until the folder is out of the way (GD402 once
    offered a reinstall)."""
    t = B.torch("2.5.1+cpu", None)
    assert isinstance(t.static, TorchStatic)
    static = dataclasses.replace(
        t.static, location="/src/pytorch/torch", cwd="/src/pytorch",
        distributions=(("2.5.1+cu124", "/venv/lib/python3.11/site-packages/torch"),))
    env = B.env(torch=dataclasses.replace(t, static=static))
    fix = {r.check_id: r.finding for r in run_checks(env, tables).results}["GD402"].fix or ""
    assert fix.startswith("cd to another directory"), fix
    assert "reinstalling torch cannot help" in fix

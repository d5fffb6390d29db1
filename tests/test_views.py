"""gpudoctor.views: the Environment's read-only views, a leaf below checks and compat."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor import views as V
from gpudoctor.model import Reason, TorchFacts, TorchRuntime, TorchStatic, Unavailable
from gpudoctor.snapshot import loads

ROOT = Path(__file__).resolve().parent.parent
ENVS = ROOT / "tests" / "fixtures" / "envs"

_LOADED = """
import json, sys
import {module}
print(json.dumps(sorted(m for m in sys.modules if m.startswith("gpudoctor."))))
"""


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("module", ["gpudoctor.views", "gpudoctor.compat.advice",
                                    "gpudoctor.compat.recommend", "gpudoctor.compat.pick",
                                    "gpudoctor.diff"])
def test_reading_views_loads_no_check(module: str) -> None:
    """The views (and what reads them: the advice, recommend, diff) no longer load the check
    registry: before, `checks/facts.py` lived inside checks, and importing it ran
    checks/__init__.py with its 18 check modules (21 gpudoctor.checks.* modules loaded)."""
    p = subprocess.run([sys.executable, "-c", _LOADED.format(module=module)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(p.stdout)
    assert [m for m in loaded if m.startswith("gpudoctor.checks")] == []
    if module == "gpudoctor.views":  # the leaf: the model and the version parsing only
        assert {m for m in loaded if not m.startswith(("gpudoctor.model", "gpudoctor.versions",
                                                        "gpudoctor.requirements"))} == {
            "gpudoctor.views"}


def test_views_read_a_recorded_machine() -> None:
    env = loads((ENVS / "h100-healthy.json").read_text())
    assert V.driver_version(env) == "580.65.06"
    assert V.reported_driver_cuda(env) == ("13.0", "NVML")
    assert V.driver_present(env) and not V.driver_unknown(env)
    assert [g.name for g in V.gpus(env)] == ["NVIDIA H100 80GB HBM3"]
    assert V.torch_cuda(env) == "13.0" and V.torch_name(env) == "torch 2.13.0+cu130"
    assert V.toolkit_version(env) == "13.0"
    assert V.torch_missing(env) is None


def test_versions() -> None:
    assert V.version("2.5.1+cu124") is not None and V.version("x.y") is None
    assert V.version("1" * 5000) is None  # past int()'s digit limit: not a version
    assert V.major("12.4") == 12
    assert V.same_release("2.5.1", "2.5.1+cu124") and not V.same_release("2.5.1+cpu",
                                                                          "2.5.1+cu124")


def torch_at(file: str, distributions: tuple[tuple[str, str], ...], cwd: str) -> TorchFacts:
    env = loads((ENVS / "h100-healthy.json").read_text())
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic)
    assert isinstance(t.runtime, TorchRuntime)
    static = dataclasses.replace(t.static, distributions=distributions, cwd=cwd,
                                 location=str(Path(file).parent))
    return dataclasses.replace(t, static=static, runtime=dataclasses.replace(t.runtime,
                                                                             file=file))


def test_which_torch_imports() -> None:
    site = "/venv/lib/python3.11/site-packages/torch"
    installed = torch_at(f"{site}/__init__.py", (("2.13.0", site),), "/home/u")
    assert V.imported_dir(installed) == site
    checkout = torch_at("/home/u/torch/__init__.py", (("2.13.0", site),), "/home/u")
    assert V.imported_dir(checkout) == "/home/u/torch"
    assert V.same_dir("/home/u/torch/", "/home/u/x/../torch")
    assert V.installed_version(checkout.static if isinstance(checkout.static, TorchStatic)
                               else None) == "2.13.0"


def test_reason_of() -> None:
    assert V.reason_of(Unavailable(Reason.NOT_INSTALLED, "no driver")) == "no driver"
    assert V.reason_of("x") == "not available"


def test_why_no_torch_cuda_says_which_of_the_reasons() -> None:
    """GD103 and GD203 skip with it: on the H200 (tests/fixtures/envs/h200-x1.json) under
    `check --no-torch` they said "PyTorch is not a CUDA build (or not installed)" of a CUDA
    build that was only not probed."""
    env = loads((ENVS / "h200-x1.json").read_text())
    assert V.torch_cuda(env) == "13.0"
    not_probed = dataclasses.replace(env, torch=Unavailable(
        Reason.SKIPPED, "PyTorch was not probed (--no-torch)"))
    assert V.why_no_torch_cuda(not_probed) == "PyTorch was not probed (--no-torch)"
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.runtime, TorchRuntime)
    cpu = dataclasses.replace(env, torch=dataclasses.replace(t, runtime=dataclasses.replace(
        t.runtime, cuda=None, version="2.11.0+cpu")))
    assert V.why_no_torch_cuda(cpu) == "torch 2.11.0+cpu is not a CUDA build"

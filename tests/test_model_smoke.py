"""`gpudoctor.model_smoke`: the smoke test's measurements as plain facts; a configuration trained
only when its losses are finite and fall and its gradients are finite and non-zero, and a model
run finds each configuration by name. A leaf: the standard library only."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import gpudoctor.model as model
import gpudoctor.model_smoke as model_smoke
from gpudoctor.model_smoke import ModelRun, RunError
from tests.smoke_kit import report, run

NAN, INF = float("nan"), float("inf")


def test_a_healthy_run_trained() -> None:
    assert run("cudnn").training_ok


@pytest.mark.parametrize("change", [
    {"losses": (2.30, NAN, 2.27)},
    {"losses": (INF, 2.29, 2.27)},  # falling, but from infinity
    {"losses": (2.30, 2.29, -INF)},
    {"losses": (2.30, 2.31)},  # rising
    {"losses": (2.30, 2.30)},  # flat
    {"losses": (2.30,)},  # one step says nothing of learning
    {"losses": ()},
    {"timed_losses_finite": False},
    {"nonfinite_grads": ("conv1.weight",)},
    {"zero_grads": ("fc3.bias",)},
], ids=["nan-loss", "inf-loss", "minus-inf-loss", "rising", "flat", "one-step", "no-steps",
        "timed-nonfinite", "nonfinite-grad", "zero-grad"])
def test_what_did_not_train(change: dict[str, object]) -> None:
    assert not dataclasses.replace(run("cudnn"), **change).training_ok


def test_a_model_run_finds_each_configuration_by_name() -> None:
    smoke = report()
    lenet = smoke.models[0]
    assert [c.name for c in lenet.configs] == ["native", "cudnn", "cudnn-benchmark"]
    for c in lenet.configs:
        assert lenet.config(c.name) is c
    assert lenet.config("cpu") is None
    stopped = ModelRun("resnet18", 64, (64, 3, 224, 224), 11689512, (),
                       RunError("resnet18 training", "OutOfMemoryError: CUDA out of memory.",
                                oom=True))
    assert stopped.config("cudnn") is None


def test_the_facts_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        run("cudnn").losses = (1.0,)  # type: ignore[misc]


def test_a_leaf_of_the_standard_library_reexported_by_the_model() -> None:
    tree = ast.parse(Path(model_smoke.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("gpudoctor")]
    assert model.SmokeRun is model_smoke.SmokeRun
    assert model.DistributedRun is model_smoke.DistributedRun

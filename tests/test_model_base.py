"""`gpudoctor.model_base`, the model's leaf: why a fact is missing (`Reason`, `Unavailable`).
The reasons are written into snapshots and JSON reports by value, so their values are a contract:
every one a recorded snapshot holds still reads back."""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpudoctor.model as model
import gpudoctor.model_base as model_base
from gpudoctor.model_base import NOT_RECORDED, Reason, StrEnum, Unavailable

ENVS = Path(__file__).resolve().parent / "fixtures" / "envs"


def test_a_str_enum_prints_and_formats_as_its_value() -> None:
    class Colour(StrEnum):
        RED = "red"

    assert str(Colour.RED) == f"{Colour.RED}" == "red" == Colour.RED
    assert str(Reason.DRIVER_NOT_LOADED) == "driver-not-loaded"
    assert json.dumps({"reason": Reason.TIMEOUT}) == '{"reason": "timeout"}'


def test_reasons_are_distinct_kebab_case_values() -> None:
    values = [r.value for r in Reason]
    assert len(set(values)) == len(values)
    assert all(v == v.lower() and " " not in v and "_" not in v for v in values)


def _reasons(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        if isinstance(data.get("unavailable"), str) and "message" in data:  # snapshot.to_data
            yield data["unavailable"]
        for value in data.values():
            yield from _reasons(value)
    elif isinstance(data, list):
        for value in data:
            yield from _reasons(value)


def test_every_reason_a_recorded_snapshot_holds_is_one() -> None:
    found = {r for path in ENVS.glob("*.json")
             for r in _reasons(json.loads(path.read_text(encoding="utf-8")))}
    assert len(found) >= 3, found  # the fixtures were read
    assert {Reason(r) for r in found} <= set(Reason)  # Reason(r) raises for a value it lost


def test_unavailable_is_a_frozen_value() -> None:
    a = Unavailable(Reason.NOT_INSTALLED, "PyTorch is not installed")
    assert a == Unavailable(Reason.NOT_INSTALLED, "PyTorch is not installed", None)
    assert a != dataclasses.replace(a, detail="ModuleNotFoundError: No module named 'torch'")
    assert hash(a) == hash(Unavailable(Reason.NOT_INSTALLED, "PyTorch is not installed"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.message = "x"  # type: ignore[misc]


def test_not_recorded_says_why_a_newer_fact_is_missing() -> None:
    assert NOT_RECORDED.reason is Reason.NOT_SUPPORTED
    assert "older gpudoctor" in NOT_RECORDED.message


def test_a_leaf_reexported_by_the_model() -> None:
    tree = ast.parse(Path(model_base.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("gpudoctor")]
    assert (model.Reason, model.Unavailable, model.NOT_RECORDED) == (
        Reason, Unavailable, NOT_RECORDED)

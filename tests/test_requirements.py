"""`gpudoctor.requirements`: parsing `check --require` values (every kind and operator, malformed
ones named), comparing at the precision given, and which requirements need a GPU. The checks
that judge them (GD601-GD607) are tested with the checks."""

from __future__ import annotations

import pytest

from gpudoctor.requirements import (
    Requirement,
    RequirementError,
    format_bytes,
    holds,
    needs_gpu,
    parse_requirement,
    parse_requirements,
    target,
    version_tuple,
)

# the mark these tests had in tests/ci/test_requirements.py (whose CLI tests start gpudoctor)
pytestmark = pytest.mark.subprocess


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(("text", "kind", "op", "value"), [
    ("gpus>=8", "gpus", ">=", "8"), (" driver >= 535 ", "driver", ">=", "535"),
    ("cuda==12.1", "cuda", "==", "12.1"), ("cudnn!=9", "cudnn", "!=", "9"),
    ("torch<2.5", "torch", "<", "2.5"), ("arch>sm_80", "arch", ">", "sm_80"),
    ("ARCH<=9.0", "arch", "<=", "9.0"), ("gpu-memory>=40GiB", "gpu-memory", ">=", "40GiB"),
])
def test_parses_every_kind_and_operator(text: str, kind: str, op: str, value: str) -> None:
    assert parse_requirement(text) == Requirement(kind, op, value)


@pytest.mark.parametrize("text", [
    "gpus", "gpus=8", "gpus>=eight", "gpus>=-1", "vram>=8", "arch>=sm_8x", "arch>=ampere",
    "gpu-memory>=40", "gpu-memory>=40 parsecs", "cuda>=12.x", "driver>=", ">=535",
])
def test_malformed_requirements_name_themselves(text: str) -> None:
    with pytest.raises(RequirementError) as e:
        parse_requirement(text)
    assert repr(text) in str(e.value)


def test_lists_split_on_commas_and_spaces_and_keep_order() -> None:
    reqs = parse_requirements(["gpus>=8,driver >= 535", "cuda>=12.1 gpu-memory >= 40 GiB",
                               "gpus>=8"])
    assert [str(r) for r in reqs] == ["gpus>=8", "driver>=535", "cuda>=12.1",
                                      "gpu-memory>=40GiB"]


def test_versions_compare_at_the_precision_given() -> None:
    assert holds(parse_requirement("driver>=535"), (535, 104, 5))
    assert not holds(parse_requirement("driver>535"), (535, 104, 5))
    assert holds(parse_requirement("cuda==12"), (12, 4))
    assert holds(parse_requirement("cuda>=12.1"), (12, 10))  # numeric, not text, order
    assert not holds(parse_requirement("cuda>=12.1"), (12, 0))
    assert holds(parse_requirement("torch<2.5"), version_tuple("2.4.1+cu121") or ())
    assert holds(parse_requirement("gpu-memory>=40GiB"), 40 * 2**30)
    assert not holds(parse_requirement("gpu-memory>=80GiB"), 81559 * 2**20)  # an H100 80GB
    assert holds(parse_requirement("gpu-memory>=80GB"), 81559 * 2**20)
    assert holds(parse_requirement("arch>=8.0"), (8, 6))
    assert not holds(parse_requirement("arch>=sm_100"), (9, 0))


def test_which_requirements_need_a_gpu() -> None:
    for text in ("driver>=1", "cuda>=1", "arch>=sm_50", "gpu-memory>=1GiB"):
        assert needs_gpu([parse_requirement(text)]) == parse_requirement(text)
    assert needs_gpu(parse_requirements(["gpus>=1"]))
    assert needs_gpu(parse_requirements(["gpus==0", "torch>=2.4", "cudnn>=9"])) is None


# --------------------------------------------------------------------------- values (new)


@pytest.mark.parametrize(("text", "value"), [
    ("gpus>=8", 8), ("arch>=sm_80", (8, 0)), ("arch<9.0", (9, 0)), ("driver>=535.104.05",
                                                                     (535, 104, 5)),
    ("gpu-memory>=40GiB", 40 * 2**30), ("gpu-memory>=1.5 MiB", 3 * 2**19),
    ("gpu-memory>=80GB", 80 * 10**9), ("gpu-memory>=2TiB", 2 * 2**40),
])
def test_target_is_what_a_measurement_is_compared_with(
        text: str, value: int | tuple[int, ...]) -> None:
    assert target(parse_requirements([text])[0]) == value


@pytest.mark.parametrize(("req", "named"), [
    (Requirement("gpus", ">=", "100001"), "whole number of GPUs"),
    (Requirement("arch", ">=", "sm_1000"), "not a compute capability"),
    (Requirement("gpu-memory", ">=", "99999999999TiB"), "more memory than any GPU has"),
    (Requirement("cuda", ">=", "1.2.3.4.5"), "not a version"),
    (Requirement("vram", ">=", "1"), "not a requirement"),
    (Requirement("gpus", "=>", "1"), "not a requirement"),
])
def test_target_refuses_what_no_machine_has(req: Requirement, named: str) -> None:
    """A Requirement built by hand (a snapshot's) is judged by the same limits as one parsed."""
    with pytest.raises(RequirementError, match=named):
        target(req)


def test_duplicates_are_dropped_and_the_first_malformed_one_raises() -> None:
    assert parse_requirements(["gpus>=8", "gpus >= 8", "GPUS>=8"]) == (
        Requirement("gpus", ">=", "8"),)
    with pytest.raises(RequirementError, match="'cuda>=x'"):
        parse_requirements(["gpus>=8, cuda>=x, driver>=y"])


@pytest.mark.parametrize(("text", "parts"), [
    ("2.4.1+cu121", (2, 4, 1)), ("535.104.05", (535, 104, 5)), (" 12.4 ", (12, 4)),
    ("9", (9,)), ("v2.4", None), ("", None), ("1234567890.1", None),
])
def test_version_tuple(text: str, parts: tuple[int, ...] | None) -> None:
    assert version_tuple(text) == parts


def test_a_measurement_that_states_fewer_parts_is_judged_at_those() -> None:
    exact = parse_requirement("cudnn==9.26.0.51")
    assert not holds(exact, (9, 26, 0))  # padded with zeros: 9.26.0.0
    assert holds(exact, (9, 26, 0), stated=3)
    assert not holds(exact, (9, 25, 0), stated=3)


def test_format_bytes() -> None:
    assert format_bytes(42949672960) == "40.0 GiB"
    assert format_bytes(81559 * 2**20) == "79.6 GiB"
    assert format_bytes(0) == "0.0 GiB"

"""The machine wins over the tables (issue 10 item 5): the cuDNN torch was built for comes from
the installed nvidia-cudnn wheel before the PyTorch table; a torch, toolkit or driver newer than
the tables is judged by its CUDA major's family rule, and the message says so.

Hand-built machines (envbuilder) with versions past the bundled tables, e.g. torch
2.16.0+cu139 on driver 590; and the real torch installed here.
"""

from __future__ import annotations

import dataclasses

import pytest

import tests.checks.envbuilder as B
from gpudoctor import views as V
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables, machine
from gpudoctor.compat.advice import torch_advice
from gpudoctor.model import Environment, Finding, Status, TorchFacts, TorchStatic

TABLES = load_tables()
NEWEST = TABLES.newest_cuda(include_unverified=True).version
FUTURE = "2.16.0+cu139"  # a torch, and a CUDA 13.9, past the bundled tables
ARCH = (*B.ARCH_CU130, "sm_103")


def finding(e: Environment, check_id: str) -> Finding:
    checks = tuple(c for c in REGISTRY if c.id == check_id)
    (result,) = run_checks(e, TABLES, checks).results
    return result.finding


def with_wheels(t: TorchFacts, *wheels: tuple[str, str]) -> TorchFacts:
    assert isinstance(t.static, TorchStatic)
    return dataclasses.replace(t, static=dataclasses.replace(t.static, nvidia_wheels=wheels))


def future_machine(driver: str, driver_cuda: int, cudnn: int = 93000,
                   wheels: tuple[tuple[str, str], ...] = (("nvidia-cudnn-cu13", "9.30.0.10"),),
                   torch: str = FUTURE, cuda: str = "13.9") -> Environment:
    t = with_wheels(B.torch(torch, cuda, ("H100",), ARCH, cudnn), *wheels)
    return B.env(nvml=B.nvml(driver, driver_cuda, B.gpu("H100")), torch=t)


def test_the_scenario_is_past_the_tables() -> None:
    assert TABLES.torch_release("2.16.0") is None
    assert TABLES.cuda_min_driver("13.9") is None
    assert TABLES.cuda_not_held("13.9") == f"newer than the bundled tables (newest known: {NEWEST})"
    fam = TABLES.cuda_family("13.9")
    assert fam is not None and fam.min_driver_linux == "580.65.06"


def test_gd103_judges_a_newer_cuda_by_the_family_rule() -> None:
    f = finding(future_machine("590.44.01", 13010), "GD103")
    assert f.status is Status.WARN, f
    assert (f"CUDA 13.9 is newer than the bundled tables (newest known: {NEWEST}): judged by "
            "the CUDA 13 family rule (≥ 580.65.06") in f.message, f.message
    assert "minor-version compatibility" in f.message
    assert ("minimum (family rule)", "580.65.06") in f.evidence


def test_gd103_fails_a_driver_below_the_family_floor() -> None:
    f = finding(B.cuda_unavailable(future_machine("575.57.08", 12090)), "GD103")
    assert f.status is Status.FAIL, f
    assert "judged by the CUDA 13 family rule (≥ 580.65.06" in f.message
    assert f.fix and "≥ 580.65.06" in f.fix


def test_gd103_passes_when_the_driver_reports_the_cuda() -> None:
    """The driver's own reading (NVML: CUDA 13.9) wins: no table is needed."""
    f = finding(future_machine("600.10.01", 13090), "GD103")
    assert f.status is Status.PASS, f


def test_a_major_without_a_family_rule_is_named_not_guessed() -> None:
    f = finding(future_machine("700.10.01", 13040, torch="3.0.0+cu140", cuda="14.0"), "GD103")
    assert f.status is Status.SKIP, f
    assert "CUDA 14.0 is newer than the bundled tables" in f.message
    assert "no CUDA 14 family rule is recorded" in f.message


def test_gd104_names_the_family_rule_for_a_newer_toolkit() -> None:
    e = dataclasses.replace(future_machine("590.44.01", 13010), toolkits=B.toolkit("13.9"))
    f = finding(e, "GD104")
    assert f.status is Status.WARN, f
    assert "newer than the bundled tables" in f.message
    assert "judged by the CUDA 13 family rule, ≥ 580.65.06" in f.message


def test_the_wheel_wins_over_the_table_row() -> None:
    rel = TABLES.torch_release("2.13.0")
    variant = rel.variant("cu130") if rel else None
    assert variant is not None and variant.cudnn, "the table records 2.13.0 cu130's cuDNN"
    t = with_wheels(B.torch("2.13.0+cu130", "13.0", ("H100",), B.ARCH_CU130, 99900),
                    ("nvidia-cudnn-cu13", "9.99.0.1"), ("nvidia-cudnn-cu12", "1.0.0"))
    e = B.env(torch=t)
    assert machine.torch_built_cudnn(e, TABLES) == (
        "9.99.0.1", "the installed nvidia-cudnn-cu13 9.99.0.1 wheel")
    f = finding(e, "GD309")
    assert f.status is Status.PASS and "built with 9.99.0.1" in f.message, f
    # without the wheel, the table's row
    bare = B.env(torch=B.torch("2.13.0+cu130", "13.0", ("H100",), B.ARCH_CU130, 92000))
    assert machine.torch_built_cudnn(bare, TABLES) == (
        variant.cudnn, "compat_tables/torch.toml, torch 2.13.0 cu130")


@pytest.mark.parametrize(("driver", "cuda", "fits"), [("590.44.01", 13010, True),
                                                       ("575.57.08", 12090, False)])
def test_advice_judges_a_torch_past_the_tables_by_the_family_rule(
        driver: str, cuda: int, fits: bool) -> None:
    advice = torch_advice(future_machine(driver, cuda), TABLES)
    assert advice.installed == FUTURE
    assert advice.installed_fits is fits, advice.installed_why
    if not fits:
        assert advice.installed_why == (
            f"the driver does not run its CUDA 13.9 (CUDA 13.9 is newer than the bundled tables "
            f"(newest known: {NEWEST}): judged by the CUDA 13 family rule, ≥ 580.65.06)")


def test_advice_takes_the_arch_list_from_torch_itself() -> None:
    """torch's own arch list wins: one without sm_90 does not fit an H100, whatever the
    table says of that wheel."""
    t = B.torch("2.13.0+cu130", "13.0", ("H100",), ("sm_75", "sm_80", "sm_120"), 92000)
    advice = torch_advice(B.env(torch=t), TABLES)
    assert advice.installed_fits is False and "sm_90" in (advice.installed_why or "")
    f = finding(B.env(torch=t), "GD404")
    assert f.status is Status.FAIL, f


@pytest.mark.slow
def test_the_real_torch_here() -> None:
    """The torch installed in this venv: its cuDNN wheel, when it has one, is what GD309 reads."""
    from gpudoctor.probes.interface import Deps
    from gpudoctor.probes.pytorch import probe_torch

    t = probe_torch(Deps())
    if not isinstance(t, TorchFacts) or not isinstance(t.static, TorchStatic):
        pytest.skip(f"torch did not probe here: {t}")
    e = B.env(torch=t)
    cuda = V.torch_cuda(e)
    if cuda is None:
        pytest.skip("a CPU build of torch: it was built for no cuDNN")
    name = f"nvidia-cudnn-cu{cuda.split('.')[0]}"
    wheel = dict(t.static.nvidia_wheels).get(name)
    told = machine.torch_built_cudnn(e, TABLES)
    if wheel is None:
        pytest.skip(f"no {name} wheel is installed beside torch {t.static.version}")
    assert told == (wheel, f"the installed {name} {wheel} wheel")

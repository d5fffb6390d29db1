"""GD103's verdicts from the driver rules (`compat.rules.driver_for_cuda`), and fixes that,
followed, leave the check green: a driver asked for is the full-feature one, never a floor at
which minor-version compatibility would still warn."""

from __future__ import annotations

import dataclasses
import re

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, Finding, LibcudaFacts, Status

TABLES = load_tables()
MVC = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"


def gd103(env: Environment) -> Finding:
    return {r.check_id: r.finding for r in run_checks(env, TABLES).results}["GD103"]


def machine(driver: str, cuda: int, torch: str, torch_cuda: str) -> Environment:
    return B.env(nvml=B.nvml(driver, cuda, B.gpu("RTX3090")),
                 libcuda=LibcudaFacts("libcuda.so.1", cuda, driver),
                 torch=B.torch(torch, torch_cuda, ("RTX3090",), B.ARCH_CU126, 90100))


def asked_driver(fix: str) -> str:
    m = re.search(r"upgrade the (?:NVIDIA )?driver to ≥ (\S+)", fix)
    assert m, fix
    return m[1]


def test_a_failing_driver_is_asked_for_the_full_feature_driver() -> None:
    """torch 2.5.1+cu121 on driver 470: too old even for the 12.x floor (525.60.13). The fix
    asks for CUDA 12.1's own driver, 530.30.02: at the floor GD103 would still warn. Before,
    it asked for 525.60.13."""
    env = B.cuda_unavailable(machine("470.82.01", 11040, "2.5.1+cu121", "12.1"))
    f = gd103(env)
    assert f.status is Status.FAIL and "needs ≥ 525.60.13" in f.message, f
    want = TABLES.cuda_min_driver("12.1")
    assert want is not None and asked_driver(f.fix or "") == want.full
    # followed: the driver it asks for, with the CUDA that driver reports
    upgraded = dataclasses.replace(
        env, nvml=dataclasses.replace(env.nvml, driver_version=want.full,  # type: ignore[arg-type]
                                      cuda_driver_version=12010),
        libcuda=LibcudaFacts("libcuda.so.1", 12010, want.full))
    assert gd103(upgraded).status is Status.PASS


def test_minor_version_compatibility_with_a_cubin_for_every_gpu_passes() -> None:
    """Minor-version compatibility runs a newer minor's cubins on the family's driver; its
    limits (no JIT of newer PTX, newer APIs) do not touch a torch that has a cubin for the GPU
    (sm_86 for an RTX 3090): GD103 passes, naming the rule and the cubins."""
    f = gd103(machine("550.54.14", 12040, "2.14.1+cu126", "12.6"))
    assert f.status is Status.PASS and "minor-version compatibility" in f.message, f
    assert "sm_86" in f.message and ("rule", f.evidence[-1][1]) == f.evidence[-1]
    assert MVC in f.evidence[-1][1]


def test_minor_version_compatibility_needing_ptx_warns_and_names_the_full_driver() -> None:
    """The same driver and torch on an RTX 5090 (sm_120): no cubin in the cu126 arch list, so
    a kernel would need the JIT of newer PTX the family's driver does not do: a warning, and
    the fix asks for CUDA 12.6's own driver."""
    env = B.env(nvml=B.nvml("550.54.14", 12040, B.gpu("RTX5090")),
                libcuda=LibcudaFacts("libcuda.so.1", 12040, "550.54.14"),
                torch=B.torch("2.14.1+cu126", "12.6", ("RTX5090",),
                              (*B.ARCH_CU126, "compute_90"), 90100))
    f = gd103(env)
    assert f.status is Status.WARN and "minor-version compatibility" in f.message, f
    want = TABLES.cuda_min_driver("12.6")
    assert want is not None and asked_driver(f.fix or "") == want.full


def test_a_cuda_past_the_tables_cites_the_family_rule_and_its_source() -> None:
    f = gd103(machine("590.44.01", 13010, "2.99.0+cu139", "13.9"))
    assert f.status is Status.WARN, f
    assert "judged by the CUDA 13 family rule" in f.message
    assert "minor-version-compatibility" in f.message and MVC in f.message


def test_a_driver_too_old_on_which_torch_cuda_initialised_is_forward_compatibility() -> None:
    """torch 2.4.0+cu121 on 4x A10 with driver 470.129.06 and "Is CUDA available: True" (a
    real collect_env, tests/fixtures/heldout/round3 set B, r1-028): the 470 driver runs CUDA
    11.4 natively, so CUDA 12.1 initialising shows NVIDIA's forward-compatibility package at
    work. GD103 is a note naming it, not a failure of a working stack; the same driver with
    torch's CUDA not initialising still fails."""
    working = machine("470.129.06", 11040, "2.4.0+cu121", "12.1")
    f = gd103(working)
    assert f.status is Status.WARN and f.severity.name == "INFO", f
    assert "forward-compatibility package" in f.message
    assert gd103(B.cuda_unavailable(working)).status is Status.FAIL


def test_minor_version_compatibility_is_not_called_forward_compatibility() -> None:
    """torch cu124 initialised on a 12.2 driver: minor-version compatibility (a pass: torch
    has a cubin for the RTX 3090), no forward-compatibility package; nor for the toolkit
    (GD104, a warning: what it builds may need newer PTX)."""
    env = dataclasses.replace(machine("535.104.05", 12020, "2.5.1+cu124", "12.4"),
                              toolkits=B.toolkit("12.6"))
    found = {r.check_id: r.finding for r in run_checks(env, TABLES).results}
    assert found["GD103"].status is Status.PASS and "forward" not in found["GD103"].message
    assert "minor-version compatibility" in found["GD103"].message
    assert found["GD104"].status is Status.WARN and "forward" not in found["GD104"].message

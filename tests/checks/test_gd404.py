"""GD404 and the one arch rule (`gpudoctor.versions`): cubins run on the same major, PTX on any
newer GPU, `a` targets on exactly one compute capability, `f` targets on their family.

Arch lists are real wheels' (`torch.cuda.get_arch_list()` of the PyPI / download.pytorch.org
builds, as recorded in compat_tables/torch.toml) and this venv's torch's own.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
from gpudoctor.versions import arch_list_supports, coverage, covers, parse_arch, parse_cc
from tests.checks.envbuilder import (
    ARCH_CU126,
    ARCH_CU128,
    ARCH_CU130,
    env,
    gpu,
    nvml,
    reported_env,
    reported_gpu,
    reported_torch,
    torch,
)

TABLES = load_tables()

# (arch list, GPU compute capability, how it is covered: None when nothing runs there)
CASES = [
    (ARCH_CU126, (8, 9), "same-major"),  # RTX 4090 on a cu126 wheel: the sm_86 cubins
    (ARCH_CU126, (9, 0), "native"),
    (ARCH_CU126, (6, 1), "same-major"),  # GTX 1080: the sm_60 cubins
    (ARCH_CU126, (12, 0), None),  # RTX 5090 on a cu126 wheel: no sm_12x, no PTX
    (ARCH_CU128, (6, 1), None),  # the list starts at sm_75
    (ARCH_CU128, (12, 1), "same-major"),  # DGX Spark (sm_121) runs sm_120 cubins
    (ARCH_CU130, (12, 1), "same-major"),
    (ARCH_CU130, (13, 0), "ptx"),  # a future major: compute_120 JIT-compiles
    (("sm_70", "sm_75", "sm_80"), (6, 1), None),
    (("sm_90a",), (9, 0), "native"),
    (("sm_90a",), (10, 0), None),  # arch-specific: exactly sm_90
    (("compute_90a",), (10, 0), None),  # arch-specific PTX does not JIT forward either
    (("sm_100a",), (10, 3), None),
    (("sm_100f",), (10, 3), "family"),  # family-specific: 10.0 and 10.3
    (("sm_100f",), (12, 0), None),  # not across majors
    (("sm_120f",), (12, 1), "family"),
    (("sm_103f",), (10, 0), None),  # not to a lower minor
    (("compute_120f",), (12, 1), "family"),
    (("compute_120f",), (13, 0), None),
    (("compute_90",), (12, 0), "ptx"),  # PTX JIT-compiles for any newer GPU
    (("compute_90",), (8, 9), None),  # but never for an older one
    (("sm_86",), (8, 0), None),  # a cubin never runs on a lower minor
    (("7.5", "8.0", "12.0+PTX"), (12, 1), "same-major"),  # TORCH_CUDA_ARCH_LIST spelling
    (("7.5", "8.0", "12.0+PTX"), (13, 0), "ptx"),
    (("5.0", "6.0", "7.0"), (7, 5), "same-major"),
    (("garbage", ""), (8, 6), None),
]


@pytest.mark.parametrize(("arch_list", "cc", "how"), CASES,
                         ids=lambda x: " ".join(x) if isinstance(x, tuple) and x and
                         isinstance(x[0], str) else str(x))
def test_arch_rule(arch_list: tuple[str, ...], cc: tuple[int, int], how: str | None) -> None:
    cov = coverage(arch_list, cc)
    assert (cov.how if cov else None) == how
    # every consumer asks the same rule: compat's arch_list_supports is it, by name
    assert arch_list_supports(arch_list, f"{cc[0]}.{cc[1]}") is (how is not None)
    assert covers(arch_list, f"sm_{cc[0]}{cc[1]}") is (how is not None)


def test_explanations_name_the_entry_and_why() -> None:
    cov = coverage(ARCH_CU126, (8, 9))
    assert cov is not None and cov.explain() == "sm_86 cubins run on sm_89 (same major)"
    ptx = coverage(("compute_90",), (12, 0))
    assert ptx is not None and ptx.explain() == "compute_90 PTX JIT-compiles for sm_120"
    fam = coverage(("sm_100f",), (10, 3))
    assert fam is not None and "family 10.x" in fam.explain()


def test_parse_forms() -> None:
    assert parse_cc("8.6") == parse_cc("sm_86") == parse_cc("86") == (8, 6)
    assert parse_cc("compute_120f") == parse_cc("12.0+PTX") == (12, 0)
    assert parse_cc("not a cc") is None
    assert [a.name for a in parse_arch("12.0+PTX")] == ["sm_120", "compute_120"]
    assert [a.name for a in parse_arch("sm_90a")] == ["sm_90a"]
    assert parse_arch("bogus") == ()


def _venv_torch_arch_flags() -> tuple[str, ...]:
    """This venv's torch's arch list, read without a GPU or driver (get_arch_list() is empty
    when CUDA is not available; the build's flags are not)."""
    code = ("import torch, sys; f = getattr(torch._C, '_cuda_getArchFlags', None); "
            "sys.stdout.write(f() if f and torch.version.cuda else '')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    return tuple(out.stdout.split())


@pytest.mark.slow
def test_this_venvs_torch_covers_its_own_archs() -> None:
    flags = _venv_torch_arch_flags()
    if not flags:
        pytest.skip("this venv's torch is not a CUDA build: no arch list to read")
    for flag in flags:
        arch = parse_arch(flag)[0]
        cov = coverage(flags, (arch.major, arch.minor))
        assert cov is not None and (cov.how == "native" or arch.ptx), flag
    lowest = min(parse_cc(f) or (99, 9) for f in flags)
    older = (lowest[0] - 1, 0)  # one major below the oldest entry: nothing runs there
    assert coverage(flags, older) is None


@pytest.mark.parametrize(
    ("kind", "arch", "status", "needle"),
    [
        ("RTX4090", ARCH_CU126, Status.PASS, "sm_86 cubins run on sm_89 (same major)"),
        ("H100", ARCH_CU130, Status.PASS, "sm_90 cubins run natively on sm_90"),
        ("GTX1080", ARCH_CU128, Status.FAIL, "no cubin or PTX in the build runs on it"),
        ("RTX5090", ARCH_CU126, Status.FAIL, "no cubin or PTX"),
        ("RTX5090", ARCH_CU130, Status.PASS, "sm_120 cubins run natively"),
    ],
)
def test_gd404_on_probed_machines(kind: str, arch: tuple[str, ...], status: Status,
                                  needle: str) -> None:
    e = env(nvml=nvml("580.65.06", 13000, gpu(kind)),
            torch=torch("2.13.0+cu130", "13.0", (kind,), arch, 92000))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is status, f
    assert any(needle in v for _, v in f.evidence), f.evidence


def test_gd404_report_cc_from_product_name_and_arch_list_from_the_wheel_table() -> None:
    """collect_env gives neither the compute capability nor torch's arch list: the product
    name gives the first, the compat table's row for the wheel the second; both are cited."""
    e = reported_env(reported_torch("2.8.0+cu126", "12.6"), reported_gpu(
        "NVIDIA GeForce RTX 4090"))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.PASS, f
    text = " ".join(v for _, v in f.evidence)
    assert "from the product name" in text and "compat_tables/torch.toml" in text
    assert "sm_86 cubins run on sm_89 (same major)" in text


def test_gd404_report_with_torchs_own_arch_list_fails_a_5090() -> None:
    e = reported_env(reported_torch("2.6.0+cu126", "12.6", arch=ARCH_CU126),
                     reported_gpu("NVIDIA GeForce RTX 5090 D"))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.FAIL and "sm_120" in f.message, f


@pytest.mark.parametrize(
    ("torch_facts", "gpus", "needle"),
    [
        # a product the GPU table does not list: its compute capability stays unknown
        (reported_torch("2.8.0+cu126", "12.6"), (reported_gpu("NVIDIA GeForce MX450"),),
         "compute capability of NVIDIA GeForce MX450 is not in the report"),
        # a build the tables do not have (a source build): its arch list stays unknown
        (reported_torch("2.1.0a0+git1234", "12.1"), (reported_gpu("NVIDIA A100-SXM4-80GB"),),
         "arch list is not in the report"),
        # a wheel whose arch list the tables lack
        (reported_torch("2.5.1+cu121", "12.1"), (reported_gpu("NVIDIA A100-SXM4-80GB"),),
         "the tables lack the arch list of torch 2.5.1 cu121"),
    ],
)
def test_gd404_skips_on_what_the_report_lacks(torch_facts: object, gpus: tuple[object, ...],
                                              needle: str) -> None:
    e = reported_env(torch_facts, *gpus)  # type: ignore[arg-type]
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.SKIP and needle in f.message, f

"""GD404 and the one arch rule (`gpudoctor.versions`): cubins run on the same major, PTX on any
newer GPU, `a` targets on exactly one compute capability, `f` targets on their family.

Arch lists are real wheels' (`torch.cuda.get_arch_list()` of the PyPI / download.pytorch.org
builds, as recorded in compat_tables/torch.toml) and this venv's torch's own.
"""

from __future__ import annotations

import pytest

from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
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

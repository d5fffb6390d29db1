"""GD311 cudnn-supports-gpu: the cuDNN in use against the compute-capability range NVIDIA's
support matrix gives its release and CUDA build (compat_tables/gpu.toml [[cudnn_support]])."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.checks.cudnn_gpu import CHECKS
from gpudoctor.compat import load_tables
from gpudoctor.model import CudnnFacts, CudnnInstall, Environment, Finding, Status

sys.path.insert(0, str(Path(__file__).resolve().parent))
import envbuilder as B

TABLES = load_tables()


def run(e: Environment) -> Finding:
    (result,) = run_checks(e, TABLES, CHECKS).results
    assert result.check_id == "GD311"
    return result.finding


def torch_on(gpu: str, version: str, cuda: str, cudnn: int) -> Environment:
    arch = B.ARCH_CU130 if cuda.startswith("13") else B.ARCH_CU128
    return B.env(nvml=B.nvml("580.65.06", 13000, B.gpu(gpu)),
                 torch=B.torch(version, cuda, (gpu,), arch, cudnn))


def supports(version: str, cuda: str, cc: str) -> bool:
    row = TABLES.cudnn_gpu_support(version, cuda)
    assert row is not None, (version, cuda)
    return row.supports(cc)


def test_cudnn_8_9_7_under_torch_on_an_rtx_5090_fails() -> None:
    assert not supports("8.9.7", "12.1", "12.0")
    f = run(torch_on("RTX5090", "2.3.1+cu121", "12.1", 8907))
    assert f.status is Status.FAIL, f
    assert f.message.startswith("torch's cuDNN 8.9.7 supports compute capability 5.0-9.0"), f
    assert "NVIDIA GeForce RTX 5090 (sm_120) is outside it" in f.message
    assert f.fix and "gpudoctor recommend" in f.fix and "sm_120" in f.fix
    assert ("GPU 0", "NVIDIA GeForce RTX 5090, sm_120 (torch)") in f.evidence


@pytest.mark.parametrize(("cuda", "status"), [("12.6", Status.FAIL), ("12.8", Status.PASS)])
def test_the_cuda_build_picks_the_range(cuda: str, status: Status) -> None:
    """cuDNN 9.7.1 lists Blackwell only for its CUDA 12.8+ builds: torch's CUDA decides."""
    assert supports("9.7.1", cuda, "12.0") is (status is Status.PASS)
    f = run(torch_on("RTX5090", f"2.7.1+cu{cuda.replace('.', '')}", cuda, 90701))
    assert f.status is status, f


def test_healthy_default_machine_passes() -> None:
    f = run(B.env())
    assert f.status is Status.PASS, f
    assert f.message == "torch's cuDNN 9.20.0 supports every GPU here"


def test_cudnn_9_11_dropped_pascal() -> None:
    row = TABLES.cudnn_gpu_support("9.20.0", "13.0")
    assert row is not None and not row.supports("6.1")
    f = run(torch_on("GTX1080", "2.13.0+cu130", "13.0", 92000))
    assert f.status is Status.FAIL and "(sm_61) is outside it" in f.message, f


def system_copy(version: str, **kw: object) -> CudnnInstall:
    base = CudnnInstall(
        origin="toolkit /usr/local/cuda", lib_dir="/usr/local/cuda/lib64",
        header="/usr/local/cuda/include/cudnn_version.h", header_version=version,
        libraries=(), library_version=version, missing_deps=(), cuda_build="12",
        found_by=("/usr/local/cuda",), prefix="/usr/local/cuda", in_use=True)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_without_torch_a_system_copy_is_judged_with_the_toolkits_cuda() -> None:
    e = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("RTX5090")), cuda=B.toolkit("12.4"),
              torch=B.not_reported("torch"),
              cudnn=CudnnFacts((system_copy("9.8.0"),)))
    assert not supports("9.8.0", "12.4", "12.0")
    f = run(e)
    assert f.status is Status.WARN, f
    assert "cuDNN in /usr/local/cuda/lib64 9.8.0" in f.message and "sm_120" in f.message
    assert f.fix and "gpudoctor install-cudnn" in f.fix and "compat gpu sm_120" in f.fix
    # the same copy with a CUDA 12.8 toolkit: its 12.8-12.9 builds support Blackwell
    assert run(dataclasses.replace(e, cuda=B.toolkit("12.8"))).status is Status.PASS


def test_skips_say_why() -> None:
    no_gpu = B.env(nvml=B.nvml("580.65.06", 13000),
                   torch=B.torch("2.13.0+cu130", "13.0", (), B.ARCH_CU130, 92000))
    f = run(no_gpu)
    assert f.status is Status.SKIP and "no GPU" in f.message
    cpu = B.env(torch=B.torch("2.13.0+cpu", None))
    f = run(cpu)
    assert f.status is Status.SKIP and "no cuDNN found" in f.message
    old = torch_on("H100", "2.3.1+cu121", "12.1", 1234)  # a cuDNN the tables do not hold
    f = run(old)
    assert f.status is Status.SKIP and "do not record" in f.message, f

"""GD311 cudnn-supports-gpu: the cuDNN in use against the compute-capability range NVIDIA's
support matrix gives its release and CUDA build (compat_tables/gpu.toml [[cudnn_support]])."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.checks.cudnn_gpu import CHECKS
from gpudoctor.compat import load_tables
from gpudoctor.model import CudnnFacts, CudnnInstall, Environment, Finding, Status
from gpudoctor.reports.read import read_reports

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
    assert f.message.startswith(
        "torch's cuDNN 8.9.7 does not support NVIDIA GeForce RTX 5090 (sm_120): cuDNN 8.9.7 "
        "supports compute capability 5.0-9.0"), f
    assert "(table row: cudnn-support-matrix, https://docs.nvidia.com/" in f.message
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
    assert f.status is Status.FAIL and "does not support NVIDIA GeForce GTX 1080 (sm_61)" in \
        f.message, f


def test_a_cudnn_of_a_major_past_the_tables_is_not_judged_by_an_older_majors_row() -> None:
    """cuDNN 10.0.0 under a CUDA 13 torch: the open-ended 9.x row (9.17.1 and newer) does not
    speak for it. On an H100 no rule can tell (a skip that says which rules were asked), not a
    pass read off the 9.x row."""
    assert supports("10.0.0", "13.0", "9.0")  # the row lookup alone still answers
    f = run(torch_on("H100", "2.16.0+cu130", "13.0", 100000))
    assert f.status is Status.SKIP, f
    assert "do not record which GPUs cuDNN 10.0.0 supports" in f.message
    assert "arch-range rule" in f.message and "cudnn-gpu-floor rule" in f.message
    assert any("rule: cudnn-support-matrix" in v for k, v in f.evidence
               if k == "torch's cuDNN 10.0.0"), f.evidence


def test_without_a_row_the_arch_rule_decides_and_is_named() -> None:
    """A GTX 1080 (sm_61) and an H100 under cuDNN 10.0.0 of a CUDA 13 torch: no CUDA 13 build
    can hold sm_61 code, so cuDNN cannot support it (the arch rule says so, with its source);
    the H100 stays unknown and is not named."""
    e = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("H100"), B.gpu("GTX1080", index=1)),
              torch=B.torch("2.16.0+cu130", "13.0", ("H100", "GTX1080"), B.ARCH_CU130, 100000))
    f = run(e)
    assert f.status is Status.FAIL, f
    assert f.message.startswith(
        "torch's cuDNN 10.0.0 does not support NVIDIA GeForce GTX 1080 (sm_61): cuDNN 10.0.0's "
        "support is not in the tables, but no CUDA 13.0 build can hold code for sm_61"), f
    assert "(rule: arch-range, https://docs.nvidia.com/cuda/" in f.message
    assert "H100" not in f.message


def system_copy(version: str, **kw: object) -> CudnnInstall:
    base = CudnnInstall(
        origin="toolkit /usr/local/cuda", lib_dir="/usr/local/cuda/lib64",
        header="/usr/local/cuda/include/cudnn_version.h", header_version=version,
        libraries=(), library_version=version, missing_deps=(), cuda_build="12",
        found_by=("/usr/local/cuda",), prefix="/usr/local/cuda", in_use=True)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_without_torch_a_system_copy_is_judged_with_the_toolkits_cuda() -> None:
    e = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("RTX5090")), toolkits=B.toolkit("12.4"),
              torch=B.not_reported("torch"),
              cudnn=CudnnFacts((system_copy("9.8.0"),)))
    assert not supports("9.8.0", "12.4", "12.0")
    f = run(e)
    assert f.status is Status.WARN, f
    assert "cuDNN in /usr/local/cuda/lib64 9.8.0" in f.message and "sm_120" in f.message
    assert f.fix and "gpudoctor install-cudnn" in f.fix and "compat gpu sm_120" in f.fix
    # the same copy with a CUDA 12.8 toolkit: its 12.8-12.9 builds support Blackwell
    assert run(dataclasses.replace(e, toolkits=B.toolkit("12.8"))).status is Status.PASS


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


def test_a_report_without_torchs_cudnn_is_judged_by_the_wheels() -> None:
    """A report (collect_env) naming torch 2.3.1+cu121 on an RTX 5090 but not the cuDNN torch
    runs: the cuDNN that wheel ships (8.9.2.26, compat_tables/torch.toml) does not support
    sm_120, and the evidence says where the version was read."""
    env = B.reported_env(B.reported_torch("2.3.1+cu121", "12.1"),
                         B.reported_gpu("NVIDIA GeForce RTX 5090"))
    f = run(env)
    assert f.status is Status.FAIL, f
    assert f.message.startswith("torch's cuDNN 8.9.2.26 does not support NVIDIA GeForce RTX 5090")
    assert any("the one its wheel ships: compat_tables/torch.toml, torch 2.3.1 cu121" in v
               for _, v in f.evidence)
    ok = run(B.reported_env(B.reported_torch("2.7.0+cu126", "12.6"),
                            B.reported_gpu("NVIDIA GeForce RTX 4090")))
    assert ok.status is Status.PASS, ok


def test_a_copy_inside_a_versioned_toolkit_dir_is_that_cudas_build() -> None:
    """facebookresearch/mmf#153 (round 8's r15-015): collect_env lists cuDNN 7.6.1 in
    /usr/local/cuda-10.1/targets/x86_64-linux/lib beside 8x RTX 2080 Ti (sm_75), torch built
    with CUDA 9.0. That copy is cuDNN 7.6.1's CUDA 10.x build (it sits in the CUDA 10.1
    toolkit), which supports sm_75; it was judged as the CUDA 9 build (3.0-7.2) and warned."""
    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round8"
            / "reports-G" / "r15-015.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    finding = next(r.finding for r in run_checks(env, load_tables()).results
                   if r.check_id == "GD311")
    assert finding.status is Status.PASS
    assert "cuda-10.1/targets/x86_64-linux/lib 7.6.1 supports every GPU" in finding.message

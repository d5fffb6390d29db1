"""GD404 where torch's arch list is not known (a report that does not show it, a wheel the
tables lack): the arch rule (`compat.rules.arch_in_build`) decides where the build's CUDA
cannot hold code for a GPU, and the finding says the rule decided, with its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, Finding, Status
from gpudoctor.reports import read_reports
from tests.checks.envbuilder import reported_env, reported_gpu, reported_torch

TABLES = load_tables()
REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
NVCC = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list"


def gd404(env: Environment) -> Finding:
    return check_gpu_arch.run(env, TABLES)


def test_a_real_report_fails_by_the_rule() -> None:
    """https://github.com/pytorch/pytorch/issues/31876: torch 1.2.0 (CUDA 10.0) on a
    GeForce 210 (Tesla, cc 1.2). The report shows no arch list and the tables hold none for
    torch 1.2.0, but no CUDA 10 build can hold code for sm_12: CUDA 6.5 was the last toolkit
    that compiled for it. Before the rule, GD404 skipped."""
    name = "issue_body-geforce210-torch1.2-windows.md"
    env = read_reports([(name, (REPORTS / name).read_text(encoding="utf-8"))])
    f = {r.check_id: r.finding for r in run_checks(env, TABLES).results}["GD404"]
    assert f.status is Status.FAIL, f
    assert "judged by the arch rule" in f.message and "sm_12" in f.message
    assert NVCC in f.message  # the rule's source
    assert f.fix and "install a torch build that includes it" in f.fix


@pytest.mark.parametrize("torch_version", ["2.9.1+cu130", "2.16.0+cu130"])
def test_gtx1080_on_a_cuda_13_build_fails_by_the_rule(torch_version: str) -> None:
    """A GTX 1080 (sm_61) on a cu130 torch whose arch list neither the report nor the tables
    hold (2.9.1's experimental cu130 wheel; a release past the tables): CUDA 13 compiles for
    sm_75 and newer only, so no arch list can include it. Before the rule, GD404 skipped."""
    env = reported_env(reported_torch(torch_version, "13.0"),
                       reported_gpu("NVIDIA GeForce GTX 1080"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.FAIL, f
    assert "NVIDIA GeForce GTX 1080 (sm_61)" in f.message
    assert "no CUDA 13.0 build can hold code for sm_61" in f.message
    assert "rule: arch-range" in f.message and NVCC in f.message
    # the fix is the one install line, for a build that has sm_61 (a CUDA 12 wheel)
    assert f.fix and "cu12" in f.fix


def test_where_the_rule_cannot_tell_it_skips_and_says_what_it_knows() -> None:
    env = reported_env(reported_torch("2.16.0+cu130", "13.0"),
                       reported_gpu("NVIDIA GeForce RTX 3090"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.SKIP, f
    assert "by the arch rule: CUDA 13.0 compiles cubins that run on sm_86" in f.message


def test_an_arch_list_in_the_report_still_decides() -> None:
    """The rule stands in only for a missing list: torch's own list wins."""
    env = reported_env(reported_torch("2.16.0+cu130", "13.0", arch=("sm_60", "sm_75")),
                       reported_gpu("NVIDIA GeForce GTX 1080"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.PASS, f
    assert "arch rule" not in f.message


# --- a 1.x wheel of two builds: PyPI's arch list does not judge the other ---------------------

HELDOUT_A = REPORTS.parent / "heldout" / "round3" / "reports-A"


def test_pypi_list_of_a_1x_wheel_warns_instead_of_failing() -> None:
    """https://github.com/pytorch/pytorch/issues/57922: torch 1.8.1+cu102 on an A100. The table's
    arch list is the PyPI wheel's (sm_37 sm_50 sm_60 sm_70, no PTX), but the same-named wheel
    from download.pytorch.org carries compute_37 PTX that runs on sm_80, and the report does
    not say which was installed. Before the rule GD404 failed a machine whose torch ran."""
    name = "r1-016.txt"
    env = read_reports([(name, (HELDOUT_A / name).read_text(encoding="utf-8"))])
    f = gd404(env)
    assert f.status is Status.WARN and f.severity is None, f
    assert "as built for PyPI has no kernels for A100-SXM4-40GB (sm_80)" in f.message
    assert "https://download.pytorch.org/whl/torch_stable.html" in f.message
    assert f.fix and f.fix.startswith("see its arch list on that machine: python -c 'import "
                                      "torch; print(torch.cuda.get_arch_list())'")
    # the install line names a build with sm_80 cubins (CUDA 11.0), not torch 1.5.1's
    # compute_37 PTX
    assert "torch==1.7.1+cu110" in f.fix


@pytest.mark.parametrize("version", ["1.8.1", "1.8.1+cu102", "1.9.0+cu102"])
def test_pypi_default_of_a_find_links_release_warns(version: str) -> None:
    env = reported_env(reported_torch(version, "10.2"), reported_gpu("NVIDIA A100-SXM4-40GB"),
                       driver="450.80.02")
    assert gd404(env).status is Status.WARN


@pytest.mark.parametrize(("version", "cuda", "gpu", "driver"), [
    # from 2.0 (index-url) PyPI's and download.pytorch.org's default builds are the same
    ("2.5.1", "12.4", "NVIDIA GeForce RTX 5090", "570.86.10"),
    ("2.5.1+cu124", "12.4", "NVIDIA GeForce RTX 5090", "570.86.10"),
])
def test_one_build_still_fails(version: str, cuda: str, gpu: str, driver: str) -> None:
    env = reported_env(reported_torch(version, cuda), reported_gpu(gpu), driver=driver)
    f = gd404(env)
    assert f.status is Status.FAIL, f


def test_the_arch_list_the_report_shows_still_fails() -> None:
    """torch's own warning names the arch list: nothing is guessed, the failure stands."""
    env = reported_env(reported_torch("1.8.1+cu102", "10.2", arch=("sm_37", "sm_50", "sm_60",
                                                                     "sm_70")),
                       reported_gpu("NVIDIA A100-SXM4-40GB"), driver="450.80.02")
    assert gd404(env).status is Status.FAIL

"""GD404 where torch's arch list is not known (a report that does not show it, a wheel the
tables lack): the arch rule (`compat.rules.arch_in_build`) decides where the build's CUDA
cannot hold code for a GPU, and the finding says the rule decided, with its source."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.checks.envbuilder import reported_env, reported_gpu, reported_torch

from gpudoctor.checks import run_checks
from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, Finding, Status
from gpudoctor.reports import read_reports

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

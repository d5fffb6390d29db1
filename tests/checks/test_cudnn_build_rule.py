"""GD308 cudnn-cuda-build-matches-toolkit by the rule (`compat.rules.cudnn_runs_with_cuda`):
a release's row first, the build at hand for a release the tables lack, and a copy no row or
rule can judge said to be unjudged, never passed. The finding names the rule or row."""

from __future__ import annotations

import dataclasses

import pytest

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.checks.cudnn_builds import check_cuda_build
from gpudoctor.compat import load_tables
from gpudoctor.compat.rules import cudnn_runs_with_cuda
from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    Environment,
    Finding,
    Reason,
    Status,
    Unavailable,
)

TABLES = load_tables()
PREFIX = "/usr/local/cuda"


def copy(version: str, build: str | Unavailable) -> CudnnInstall:
    return CudnnInstall(
        origin=f"toolkit {PREFIX}", lib_dir=f"{PREFIX}/lib64",
        header=f"{PREFIX}/include/cudnn_version.h", header_version=version, libraries=(),
        library_version=version, missing_deps=(), cuda_build=build, found_by=(PREFIX,),
        prefix=PREFIX, in_use=True)


def judge(version: str, build: str | Unavailable, toolkit: str) -> Finding:
    e: Environment = B.env(toolkits=B.toolkit(toolkit, root=PREFIX),
                           cudnn=CudnnFacts((copy(version, build),)))
    (result,) = run_checks(e, TABLES, (check_cuda_build,)).results
    return result.finding


UNTOLD = Unavailable(Reason.NOT_REPORTED, "no manifest, no dist-info, no linked libcublas")


def test_a_release_the_tables_lack_with_no_build_told_is_unjudged_not_passed() -> None:
    """cuDNN 9.99.0 (newer than the tables) in a CUDA 12.4 toolkit, its build not told: no
    row and no build to apply the per-major rule to. It used to pass ("every toolkit's cuDNN
    is built for its CUDA")."""
    assert cudnn_runs_with_cuda(TABLES, "9.99.0", "12.4").verdict == "unknown"
    f = judge("9.99.0", UNTOLD, "12.4")
    assert f.status is Status.SKIP, f
    assert "cuDNN 9.99.0 is not in the tables" in f.message


def test_a_release_the_tables_lack_is_judged_by_its_build() -> None:
    assert judge("9.99.0", "12", "12.4").status is Status.PASS
    f = judge("9.99.0", "12", "13.0")
    assert f.status is Status.FAIL
    assert "is the CUDA 12 build; the toolkit is CUDA 13.0" in f.message


@pytest.mark.parametrize(("version", "toolkit", "said", "fix"), [
    # before CUDA 11 a build serves the minors it names: the release's row decides
    ("7.6.5", "9.1", "cuDNN 7.6.5 has no build for CUDA 9.1 (its builds: 9.0, 9.2, 10.0, 10.1, "
                     "10.2) (table row: cudnn-support-matrix, https://docs.nvidia.com/",
     "install a cuDNN built for CUDA 9.1"),  # the tables have no tarball for CUDA 9.1
    # from CUDA 11 on a build for the major runs with every minor: the per-major rule
    ("7.6.5", "12.4", "cuDNN 7.6.5 has no build for CUDA 12 (its builds: 9.0, 9.2, 10.0, "
                      "10.1, 10.2) (rule: cudnn-build-per-major, https://docs.nvidia.com/",
     "_cuda12-archive.tar.xz --prefix /usr/local/cuda"),
])
def test_the_failure_names_the_row_or_rule(version: str, toolkit: str, said: str,
                                           fix: str) -> None:
    f = judge(version, UNTOLD, toolkit)
    assert f.status is Status.FAIL, f
    assert f.message.startswith(said), f.message
    assert f.fix and fix in f.fix


def test_a_build_of_the_right_major_passes_and_a_pre_11_minor_by_its_row() -> None:
    assert judge("8.9.7", "12", "12.6").status is Status.PASS
    assert judge("7.6.5", UNTOLD, "10.1").status is Status.PASS


def test_an_unjudged_copy_beside_a_judged_one_is_named_in_the_pass() -> None:
    e = B.env(toolkits=dataclasses.replace(
        B.toolkit("12.4", root=PREFIX),
        toolkits=(*B.toolkit("12.4", root=PREFIX).toolkits,
                  *B.toolkit("12.6", root="/opt/cuda-12.6").toolkits)),
        cudnn=CudnnFacts((copy("8.9.7", "12"), dataclasses.replace(
            copy("9.99.0", UNTOLD), prefix="/opt/cuda-12.6", lib_dir="/opt/cuda-12.6/lib64",
            in_use=False))))
    (result,) = run_checks(e, TABLES, (check_cuda_build,)).results
    f = result.finding
    assert f.status is Status.PASS, f
    assert "/opt/cuda-12.6: cuDNN 9.99.0 is not in the tables" in f.message

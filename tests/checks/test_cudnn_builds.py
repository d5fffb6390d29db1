"""`gpudoctor.checks.cudnn_builds`: GD308-GD310 on real probed trees and hand-built facts.

GD308 cudnn-cuda-build-matches-toolkit by the rule (`compat.rules.cudnn_runs_with_cuda`):
a release's row first, the build at hand for a release the tables lack, and a copy no row or
rule can judge said to be unjudged, never passed. The finding names the rule or row."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.checks.cudnn_builds import check_cuda_build, check_torch_cudnn
from gpudoctor.compat import KnownBadCudnn, load_tables
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
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import env, torch
from tests.checks.test_cudnn import CHECKS, hand_install, probed, run
from tests.checks.test_machine_wins import finding as judged
from tests.checks.test_machine_wins import future_machine
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

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


# --------------------------------------------------------------------- real trees, hand-built facts


@pytest.mark.subprocess
def test_release_without_a_build_for_the_toolkit(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "7.6.5")
    f = run(probed(prefix, cuda="12.4"))["GD308"]
    assert f.status is Status.FAIL
    assert "cuDNN 7.6.5 has no build for CUDA 12 (its builds: 9.0" in f.message
    assert "(rule: cudnn-build-per-major, https://docs.nvidia.com/" in f.message
    assert f.message.endswith(f"the toolkit in {prefix} is CUDA 12.4")
    newest = TABLES.cudnn_for_cuda("12.4")[0]
    assert newest.build
    assert newest.build in (f.fix or "")


@pytest.mark.parametrize(
    ("runtime", "status"),
    [(8907, Status.PASS), (8902, Status.PASS), (8500, Status.FAIL), (90100, Status.FAIL)],
)
def test_runtime_cudnn_against_torchs_build(runtime: int, status: Status) -> None:
    # torch 2.3.1+cu121 was built with cuDNN 8.9.2.26 (PyTorch table)
    e = env(torch=torch("2.3.1+cu121", "12.1", ("H100",), cudnn=runtime))
    f = run(e)["GD309"]
    assert f.status is status, f.message
    if status is Status.FAIL:
        assert "compiled against cuDNN 8.9.2.26" in f.message
        # through the diagnosed interpreter, as the torch lines are
        assert f.fix == ("/usr/bin/python3 -m pip install --force-reinstall "
                         "nvidia-cudnn-cu12==8.9.2.26")


def test_cpu_torch_skips_the_build_check() -> None:
    f = run(env(torch=torch("2.13.0+cpu", None)))["GD309"]
    assert f.status is Status.SKIP
    assert "not a CUDA build" in f.message


def test_known_bad_release_warns() -> None:
    bad = KnownBadCudnn(version="9.1.0", reason="wrong results in grouped convolutions",
                        source="https://example.org/bug", status="verified")
    tables = dataclasses.replace(TABLES, known_bad=(bad,))
    e = env(cudnn=CudnnFacts((hand_install(),)))
    f = run_checks(e, tables, CHECKS).results[-1].finding
    assert f.status is Status.WARN
    assert "wrong results" in f.message
    assert run(e)["GD310"].status is Status.PASS


# ---------------------------------------------------------- GD309: a torch past the tables


def test_gd309_reads_the_installed_cudnn_wheel_for_a_torch_past_the_tables() -> None:
    f = judged(future_machine("590.44.01", 13010), "GD309")
    assert f.status is Status.PASS, f
    assert ("compiled against", "9.30.0.10 (the installed nvidia-cudnn-cu13 9.30.0.10 wheel)"
            ) in f.evidence
    older = judged(future_machine("590.44.01", 13010, cudnn=92000), "GD309")
    assert older.status is Status.FAIL, older
    assert older.fix == ("/usr/bin/python3 -m pip install --force-reinstall "
                         "nvidia-cudnn-cu13==9.30.0.10")
    unknown = judged(future_machine("590.44.01", 13010, wheels=()), "GD309")
    assert unknown.status is Status.SKIP
    assert "neither an installed nvidia-cudnn wheel nor the PyTorch table" in unknown.message


# round 6's r10-019 (https://github.com/facebookresearch/audiocraft/issues/186) and r10-020
# (https://github.com/FurkanGozukara/Stable-Diffusion/issues/9): torch's own check of the cuDNN
# it loads, quoted without torch's version or CUDA
TORCH_CUDNN_MISMATCH = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 7, 0) but "
    "found runtime version (8, 6, 0). PyTorch already comes bundled with cuDNN.\n")


def test_torchs_own_cudnn_mismatch_fails_gd309_without_its_version() -> None:
    env = read_reports([("issue", TORCH_CUDNN_MISMATCH)])
    f = check_torch_cudnn.run(env, load_tables())
    assert f.status is Status.FAIL, f.message
    assert "compiled against cuDNN 8.7.0 but runs cuDNN 8.6.0" in f.message
    # torch's CUDA is not in the report: no install line with a made-up wheel name, the two
    # wheels named instead; the pin is a release's wildcard ("8.7.0" is no wheel's version)
    assert f.fix and "pip install" not in f.fix and "nvidia-cudnn-cu==" not in f.fix
    assert "nvidia-cudnn-cu11 or nvidia-cudnn-cu12" in f.fix and "version 8.7.0.*" in f.fix

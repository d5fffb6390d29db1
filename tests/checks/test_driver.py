"""Unit tests of gpudoctor/checks/driver.py (more of GD101-GD113 in test_driver_rules.py,
test_gd101_driver_named.py and the scenario suites)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks.driver import check_driver_present, check_driver_vs_torch
from gpudoctor.checks.pytorch import check_torch_cuda_available
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, Status
from gpudoctor.reports.read import ReportError, read_reports

TABLES = load_tables()
ROUND4 = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round4" / "reports-C"


def _read(name: str) -> Environment:
    return read_reports([(name, (ROUND4 / name).read_text(encoding="utf-8"))])


@pytest.mark.parametrize(("name", "runs"), [
    ("r5-019.txt", "11.6"),  # a bare RuntimeError line, found version 11060
    ("r4-021.md", "9.1"),    # wrapped over six lines in an issue body, 9010
    ("r4-030.md", "10.1"),   # Colab, 10010
])
def test_torch_saying_the_driver_is_too_old_fails_gd103(name: str, runs: str) -> None:
    """A report holding only torch's "The NVIDIA driver on your system is too old (found version
    N)": torch's CUDA version is not in it, but torch raised that error because the driver's CUDA
    is below its own, which is GD103's question. Before, GD103 skipped ("torch's CUDA version is
    not in the report") while GD403 failed with the fix "upgrade the NVIDIA driver (see GD103)"
    (round-4 held-out reports, scored before this rule)."""
    env = _read(name)
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.FAIL, f
    assert f"the driver runs CUDA ≤ {runs}" in f.message and "torch says" in f.message
    assert f.fix and "upgrade the NVIDIA driver" in f.fix and f"CUDA ≤ {runs}" in f.fix
    # one cause, counted once: GD403 points at GD103 instead of failing beside it
    g = check_torch_cuda_available.run(env, TABLES)
    assert g.status is Status.SKIP and "see GD103" in g.message


def test_a_cuda_build_without_that_error_still_skips() -> None:
    """torch's CUDA unknown and no refusal of the driver in its words: nothing to compare."""
    text = ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
            "incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES "
            "after program start. Setting the available devices to be zero. (Triggered "
            "internally at ../c10/cuda/CUDAFunctions.cpp:109.)\n")
    f = check_driver_vs_torch.run(read_reports([("t.txt", text)]), TABLES)
    assert f.status is Status.SKIP


@pytest.mark.parametrize(("available", "status"), [("True", Status.PASS), ("False", Status.SKIP)])
def test_a_report_without_the_drivers_version_passes_gd103_where_torchs_cuda_initialised(
        available: str, status: Status) -> None:
    """torch.cuda.is_available() True is proof that the driver runs torch's CUDA, whatever its
    version; False leaves the driver unknown (GD101 and GD405 say why)."""
    text = (f"print(torch.__version__)\n1.11.0+cu113\nprint(torch.version.cuda)\n11.3\n"
            f"print(torch.cuda.is_available())\n{available}\n")
    finding = check_driver_vs_torch.run(read_reports([("issue", text)]), TABLES)
    assert finding.status is status, finding.message
    if status is Status.PASS:
        assert "its version is not in the report" in finding.message


def test_torchs_thc_insufficient_driver_error_fails_gd103() -> None:
    """Round 6's r9-022 (https://github.com/open-mmlab/mmskeleton/issues/30): torch 0.4's THC
    wording of cudaErrorInsufficientDriver, raised in torch's own code; no version stated."""
    text = ("RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA "
            "runtime version at torch/csrc/cuda/Module.cpp:107\n")
    finding = check_driver_vs_torch.run(read_reports([("issue", text)]), TABLES)
    assert finding.status is Status.FAIL, finding.message
    assert "cudaErrorInsufficientDriver" in finding.message
    # another program's wording of the same code is no torch build: not read as torch's
    with pytest.raises(ReportError):
        read_reports([("tf", "CUDA driver version is insufficient for CUDA runtime version\n")])


REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def test_a_cuda_build_of_unstated_cuda_that_initialised_passes_gd103_a_rocm_build_not() -> None:
    """collect_env of a torch whose CUDA version the report leaves out, but which says CUDA is
    available (round 3's r1-002, facebookresearch/detectron2#722: torch 1.4.0 on K80s): CUDA
    initialised, so the driver runs torch's CUDA, whatever version it is. A ROCm build with
    CUDA available (the MI300X report) says nothing of an NVIDIA driver: still a skip."""
    path = ROUND4.parents[1] / "round3" / "reports-A" / "r1-002.txt"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.PASS and "torch.cuda.is_available() is True" in f.message
    rocm = REPORTS / "collect_env-rocm713-mi300x.txt"
    env = read_reports([(rocm.name, rocm.read_text(encoding="utf-8"))])
    assert check_driver_vs_torch.run(env, TABLES).status is Status.SKIP


def test_a_mismatch_inside_a_container_beside_the_hosts_working_driver_fails_gd101() -> None:
    """iot-salzburg/gpu-jupyter#106 (round 5's r6-016): the host VM's nvidia-smi shows driver
    510.108.03; inside the gpu-jupyter container nvidia-smi says "Failed to initialize NVML:
    Driver/library version mismatch": the image's own driver libraries are another release."""
    path = ROUND4.parents[1] / "round5" / "reports-D" / "r6-016.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    f = check_driver_present.run(env, TABLES)
    assert f.status is Status.FAIL and "510.108.03" in f.message and "image" in f.message
    assert f.fix is not None and "--gpus all" in f.fix


@pytest.mark.parametrize("path", ["round3/reports-B/r1-048.md", "round5/reports-D/r6-021.md"])
def test_a_mismatch_from_another_environment_beside_the_working_driver_fails(path: str) -> None:
    """Round 3's r1-048 (a JupyterHub user's shell, not named as a container: "Failed to
    initialize NVML: Driver/library version mismatch" beside the host's 515.48.07) and round
    5's r6-021 (NixOS: the same words "with the flake enabled", the system's 545.29.02 without
    it): an environment of the machine loads NVML of another release. GD101 passed on the
    working driver; it fails, naming both."""
    file = Path(__file__).parents[1] / "fixtures" / "heldout" / path
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    finding = check_driver_present.run(env, load_tables())
    assert finding.status is Status.FAIL
    assert "elsewhere in the report NVML says 'Driver/library version mismatch'" in \
        finding.message
    # the working table alone passes
    table = "\n".join(line for line in file.read_text(encoding="utf-8").splitlines()
                      if "mismatch" not in line)
    alone = read_reports([(file.name, table)])
    assert check_driver_present.run(alone, load_tables()).status is Status.PASS


def test_mvc_passes_where_every_listed_build_of_the_release_has_a_cubin() -> None:
    """Round 8's r16-009 (vLLM's collect_env): torch 2.11.0+cu129, a CUDA variant the tables
    do not list for 2.11.0, on an RTX 4090 (sm_89) with driver 550.163.01 (CUDA 12.4). Minor-
    version compatibility runs it unless a kernel needs PTX JIT; every listed build of 2.11.0
    (cu126, cu128, cu130) has a cubin for sm_89, so GD103 passes (it warned: the build's own
    list unknown)."""
    file = ROUND4.parents[1] / "round8" / "reports-G" / "r16-009.txt"
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.PASS
    assert "every CUDA build of torch 2.11.0 in the tables (cu126, cu128, cu130) has a cubin " \
        "for sm_89" in f.message

"""GD407 versions-in-compat-tables (issue 21, item 4): a torch, CUDA, cuDNN or driver newer
than every release of its kind in the compat tables is a note in the report (a WARN of INFO
severity: `--strict` still exits 0), naming the versions and the tables' known_until date.
Judged on a recorded snapshot running a release past the tables (a torch 2.16.0 build)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from runner import gpudoctor

import tests.checks.envbuilder as B
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.checks.freshness import check_versions_in_tables
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    Environment,
    Reason,
    Result,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.snapshot import dumps, loads

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

TABLES = load_tables()
UNTIL = TABLES.known_until.isoformat() if TABLES.known_until else "?"
HEALTHY = Path(__file__).resolve().parents[1] / "fixtures" / "envs" / "h100-healthy.json"


def recorded() -> Environment:
    return loads(HEALTHY.read_text(encoding="utf-8"))


def with_torch_2_16(env: Environment) -> Environment:
    return dataclasses.replace(env, torch=B.torch("2.16.0+cu130", "13.0", ("H100",),
                                                  B.ARCH_CU130, 92000))


def judge(env: Environment) -> Result:
    (result,) = run_checks(env, TABLES, (check_versions_in_tables,)).results
    return result


def test_the_check_is_registered_once_in_the_pytorch_layer() -> None:
    assert [c.id for c in REGISTRY].count("GD407") == 1
    assert check_versions_in_tables.layer.value == "pytorch"


def test_a_machine_the_tables_know_passes() -> None:
    r = judge(recorded())
    assert r.finding.status is Status.PASS, r.finding
    assert f"within the compat tables (known until {UNTIL})" in r.finding.message


def test_a_torch_past_the_tables_is_a_note_naming_it_and_the_date() -> None:
    newest = TABLES.newest_torch(include_unverified=True).version
    r = judge(with_torch_2_16(recorded()))
    assert r.finding.status is Status.WARN and r.severity is Severity.INFO, r
    assert f"known until {UNTIL}" in r.finding.message
    assert f"torch 2.16.0+cu130 (newest in the tables: {newest})" in r.finding.message
    assert "family rules" in r.finding.message
    assert ("torch", "2.16.0+cu130") in r.finding.evidence
    # nothing else is newer here: the note names only torch
    assert "CUDA 13.0" not in r.finding.message and "driver" not in r.finding.message


def system_copy(version: str) -> CudnnInstall:
    return CudnnInstall(
        origin="toolkit /usr/local/cuda", lib_dir="/usr/local/cuda/lib64",
        header="/usr/local/cuda/include/cudnn_version.h", header_version=version, libraries=(),
        library_version=version, missing_deps=(), cuda_build="13", found_by=("/usr/local/cuda",),
        prefix="/usr/local/cuda", in_use=True)


def test_cuda_cudnn_and_driver_past_the_tables_are_named_each_once() -> None:
    cudnn = CudnnFacts((system_copy("10.0.0"),))
    e = B.env(nvml=B.nvml("700.10.01", 13090, B.gpu("H100")), toolkits=B.toolkit("13.9"),
              torch=B.torch("2.15.0+cu130", "13.0", ("H100",), B.ARCH_CU130, 100000),
              cudnn=cudnn)
    r = judge(e)
    assert r.finding.status is Status.WARN and r.severity is Severity.INFO, r
    m = r.finding.message
    assert "CUDA 13.9 (newest in the tables:" in m and "driver 700.10.01" in m
    assert m.count("cuDNN 10.0.0") == 1  # torch's and the system copy: one release, said once
    assert "torch 2.15.0" not in m


def test_nothing_to_compare_skips() -> None:
    gone = Unavailable(Reason.NOT_INSTALLED, "not here")
    e = B.env(nvml=B.NO_NVML, libcuda=B.NO_LIBCUDA, toolkits=gone, torch=gone, cudnn=B.NO_CUDNN)
    assert judge(e).finding.status is Status.SKIP


@pytest.mark.slow
def test_the_note_leaves_a_strict_check_green(tmp_path: Path) -> None:
    """Through the CLI, on the snapshot with torch 2.16.0: the JSON shows the note (status
    warn, severity info) and `--strict` exits 0."""
    snap = tmp_path / "torch-2.16.json"
    snap.write_text(dumps(with_torch_2_16(recorded())), encoding="utf-8")
    done = gpudoctor("check", "--from-snapshot", str(snap), "--format", "json", "--strict")
    assert done.returncode == 0, done.stderr
    (found,) = [f for f in json.loads(done.stdout)["findings"] if f["id"] == "GD407"]
    assert (found["status"], found["severity"]) == ("warn", "info")
    assert "torch 2.16.0+cu130" in found["message"]

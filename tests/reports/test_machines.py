"""Texts captured on real GPU machines (tests/fixtures/machines): each one is read, names the
machine's facts, and judges it healthy (no failure, no warning), as the live `check` did there."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor import views as V
from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import Severity, Status
from gpudoctor.reports.read import read_reports

MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
H200 = MACHINES / "h200-x1"
# each text: the driver version it states, whether it names the GPU, and torch's version
READ = {
    "collect_env.txt": ("580.159.04", False, "2.11.0+cu130"),  # GPU models only: no index
    "nvidia-smi.txt": ("580.159.04", True, None),
    "nvidia-smi-q.txt": ("580.159.04", True, None),
    "nvidia-smi-q-x.xml": ("580.159.04", True, None),
    "nvidia-smi-L.txt": (None, True, None),  # the GPUs only: the version is not shown
    "nvidia-smi-query-gpu.txt": ("580.159.04", True, None),
    "torch-prints.txt": (None, False, "2.11.0+cu130"),  # print(version, cuda, available)
}


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


@pytest.mark.parametrize("name", READ)
def test_the_h200s_texts_judge_it_healthy(name: str, tables: Tables) -> None:
    driver, names_gpu, torch = READ[name]
    env = read_reports([(name, (H200 / name).read_text(encoding="utf-8"))])
    assert V.driver_version(env) == driver
    if names_gpu:
        assert [g.name for g in V.gpus(env)] == ["NVIDIA H200"]
    assert V.torch_version(env) == torch
    if torch:
        assert V.torch_cuda(env) == "13.0"
    report = run_checks(env, tables)
    bad = [(r.check_id, r.finding.message) for r in report.results
           if r.finding.status is Status.FAIL
           or (r.finding.status is Status.WARN and r.severity is not Severity.INFO)]
    assert bad == []
    passed = {r.check_id for r in report.results if r.finding.status is Status.PASS}
    assert "GD101" in passed or name == "torch-prints.txt"  # the driver is seen, and judged


def test_all_the_texts_together_are_one_healthy_machine(tables: Tables) -> None:
    env = read_reports([(n, (H200 / n).read_text(encoding="utf-8")) for n in READ])
    report = run_checks(env, tables)
    status = {r.check_id: r.finding.status for r in report.results}
    assert Status.FAIL not in status.values()
    assert {"GD101", "GD102", "GD103", "GD404"} <= {k for k, v in status.items()
                                                    if v is Status.PASS}


def test_collect_env_with_every_gpu_hidden_fails_gd403_and_points_at_the_process(
        tables: Tables) -> None:
    """collect_env run on the H200 with CUDA_VISIBLE_DEVICES="" (captured there): nvidia-smi,
    which ignores the variable, lists the GPU and the driver, so only torch's view fails. The
    driver runs the build and the GPU is in its arch list; what is left is the process's view,
    and the fix says so instead of pointing at the driver."""
    text = (H200 / "collect_env-hidden-gpus.txt").read_text(encoding="utf-8")
    report = run_checks(read_reports([("collect_env-hidden-gpus.txt", text)]), tables)
    status = {r.check_id: r.finding.status for r in report.results}
    assert [k for k, v in status.items() if v is Status.FAIL] == ["GD403"]
    assert {"GD101", "GD103", "GD404"} <= {k for k, v in status.items() if v is Status.PASS}
    gd403 = next(r.finding for r in report.results if r.check_id == "GD403")
    assert "CUDA_VISIBLE_DEVICES" in gd403.fix and "nvidia-uvm" in gd403.fix

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
READ = ["collect_env.txt", "nvidia-smi.txt", "nvidia-smi-q.txt", "nvidia-smi-q-x.xml",
        "nvidia-smi-L.txt"]


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


@pytest.mark.parametrize("name", READ)
def test_the_h200s_texts_judge_it_healthy(name: str, tables: Tables) -> None:
    env = read_reports([(name, (H200 / name).read_text(encoding="utf-8"))])
    # `nvidia-smi -L` lists the GPUs only: the driver answered, its version is not shown
    assert V.driver_version(env) == (None if name == "nvidia-smi-L.txt" else "580.159.04")
    if name != "collect_env.txt":  # collect_env names the GPU model only
        assert [g.name for g in V.gpus(env)] == ["NVIDIA H200"]
    if name == "collect_env.txt":
        assert V.torch_cuda(env) == "13.0" and V.torch_version(env) == "2.11.0+cu130"
    report = run_checks(env, tables)
    bad = [(r.check_id, r.finding.message) for r in report.results
           if r.finding.status is Status.FAIL
           or (r.finding.status is Status.WARN and r.severity is not Severity.INFO)]
    assert bad == []
    passed = {r.check_id for r in report.results if r.finding.status is Status.PASS}
    assert "GD101" in passed  # the driver is seen, and judged


def test_all_the_texts_together_are_one_healthy_machine(tables: Tables) -> None:
    env = read_reports([(n, (H200 / n).read_text(encoding="utf-8")) for n in READ])
    report = run_checks(env, tables)
    status = {r.check_id: r.finding.status for r in report.results}
    assert Status.FAIL not in status.values()
    assert {"GD101", "GD102", "GD103", "GD404"} <= {k for k, v in status.items()
                                                    if v is Status.PASS}

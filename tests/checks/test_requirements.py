"""`gpudoctor.checks.requirements`: GD601-GD607 judge `check --require` on recorded machines:
each kind measured, GD101 under a GPU requirement, facts a pasted report lacks, a malformed
requirement in a snapshot, cuDNN's build number (the parsing: tests/test_requirements.py; the
CLI: tests/ci/test_requirements.py)."""

from __future__ import annotations

import dataclasses

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.checks.requirements import KIND_CHECKS
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, GpuFacts, NvmlFacts, Reason, Status, Unavailable
from gpudoctor.requirements import KINDS, Requirement, parse_requirements
from gpudoctor.snapshot import loads
from tests.ci.cikit import GPU_LESS, H100

pytestmark = pytest.mark.subprocess  # the mark these tests had in ci/test_requirements.py

TABLES = load_tables()


def h100() -> Environment:
    return loads(H100.read_text())


def gpu_less() -> Environment:
    return loads(GPU_LESS.read_text())


def judge(env: Environment, *reqs: str) -> dict[str, tuple[Status, str]]:
    env = dataclasses.replace(env, requirements=parse_requirements(reqs))
    report = run_checks(env, TABLES, REGISTRY)
    return {r.check_id: (r.finding.status, r.finding.message) for r in report.results}

def test_every_kind_has_one_check_that_skips_when_not_required() -> None:
    assert set(KIND_CHECKS) == set(KINDS)
    found = judge(h100())
    for check_id in KIND_CHECKS.values():
        assert found[check_id][0] is Status.SKIP, check_id


def test_measured_values_on_a_recorded_h100() -> None:
    env = h100()
    assert isinstance(env.nvml, NvmlFacts)
    gpus = [g for g in env.nvml.gpus if isinstance(g, GpuFacts)]
    n, g = len(gpus), gpus[0]
    assert isinstance(g.compute_capability, str) and isinstance(g.memory_total, int)
    major, minor = (int(x) for x in g.compute_capability.split("."))
    gib = g.memory_total / 2**30
    drv = env.nvml.driver_version
    ok = judge(env, f"gpus>={n}", f"driver>={drv.split('.')[0]}",
               f"arch>=sm_{major}{minor}", f"gpu-memory>={int(gib)}GiB", "torch>=1.0")
    for kind in ("gpus", "driver", "arch", "gpu-memory", "torch"):
        assert ok[KIND_CHECKS[kind]][0] is Status.PASS, ok[KIND_CHECKS[kind]]
    bad = judge(env, f"gpus>={n + 7}", f"driver>={int(drv.split('.')[0]) + 1}",
                f"arch>=sm_{major + 1}0", f"gpu-memory>={int(gib) + 1}GiB", "torch>=99")
    status, message = bad["GD601"]
    assert status is Status.FAIL
    assert message.startswith(f"requirement gpus>={n + 7}: {n} GPU") and g.name in message
    assert bad["GD602"] == (Status.FAIL, f"requirement driver>={int(drv.split('.')[0]) + 1}: "
                            f"driver {drv}")
    assert f"is sm_{major}{minor}" in bad["GD606"][1] and g.name in bad["GD606"][1]
    assert f"has {gib:.1f} GiB" in bad["GD607"][1]
    assert bad["GD605"][0] is Status.FAIL and "torch>=99: torch " in bad["GD605"][1]


def test_cuda_is_the_drivers_cuda() -> None:
    env = h100()
    assert isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.cuda_driver_version, int)
    v = env.nvml.cuda_driver_version
    have = f"{v // 1000}.{v % 1000 // 10}"
    assert judge(env, f"cuda>={have}")["GD603"][0] is Status.PASS
    status, message = judge(env, f"cuda>={v // 1000 + 1}.0")["GD603"]
    assert status is Status.FAIL and f"the driver runs CUDA ≤ {have}" in message


def test_cudnn_is_the_one_torch_loads() -> None:
    found = judge(h100(), "cudnn>=1", "cudnn>=999")["GD604"]
    assert found[0] is Status.FAIL and "torch loads cuDNN" in found[1]
    assert "cudnn>=1: " not in found[1]  # only the unmet one is named


def test_a_gpu_less_runner_fails_a_gpu_requirement_and_gd101_too() -> None:
    env = gpu_less()
    plain = judge(env)["GD101"]
    assert plain[0] is Status.WARN  # the note of a GPU-less machine
    for req in ("gpus>=1", "driver>=535", "cuda>=12.1", "arch>=sm_80", "gpu-memory>=1GiB"):
        found = judge(env, req)
        assert found["GD101"][0] is Status.FAIL, req
        assert req in found["GD101"][1]
        assert found[KIND_CHECKS[req.split(">")[0]]][0] is Status.FAIL, req
    assert "0 GPUs visible" in judge(env, "gpus>=1")["GD601"][1] or "sees 0 GPUs" in judge(
        env, "gpus>=1")["GD601"][1]
    # a requirement no GPU-less machine fails leaves the note a note
    assert judge(env, "gpus==0", "torch>=1.0")["GD101"] == plain


def test_a_pasted_report_that_lacks_a_fact_skips_the_requirement() -> None:
    unknown = Unavailable(Reason.NOT_REPORTED, "not in the report")
    env = dataclasses.replace(h100(), nvml=unknown, libcuda=unknown, torch=unknown)
    found = judge(env, "driver>=535", "gpus>=1", "torch>=2.4")
    for check_id in ("GD601", "GD602", "GD605"):
        assert found[check_id][0] is Status.SKIP, found[check_id]


def test_a_malformed_requirement_in_a_snapshot_fails_its_check_without_a_crash() -> None:
    env = dataclasses.replace(h100(), requirements=(Requirement("gpus", ">=", "many"),))
    report = run_checks(env, TABLES, REGISTRY)
    found = {r.check_id: r.finding for r in report.results}["GD601"]
    assert found.status is Status.FAIL and "malformed requirement gpus>=many" in found.message

def with_cudnn(env: Environment, wheel: str | None) -> Environment:
    """`env` whose torch loads cuDNN 9.26.0 (torch's integer 92600), with the nvidia-cudnn
    wheel `wheel` beside it (None: no wheel)."""
    from gpudoctor.model import TorchFacts, TorchRuntime, TorchStatic

    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.runtime, TorchRuntime)
    assert isinstance(t.static, TorchStatic)
    wheels = (("nvidia-cudnn-cu12", wheel),) if wheel else ()
    return dataclasses.replace(env, torch=dataclasses.replace(
        t, runtime=dataclasses.replace(t.runtime, cudnn_version=92600),
        static=dataclasses.replace(t.static, nvidia_wheels=wheels)))

@pytest.mark.parametrize(("wheel", "req", "status"), [
    ("9.26.0.51", "cudnn==9.26.0.51", Status.PASS), ("9.26.0.51", "cudnn==9.26.0.50", Status.FAIL),
    ("9.26.0.51", "cudnn>=9.26.0.52", Status.FAIL), (None, "cudnn==9.26.0.51", Status.PASS),
    (None, "cudnn==9.26.1.1", Status.FAIL), (None, "cudnn>=9.26", Status.PASS),
])
def test_cudnn_build_number(wheel: str | None, req: str, status: Status) -> None:
    """torch states cuDNN 9.26.0: the build number comes from the wheel; without one the
    requirement is judged at the three parts torch states."""
    assert judge(with_cudnn(h100(), wheel), req)["GD604"][0] is status

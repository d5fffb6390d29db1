"""`gpudoctor.model`: the core value types. Their few derived answers (a layer's heading, a
recorded variable, the toolkit in use, a report's tally), which Environment fields a check may
read, and that every value is frozen. (JSON round trips: tests/test_snapshot.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.model import (
    ENVIRONMENT_FIELDS,
    SMOKE_NOT_RUN,
    CheckId,
    Environment,
    Finding,
    HostFacts,
    Layer,
    Reason,
    Report,
    Result,
    Severity,
    Status,
    ToolkitFacts,
    ToolkitsFacts,
)
from gpudoctor.snapshot import loads

HEALTHY = Path(__file__).resolve().parent / "fixtures" / "envs" / "h100-healthy.json"


@pytest.fixture(scope="module")
def env() -> Environment:
    return loads(HEALTHY.read_text(encoding="utf-8"))


def test_every_layer_has_its_own_heading() -> None:
    headings = [layer.heading for layer in Layer]
    assert len(set(headings)) == len(Layer)
    assert Layer.DRIVER.heading == "Driver & GPUs" and Layer.HOST.heading == "Environment"


def test_statuses_and_severities_order_as_the_policy_reads_them() -> None:
    assert [str(s) for s in Status] == ["pass", "warn", "fail", "skip"]
    assert Severity.INFO < Severity.WARNING < Severity.ERROR


def test_getenv_reads_a_recorded_variable(env: Environment) -> None:
    assert isinstance(env.host, HostFacts)
    host = dataclasses.replace(env.host, env=(("CUDA_VISIBLE_DEVICES", "0,1"),
                                              ("LD_LIBRARY_PATH", "")))
    assert host.getenv("CUDA_VISIBLE_DEVICES") == "0,1"
    assert host.getenv("LD_LIBRARY_PATH") == ""  # set, and empty: not the same as unset
    assert host.getenv("CUDA_HOME") is None


def _toolkit(root: str, in_use: bool) -> ToolkitFacts:
    return ToolkitFacts(root, "/usr/local/cuda", "12.4", (), f"{root}/bin/nvcc", False, in_use)


def test_the_toolkit_in_use_is_the_one_marked_so() -> None:
    first, second = _toolkit("/usr/local/cuda-12.4", False), _toolkit("/opt/cuda", True)
    assert ToolkitsFacts((first, second)).in_use is second
    assert ToolkitsFacts((first,)).in_use is None
    assert ToolkitsFacts(()).in_use is None


def test_a_report_counts_each_status(env: Environment) -> None:
    def result(n: int, status: Status) -> Result:
        return Result(CheckId(f"GD{n}"), "slug", "title", Layer.DRIVER, Severity.ERROR,
                      Finding(status, "message"))

    statuses = (Status.PASS, Status.FAIL, Status.PASS, Status.SKIP)
    r = Report(env, tuple(result(100 + i, s) for i, s in enumerate(statuses)))
    assert [r.count(s) for s in Status] == [2, 0, 1, 1]
    assert Report(env, ()).count(Status.PASS) == 0


def test_the_fields_a_check_may_read_leave_out_the_metadata() -> None:
    """A field added to Environment lands here (a check may then declare it in `reads`)."""
    readable = set(ENVIRONMENT_FIELDS)
    assert readable == {"host", "nvml", "libcuda", "toolkits", "torch", "cudnn", "smoke",
                        "requirements"}
    names = {f.name for f in dataclasses.fields(Environment)}
    assert names - ENVIRONMENT_FIELDS == {"gpudoctor_version", "created", "sources"}


def test_an_environment_without_a_smoke_run_says_how_to_run_one(env: Environment) -> None:
    bare = Environment(env.gpudoctor_version, env.created, env.host, env.nvml, env.libcuda,
                       env.toolkits, env.torch, env.cudnn)
    assert bare.smoke is SMOKE_NOT_RUN and SMOKE_NOT_RUN.reason is Reason.SKIPPED
    assert "--smoke" in SMOKE_NOT_RUN.message
    assert (bare.sources, bare.requirements) == ((), ())


def test_the_values_are_frozen(env: Environment) -> None:
    finding = Finding(Status.WARN, "message")
    assert finding.check_id == "" and finding.severity is None  # filled in by the runner
    for value, name in ((env, "torch"), (finding, "status"), (env.host, "kernel")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)

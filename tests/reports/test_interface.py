"""What every report reader returns: a Partial of the facts one block states, NOT_REPORTED for
what it does not state, and torch's runtime as a report that states versions gives it."""

from __future__ import annotations

import pytest

from gpudoctor.model import Reason, TorchRuntime, Unavailable
from gpudoctor.reports.interface import (
    Partial,
    ReportError,
    named_gpu,
    not_reported,
    stated_driver,
    stated_runtime,
    tag_cuda,
)


def test_not_reported_is_its_own_reason_with_the_message_and_detail() -> None:
    u = not_reported("the driver is not in the report", "it said: hello")
    assert u == Unavailable(Reason.NOT_REPORTED, "the driver is not in the report",
                            "it said: hello")
    assert not_reported("x").detail is None


def test_a_partial_states_nothing_it_is_not_given() -> None:
    p = Partial(kind="nvidia-smi", rank=4)
    assert p.complete is True
    assert (p.nvml, p.torch, p.host, p.toolkits, p.cudnn, p.libcuda) == (None,) * 6


def test_a_report_error_is_a_value_error() -> None:
    assert issubclass(ReportError, ValueError)


@pytest.mark.parametrize(("version", "cuda"), [
    ("2.1.0+cu118", "11.8"), ("2.4.1+cu121", "12.1"), ("1.7.1+cu92", "9.2"),
    ("2.9.0+cu130", "13.0"), ("2.1.0", None), ("2.1.0+cpu", None), ("2.3.0+rocm6.0", None),
    ("2.1.0+cu", None), ("2.1.0+cu118 extra", None), ("9" * 50 + "+cu118", None),
])
def test_the_cuda_of_a_local_tag(version: str, cuda: str | None) -> None:
    assert tag_cuda(version) == cuda


def _rt(version: str, cuda: str | None, available: bool | None, hip: str | None = None,
        archs: tuple[str, ...] | None = None) -> TorchRuntime | Unavailable:
    return stated_runtime(version, cuda, available, hip, why="is not in the list",
                          source="a version list", archs=archs)


def test_a_cuda_build_stated_keeps_what_is_stated_and_reports_nothing_else() -> None:
    rt = _rt("2.4.1+cu121", "12.1", True, archs=("sm_80", "sm_90"))
    assert isinstance(rt, TorchRuntime)
    assert (rt.version, rt.cuda, rt.hip, rt.cuda_available) == ("2.4.1+cu121", "12.1", None, True)
    assert rt.arch_list == ("sm_80", "sm_90") and rt.cuda_init_error is None
    for fact in (rt.cudnn_version, rt.device_count, rt.devices, rt.file, rt.mapped_libraries):
        assert isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED
        assert fact.message.endswith("is not in the list")
    assert isinstance(rt.cudnn_conv, Unavailable) and "a version list" in rt.cudnn_conv.message


def test_cpu_and_rocm_builds_have_no_cuda() -> None:
    cpu = _rt("2.4.1+cpu", None, False)
    rocm = _rt("2.3.0+rocm6.0", None, True, hip="6.0")
    assert isinstance(cpu, TorchRuntime) and cpu.cuda is None and cpu.hip is None
    assert isinstance(rocm, TorchRuntime) and rocm.cuda is None and rocm.hip == "6.0"
    assert isinstance(cpu.cuda_init_error, Unavailable)  # unavailable, and the reason unstated


def test_a_version_that_shows_no_build_leaves_whether_it_is_a_cuda_build_unknown() -> None:
    rt = _rt("2.4.1", None, None)
    assert isinstance(rt, Unavailable) and rt.reason is Reason.NOT_REPORTED
    assert rt.message == "whether torch 2.4.1 is a CUDA build is not in the list"
    assert isinstance(_rt("2.4.1", None, False), Unavailable)


def test_cuda_available_makes_an_untagged_build_a_cuda_one_of_unstated_version() -> None:
    rt = _rt("2.4.1", None, True)
    assert isinstance(rt, TorchRuntime) and isinstance(rt.cuda, Unavailable)
    assert "CUDA is available, so it is a CUDA build" in rt.cuda.message
    assert isinstance(rt.arch_list, Unavailable)  # not shown: not reported


def test_availability_unstated_is_not_reported_and_warned_gpus_pass_through() -> None:
    rt = stated_runtime("2.4.1+cu121", "12.1", None, None, why="is not stated",
                        source="x", archs=None, warned_gpus=(("0", "sm_50"),))
    assert isinstance(rt, TorchRuntime) and isinstance(rt.cuda_available, Unavailable)
    assert isinstance(rt.cuda_init_error, Unavailable)  # nor, then, why it is not
    assert rt.warned_gpus == (("0", "sm_50"),)


def test_a_named_gpu_states_what_the_report_gives_and_no_more() -> None:
    why = "is not in the report (a list)"
    gpu = named_gpu(1, "NVIDIA A100", why, uuid="GPU-1", compute_capability="8.0")
    assert (gpu.index, gpu.name, gpu.uuid, gpu.compute_capability) == (1, "NVIDIA A100",
                                                                       "GPU-1", "8.0")
    assert isinstance(gpu.memory_total, Unavailable)
    assert gpu.memory_total.message == f"the GPU's memory {why}"
    assert isinstance(gpu.mig_mode, Unavailable)
    assert named_gpu(0, "x", why, mig_mode=True).mig_mode is True
    driver = stated_driver("a list", why, (gpu,), "550.54.15")
    assert driver.driver_version == "550.54.15" and driver.gpus == (gpu,)
    assert isinstance(driver.cuda_driver_version, Unavailable)
    assert driver.cuda_driver_version.reason is Reason.NOT_REPORTED
    unstated = stated_driver("a list", why, ())
    assert isinstance(unstated.driver_version, Unavailable)

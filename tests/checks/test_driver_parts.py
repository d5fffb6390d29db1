"""Unit tests of gpudoctor/checks/driver_parts.py: what GD101 reads of the driver's parts."""

from __future__ import annotations

import dataclasses

import pytest

from gpudoctor.checks.driver_parts import driver_parts, mismatch, tools_apart
from gpudoctor.model import LibcudaFacts, NvmlFacts, Reason, Status, Unavailable
from tests.checks.envbuilder import env, gpu, host, nvml


def _smi(driver: str, smi: str) -> NvmlFacts:
    return dataclasses.replace(nvml(driver, 12020, gpu("H100")), smi_version=smi)


@pytest.mark.parametrize(("driver", "smi", "apart"), [
    ("418.67", "450.66", True),  # a container image's own nvidia-smi beside an older module
    ("535.104.05", "535.104.05", False),
    ("555.99", "555.52.01", False),  # WSL: the Windows driver's number, the Linux tools'
    ("556.12", "555.52.01", False),  # WSL: the next branch
    ("550.99", "555.52.01", True),  # an older Windows-style number is no WSL pairing
    # WSL as real tables show it (round 11's r14-015, round 16's r35-028 and r36-022): the
    # Windows driver a few majors on within its series
    ("527.27", "525.60.07", False),
    ("572.83", "570.133.07", False),
    ("576.80", "570.133.20", False),
    ("590.12", "570.133.20", True),  # two series apart: no driver package pairs them
    ("450.66", "418.67.01", True),  # Linux's own tools of an older release, far apart
    # WSL's tools in two parts (round 18's r39-003, an NVIDIA forum question): NVIDIA-SMI
    # 535.103 beside the Windows driver 537.13; before R465 WSL ran no CUDA: no such pairing
    ("537.13", "535.103", False),
    ("460.89", "455.32", True),
    # R319-R3xx's nvidia-smi put its own major first (round 11's r26-018: "NVIDIA-SMI 5.325.15
    # Driver Version: 325.15"; "5.319.37" beside 319.37 in tables of that time)
    ("325.15", "5.325.15", False),
    ("319.37", "5.319.37", False),
    ("319.37", "5.325.15", True),
])
def test_tools_from_another_release(driver: str, smi: str, apart: bool) -> None:
    said = tools_apart(_smi(driver, smi))
    assert (said is not None) is apart
    if said:
        assert smi in said


def test_the_parts_are_the_module_and_the_libraries() -> None:
    e = env(host=host(nvidia_module="535.104.05",
                      nvml_libraries=(("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                       "550.54.15"),
                                      ("/usr/lib64/libnvidia-ml.so.1", "550.54.15"))))
    assert driver_parts(e) == ("535.104.05", ("550.54.15",))


def test_libcuda_stands_in_for_the_module() -> None:
    e = env(host=host(), libcuda=LibcudaFacts("libcuda.so.1", 12020, "535.104.05"))
    assert driver_parts(e) == ("535.104.05", ())


def test_no_host_no_parts() -> None:
    e = env(host=Unavailable(Reason.NOT_REPORTED, "not in the report"))
    assert driver_parts(e) == (None, ())


@pytest.mark.parametrize(("container", "in_fix"), [(None, False), ("docker", True)])
def test_the_mismatch_names_both_versions(container: str | None, in_fix: bool) -> None:
    e = env(host=host(container=container))
    finding = mismatch(e, "535.104.05", ("550.54.15",), (("NVML", "mismatch"),))
    assert finding.status is Status.FAIL
    assert "550.54.15" in finding.message and "535.104.05" in finding.message
    assert finding.fix is not None and "sudo modprobe nvidia" in finding.fix
    assert ("image must not ship driver libraries" in finding.fix) is in_fix


def test_a_mismatch_nvml_reports_without_versions() -> None:
    finding = mismatch(env(host=Unavailable(Reason.NOT_REPORTED, "-")), None, (), ())
    assert finding.status is Status.FAIL
    assert "user-space library and kernel module are different versions" in finding.message

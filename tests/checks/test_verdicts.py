"""Classes of wrong verdict found on real setups (issue 8), each fixed: hand-built facts, and
the real probes over real files (a prepared root, real directories, the real torch).

- GPU-less machines: a CUDA build with no driver, a CPU build beside a toolkit: notes, exit 0
  with `--strict`; a GPU, a driver or a device node turns them back into failures; "no driver"
  is counted once (GD101), GD403 skips;
- a driver library / kernel module version mismatch.

(The GD401/GD406 tests of PyPI's default wheel and of shadowing copies are in
tests/checks/test_pytorch.py, GD503's of empty LD_LIBRARY_PATH entries in test_host.py.)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    DeviceNode,
    Environment,
    Reason,
    Severity,
    Status,
    TorchFacts,
    Unavailable,
)
from gpudoctor.policy import Verdict, exit_code, verdict
from gpudoctor.probes.host import probe_host
from gpudoctor.probes.interface import Deps
from tests.checks.envbuilder import (
    NO_LIBCUDA,
    NO_NVML,
    PCI_RTX3090,
    env,
    finding,
    host,
    results,
    toolkit,
    torch,
)

TABLES = load_tables()


# ---------------------------------------------------------------------------- GPU-less machines


CUDA_TORCH_NO_DRIVER = torch("2.13.0+cu130", "13.0", (), ("sm_90",), 92000,
                             "RuntimeError: Found no NVIDIA driver on your system.")
NO_TOOLKIT = Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found")


def gpu_less(**kw: object) -> Environment:
    """A CI runner: no GPU, no driver, no device node, PyPI's CUDA torch."""
    kw.setdefault("host", host(dev_nodes=(), pci_gpus=()))
    kw.setdefault("toolkits", NO_TOOLKIT)
    kw.setdefault("torch", CUDA_TORCH_NO_DRIVER)
    return env(nvml=NO_NVML, libcuda=NO_LIBCUDA, **kw)


def test_cuda_build_without_a_gpu_is_a_note_and_exit_0_with_strict() -> None:
    e = gpu_less()
    got = results(e)
    gd101 = got["GD101"]
    assert verdict(gd101) is Verdict.NOTE and gd101.severity is Severity.INFO
    assert "will use a GPU once one with a driver ≥ 580.65.06 is present" in gd101.finding.message
    assert "install the NVIDIA driver ≥ 580.65.06" in (gd101.finding.fix or "")
    assert got["GD403"].finding.status is Status.SKIP
    assert "(see GD101)" in got["GD403"].finding.message
    report = run_checks(e, TABLES, REGISTRY)
    assert exit_code(report, strict=False) == 0
    assert exit_code(report, strict=True) == 0


def test_cpu_build_beside_a_toolkit_without_a_gpu_is_a_note() -> None:
    e = gpu_less(torch=torch("2.13.0+cpu", None), toolkits=toolkit("13.0"))
    got = results(e)
    assert verdict(got["GD402"]) is verdict(got["GD101"]) is Verdict.NOTE
    assert got["GD402"].finding.fix  # the install line, for where a GPU is
    assert exit_code(run_checks(e, TABLES, REGISTRY), strict=True) == 0


def test_cpu_build_alone_without_a_gpu_passes() -> None:
    got = results(gpu_less(torch=torch("2.13.0+cpu", None)))
    assert got["GD402"].finding.status is Status.PASS
    assert got["GD101"].finding.status is Status.SKIP


SIGNS = {
    "pci": {"host": host(dev_nodes=(), pci_gpus=(PCI_RTX3090,))},
    "dev-nodes": {"host": host(pci_gpus=(), dev_nodes=(DeviceNode("/dev/nvidia0", True, True),))},
    "kernel-module": {"host": host(dev_nodes=(), pci_gpus=(), nvidia_module="550.54.15")},
    "driver-library": {"host": host(dev_nodes=(), pci_gpus=(), nvml_libraries=(
        ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "550.54.15"),))},
}


@pytest.mark.parametrize("sign", sorted(SIGNS))
def test_a_sign_of_a_gpu_makes_the_same_states_failures(sign: str) -> None:
    e = gpu_less(**SIGNS[sign])
    got = results(e)
    assert got["GD101"].finding.status is Status.FAIL, got["GD101"].finding.message
    assert verdict(got["GD101"]) is not Verdict.NOTE
    assert got["GD403"].finding.status is Status.SKIP  # still counted once
    cpu = results(gpu_less(torch=torch("2.13.0+cpu", None), toolkits=toolkit("13.0"),
                           **SIGNS[sign]))
    assert cpu["GD402"].finding.status is Status.FAIL


def test_nvml_that_finds_a_driver_it_cannot_use_is_a_sign() -> None:
    nvml = Unavailable(Reason.DRIVER_NOT_LOADED, "the NVIDIA kernel driver is not loaded")
    e = dataclasses.replace(gpu_less(), nvml=nvml)
    f = finding(e, "GD101")
    assert f.status is Status.FAIL
    assert "kernel module is not loaded" in f.message


@pytest.mark.slow
def test_real_machine_without_a_gpu(real_torch_facts: TorchFacts) -> None:
    """This machine's own probes: where it has no GPU, the verdict passes `--strict`'s bar on
    the driver and torch checks (PyPI's CUDA torch here: notes and skips, no failure)."""
    from gpudoctor import views as V
    from gpudoctor.probes.gather import collect

    e = dataclasses.replace(collect(Deps(no_torch=True)), torch=real_torch_facts)
    if V.gpu_signs(e):
        pytest.skip(f"this machine has a GPU: {V.gpu_signs(e)[0]}")
    got = results(e)
    for check_id in ("GD101", "GD402", "GD403", "GD406"):
        r = got[check_id]
        assert r.finding.status is not Status.FAIL, (check_id, r.finding.message)
        assert verdict(r) in (Verdict.PASS, Verdict.NOTE, Verdict.SKIP), (check_id,
                                                                         r.finding.message)
    assert got["GD406"].finding.status is Status.PASS, got["GD406"].finding.message


# ---------------------------------------------------------------------------- driver mismatch


def test_library_and_module_versions_differ(tmp_path: Path) -> None:
    """Real files: /proc/driver/nvidia/version of 535.104.05, libnvidia-ml.so.1 pointing at
    the 535.183.01 library (the driver was upgraded without a reboot)."""
    proc = tmp_path / "proc/driver/nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC "
        "2023\nGCC version:  gcc version 12.3.0\n")
    lib = tmp_path / "usr/lib/x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "libnvidia-ml.so.535.183.01").write_bytes(b"\x7fELF")
    (lib / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.535.183.01")
    facts = probe_host(Deps(root=tmp_path, environ={}))
    mismatch = Unavailable(Reason.VERSION_MISMATCH, "the driver's user-space library and kernel "
                           "module differ")
    e = env(host=facts, nvml=mismatch, libcuda=NO_LIBCUDA,
            torch=torch("2.13.0+cu130", "13.0", (), ("sm_90",), 92000))
    f = finding(e, "GD101")
    assert f.status is Status.FAIL
    assert "library (535.183.01) and its kernel module (535.104.05)" in f.message
    assert "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia" in \
        (f.fix or "")
    assert "reboot" in (f.fix or "")
    assert "install the NVIDIA driver" not in (f.fix or "")
    assert finding(e, "GD403").status is Status.SKIP
    # the versions alone tell it, whatever NVML said
    e = dataclasses.replace(e, nvml=NO_NVML)
    assert "different versions" in finding(e, "GD101").message

"""The kernel side of the driver as the system's tools print it (gpudoctor/explain/kernel.py):
the module tools failing on an NVIDIA module, and a text that states two driver versions."""

from __future__ import annotations

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain

TABLES = load_tables()


def best(text: str) -> tuple[str, str]:
    expl = explain(text, TABLES, probe=None)
    if not expl.diagnoses:
        return "", ""
    sig = expl.diagnoses[0].match.signature
    return sig.id, sig.cause_class


@pytest.mark.parametrize(("text", "cls"), [
    # kmod, systemd, mkinitcpio, dracut: the driver's own module not built for this kernel
    ("modprobe: FATAL: Module nvidia_drm not found in directory /lib/modules/6.8.0-45-generic",
     "no-driver"),
    ("dracut-install: Failed to find module 'nvidia'\ndracut: FAILED: /usr/lib/dracut/"
     "dracut-install -D /var/tmp/dracut.x/initramfs --kerneldir /lib/modules/5.14.0/ -m nvidia",
     "no-driver"),
    ("systemd-modules-load[412]: Failed to find module 'nvidia-uvm'", "cuda-init-failure"),
    ("insmod: ERROR: could not insert module /tmp/NVIDIA-Linux/kernel/nvidia.ko: Invalid module "
     "format", "no-driver"),
    ("modprobe: ERROR: could not insert 'nvidia_uvm': No such device", "cuda-init-failure"),
    # the driver's module failing beside the unified-memory one: the driver is the cause
    ("==> ERROR: module not found: 'nvidia_uvm'\n==> ERROR: module not found: 'nvidia_drm'",
     "no-driver"),
])
def test_the_module_tools_failing_on_an_nvidia_module(text: str, cls: str) -> None:
    assert best(text)[1] == cls


@pytest.mark.parametrize("text", [
    "modprobe: FATAL: Module nvidiafb not found in directory /lib/modules/6.1.0",
    "==> ERROR: module not found: 'amdgpu'",
    "modprobe: ERROR: could not insert 'nvme_tcp': Unknown symbol in module",
])
def test_other_modules_are_not_the_nvidia_driver(text: str) -> None:
    assert not best(text)[0].startswith("kernel-module-")


@pytest.mark.parametrize("text", [
    # TensorFlow's diagnostics, the two versions on two lines
    ("I cuda_diagnostics.cc:185] libcuda reported version is: 535.104.5\n"
     "I cuda_diagnostics.cc:189] kernel reported version is: 525.60.13\n"),
    # nvidia-smi's NVML against the module's /proc file
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.54\n"
     "$ cat /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  "
     "545.29.06  Thu Nov 16 01:59:08 UTC 2023"),
])
def test_two_driver_versions_stated_are_a_mismatch(text: str) -> None:
    assert best(text)[1] == "driver-mismatch"


def test_the_same_driver_version_twice_is_no_mismatch() -> None:
    text = ("I cuda_diagnostics.cc:185] libcuda reported version is: 535.104.5\n"
            "I cuda_diagnostics.cc:189] kernel reported version is: 535.104.5\n")
    assert best(text) == ("", "")

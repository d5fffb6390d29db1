"""probe_host against a prepared root: os-release, /proc, container markers, /dev/nvidia*."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest

from gpudoctor.model import DeviceNode, HostFacts, Reason, Unavailable
from gpudoctor.probes.host import probe_host
from gpudoctor.probes.interface import Deps


def write(root: Path, path: str, text: str = "") -> Path:
    """A file under `root`, readable and writable by anyone (as /dev nodes usually are)."""
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    p.chmod(0o666)
    return p


def host(root: Path, **environ: str) -> HostFacts:
    facts = probe_host(Deps(root=root, environ=environ))
    assert isinstance(facts, HostFacts)
    return facts


def test_wsl_ubuntu_in_docker(tmp_path: Path) -> None:
    write(tmp_path, "/etc/os-release",
          'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n')
    write(tmp_path, "/proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n")
    write(tmp_path, "/.dockerenv")
    facts = host(tmp_path)
    assert facts.os_name == "Ubuntu 22.04.4 LTS"
    assert facts.kernel == "5.15.167.4-microsoft-standard-WSL2"
    assert facts.wsl is True
    assert facts.container == "docker"
    assert facts.python_version == platform.python_version()
    assert facts.python_executable == sys.executable
    assert facts.machine == platform.machine()
    assert facts.env == ()
    assert facts.ld_library_path_missing == ()
    assert facts.dev_nodes == ()


def test_bare_metal_defaults(tmp_path: Path) -> None:
    # no os-release, no /proc, no container marker, no /dev
    facts = host(tmp_path)
    assert facts.os_name == platform.system()
    assert facts.kernel == platform.release()
    assert (facts.wsl, facts.container) == (False, None)
    shm = facts.shm_bytes
    assert isinstance(shm, Unavailable)
    assert shm.reason is Reason.NOT_INSTALLED
    if platform.libc_ver()[0] == "glibc":
        assert facts.glibc == platform.libc_ver()[1]


def test_os_release_fallbacks(tmp_path: Path) -> None:
    write(tmp_path, "/etc/os-release", "garbage without the key\n\x00\n")
    assert host(tmp_path).os_name == platform.system()
    write(tmp_path, "/usr/lib/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    assert host(tmp_path).os_name == "Debian GNU/Linux 12 (bookworm)"


def test_dxg_alone_means_wsl(tmp_path: Path) -> None:
    write(tmp_path, "/proc/sys/kernel/osrelease", "6.6.0-generic\n")
    write(tmp_path, "/dev/dxg")
    facts = host(tmp_path)
    assert facts.wsl is True
    assert facts.dev_nodes == (DeviceNode("/dev/dxg", readable=True, writable=True),)


@pytest.mark.parametrize(
    ("files", "environ", "expected"),
    [
        ({"/run/.containerenv": "", "/.dockerenv": ""}, {}, "podman"),
        ({"/.dockerenv": ""}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "kubernetes"),
        ({"/proc/1/cgroup": "0::/kubepods/besteffort/pod1234/abcd\n"}, {}, "kubernetes"),
        ({"/proc/1/cgroup": "12:memory:/docker/0123456789ab\n"}, {}, "docker"),
        ({"/proc/1/cgroup": "0::/machine.slice/libpod-abc.scope\n"}, {}, "podman"),
        ({"/proc/1/cgroup": "0::/init.scope\n"}, {"container": "systemd-nspawn"},
         "systemd-nspawn"),
        ({"/proc/1/cgroup": "0::/init.scope\n"}, {}, None),
    ],
    ids=["podman-first", "kubernetes-env", "kubepods", "docker-cgroup", "libpod", "env", "none"],
)
def test_containers(
    tmp_path: Path, files: dict[str, str], environ: dict[str, str], expected: str | None
) -> None:
    for path, text in files.items():
        write(tmp_path, path, text)
    assert host(tmp_path, **environ).container == expected


def test_cuda_variables_recorded_in_fixed_order(tmp_path: Path) -> None:
    facts = host(tmp_path, HOME="/root", CUDA_HOME="/usr/local/cuda", CUDA_VISIBLE_DEVICES="1",
                 NVIDIA_VISIBLE_DEVICES="all")
    assert facts.env == (("CUDA_VISIBLE_DEVICES", "1"), ("NVIDIA_VISIBLE_DEVICES", "all"),
                         ("CUDA_HOME", "/usr/local/cuda"))
    assert facts.getenv("CUDA_VISIBLE_DEVICES") == "1"
    assert facts.getenv("HOME") is None


def test_ld_library_path_full_of_missing_directories(tmp_path: Path) -> None:
    (tmp_path / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    write(tmp_path, "/opt/a-file-not-a-dir")
    ld = "/usr/local/cuda/lib64::/usr/lib/x86_64-linux-gnu:/opt/a-file-not-a-dir:/nope/../x:"
    facts = host(tmp_path, LD_LIBRARY_PATH=ld)
    assert facts.ld_library_path_missing == ("/usr/local/cuda/lib64", "/opt/a-file-not-a-dir",
                                             "/nope/../x")
    assert facts.getenv("LD_LIBRARY_PATH") == ld


def test_device_nodes(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "null"):
        write(tmp_path, f"/dev/{name}")
    (tmp_path / "dev" / "nvidia-caps").mkdir()  # a directory: not a node
    (tmp_path / "dev" / "nvidia2").symlink_to("/nonexistent/nvidia2")  # present, cannot be opened
    (tmp_path / "dev" / "shm").mkdir()
    facts = host(tmp_path)
    assert facts.dev_nodes == (
        DeviceNode("/dev/nvidia-uvm", True, True),
        DeviceNode("/dev/nvidia-uvm-tools", True, True),
        DeviceNode("/dev/nvidia0", True, True),
        DeviceNode("/dev/nvidia1", True, True),
        DeviceNode("/dev/nvidia2", False, False),
        DeviceNode("/dev/nvidiactl", True, True),
    )
    assert isinstance(facts.shm_bytes, int)
    assert facts.shm_bytes > 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root may open files whatever their mode")
def test_device_node_without_permission(tmp_path: Path) -> None:
    node = write(tmp_path, "/dev/nvidia0")
    node.chmod(0o400)
    assert host(tmp_path).dev_nodes == (DeviceNode("/dev/nvidia0", True, False),)
    node.chmod(0)
    assert host(tmp_path).dev_nodes == (DeviceNode("/dev/nvidia0", False, False),)


def test_unlistable_dev_is_no_nodes(tmp_path: Path) -> None:
    write(tmp_path, "/dev", "a file where /dev should be")
    facts = host(tmp_path)
    assert facts.dev_nodes == ()
    assert isinstance(facts.shm_bytes, Unavailable)


def test_real_host_never_raises() -> None:
    facts = probe_host(Deps())
    assert isinstance(facts, HostFacts)
    assert facts.kernel


# ---------------------------------------------------------------------------- GPU signs


def pci_device(root: Path, address: str, vendor: str, cls: str, device: str) -> None:
    for name, value in (("vendor", vendor), ("class", cls), ("device", device)):
        write(root, f"/sys/bus/pci/devices/{address}/{name}", value + "\n")


def test_nvidia_gpus_on_the_pci_bus_without_a_driver(tmp_path: Path) -> None:
    pci_device(tmp_path, "0000:00:02.0", "0x8086", "0x030000", "0x9bc4")  # Intel graphics
    pci_device(tmp_path, "0000:01:00.0", "0x10de", "0x030000", "0x2684")  # RTX 4090 (VGA)
    pci_device(tmp_path, "0000:01:00.1", "0x10de", "0x040300", "0x22ba")  # its audio
    pci_device(tmp_path, "0000:41:00.0", "0x10de", "0x030200", "0x2330")  # H100 (3D)
    facts = host(tmp_path)
    assert facts.pci_gpus == ("0000:01:00.0 10de:2684", "0000:41:00.0 10de:2330")


def test_no_pci_bus_is_unavailable_and_no_gpu_is_empty(tmp_path: Path) -> None:
    pci = host(tmp_path).pci_gpus
    assert isinstance(pci, Unavailable)
    assert pci.reason is Reason.NOT_SUPPORTED
    pci_device(tmp_path, "0000:00:04.0", "0x1af4", "0x010000", "0x1001")  # virtio disk
    assert host(tmp_path).pci_gpus == ()


def test_real_pci_bus_never_raises() -> None:
    facts = probe_host(Deps())
    assert isinstance(facts.pci_gpus, tuple | Unavailable)


@pytest.mark.parametrize(
    ("files", "expected"),
    [({"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
       "535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"}, "535.104.05"),
     ({"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64 "
       " 550.54.15  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"}, "550.54.15"),
     ({"/sys/module/nvidia/version": "570.86.15\n"}, "570.86.15"),
     ({"/sys/module/nvidia/version": "garbage\n"}, None),
     ({}, None)],
    ids=["proc", "proc-open-module", "sys-module", "garbage", "none"],
)
def test_kernel_module_version(tmp_path: Path, files: dict[str, str],
                               expected: str | None) -> None:
    for path, text in files.items():
        write(tmp_path, path, text)
    module = host(tmp_path).nvidia_module
    if expected is None:
        assert isinstance(module, Unavailable)
        assert module.reason is Reason.NOT_INSTALLED
    else:
        assert module == expected


def test_driver_library_versions_from_the_file_names(tmp_path: Path) -> None:
    system = tmp_path / "usr/lib/x86_64-linux-gnu"
    system.mkdir(parents=True)
    (system / "libnvidia-ml.so.535.183.01").write_bytes(b"\x7fELF")
    (system / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.535.183.01")
    (tmp_path / "usr/lib64").symlink_to("lib/x86_64-linux-gnu")  # the same file twice: once
    stale = tmp_path / "opt/old-driver"
    stale.mkdir(parents=True)
    (stale / "libnvidia-ml.so.470.223.02").write_bytes(b"\x7fELF")
    (stale / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.470.223.02")
    wsl = tmp_path / "usr/lib/wsl/lib"
    wsl.mkdir(parents=True)
    (wsl / "libnvidia-ml.so.1").write_bytes(b"\x7fELF")  # WSL's: no version in the name
    facts = host(tmp_path, LD_LIBRARY_PATH="/opt/old-driver")
    assert facts.nvml_libraries == (
        ("/opt/old-driver/libnvidia-ml.so.1", "470.223.02"),
        ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "535.183.01"),
    )


def test_ld_library_path_entries_resolved(tmp_path: Path) -> None:
    real = tmp_path / "usr/local/cuda-12.4/lib64"
    real.mkdir(parents=True)
    (tmp_path / "usr/local/cuda").symlink_to("cuda-12.4")
    facts = host(tmp_path, LD_LIBRARY_PATH="/usr/local/cuda/lib64;/gone::")
    assert facts.ld_library_path_missing == ("/gone",)  # ';' separates too, as for the loader
    assert facts.ld_library_path_real == (("/usr/local/cuda/lib64",
                                           "/usr/local/cuda-12.4/lib64"),)

"""The host: OS, kernel, glibc, Python, container / WSL, CUDA variables, /dev/nvidia*, /dev/shm,
NVIDIA GPUs on the PCI bus, the NVIDIA kernel module's version and the driver library's.

Errors map to facts: an unreadable file is simply not evidence (e.g. no os-release → the
platform name); glibc that cannot be told (musl) → `Unavailable(NOT_SUPPORTED)`; a /dev/shm
that cannot be stat'ed → `Unavailable(NOT_INSTALLED)`; no /sys/bus/pci (WSL, some containers)
→ `Unavailable(NOT_SUPPORTED)`; no kernel module version → `Unavailable(NOT_INSTALLED)`.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import re
import sys
from pathlib import Path

from gpudoctor.linux import DRIVER_DIRS, library_dirs
from gpudoctor.model import DeviceNode, HostFacts, Reason, Unavailable
from gpudoctor.probes.interface import Deps

logger = logging.getLogger(__name__)

ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTORCH_CUDA_ALLOC_CONF",
    "CUDA_DEVICE_ORDER",
    "CUDA_MODULE_LOADING",
    "CUDNN_PATH",
    # set and forgotten, these slow or change every CUDA program (GD506)
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_INJECTION64_PATH",
    "CUDA_PROFILE",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_CACHE_DISABLE",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    # what the NVIDIA Container Toolkit reads to wire a container (GD505)
    "NVIDIA_DRIVER_CAPABILITIES",
)


def probe_host(deps: Deps) -> HostFacts:
    """Gather host facts; every part degrades on its own."""
    env = tuple((k, deps.environ[k]) for k in ENV_VARS if k in deps.environ)
    ld = deps.environ.get("LD_LIBRARY_PATH", "")
    entries = [d for d in re.split(r"[:;]", ld) if d]  # the loader splits on both
    missing = tuple(d for d in entries if not deps.path(d).is_dir())
    return HostFacts(
        os_name=_os_name(deps),
        kernel=_read(deps.path("/proc/sys/kernel/osrelease")) or platform.release(),
        machine=deps.machine,
        glibc=_glibc(),
        python_version=platform.python_version(),
        python_executable=sys.executable,
        container=_container(deps),
        wsl=_wsl(deps),
        env=env,
        ld_library_path_missing=missing,
        dev_nodes=_dev_nodes(deps),
        shm_bytes=_shm(deps),
        pci_gpus=_pci_gpus(deps),
        pci_gpu_drivers=_pci_gpu_drivers(deps),
        nvidia_module=_nvidia_module(deps),
        nvml_libraries=_nvml_libraries(deps, entries),
        ld_library_path_real=tuple((d, _real(deps, d)) for d in entries if d not in missing),
        cdi_specs=_cdi_specs(deps),
        hostname=_hostname(),
    )


def _hostname() -> str | Unavailable:
    """This node's name; Unavailable(ERROR) in the odd sandbox where the call fails.

    `os.uname().nodename` is what `socket.gethostname()` returns on Linux (glibc and musl
    both read uname(2)), without importing socket (~10 ms at start-up)."""
    try:
        name = os.uname().nodename
    except OSError as e:
        return Unavailable(Reason.ERROR, "the host name could not be read", repr(e))
    return name or Unavailable(Reason.NOT_SUPPORTED, "the host has no name")


CDI_DIRS = ("/etc/cdi", "/var/run/cdi")


def _cdi_specs(deps: Deps) -> tuple[str, ...]:
    """Container Device Interface specs (`nvidia-ctk cdi generate` writes nvidia.yaml)."""
    found = []
    for d in CDI_DIRS:
        try:
            names = sorted(os.listdir(deps.path(d)))
        except OSError:
            continue
        found += [f"{d}/{n}" for n in names if n.endswith((".yaml", ".yml", ".json"))]
    return tuple(found)


def _real(deps: Deps, path: str) -> str:
    """`path` with symlinks resolved, as a path of the probed system (outside of `root`)."""
    real = os.path.realpath(deps.path(path))
    root = os.path.realpath(deps.root)
    if root == "/" or not real.startswith(root + "/"):
        return real
    return "/" + os.path.relpath(real, root)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _os_name(deps: Deps) -> str:
    for p in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(deps.path(p))
        if text is None:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key == "PRETTY_NAME":
                return value.strip().strip('"')
    return platform.system()


def _glibc() -> str | Unavailable:
    try:
        libc = ctypes.CDLL(None)
        fn = libc.gnu_get_libc_version
    except (OSError, AttributeError):
        return Unavailable(Reason.NOT_SUPPORTED, "not a glibc system (musl or another libc)")
    fn.restype = ctypes.c_char_p
    return str(fn().decode())


def _container(deps: Deps) -> str | None:
    if deps.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if deps.path("/run/.containerenv").exists():
        return "podman"
    if deps.path("/.dockerenv").exists():
        return "docker"
    cgroup = _read(deps.path("/proc/1/cgroup")) or ""
    for name in ("kubepods", "docker", "libpod", "containerd", "lxc"):
        if name in cgroup:
            return {"kubepods": "kubernetes", "libpod": "podman"}.get(name, name)
    if deps.environ.get("container"):
        return deps.environ["container"]
    return None


def _wsl(deps: Deps) -> bool:
    text = (_read(deps.path("/proc/sys/kernel/osrelease")) or "").lower()
    return "microsoft" in text or "wsl" in text or deps.path("/dev/dxg").exists()


def _dev_nodes(deps: Deps) -> tuple[DeviceNode, ...]:
    dev = deps.path("/dev")
    try:
        names = sorted(n for n in os.listdir(dev) if n.startswith("nvidia") or n == "dxg")
    except OSError:
        return ()
    nodes = []
    for name in names:
        p = dev / name
        if p.is_dir():
            continue
        nodes.append(
            DeviceNode(
                path=f"/dev/{name}",
                readable=os.access(p, os.R_OK),
                writable=os.access(p, os.W_OK),
            )
        )
    return tuple(nodes)


def _shm(deps: Deps) -> int | Unavailable:
    try:
        st = os.statvfs(deps.path("/dev/shm"))
    except OSError as e:
        return Unavailable(Reason.NOT_INSTALLED, "/dev/shm is not mounted", detail=repr(e))
    return st.f_blocks * st.f_frsize


_PCI_DISPLAY = ("0x0300", "0x0302")  # VGA-compatible and 3D controllers


def _pci_gpus(deps: Deps) -> tuple[str, ...] | Unavailable:
    """NVIDIA (vendor 0x10de) display controllers in /sys/bus/pci: seen with no driver at all."""
    bus = deps.path("/sys/bus/pci/devices")
    try:
        names = sorted(os.listdir(bus))
    except OSError as e:
        return Unavailable(Reason.NOT_SUPPORTED, "the PCI bus cannot be listed (no "
                           "/sys/bus/pci/devices: WSL, or a container without /sys)",
                           detail=repr(e))
    found = []
    for name in names:
        vendor = _read(bus / name / "vendor")
        if vendor != "0x10de" or not (_read(bus / name / "class") or "").startswith(_PCI_DISPLAY):
            continue
        device = (_read(bus / name / "device") or "0x????")[2:]
        found.append(f"{name} 10de:{device}")
    return tuple(found)


def _pci_gpu_drivers(deps: Deps) -> tuple[tuple[str, str], ...]:
    """(PCI address, the kernel driver bound to it: "nvidia", "nouveau", "vfio-pci", "" for
    none) of each NVIDIA display controller."""
    bus = deps.path("/sys/bus/pci/devices")
    gpus = _pci_gpus(deps)
    found = []
    for entry in gpus if isinstance(gpus, tuple) else ():
        name = entry.split()[0]
        try:
            driver = os.path.basename(os.readlink(bus / name / "driver"))
        except OSError:
            driver = ""
        found.append((name, driver))
    return tuple(found)


_MODULE = re.compile(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)")


def _nvidia_module(deps: Deps) -> str | Unavailable:
    """The loaded kernel module's version: /proc/driver/nvidia/version, else /sys/module."""
    m = _MODULE.search(_read(deps.path("/proc/driver/nvidia/version")) or "")
    if m:
        return m.group(1)
    text = _read(deps.path("/sys/module/nvidia/version")) or ""
    if re.fullmatch(r"\d+\.\d+(?:\.\d+)?", text):
        return text
    return Unavailable(Reason.NOT_INSTALLED, "the NVIDIA kernel module is not loaded (no "
                       "/proc/driver/nvidia/version or /sys/module/nvidia/version)")



def nvml_dirs(machine: str | None) -> tuple[str, ...]:
    """Where the driver's user-space libraries live: the system's library directories of this
    machine's architecture, then the container toolkit's mounts and WSL's."""
    return (*library_dirs(machine), *DRIVER_DIRS)


_NVML_FILE = re.compile(r"^libnvidia-ml\.so\.(\d+\.\d+(?:\.\d+)?)$")


def _nvml_libraries(deps: Deps, ld_entries: list[str]) -> tuple[tuple[str, str], ...]:
    """Every libnvidia-ml.so.1 on the loader path and in the usual places, with the driver
    version its real file is named after (`libnvidia-ml.so.535.104.05`)."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for d in (*ld_entries, *nvml_dirs(deps.machine)):
        link = deps.path(d) / "libnvidia-ml.so.1"
        try:
            real = os.path.realpath(link)
            if real in seen or not os.path.exists(real):
                continue
        except OSError:
            continue
        seen.add(real)
        m = _NVML_FILE.match(os.path.basename(real))
        if m:
            found.append((f"{d.rstrip('/')}/libnvidia-ml.so.1", m.group(1)))
    return tuple(found)

"""The host: OS, kernel, glibc, Python, container / WSL, CUDA variables, /dev/nvidia*, /dev/shm.

Errors map to facts: an unreadable file is simply not evidence (e.g. no os-release → the
platform name); glibc that cannot be told (musl) → `Unavailable(NOT_SUPPORTED)`; a /dev/shm
that cannot be stat'ed → `Unavailable(NOT_INSTALLED)`.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import sys
from pathlib import Path

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
)


def probe_host(deps: Deps) -> HostFacts:
    """Gather host facts; every part degrades on its own."""
    env = tuple((k, deps.environ[k]) for k in ENV_VARS if k in deps.environ)
    ld = deps.environ.get("LD_LIBRARY_PATH", "")
    missing = tuple(d for d in ld.split(":") if d and not deps.path(d).is_dir())
    return HostFacts(
        os_name=_os_name(deps),
        kernel=_read(deps.path("/proc/sys/kernel/osrelease")) or platform.release(),
        machine=platform.machine(),
        glibc=_glibc(),
        python_version=platform.python_version(),
        python_executable=sys.executable,
        container=_container(deps),
        wsl=_wsl(deps),
        env=env,
        ld_library_path_missing=missing,
        dev_nodes=_dev_nodes(deps),
        shm_bytes=_shm(deps),
    )


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

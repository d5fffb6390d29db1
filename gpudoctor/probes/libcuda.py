"""The CUDA driver library without NVML (`probe_libcuda` → `LibcudaFacts`).

`cuDriverGetVersion` of libcuda.so.1, read in a child process (`probes.native`), and the kernel
module's version from /proc/driver/nvidia/version: the fallback for the driver's facts where
NVML is absent (WSL).
"""

from __future__ import annotations

import re

from gpudoctor.model import LibcudaFacts, Reason, Unavailable
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.native import read_version


def probe_libcuda(deps: Deps) -> LibcudaFacts | Unavailable:
    """`cuDriverGetVersion` from libcuda.so.1: the fallback when NVML is absent (WSL)."""
    v = read_version("libcuda.so.1", "cuDriverGetVersion", env=deps.child_env())
    if isinstance(v, Unavailable):
        if v.reason is Reason.NOT_INSTALLED:
            return Unavailable(
                Reason.NOT_INSTALLED,
                "libcuda.so.1 (the CUDA driver library) is not on the loader path: no NVIDIA "
                "driver is installed, or the container was started without GPU support",
                detail=v.detail,
            )
        return v
    proc = deps.path("/proc/driver/nvidia/version")
    try:
        m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", proc.read_text())
        driver: str | Unavailable = m.group(1) if m else Unavailable(
            Reason.ERROR, f"{proc} has no version"
        )
    except OSError as e:
        driver = Unavailable(Reason.NOT_INSTALLED, f"{proc} is not readable", detail=repr(e))
    return LibcudaFacts(path="libcuda.so.1", cuda_driver_version=v, driver_version=driver)

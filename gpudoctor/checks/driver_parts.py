"""What GD101 reads of the driver's parts: nvidia-smi from another release than the kernel
module, the kernel module's and the libraries' versions, and its failure when they differ."""

from __future__ import annotations

import re

from gpudoctor import views as V
from gpudoctor.checks.base import failed
from gpudoctor.model import Environment, Finding, HostFacts, LibcudaFacts, NvmlFacts

WSL_CUDA = 465  # the first Windows driver branch that runs CUDA in WSL 2


def tools_apart(nvml: NvmlFacts) -> str | None:
    """nvidia-smi from another release than the loaded driver (a pasted table's "NVIDIA-SMI
    450.66  Driver Version: 418.67"): the user-space tools and the kernel module were installed
    apart. WSL pairs the Linux tools, which the Windows driver package itself ships (in
    /usr/lib/wsl/lib), with the Windows driver's number: NVIDIA-SMI 555.52.01 beside Driver
    Version 555.99, 525.60.07 beside 527.27, 570.133.20 beside 576.80 (the Linux tools' three
    parts, the Windows driver's two, of the same branch or a later one of its series, never
    older; a Windows driver from R465 on, when WSL began to run CUDA, also beside the tools'
    two parts: NVIDIA-SMI 535.103 beside 537.13): that is how WSL is built, not a fault.
    nvidia-smi of the R319-R3xx drivers put its own major before the driver's version
    ("NVIDIA-SMI 5.319.37  Driver Version: 319.37"): the same release."""
    smi, drv = nvml.smi_version, nvml.driver_version
    if not isinstance(smi, str) or not isinstance(drv, str) or smi == drv \
            or re.fullmatch(r"\d\." + re.escape(drv), smi):
        return None
    s, d = V.version(smi), V.version(drv)
    if s is None or d is None or (len(d.release) == 2 and d >= s and (
            0 <= d.major - s.major <= 1 or ((len(s.release) == 3 or d.major >= WSL_CUDA)
                                            and d.major - s.major <= 9))):
        return None
    return (f"but nvidia-smi is {smi}: the user-space tools come from another driver release "
            "than the kernel module (a container image that ships its own nvidia-smi, or a "
            "driver upgraded in part)")


def driver_parts(env: Environment) -> tuple[str | None, tuple[str, ...]]:
    """The kernel module's version, and the versions of the driver libraries found."""
    if not isinstance(env.host, HostFacts):
        return None, ()
    module = env.host.nvidia_module if isinstance(env.host.nvidia_module, str) else None
    if module is None and isinstance(env.libcuda, LibcudaFacts) and isinstance(
            env.libcuda.driver_version, str):
        module = env.libcuda.driver_version
    libraries = tuple(dict.fromkeys(v for _, v in env.host.nvml_libraries))
    return module, libraries


def mismatch(env: Environment, module: str | None, libraries: tuple[str, ...],
             evidence: tuple[tuple[str, str], ...]) -> Finding:
    """GD101's failure for a driver whose user-space library and kernel module differ."""
    if module and libraries:
        both = (f"user-space library ({' and '.join(libraries)}) and its kernel module "
                f"({module})")
    else:  # NVML says so; a version it did not find stays unnamed
        both = ("user-space library and kernel module" + (f" ({module})" if module else "")
                + (f" (library {' and '.join(libraries)})" if libraries else ""))
    message = (f"the NVIDIA driver's {both} are different versions: the driver was upgraded "
               "(or downgraded) without reloading the module")
    fix = ("reload the kernel module so it matches the library (stop what uses the GPU first: "
           "the display manager, nvidia-persistenced, running jobs): sudo rmmod nvidia_uvm "
           "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia; or reboot")
    if isinstance(env.host, HostFacts) and isinstance(env.host.container, str):
        fix += ("; in a container, the image must not ship driver libraries of its own (the "
                "NVIDIA Container Toolkit mounts the host's)")
    parts = (("kernel module", module or "?"),
             *(("library " + p, v) for p, v in getattr(env.host, "nvml_libraries", ())))
    return failed(message, fix, evidence + parts)

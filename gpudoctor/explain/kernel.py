"""The kernel side of the driver as the system's own tools print it.

- *The module tools* (kmod's modprobe / insmod / modinfo, systemd-modules-load, mkinitcpio,
  dracut) failing on an NVIDIA kernel module: one that is *not found* was never built or
  installed for the running kernel (a kernel updated without its DKMS build, a driver package
  without its module); one the kernel *refused to insert* names why (Secure Boot's "Key was
  rejected by service", "Invalid module format" for another kernel, "No such device" where
  another driver owns the GPU). Which module says what fails: `nvidia` (and `nvidia_drm`,
  `nvidia_modeset`, a distribution's `nvidia_NNN`, `nvidia-current`) is the driver itself;
  `nvidia_uvm` is the unified-memory module CUDA needs to initialise while the driver works.
- *The driver's versions*: where a text states the kernel module's version and the user-space
  driver's (TensorFlow's diagnostics: "kernel reported version is: 352.63.0" beside "libcuda
  reported version is: 361.93.2"; NVRM's API mismatch; nvidia-smi's "NVML library version"
  against /proc/driver/nvidia/version), two different versions are a driver mismatch: the
  libraries were updated and the module loaded is the old one.
"""

from __future__ import annotations

import re

from gpudoctor.explain.found import Match, anchored, derived, found, hits


def _module_name(group: str) -> str:
    """A named group that matches an NVIDIA module's name: nvidia, nvidia_uvm / nvidia-uvm,
    nvidia_drm, nvidia_modeset, Ubuntu's older nvidia_331 / nvidia_331_uvm, nvidia-current."""
    return (rf"(?P<{group}>nvidia(?:[-_](?:\d{{3}}|current|uvm|drm|modeset))?(?:[-_]uvm)?)"
            r"(?![\w-])")


_NOT_FOUND = re.compile(
    rf"(?:Module {_module_name('mod1')} not found|module not found: '{_module_name('mod2')}'|"
    rf"(?:Failed to find|could not find) module (?:by name=)?'{_module_name('mod3')}')", re.I)
_REFUSED = re.compile(
    rf"(?:could not insert (?:module [^\s:]{{0,200}}?/)?'?{_module_name('mod1')}(?:\.ko)?'?|"
    rf"Failed to insert (?:module )?'{_module_name('mod2')}')[ \t]{{0,8}}:[ \t]{{0,8}}"
    r"(?P<why>[^\n]{1,120})", re.I)
_SECURE_BOOT = ("key was rejected by service", "required key not available")
_OTHER_KERNEL = ("invalid module format", "exec format error", "unknown symbol")

_V = r"(?P<{}>\d{{2,4}}\.\d{{1,3}}(?:\.\d{{1,3}}){{0,2}})"
_KERNEL_SIDE = (  # (a literal the pattern starts with, the pattern)
    ("kernel reported", re.compile(r"kernel reported version is:?\s{0,8}" + _V.format("v"))),
    ("nvrm version:", re.compile(r"NVRM version:[^\n]{0,80}?Kernel Module\s{1,8}"
                                 + _V.format("v"))),
    ("this kernel module", re.compile(r"this kernel module has the version\s{1,8}"
                                      + _V.format("v"))),
)
_USER_SIDE = (
    ("libcuda reported", re.compile(r"libcuda reported version is:?\s{0,8}" + _V.format("v"))),
    ("nvml library", re.compile(r"NVML library version:?\s{0,8}" + _V.format("v"))),
    ("the client", re.compile(r"the client (?:'[^'\n]{1,80}' \(pid \d{1,9}\)\s{0,8}"
                              r"(?:NVRM:\s{0,8})?)?"
                              r"has the version\s{1,8}" + _V.format("v"))),
)
_BOTH = re.compile(r"kernel version " + _V.format("k") + r" does not match DSO version "
                   + _V.format("u"))
_SOURCES = ("https://man7.org/linux/man-pages/man8/modprobe.8.html",
            "https://download.nvidia.com/XFree86/Linux-x86_64/595.45.04/README/"
            "installdriver.html")


def kernel_matches(text: str, lowered: str) -> list[Match]:
    """The module tools' failures on NVIDIA's modules, and a driver whose versions differ."""
    out: list[Match] = []
    if "nvidia" in lowered and ("module" in lowered or "insert" in lowered):
        out += _modules(text)
    if "version" in lowered:
        out += _versions(text, lowered)
    return out


def _name(m: re.Match[str]) -> str:
    return next(v for k, v in m.groupdict().items() if k.startswith("mod") and v)


def _modules(text: str) -> list[Match]:
    """One diagnosis: the driver's own module where it fails (the unified-memory module failing
    beside it is its consequence), else the unified-memory module."""
    failed: dict[str, tuple[re.Match[str], str]] = {}
    for m in hits(_NOT_FOUND, text):
        failed.setdefault(_name(m).replace("-", "_"), (m, ""))
    for m in hits(_REFUSED, text):
        failed.setdefault(_name(m).replace("-", "_"), (m, m["why"].strip().rstrip(".")))
    if not failed:
        return []
    driver = [mod for mod in failed if not mod.endswith("uvm")]
    mod = (driver or list(failed))[0]
    m, why = failed[mod]
    others = [o for o in failed if o != mod]
    return [_module(mod, m, why, others)]


def _module(mod: str, m: re.Match[str], why: str, others: list[str]) -> Match:
    uvm = mod.endswith("uvm")
    what = ("the NVIDIA unified-memory module CUDA needs to initialise" if uvm else
            "the NVIDIA kernel driver" + ("" if mod == "nvidia" else f" (its {mod} part)"))
    also = f" ({', '.join(others)} fail{'s' if len(others) == 1 else ''} too)" if others else ""
    if not why:
        how = ("is not installed for the running kernel: the driver's module was never built "
               "for it (a kernel updated without the driver's DKMS build, or a driver package "
               "without its kernel module)")
        fix = ("install the driver's kernel module for the running kernel (the distribution's "
               "nvidia-dkms / kernel-module package, or rerun the driver installer) and reboot")
    elif why.lower() in _SECURE_BOOT:
        how = (f"was refused by the kernel (\"{why}\"): Secure Boot is on and the module is not "
               "signed with an enrolled key")
        fix = ("enroll the module's signing key (mokutil --import, then reboot) or disable "
               "Secure Boot")
    elif why.lower() in _OTHER_KERNEL:
        how = f"was built for another kernel (\"{why}\")"
        fix = "rebuild the driver's module for the running kernel (dkms autoinstall) and reboot"
    else:
        how = f"could not be loaded (\"{why}\")"
        fix = ("read the kernel log (sudo dmesg | grep -i nvrm) for why; reinstall the driver "
               "for the running kernel, and blacklist nouveau if it owns the GPU")
    cls = "cuda-init-failure" if uvm else "no-driver"
    if uvm and not why:
        fix = ("install the driver's nvidia-uvm module for the running kernel (it ships with "
               "the driver) and load it: sudo modprobe nvidia-uvm")
    sig = derived(f"kernel-module-{mod.replace('_', '-')}", f"the {mod} kernel module "
                  "does not load", "driver", cls,
                  f"The kernel module {mod}, {what}, {how}{also}.", fix, _SOURCES, priority=1)
    return found(sig, m)


def _versions(text: str, lowered: str) -> list[Match]:
    both = next(iter(hits(_BOTH, text)), None)
    if both is not None:
        return _mismatch(both["k"], both["u"], (both.start(), both.end(), both.group(0)))
    kernel = _first(_KERNEL_SIDE, text, lowered)
    user = _first(_USER_SIDE, text, lowered)
    if kernel is None or user is None:
        return []
    lo, hi = min(kernel.start(), user.start()), max(kernel.end(), user.end())
    return _mismatch(kernel["v"], user["v"], (lo, hi, f"{kernel.group(0)} … {user.group(0)}"))


def _first(patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str,
           lowered: str) -> re.Match[str] | None:
    for needle, pattern in patterns:
        for m in anchored(pattern, text, lowered, needle):
            return m
    return None


def _mismatch(kernel: str, user: str, span: tuple[int, int, str]) -> list[Match]:
    if _norm(kernel) == _norm(user):
        return []
    sig = derived(
        "driver-versions-differ", "the kernel module and the driver libraries differ",
        "driver", "driver-mismatch",
        f"The NVIDIA kernel module loaded is version {kernel} and the user-space driver "
        f"(libcuda, NVML) is {user}: the driver was updated (or a container or environment "
        "brings its own libraries) and the module running is another version. CUDA cannot "
        "initialise with the two mixed.",
        "reboot (or unload and reload the nvidia modules) so the new module runs; if they "
        "still differ, reinstall one driver version, and in a container do not install driver "
        "libraries in the image", ("https://docs.nvidia.com/deploy/cuda-compatibility/",),
        priority=1)
    return [found(sig, span)]


def _norm(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)

"""The NVIDIA kernel module's messages (`dmesg`, `journalctl -k`, /var/log/messages) and a
monitor's words for them, quoted anywhere in a paste: facts about the driver they state.

Read only where the message has one meaning (NVIDIA's Xid catalogue, the driver's README):

- a GPU lost: Xid 79 "GPU has fallen off the bus" — as the kernel prints it ("NVRM: Xid
  (PCI:0000:ae:00): 79, pid=…, GPU has fallen off the bus.", "NVRM: GPU 0000:ae:00.0: GPU has
  fallen off the bus."), as a monitor words it ("XID 79(GPU has fallen off the bus) detected on
  PCI:0000:ae:00"), or NVML's error for such a GPU (`ERROR_GPU_IS_LOST`,
  NVML_ERROR_GPU_IS_LOST): the driver is loaded, that GPU does not answer;
- "NVRM: API mismatch: the client has the version 535.129.03, but this kernel module has the
  version 535.104.05": the user-space driver and the kernel module are different releases;
- "NVRM: RmInitAdapter failed!": the driver is loaded but could not bring a GPU up;
- TensorFlow's CUDA diagnostics, which read the same two versions from the program's side
  ("libcuda reported version is: 450.142.0", "kernel reported version is: 450.66.0", or "kernel
  version 450.66.0 does not match DSO version 450.142.0"): where they differ, the same
  mismatch as NVRM's.

The kernel wraps a long message onto lines of their own, each with its "NVRM: " (and dmesg's
timestamp, or syslog's prefix; syslog may write the newlines as "#012"): those lines are joined
before reading.

Other Xids (memory errors, NVLink, a program's own fault such as Xid 13 or 31) say what
happened once, not what the machine is now, and are left to `gpudoctor explain`. The driver's
version, the other GPUs and everything else stay Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re

from gpudoctor.model import NvmlFacts, Reason, Unavailable
from gpudoctor.reports.interface import Partial, stated_driver
from gpudoctor.reports.nvidia_smi import bus_id
from gpudoctor.versions import parse_version

LONGEST = 200_000  # a paste longer than this is searched in its first part only
_PCI = r"(?:PCI:)?((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)"
# the kernel's Xid line, the driver's own line, and a monitor's "XID 79(…) detected on PCI:…"
FELL_OFF = re.compile(
    r"\bXid \(" + _PCI + r"\): 79\b"
    r"|\b(?:The NVIDIA )?GPU (?:at )?" + _PCI + r"[^\n]{0,200}?fallen off the bus"
    r"|\bXID 79\b[^\n]{0,200}?fallen off the bus[^\n]{0,100}?" + _PCI, re.IGNORECASE)
IS_LOST = re.compile(r"\b(?:NVML_)?ERROR_GPU_IS_LOST\b")
# "NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the
# version 530.30.02." (newer drivers name the client: "the client 'kwin_wayland' (pid 1005)
# has the version 595.84, but …"), once its lines are joined
_VERSION = r"(\d+(?:\.\d+)+)"
API_MISMATCH = re.compile(r"\bAPI mismatch: the client (?:'[^'\n]{0,100}' \(pid \d+\) )?"
                          r"has the version " + _VERSION + r",? but this kernel module has the "
                          r"version " + _VERSION)
# TensorFlow's CUDA diagnostics (stream_executor/cuda/cuda_diagnostics.cc) after cuInit failed:
# "libcuda reported version is: 450.142.0" and "kernel reported version is: 450.66.0" (the
# versions of the libcuda it loaded and of /proc/driver/nvidia/version), or its verdict "kernel
# version 450.66.0 does not match DSO version 450.142.0": the same mismatch, seen from a program
_TF_LIBCUDA = re.compile(r"\blibcuda reported version is:? " + _VERSION)
_TF_KERNEL = re.compile(r"\bkernel reported version is:? " + _VERSION)
_TF_VERDICT = re.compile(r"\bkernel version " + _VERSION + r" does not match DSO version "
                         + _VERSION)
# a continuation line's start: a newline (or syslog's "#012"), syslog's "Jun 30 11:07:05 host
# kernel: ", dmesg's "[ 12.014918] ", indentation, then the kernel's "NVRM: "
_CONTINUED = re.compile(r"(?:\n|#012)[ \t]*(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ "
                        r"kernel: )?(?:\[ *\d+\.\d+\][ \t]*)?NVRM:[ \t]*")
INIT_FAILED = re.compile(r"(?:\bGPU " + _PCI + r": )?\bRmInitAdapter failed!")


def _loaded(failed: tuple[Unavailable, ...], what: str) -> NvmlFacts:
    """The driver is loaded (its kernel module printed this), these GPUs do not answer."""
    return stated_driver("the kernel log (its message for a GPU)",
                         f"is not in the report (only the kernel's message that {what} is)",
                         failed)


def _lost(text: str) -> tuple[Unavailable, ...]:
    found: dict[str, Unavailable] = {}
    for m in FELL_OFF.finditer(text):
        bus = bus_id(next(g for g in m.groups() if g))
        found.setdefault(bus, Unavailable(
            Reason.ERROR, f"GPU {bus} has fallen off the bus (Xid 79): the driver lost it; it "
            "needs a reset or a reboot, and one that keeps falling off is a hardware, power or "
            "cooling fault", m[0].strip()[:400]))
    lost = IS_LOST.search(text)
    if not found and lost:
        found["?"] = Unavailable(Reason.ERROR, "a GPU is lost (NVML: ERROR_GPU_IS_LOST): it "
                                 "does not answer; it needs a reset or a reboot", lost[0])
    return tuple(found.values())


def _unwrapped(text: str) -> str:
    """`text` with the kernel's continuation lines joined to the line before; whitespace runs
    as one space inside a line."""
    return re.sub(r"[ \t]+", " ", _CONTINUED.sub(" ", text))


def _tf_mismatch(text: str) -> tuple[str, str, str] | None:
    """(libcuda's version, the kernel module's, the words) where TensorFlow's diagnostics show
    them differ; None where they do not say so. Versions compare as versions: TensorFlow writes
    "450.66.0" for 450.66 (its parser pads a third part)."""
    if m := _TF_VERDICT.search(text):
        kernel, library = m[1], m[2]
        words = m[0]
    else:
        lib, kern = _TF_LIBCUDA.search(text), _TF_KERNEL.search(text)
        if lib is None or kern is None:
            return None
        library, kernel = lib[1], kern[1]
        words = f"{lib[0]}; {kern[0]}"
    lib_v, kernel_v = parse_version(library), parse_version(kernel)
    if lib_v is None or kernel_v is None or lib_v == kernel_v:
        return None  # not versions (digits past int()'s limit), or one release
    return library, kernel, words[:400]


def parse(text: str) -> Partial | None:
    """The facts the kernel module's messages state in `text`, None when it has none."""
    text = _unwrapped(text[:LONGEST].replace("\r\n", "\n"))
    if m := API_MISMATCH.search(text):
        return Partial(kind="the kernel log", rank=1, nvml=Unavailable(
            Reason.VERSION_MISMATCH,
            f"the driver's user-space library ({m[1]}) and kernel module ({m[2]}) differ "
            "(NVRM: API mismatch): reboot, or reload the nvidia kernel module",
            m[0][:400]))
    if said := _tf_mismatch(text):
        return Partial(kind="TensorFlow's CUDA diagnostics", rank=1, nvml=Unavailable(
            Reason.VERSION_MISMATCH,
            f"the driver's user-space library ({said[0]}) and kernel module ({said[1]}) differ "
            "(TensorFlow's CUDA diagnostics): reboot, or reload the nvidia kernel module",
            said[2]))
    lost = _lost(text)
    if lost:
        return Partial(kind="the kernel log", rank=1, nvml=_loaded(lost, "a GPU was lost"))
    failed: dict[str, Unavailable] = {}
    for m in INIT_FAILED.finditer(text):
        gpu = f"GPU {bus_id(m[1])}" if m[1] else "a GPU"
        failed.setdefault(gpu, Unavailable(
            Reason.ERROR, f"the driver could not bring {gpu} up (NVRM: RmInitAdapter "
            "failed!): the kernel log's lines before it say why", m[0]))
    if failed:
        return Partial(kind="the kernel log", rank=1,
                       nvml=_loaded(tuple(failed.values()), "a GPU failed to start"))
    return None

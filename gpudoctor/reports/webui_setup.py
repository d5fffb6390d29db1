"""The torch check that kohya_ss and SD.Next (and their forks) log at start-up, and SD.Next's
device line, quoted in a bug report: torch's own view of its build and GPUs.

kohya_ss's setup/setup_common.py and SD.Next's installer (`check_torch`) log, from torch:

    INFO     Torch 2.1.2+cu118
    INFO     Torch backend: nVidia CUDA 11.8 cuDNN 8905
    INFO     Torch detected GPU: NVIDIA GeForce RTX 4060 Laptop GPU VRAM 8188 Arch (8, 9) Cores 24

"Torch backend: nVidia CUDA …" (torch.version.cuda, torch.backends.cudnn.version()) and one
"Torch detected GPU" a device (its name, memory in MiB, torch.cuda.get_device_capability())
are logged only where torch.cuda.is_available(); otherwise "Torch reports CUDA not available"
(kohya_ss) or "Torch is not able to use GPU" (SD.Next). A console may wrap a long line: its
rest continues on the next, indented. SD.Next's device line (modules/devices.py,
`get_gpu_info`): "Device: device=NVIDIA GeForce RTX 5090 n=1 arch=sm_90 capability=(12, 0)
cuda=12.6 cudnn=90501 driver=576.02" — the name, the device count, the newest entry of
torch.cuda.get_arch_list() (read: a build whose newest entry is a cubin has no PTX), the
capability, torch's CUDA and cuDNN, and the driver's version.

Read: torch's version and CUDA, cuDNN, whether CUDA is available, the GPUs with their compute
capability, the driver's version where SD.Next states it, and the check's "nVidia toolkit
detected" (nvidia-smi found: the driver's tools are installed, a sign of an NVIDIA GPU; its
state stays unknown, as for a driver named in words). Every other fact stays
Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import TorchRuntime
from gpudoctor.reports import torch_messages
from gpudoctor.reports.interface import (
    TORCH_NAMED,
    TORCH_VERSION,
    Partial,
    named_gpu,
    not_reported,
    stated_driver,
)
from gpudoctor.views import PROSE

LONGEST = 200_000  # a paste longer than this is searched in its first part only
_WRAP = r"[ \t]{0,80}(?:\n[ \t]{1,60})?"  # a console's wrap: the rest on the next line, indented
TORCH = re.compile(r"(?:\bINFO|^)[ \t]{1,12}Torch (" + TORCH_VERSION + r")[ \t]*$", re.MULTILINE)
BACKEND = re.compile(r"\bTorch backend: nVidia CUDA (\d{1,2}\.\d{1,2}) cuDNN (\d{3,6}|N/A)\b")
DETECTED = re.compile(r"\bTorch detected GPU: ([^\n]{2,80}?) VRAM (\d{1,7})" + _WRAP
                      + r"Arch \((\d{1,2}), (\d{1,2})\)")
UNAVAILABLE = re.compile(r"\bTorch reports CUDA not available\b|\bTorch is not able to use GPU\b")
# the check's first line where nvidia-smi is on PATH or in Windows' System32 (kohya_ss's
# setup_common.py and SD.Next's installer, `check_torch`: shutil.which('nvidia-smi')): the
# NVIDIA driver's tools are installed, whether or not the driver answers
TOOLKIT = re.compile(r"\bnVidia toolkit detected\b")
DEVICE = re.compile(r"\bDevice: device=([^\n]{2,80}?) n=(\d{1,3}) "
                    r"arch=((?:sm|compute)_\d{2,3}[a-z]?)" + _WRAP
                    + r"(?:cap|capability)=\((\d{1,2}), (\d{1,2})\)" + _WRAP
                    + r"cuda=(\d{1,2}\.\d{1,2})" + _WRAP + r"cudnn=(\d{3,6})"
                    r"(?:" + _WRAP + r"driver=(\d{3}\.\d{1,3}(?:\.\d{1,3})?))?")
_WHY = "is not in the report (the app's torch check does not state it)"


def parse(text: str) -> Partial | None:
    """torch and its GPUs as these start-up lines in `text` state them; None where they state
    neither torch's CUDA, nor a GPU, nor a version torch found no CUDA with (or state two torch
    versions)."""
    text = text[:LONGEST]
    versions = {m[1] for m in TORCH.finditer(text)}
    backends = {(m[1], m[2]) for m in BACKEND.finditer(text)}
    devices = {m[1].strip(): f"{m[3]}.{m[4]}" for m in DETECTED.finditer(text)}
    sdnext = DEVICE.search(text)
    unavailable = UNAVAILABLE.search(text) is not None
    if len(versions) > 1 or len(backends) > 1 or not (
            backends or devices or sdnext or (versions and unavailable)):
        return None
    version = next(iter(versions), None)
    cuda, cudnn = next(iter(backends), (None, None))
    driver = None
    if sdnext:
        devices.setdefault(sdnext[1].strip(), f"{sdnext[4]}.{sdnext[5]}")
        cuda, cudnn, driver = cuda or sdnext[6], cudnn or sdnext[7], sdnext[8]
    available = not (unavailable and not devices)
    torch = torch_messages.stated_torch(
        version or "", cuda, available, text, source="the app's torch check",
        cudnn=int(cudnn) if cudnn and cudnn.isdigit() else None)
    if isinstance(torch.runtime, TorchRuntime):
        runtime = torch.runtime
        if version is None:
            runtime = replace(runtime, version=not_reported(f"torch's version {_WHY}"))
        if sdnext:
            runtime = replace(runtime, device_count=int(sdnext[2]))
        torch = replace(torch, runtime=runtime)
    gpus = tuple(named_gpu(i, name, _WHY, compute_capability=cc)
                 for i, (name, cc) in enumerate(devices.items()))
    nvml = stated_driver(TORCH_NAMED, _WHY, gpus, driver) if gpus or driver else None
    if nvml is None and TOOLKIT.search(text):  # nvidia-smi is there: a GPU sign, no more
        nvml = stated_driver(PROSE, "is not in the report (the app's check found nvidia-smi "
                             "installed, no more)", ())
    return Partial(kind="an app's torch check (kohya_ss, SD.Next)", rank=2, torch=torch,
                   nvml=nvml)

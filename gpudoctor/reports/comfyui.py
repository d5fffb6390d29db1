"""ComfyUI's own account of torch and its GPU, quoted in a bug report: its System Information
(the frontend's "## System Information" / "## Devices" list, or /system_stats' JSON) and its
start-up log.

Each names the device torch runs on as comfy/model_management.py's `get_torch_device_name`
writes it: "cuda:0 NVIDIA GeForce RTX 4060 Ti : cudaMallocAsync" (the torch device, then
`torch.cuda.get_device_name(device)`, then `torch.cuda.get_allocator_backend()`) — in the
list's "- **Name:** …", the JSON's `"name": "…"`, the log's "Device: …". ComfyUI writes that
form only for a device of type "cuda", which it picks only where torch initialised CUDA: so
torch.cuda.is_available() was True and the GPU named is one torch ran on (a ROCm build's
devices are "cuda" too: an AMD name is not an NVIDIA GPU, and its "+rocm" tag says which build
it is). torch's version: the list's "**PyTorch Version:** 2.7.1+cu128", the JSON's
"pytorch_version", the log's "pytorch version: 2.4.1+cu124".

Read: torch's version and CUDA (its local tag), CUDA available, the NVIDIA GPUs named (each
once per index). Not stated, so Unavailable(NOT_REPORTED): the driver (ComfyUI does not print
it), the other GPUs of the machine (ComfyUI names the one it uses), torch's arch list.
"""

from __future__ import annotations

import re

from gpudoctor.reports import torch_messages
from gpudoctor.reports.interface import (
    TORCH_NAMED,
    TORCH_VERSION,
    Partial,
    named_gpu,
    stated_driver,
    tag_cuda,
)

LONGEST = 200_000  # a paste longer than this is searched in its first part only
_VERSION = "(" + TORCH_VERSION + ")"
# the device name after the list's "**Name:**", the JSON's "name": or the log's "Device:"
DEVICE = re.compile(r"(?:\*\*Name:?\*\*:?|\"name\":|\bDevice:)[ \t]*\"?cuda:(\d{1,2}) "
                    r"([^\n\":]{2,80}?) : ([A-Za-z_]{0,40})[ \t]*(?:\"|$)", re.MULTILINE)
TORCH = re.compile(r"\*\*PyTorch Version:?\*\*:?[ \t]*" + _VERSION + r"[ \t]*$"
                   r"|\"pytorch_version\":[ \t]*\"" + _VERSION + r"\""
                   r"|\bpytorch version: " + _VERSION + r"[ \t]*$", re.MULTILINE)
_NOT_NVIDIA = re.compile(r"\b(?:AMD|Radeon|Instinct|Intel|Arc)\b")
_WHY = "is not in the report (ComfyUI's system information does not state it)"


def parse(text: str) -> Partial | None:
    """torch and the GPU ComfyUI names in `text` (a whole paste); None where it names no CUDA
    device (or names two different torch versions)."""
    text = text[:LONGEST]
    gpus: dict[int, str] = {}
    for m in DEVICE.finditer(text):
        gpus.setdefault(int(m[1]), m[2].strip())
    if not gpus:
        return None
    versions = {next(g for g in m.groups() if g) for m in TORCH.finditer(text)}
    if len(versions) > 1:
        return None
    version = versions.pop() if versions else None
    nvidia = {i: name for i, name in gpus.items() if not _NOT_NVIDIA.search(name)}
    torch = None if version is None else torch_messages.stated_torch(
        version, tag_cuda(version), True, text, source="ComfyUI's system information")
    nvml = stated_driver(
        TORCH_NAMED, _WHY,
        tuple(named_gpu(i, name, _WHY) for i, name in sorted(nvidia.items())),
        None) if nvidia else None
    if torch is None and nvml is None:
        return None
    return Partial(kind="ComfyUI's system information", rank=2, torch=torch, nvml=nvml)

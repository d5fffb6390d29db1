"""Unsloth's start-up banner, quoted in a bug report: torch's view of its first GPU.

unsloth/models/*.py print it from `torch.cuda.get_device_properties(0)` (`gpu_stats`) where a
GPU is found ("No GPU detected" otherwise):

    ==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching. Transformers: 4.50.3.
       \\\\   /|    NVIDIA GeForce RTX 5090. Num GPUs = 1. Max memory: 31.367 GB. Platform: Linux.
    O^O/ \\_/ \\    Torch: 2.8.0.dev20250331+cu128. CUDA: 12.0. CUDA Toolkit: 12.8. Triton: 3.3.0

"CUDA: 12.0" is the GPU's compute capability (`gpu_stats.major`.`minor`), "CUDA Toolkit" is
`torch.version.cuda`, "Num GPUs" `torch.cuda.device_count()`, "Max memory" the GPU's memory in
GiB. Releases of 2024 wrote "GPU: <name>. Max memory: … Platform = Linux." and "Pytorch: 2.3.0.
CUDA = 7.5. CUDA Toolkit = 12.1."; the vision models' banner "GPU: <name>. Max memory: …".

Read: torch's version and CUDA, CUDA available (the banner names a GPU only where torch reached
it), the device count where stated, the first GPU's name and compute capability. Its other GPUs,
the driver and the arch list stay Unavailable(NOT_REPORTED).
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
    stated_driver,
)

LONGEST = 200_000  # a paste longer than this is searched in its first part only
# the logo's "/|" (or "GPU: ") before the name
GPU = re.compile(r"(?:/\|[ \t]{1,8}(?:GPU: )?|\bGPU: )([A-Za-z][^\n]{0,80}?)\. "
                 r"(?:Num GPUs = (\d{1,3})\. )?Max memory: (\d{1,4}(?:\.\d{1,3})?) GB\. "
                 r"Platform ?[:=]")
TORCH = re.compile(r"\b(?:Torch|Pytorch): (" + TORCH_VERSION + r")[.,] CUDA ?[:=] ?(\d{1,2})\."
                   r"(\d{1,2})\. CUDA Toolkit ?[:=] ?(\d{1,2}\.\d{1,2}|None)\b")
_WHY = "is not in the report (Unsloth's banner does not state it)"


def parse(text: str) -> Partial | None:
    """torch and its first GPU as Unsloth's banner in `text` states them; None where there is
    no banner naming a GPU (or two banners that disagree)."""
    text = text[:LONGEST]
    gpus = {(m[1].strip(), m[2]) for m in GPU.finditer(text)}
    torches = {(m[1], f"{m[2]}.{m[3]}", m[4]) for m in TORCH.finditer(text)}
    if len(gpus) != 1 or len(torches) != 1:
        return None
    (name, count), = gpus
    (version, cc, cuda), = torches
    torch = torch_messages.stated_torch(version, None if cuda == "None" else cuda, True, text,
                                        source="Unsloth's banner")
    if isinstance(torch.runtime, TorchRuntime) and count is not None:
        torch = replace(torch, runtime=replace(torch.runtime, device_count=int(count)))
    rocm = isinstance(torch.runtime, TorchRuntime) and bool(torch.runtime.hip)
    nvml = None if rocm else stated_driver(TORCH_NAMED, _WHY, (named_gpu(
        0, name, _WHY, compute_capability=cc),), None)
    return Partial(kind="Unsloth's banner", rank=2, torch=torch, nvml=nvml)

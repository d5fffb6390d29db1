"""Coqui TTS's environment report (`TTS/bin/collect_env_info.py`, which its issue template asks
for), quoted anywhere in a paste:

    {
        "CUDA": {
            "GPU": [
                "NVIDIA GeForce RTX 2060"
            ],
            "available": true,
            "version": "12.1"
        },
        "Packages": {
            "PyTorch_debug": false,
            "PyTorch_version": "2.4.0+cu121",
            ...
        },
        "System": { ..., "python": "3.10.12", ... }
    }

What its code prints (coqui-ai/TTS, TTS/bin/collect_env_info.py): one JSON object, indented,
keys sorted; "CUDA": {"GPU": `torch.cuda.get_device_name(i)` for every device torch counts,
"available": `torch.cuda.is_available()`, "version": `torch.version.cuda`}; "Packages":
{"PyTorch_version": `torch.__version__`, …}; "System": {"python":
`platform.python_version()`, …}. Read: torch's version, its CUDA, whether CUDA is available,
the GPUs torch named (only where available: their names, as torch saw them), the interpreter's
Python version. Nothing of the driver's version (the script prints none).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from gpudoctor.model import NvmlFacts, TorchRuntime
from gpudoctor.reports import torch_messages
from gpudoctor.reports.interface import (
    TORCH_NAMED,
    TORCH_VERSION,
    Partial,
    named_gpu,
    not_reported,
    stated_driver,
    tag_cuda,
)

LONGEST = 200_000  # a paste longer than this is searched in its first part only
KIND = "Coqui TTS's collect_env_info"
_LARGEST = 20_000  # the script's object is a few hundred characters; a longer one is not its
_MOST_GPUS = 64
_START = re.compile(r"^[ \t]{0,8}\{[ \t]*$", re.M)
_VERSION = re.compile(TORCH_VERSION)  # torch.__version__ as torch prints it
_CUDA = re.compile(r"\d{1,2}\.\d{1,2}")
_PYTHON = re.compile(r"3\.\d{1,2}\.\d{1,3}")
_WHY = "is not in the report (Coqui TTS's collect_env_info prints only the GPUs' names)"


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects in `text` that start on a line of their own ("{") and hold the
    script's "Packages" → "PyTorch_version"."""
    found = []
    for start in _START.finditer(text):
        if '"PyTorch_version"' not in text[start.start():start.start() + _LARGEST]:
            continue
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start.start():].lstrip()[:_LARGEST])
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("Packages"), dict) and \
                "PyTorch_version" in obj["Packages"]:
            found.append(obj)
    return found


def _gpus(cuda: dict[str, Any]) -> tuple[str, ...] | None:
    names = cuda.get("GPU")
    if not isinstance(names, list) or len(names) > _MOST_GPUS or not all(
            isinstance(n, str) and 0 < len(n.strip()) <= 100 and n.isprintable() for n in names):
        return None
    return tuple(n.strip() for n in names)


def parse(text: str) -> Partial | None:
    """torch and its GPUs as Coqui TTS's report states them; None where there is no such
    report (or two that disagree, or one whose fields are not what the script prints)."""
    said = {json.dumps(o, sort_keys=True) for o in _objects(text[:LONGEST])}
    if len(said) != 1:
        return None
    obj = json.loads(said.pop())
    version, cuda = obj["Packages"]["PyTorch_version"], obj.get("CUDA")
    if not isinstance(version, str) or not _VERSION.fullmatch(version) \
            or not isinstance(cuda, dict):
        return None
    available, built = cuda.get("available"), cuda.get("version")
    names = _gpus(cuda)
    if not isinstance(available, bool) or names is None or not (
            built is None or (isinstance(built, str) and _CUDA.fullmatch(built))):
        return None
    tagged = tag_cuda(version)
    if (built is not None and tagged not in (None, built)) or (names and not available):
        return None  # the tag and torch.version.cuda disagree, or GPUs named without CUDA
    # torch's facts as an app's report states them (its "+rocmX" tag read there, torch's
    # warnings elsewhere in the paste too), with the interpreter's Python version
    torch = torch_messages.stated_torch(version, built, available, text, source=KIND)
    system = obj.get("System")
    python = system.get("python") if isinstance(system, dict) else None
    torch = replace(torch, python_version=python if isinstance(python, str)
                    and _PYTHON.fullmatch(python) else not_reported(
                        "the interpreter's Python version is not in the report"))
    rocm = isinstance(torch.runtime, TorchRuntime) and bool(torch.runtime.hip)
    nvml: NvmlFacts | None = None
    if available and names and not rocm:
        nvml = stated_driver(TORCH_NAMED, _WHY, tuple(
            named_gpu(i, name, _WHY) for i, name in enumerate(names)))
    return Partial(kind=KIND, rank=2, torch=torch, nvml=nvml)

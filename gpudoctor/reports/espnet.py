"""ESPnet's installation check (`tools/check_install.py`, which its issue template and install
guide ask for), quoted anywhere in a paste:

    [x] python=3.9.23 (main, Jun  5 2025, 13:40:20)  [GCC 11.2.0]

    Python modules:
    [x] torch=2.7.1+cu126
    [x] torch cuda=12.6
    [x] torch cudnn=90501
    [x] torch nccl

What its code prints: "[x] torch=" `torch.__version__` ("[ ] torch" where the import failed);
"[x] torch cuda=" `torch.version.cuda` only where `torch.cuda.is_available()`, else "[ ] torch
cuda"; "[x] torch cudnn=" `torch.backends.cudnn.version()`. Read: torch's version, its CUDA and
whether CUDA is available where those lines say it, its cuDNN; the interpreter's Python
version. Nothing of the driver or the GPUs (the script prints neither).
"""

from __future__ import annotations

import re

from gpudoctor.reports.interface import (
    Partial,
    not_reported,
    release_left_open,
    stated_runtime,
    stated_torch,
    tag_cuda,
)

LONGEST = 200_000  # a paste longer than this is searched in its first part only
KIND = "ESPnet's check_install"
_VERSION = r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:(?:a|b|rc)\d{1,3})?(?:\.dev\d{1,10})?"
_TORCH = re.compile(rf"^[ \t]{{0,8}}\[x\][ \t]torch=(?P<v>{_VERSION}(?:\+[a-z0-9.]{{1,40}})?)"
                    r"[ \t]*$", re.M)
_CUDA = re.compile(r"^[ \t]{0,8}\[(?P<x>[x ])\][ \t]torch[ \t]cuda(?:=(?P<v>\d{1,2}\.\d{1,2}))?"
                   r"[ \t]*$", re.M)
_CUDNN = re.compile(r"^[ \t]{0,8}\[x\][ \t]torch[ \t]cudnn=(?P<v>\d{4,6})[ \t]*$", re.M)
_PYTHON = re.compile(r"^[ \t]{0,8}\[x\][ \t]python=(?P<v>3\.\d{1,2}\.\d{1,3})\b", re.M)


def _one(pattern: re.Pattern[str], text: str, group: str = "v") -> str | None:
    said = {m[group] for m in pattern.finditer(text)}
    return said.pop() if len(said) == 1 else None


def parse(text: str) -> Partial | None:
    """torch as ESPnet's check printed it; None where the check's torch lines are not there
    (or say two things)."""
    text = text[:LONGEST]
    version = _one(_TORCH, text)
    cuda_lines = {(m["x"], m["v"]) for m in _CUDA.finditer(text)}
    if version is None or len(cuda_lines) != 1:
        return None
    mark, cuda = cuda_lines.pop()
    if (mark == "x") != (cuda is not None):
        return None  # "[x] torch cuda" without its version, or "[ ] torch cuda=…": not its print
    available = mark == "x"
    tagged = tag_cuda(version)
    if cuda is not None and tagged not in (None, cuda):
        return None  # the tag and torch.version.cuda disagree: not one torch
    cudnn = _one(_CUDNN, text)
    why = "is not in the report (ESPnet's check prints torch's version, CUDA and cuDNN)"
    runtime = stated_runtime(version, cuda or tagged, available,
                             None, why=why, source=KIND, archs=None,
                             cudnn=int(cudnn) if cudnn else None)
    python = _one(_PYTHON, text)
    return Partial(kind=KIND, rank=1, torch=stated_torch(
        runtime, "ESPnet's check", python_version=python or not_reported(
            "the interpreter's Python version is not in the report"),
        stated_version=release_left_open(runtime, version)))

"""The device banner of Ultralytics (YOLOv8 and on) and YOLOv5 and their forks, quoted in a bug
report: torch's version and the CUDA devices torch opened.

`select_device` (ultralytics/utils/torch_utils.py; YOLOv5's utils/torch_utils.py) logs one
line, the devices after it indented under the first:

    Ultralytics YOLOv8.0.221 🚀 Python-3.11.6 torch-2.1.1+cu121 CUDA:0 (NVIDIA GeForce GTX
    1650 SUPER, 4096MiB)     [one line]
    YOLOv5 🚀 v7.0-1-g1234abc Python-3.8.10 torch-1.13.1+cu117 CUDA:0 (Tesla T4, 15110MiB)
    Ultralytics YOLOv8.0.54 Python-3.10.6 torch-2.0.0+cpu CPU

"CUDA:<d> (<name>, <MiB>)" is written only where torch.cuda.is_available() (each device from
torch.cuda.get_device_properties); "CPU" where CUDA is not available or the user asked for the
CPU (which of the two the banner does not say); "MPS" on a Mac. Windows consoles drop the
emoji. Older forks write "torch 1.7.0 CUDA:0 (…, 8192MB)".

Read: torch's version (its tag gives the build), the Python version, CUDA available and the
GPUs torch named where the banner names them. Several banners (a paste of two runs): the last
one's torch, and the GPUs the last one naming GPUs names. Everything else stays
Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re
from dataclasses import replace

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
BANNER = re.compile(r"(?:\bPython-(?P<py>\d\.\d{1,2}\.\d{1,2})[ \t]{1,4})?\btorch[- ]"
                    r"(?P<v>" + TORCH_VERSION + r")[ \t]{1,4}(?:(?P<cuda>CUDA:\d{1,2}[ \t]\()"
                    r"|(?P<cpu>CPU)\b|(?P<mps>MPS)\b)")
DEVICE = re.compile(r"CUDA:(\d{1,2})[ \t]\(([^,\n()]{2,80}), (\d{2,7})(?:\.\d{1,6})?Mi?B\)"
                    r"[ \t]*\n?[ \t]*")
_WHY = "is not in the report (the device banner does not state it)"


def parse(text: str) -> Partial | None:
    """torch and its devices as the last banner in `text` states them; None without one."""
    text = text[:LONGEST]
    banners = list(BANNER.finditer(text))
    if not banners:
        return None
    gpus: list[tuple[int, str]] = []
    for banner in banners:
        if banner["cuda"] is None:
            continue
        named, pos = [], banner.start("cuda")
        while (m := DEVICE.match(text, pos)) is not None:
            named.append((int(m[1]), " ".join(m[2].split())))
            pos = m.end()
        gpus = named or gpus
    last = banners[-1]
    available = True if last["cuda"] is not None else None
    torch = torch_messages.stated_torch(last["v"], tag_cuda(last["v"]), available, "",
                                        source="the device banner")
    if last["py"]:
        torch = replace(torch, python_version=last["py"])
    nvml = stated_driver(TORCH_NAMED, _WHY, tuple(
        named_gpu(i, name, _WHY) for i, (_, name) in enumerate(gpus)), None) if gpus else None
    return Partial(kind="a device banner (Ultralytics, YOLOv5)", rank=2, torch=torch, nvml=nvml)

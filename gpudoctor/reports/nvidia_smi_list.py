"""`nvidia-smi -L`: one line per GPU, and under a GPU in MIG mode one per MIG device.

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)
      MIG 3g.40gb     Device  0: (UUID: MIG-2c3d4e5f-6071-8293-a4b5-c6d7e8f90a1b)

It shows that the driver is loaded and answers for these GPUs (nvidia-smi asks NVML), with
their names and UUIDs; not the driver's version, the memory or anything else, which stay
Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re

from gpudoctor.model import GpuFacts
from gpudoctor.reports.interface import Partial, named_gpu, stated_driver

_UUID = r"GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
START = re.compile(rf"^[ \t]*GPU (\d{{1,3}}): ([^\n()]{{2,80}}?) \(UUID: ({_UUID})\)[ \t]*$",
                   re.MULTILINE)
_MIG = re.compile(r"^[ \t]+MIG [^\n]{0,40}Device[ \t]+\d{1,3}: \(UUID: MIG-", re.MULTILINE)


def parse(text: str) -> Partial | None:
    """The GPUs of an `nvidia-smi -L` block; None when it lists none."""
    lines = list(START.finditer(text))
    if not lines:
        return None
    why = "is not in the report (nvidia-smi -L lists only the GPUs' names and UUIDs)"
    gpus: dict[int, GpuFacts] = {}
    for i, m in enumerate(lines):
        below = text[m.end():lines[i + 1].start() if i + 1 < len(lines) else len(text)]
        gpus.setdefault(int(m[1]), named_gpu(int(m[1]), m[2].strip(), why, uuid=m[3],
                                             mig_mode=True if _MIG.search(below) else None))
    return Partial(kind="nvidia-smi -L", rank=3,
                   nvml=stated_driver("nvidia-smi -L", why, tuple(gpus.values())))

"""`nvidia-smi -L`: one line per GPU, and under a GPU in MIG mode one per MIG device.

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)
      MIG 3g.40gb     Device  0: (UUID: MIG-2c3d4e5f-6071-8293-a4b5-c6d7e8f90a1b)

It shows that the driver is loaded and answers for these GPUs (nvidia-smi asks NVML), with
their names and UUIDs; not the driver's version, the memory or anything else, which stay
Unavailable(NOT_REPORTED).

`nvidia-smi mig -lgi` / `-lci` (and the profile lists `-lgip` / `-lcip`): a table of the GPU
or compute instances (profiles) of each MIG-enabled GPU, by the GPU's index:

    | GPU instances:                                        |
    | GPU   Name             Profile  Instance   Placement  |
    |   0  MIG 1g.10gb         19        9          2:1     |

These commands answer only for GPUs in MIG mode ("No MIG-enabled devices found" otherwise):
each GPU they list is in MIG mode; its name and every other fact are not stated, and GPUs
without MIG are not listed (`interface.MIG_LIST` is not every GPU).

`nvidia-smi topo -m`: the matrix of how each pair of GPUs (and NICs) is connected, a column
per device, then each device's CPU and NUMA affinity (tab-separated):

            GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV12    SYS     0-55,112-167    0               N/A

It shows that the driver is loaded and answers (the matrix comes from NVML) for every GPU,
by index; their names, the driver's version and everything else are not stated.
"""

from __future__ import annotations

import re

from gpudoctor.model import GpuFacts
from gpudoctor.reports.interface import MIG_LIST, MOST_GPUS, Partial, named_gpu, stated_driver

_UUID = r"GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
START = re.compile(rf"^[ \t]*GPU (\d{{1,3}}): ([^\n()]{{2,80}}?) \(UUID: ({_UUID})\)[ \t]*$",
                   re.MULTILINE)
_MIG = re.compile(r"^[ \t]+MIG [^\n]{0,40}Device[ \t]+\d{1,3}: \(UUID: MIG-", re.MULTILINE)
# the title row of `nvidia-smi mig -lgi`, -lci, -lgip or -lcip
MIG_START = re.compile(r"^[ \t]*\|[ \t]*(?:GPU|Compute) instances?(?: profiles)?:[ \t]*\|[ \t]*$",
                       re.MULTILINE | re.IGNORECASE)
# a row: the GPU's index first, then (for -lci, the GPU instance's id) a profile's name
_MIG_ROW = re.compile(r"^[ \t]*\|[ \t]+(\d{1,3})[ \t]+(?:\d{1,3}[ \t]+)?"
                      r"MIG[ \t]+\d{1,2}g\.\d{1,4}gb\b", re.MULTILINE)
# the header of `nvidia-smi topo -m`: the devices' columns (GPUs first, then NICs or mlx5_N),
# then the affinity columns (older drivers print "CPU Affinity" alone)
TOPO_START = re.compile(r"^[ \t]*GPU0(?:[ \t]+(?:GPU\d{1,3}|NIC\d{1,3}|mlx\d_\d{1,3}))*"
                        r"[ \t]+CPU Affinity\b", re.MULTILINE)
_TOPO_ROW = re.compile(r"^GPU(\d{1,3})[ \t]+(?:X|NV\d{1,2}|PIX|PXB|PHB|NODE|SYS|SOC)\b",
                       re.MULTILINE)
_TOPO_COLUMN = re.compile(r"\bGPU(\d{1,3})\b")


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


def parse_mig(text: str) -> Partial | None:
    """The MIG-enabled GPUs of an `nvidia-smi mig -lgi` (-lci, -lgip, -lcip) table; None when
    it lists no instance."""
    indexes = sorted({int(m[1]) for m in _MIG_ROW.finditer(text)})[:MOST_GPUS]
    if not indexes:
        return None
    why = "is not in the report (nvidia-smi mig lists only the MIG instances)"
    gpus = tuple(named_gpu(i, "(name not in the report)", why, mig_mode=True) for i in indexes)
    return Partial(kind="nvidia-smi mig", rank=2, nvml=stated_driver(MIG_LIST, why, gpus))


def parse_topo(text: str) -> Partial | None:
    """The GPUs of an `nvidia-smi topo -m` matrix, by index; None without one of its rows."""
    header = TOPO_START.search(text)
    if header is None:
        return None
    end = text.find("\n", header.start())
    line = text[header.start():end if end >= 0 else None]
    columns = sorted({int(c) for c in _TOPO_COLUMN.findall(line)})
    rows = {int(m[1]) for m in _TOPO_ROW.finditer(text, header.end())}
    if not rows or not rows <= set(columns) or len(columns) > MOST_GPUS:
        return None
    why = "is not in the report (nvidia-smi topo -m shows only how the GPUs are connected)"
    gpus = tuple(named_gpu(i, "(name not in the report)", why) for i in columns)
    return Partial(kind="nvidia-smi topo -m", rank=2,
                   nvml=stated_driver("nvidia-smi topo -m", why, gpus))

"""`gpustat` (https://github.com/wookayin/gpustat): a header with the host, the time and the
driver's version, then one line per GPU NVML lists:

    40901                       Fri Jun 30 11:52:07 2023  535.54.03
    [0] NVIDIA GeForce RTX 4090 | 50°C,  73 % | 12894 / 24564 MB | user1(12874M) gdm(4M)

gpustat asks NVML (through nvidia-ml-py) for every GPU, so the rows are the driver's view of
each GPU: index, name, temperature, utilisation, memory used and total (MiB, which gpustat
prints as "MB"), and the processes. The header's last field is the driver's version. What it
does not print (CUDA version, compute capability, UUID, bus id) stays Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import islice

from gpudoctor.model import GpuFacts
from gpudoctor.reports.interface import MOST_GPUS, Partial, named_gpu, stated_driver

MIB = 1024 * 1024
_ROW = (r"^[ \t]{0,8}\[(?P<i>\d{1,2})\][ \t]+(?P<name>[^|\n]{2,80}?)[ \t]+\|[ \t]*"
        r"(?P<temp>\d{1,3}|\?{1,3})[ \t]?(?:°|'|º)?C,[ \t]+(?:(?P<util>\d{1,3})|\?{1,3})[ \t]?%"
        r"[ \t]*\|[ \t]*(?P<used>\d{1,7}|\?{1,3})[ \t]*/[ \t]*(?P<total>\d{1,7}|\?{1,3})[ \t]*MB")
ROW = re.compile(_ROW, re.MULTILINE)
HEADER = re.compile(r"^[ \t]{0,8}\S{1,80}[ \t]+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[ \t]+\w{3}[ \t]+"
                    r"\d{1,2}[ \t]+\d\d:\d\d:\d\d[ \t]+\d{4}[ \t]+"
                    r"(?P<driver>\d{3}\.\d{1,3}(?:\.\d{1,3})?)[ \t]*$", re.MULTILINE)
# a gpustat block starts at its header, or at its first row where the header was cut off
START = re.compile(rf"{HEADER.pattern}|{_ROW}", re.MULTILINE)
BINDING = "gpustat (NVML)"


def parse(text: str) -> Partial | None:
    """The driver and GPUs of a gpustat block; None when no GPU row is read."""
    rows = list(islice(ROW.finditer(text), MOST_GPUS))  # the rest is not read
    if not rows:
        return None
    header = HEADER.search(text, 0, rows[0].start())
    why = "is not in the report (gpustat shows each GPU's name, memory and use)"
    gpus: dict[int, GpuFacts] = {}
    for m in rows:
        gpu = named_gpu(int(m["i"]), m["name"].strip(), why)
        if m["total"].isdigit() and m["used"].isdigit():
            total, used = int(m["total"]) * MIB, int(m["used"]) * MIB
            if used <= total:
                gpu = replace(gpu, memory_total=total, memory_free=total - used)
        gpus.setdefault(int(m["i"]), gpu)
    return Partial(kind="gpustat", rank=3, nvml=stated_driver(
        BINDING, why, tuple(gpus.values()), header["driver"] if header else None))



"""jetson-stats' reports of an NVIDIA Jetson, quoted anywhere in a paste: `jetson_release` and
`jtop`'s INFO page (jetson-stats, `jtop/core/jetson_variables.py`), which Jetson projects'
issue templates ask for:

    Model: NVIDIA Jetson Orin Nano Developer Kit - Jetpack 6.0 [L4T 36.3.0]
    Hardware:
     - Module: NVIDIA Jetson Orin Nano (Developer kit)
     - CUDA Arch BIN: 8.7
     - L4T: 36.4.2
    Libraries:
     - CUDA: 12.6.68
     - cuDNN: 9.3.0.75

Read: the module (its name as NVIDIA's pages give it: the catalogue places "Jetson Orin Nano"
in "NVIDIA Jetson Orin Nano Developer Kit") and its compute capability where "CUDA Arch BIN"
states it, only where the report also names its L4T release (Linux for Tegra: the report is of
a Jetson, not a word about one). The module's integrated GPU has no nvidia-smi and no driver
version of a desktop's kind: the GPU is bound as the reporter's words are (`views.PROSE`: named,
not shown to answer). The libraries' versions are JetPack's own (the toolkit in /usr/local/cuda,
cuDNN, TensorRT); they are not read, as jtop does not say which one torch uses.
"""

from __future__ import annotations

import re

from gpudoctor.reports.interface import Partial, named_gpu, stated_driver
from gpudoctor.views import PROSE

LONGEST = 200_000  # a paste longer than this is searched in its first part only
KIND = "jetson-stats' report"
# "Model: NVIDIA Jetson AGX Orin Developer Kit", "- Module: NVIDIA Jetson Orin Nano (Developer
# kit)", "Module: NVIDIA Jetson Xavier NX (Developer Kit Version)"
_MODULE = re.compile(r"^[ \t]{0,8}(?:[-*][ \t]{1,4})?(?:Model|Module):[ \t]{1,8}(?:NVIDIA[ \t]+)?"
                     r"(?P<name>Jetson(?:[ \t]+(?:AGX|Orin|Xavier|Thor|Nano|NX|TX[12]|TK1|"
                     r"T[45]000))+)\b", re.M)
# "L4T: 36.4.2", "[L4T 36.3.0]", "L4T 32.7.4"
_L4T = re.compile(r"\bL4T:?[ \t]{1,4}\d{2}\.\d{1,2}(?:\.\d{1,2})?\b")
_ARCH = re.compile(r"^[ \t]{0,8}(?:[-*][ \t]{1,4})?CUDA[ \t]Arch[ \t]BIN:[ \t]{1,8}"
                   r"(?P<cc>\d{1,2}\.\d)[ \t]*$", re.M)


def parse(text: str) -> Partial | None:
    """The Jetson module jetson-stats names in `text`; None where it names none, names two,
    or names no L4T release."""
    text = text[:LONGEST]
    if _L4T.search(text) is None:
        return None
    names = {" ".join(m["name"].split()) for m in _MODULE.finditer(text)}
    names = {n for n in names if not any(o != n and o.startswith(n) for o in names)}
    if len(names) != 1:
        return None
    archs = {m["cc"] for m in _ARCH.finditer(text)}
    why = "is not in the report (jetson-stats names the module)"
    gpu = named_gpu(0, names.pop(), why,
                    compute_capability=archs.pop() if len(archs) == 1 else None)
    return Partial(kind=KIND, rank=0, nvml=stated_driver(PROSE, why, (gpu,), None))

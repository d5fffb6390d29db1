"""The toolkit a build ran, where its log names nvcc by a path whose folder carries the release:
NVIDIA's installers put CUDA X.Y in `/usr/local/cuda-X.Y` on Linux and in `C:\\Program
Files\\NVIDIA GPU Computing Toolkit\\CUDA\\vX.Y` on Windows, so a setup.py or CMake build's
"[1/9] /usr/local/cuda-11.0/bin/nvcc -I…" or "error: command '/usr/local/cuda-8.0/bin/nvcc'
failed with exit status 1" states the toolkit that compiled it (GD204 judges it against the
GPUs; GD104 against the driver), and nvcc's "Unsupported gpu architecture 'compute_86'" in the
same log what it refused to compile for (`ToolkitFacts.refused_archs`). It ranks above a pasted
`nvcc --version` (the nvcc on PATH may not be the one the build ran) and below a tool's report.

A path without the release (`/usr/local/cuda/bin/nvcc`, a conda environment's `bin/nvcc`)
states none, and a log naming two releases' nvcc states neither: which one built is not told.
Beside such a log an issue's words often name the GPU it was built for ("RTX 3090 with
CUDA11.0"): `read.read_reports` then takes the words' GPUs (`prose.named_gpus`).
"""

from __future__ import annotations

import re

from gpudoctor.model import ToolkitFacts, ToolkitsFacts, VersionReading
from gpudoctor.reports.interface import Partial
from gpudoctor.versions import normalize_cc

LONGEST = 200_000  # a longer log is searched in its first part only
KIND = "a build's nvcc (its path)"
# the release folder, then bin/nvcc: "/usr/local/cuda-11.0/bin/nvcc", "C:\\Program Files\\NVIDIA
# GPU Computing Toolkit\\CUDA\\v11.2\\bin\\nvcc.exe" (backslashes doubled where a log prints
# the path's repr)
_NVCC = re.compile(
    r"(?P<root>(?<![\w.-])/usr/local/cuda-(?P<lv>\d{1,2}\.\d{1,2}))/bin/nvcc(?![\w.-])"
    r"|(?P<wroot>[A-Za-z]:\\{1,2}Program Files\\{1,2}NVIDIA GPU Computing Toolkit\\{1,2}CUDA"
    r"\\{1,2}v(?P<wv>\d{1,2}\.\d{1,2}))\\{1,2}bin\\{1,2}nvcc(?:\.exe)?(?![\w-])", re.I)


# nvcc refusing an architecture it does not know: "nvcc fatal   : Unsupported gpu architecture
# 'compute_86'", and for -arch sm_XY "Value 'sm_61' is not defined for option
# 'gpu-architecture'"
_REFUSED = re.compile(r"Unsupported gpu architecture '(?P<arch>compute_\d{1,3}[af]?)'"
                      r"|Value '(?P<sm>sm_\d{1,3}[af]?)' is not defined for option "
                      r"'gpu-architecture'")


def _undoubled(path: str) -> str:
    """A path with a repr's doubled backslashes undone, as the path has them."""
    return path.replace("\\\\", "\\")


def parse(text: str) -> Partial | None:
    """The toolkit whose nvcc the log ran, by its folder; None where the log names no such
    nvcc, or the nvcc of two releases."""
    text = text[:LONGEST]
    found = {(m["lv"] or m["wv"], _undoubled(m["root"] or m["wroot"]), _undoubled(m[0]))
             for m in _NVCC.finditer(text)}
    if len({version for version, _, _ in found}) != 1:
        return None
    version, root, path = sorted(found)[0]
    refused = dict.fromkeys(cc for m in _REFUSED.finditer(text)
                            if (cc := normalize_cc(m["arch"] or m["sm"])) is not None)
    return Partial(kind=KIND, rank=4, toolkits=ToolkitsFacts(toolkits=(ToolkitFacts(
        root=root, found_by="the nvcc a build ran (its folder names the release)",
        version=version, readings=(VersionReading("path", path, version),), nvcc=path,
        pip_assembled=False, in_use=True, refused_archs=tuple(refused)),)))

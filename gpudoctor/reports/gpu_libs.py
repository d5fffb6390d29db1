"""Other GPU libraries' own environment reports, quoted anywhere in a paste: what they state
of the driver.

- CuPy's `cupy.show_config()` (`cupyx/_runtime.py`, which CuPy's issue template asks for):
  padded "Key : value" rows. "CUDA Driver Version : 12070" is `cudaDriverGetVersion()` (CUDA
  runtime API: 0 where no driver is installed; where the call raised, the error's repr), and
  "Device 0 Name : NVIDIA TITAN V" with "Device 0 Compute Capability : 70" each GPU CuPy reached
  (a device's properties need a working driver).
- Numba's `numba -s` (`numba/misc/numba_sysinfo.py`), its "__CUDA Information__" section:
  "CUDA Device Initialized : True" (the first device initialised: `cuda.list_devices()[0]`),
  "CUDA Driver Version : 11020" (`cuDriverGetVersion`), then `numba.cuda.detect()`'s "Found 1
  CUDA devices", "id 0    b'GeForce GTX 960M'    [SUPPORTED]", "Compute Capability: 5.0".

- NVIDIA Warp's start-up banner (`warp/context.py`, printed by `wp.init()`, which Isaac Sim and
  Newton run): "Warp 1.7.1 initialized:", "CUDA Toolkit 12.8, Driver 13.0" (the CUDA Warp was
  built with, and the driver's `cuDriverGetVersion`), then each device, "cuda:0" : "NVIDIA
  GeForce RTX 5070" (11 GiB, sm_120, mempool enabled).

Mapping: GPUs listed, or a device initialised → the driver answers (binding "<tool>, as it
reached the GPUs"), with the highest CUDA it runs where stated; the driver's CUDA version alone
is libcuda's view (`LibcudaFacts`: 0 is no driver installed), as the live probe reads it;
neither → None (the library failed for a reason its report does not state). Nothing of torch,
the toolkit or cuDNN is read: CuPy's CUDA runtime and cuDNN are its own, not the machine's
toolkit nor torch's.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import GpuFacts, LibcudaFacts
from gpudoctor.reports.interface import Partial, named_gpu, not_reported, stated_driver

LONGEST = 200_000  # a paste longer than this is searched in its first part only
MOST_GPUS = 64  # rows past this are not read
CUPY = "CuPy's show_config"
NUMBA = "Numba's numba -s"
WARP = "NVIDIA Warp's start-up banner"

# a padded row of either report: "CUDA Driver Version           : 12070"
_ROW = r"^[ \t`>*-]{0,8}%s[ \t]*:[ \t]*(?P<v>[^\n]{0,200}?)[ \t]*$"
CUPY_START = re.compile(_ROW % r"CuPy Version", re.MULTILINE)
_DRIVER = re.compile(_ROW % r"CUDA Driver Version", re.MULTILINE)
_CUPY_DEVICE = re.compile(r"^[ \t`>*-]{0,8}Device (?P<i>\d{1,2}) (?P<k>Name|Compute Capability)"
                          r"[ \t]*:[ \t]*(?P<v>[^\n]{1,100}?)[ \t]*$", re.MULTILINE)
NUMBA_START = re.compile(r"^[ \t`>*-]{0,8}__CUDA Information__[ \t]*$", re.MULTILINE)
_NUMBA_INIT = re.compile(_ROW % r"CUDA Device Initiali[sz]ed", re.MULTILINE)
# `cuda.detect()`: "id 0    b'GeForce GTX 960M'    [SUPPORTED]" (newer: no b'' around the name),
# its capability on a line below
_NUMBA_DEVICE = re.compile(r"^[ \t]{0,8}id (?P<i>\d{1,2})[ \t]+(?:b'(?P<b>[^'\n]{1,80})'|"
                           r"(?P<n>[^\n\[]{1,80}?))[ \t]*(?:\[[A-Z ]{1,20}\])?[ \t]*$"
                           r"(?:\n[ \t]{8,}(?!id )[^\n]{0,100}){0,6}?"
                           r"(?:\n[ \t]{8,}Compute Capability:[ \t]*(?P<cc>\d{1,2}\.\d))?",
                           re.MULTILINE)


def _cuda(value: str) -> int | None:
    """A driver's CUDA as these reports print it: `cuDriverGetVersion`'s integer ("12070"), or
    "12.7" / "(12, 7)" in newer releases; None otherwise (an error's repr)."""
    if re.fullmatch(r"0|[1-9]\d{3,5}", value):
        return int(value)
    m = re.fullmatch(r"\(?(\d{1,2})[.,][ \t]?(\d{1,2})\)?", value)
    return int(m[1]) * 1000 + int(m[2]) * 10 if m else None


def _capability(value: str) -> str | None:
    """CuPy's "70" and Warp's sm_120 → "7.0" and "12.0"."""
    return f"{value[:-1]}.{value[-1]}" if re.fullmatch(r"\d{2,3}", value) else None


def _state(tool: str, gpus: list[GpuFacts], initialised: bool, cuda: int | None,
           why: str) -> Partial | None:
    """The driver's view (GPUs listed, or a device initialised) and libcuda's (its
    `cuDriverGetVersion`, 0 where no driver is installed), where stated."""
    nvml = None
    if gpus or initialised:
        nvml = stated_driver(f"{tool}, as it reached the GPUs", why, tuple(gpus))
        nvml = replace(nvml, cuda_driver_version=cuda) if cuda else nvml
    lib = None if cuda is None else LibcudaFacts(
        path=f"(not in the report: {tool} gives the driver's CUDA version only)",
        cuda_driver_version=cuda,
        driver_version=not_reported(f"the driver's version is not in the report ({tool} "
                                    "states only the highest CUDA it runs)"))
    return None if nvml is None and lib is None else Partial(kind=tool, rank=2, nvml=nvml,
                                                             libcuda=lib)


def _section(start: re.Pattern[str], text: str, size: int, *, heading: bool
             ) -> str | None:
    """The `size` characters of `text` from the line `start` finds (with it, or after it
    where `heading`: the line names the section and holds no row); None where it finds none."""
    m = start.search(text)
    if m is None:
        return None
    at = m.end() if heading else m.start()
    return text[at:at + size]


def _driver_cuda(row: re.Pattern[str], body: str) -> int | None:
    """The driver's CUDA as the section's `row` states it (`_cuda`), None where it does not."""
    m = row.search(body)
    return _cuda(m["v"]) if m else None


def parse_cupy(text: str) -> Partial | None:
    """The driver as CuPy's show_config states it; None where it states neither a GPU nor a
    driver's CUDA."""
    body = _section(CUPY_START, text, 20_000, heading=False)
    if body is None:
        return None
    why = f"is not in the report ({CUPY} names each GPU and its compute capability)"
    cuda = _driver_cuda(_DRIVER, body)
    names: dict[int, str] = {}
    caps: dict[int, str] = {}
    for m in _CUPY_DEVICE.finditer(body):
        i = int(m["i"])
        if m["k"] == "Name":
            names.setdefault(i, m["v"])
        elif (cap := _capability(m["v"])) is not None:
            caps.setdefault(i, cap)
    gpus = [named_gpu(i, name, why, compute_capability=caps.get(i))
            for i, name in sorted(names.items())[:MOST_GPUS]]
    return _state(CUPY, gpus, False, cuda, why)


def parse_numba(text: str) -> Partial | None:
    """The driver as `numba -s` states it; None where its CUDA section states neither a GPU
    nor a device initialised."""
    body = _section(NUMBA_START, text, 20_000, heading=True)
    if body is None:
        return None
    why = f"is not in the report ({NUMBA} names each GPU it found)"
    init = _NUMBA_INIT.search(body)
    initialised = init is not None and init["v"] == "True"
    cuda = _driver_cuda(_DRIVER, body)
    gpus: dict[int, GpuFacts] = {}
    for m in _NUMBA_DEVICE.finditer(body):
        name = (m["b"] or m["n"] or "").strip()
        if name and len(gpus) < MOST_GPUS:
            gpus.setdefault(int(m["i"]), named_gpu(int(m["i"]), name, why,
                                                   compute_capability=m["cc"]))
    return _state(NUMBA, list(gpus.values()), initialised, cuda, why)


WARP_START = re.compile(r"^[ \t`>]{0,8}Warp \d{1,2}\.\d{1,3}(?:\.\d{1,3})?\S{0,20} initiali[sz]ed:"
                        r"[ \t]*$", re.MULTILINE)
_WARP_DRIVER = re.compile(r"^[ \t]{0,12}CUDA Toolkit \d{1,2}\.\d{1,2}, Driver "
                          r"(?P<v>\d{1,2}\.\d{1,2})[ \t]*$", re.MULTILINE)
_WARP_DEVICE = re.compile(r"^[ \t]{0,12}\"cuda:(?P<i>\d{1,2})\"[ \t]*:[ \t]*"
                          r"\"(?P<n>[^\"\n]{1,80})\"[ \t]*\((?:[^,()\n]{0,30},[ \t]*)?"
                          r"sm_(?P<sm>\d{2,3})\b", re.MULTILINE)


def parse_warp(text: str) -> Partial | None:
    """The driver as Warp's start-up banner states it; None where it states neither a GPU nor
    the driver's CUDA."""
    body = _section(WARP_START, text, 5_000, heading=True)
    if body is None:
        return None
    why = f"is not in the report ({WARP} names each GPU and its architecture)"
    cuda = _driver_cuda(_WARP_DRIVER, body)
    gpus: dict[int, GpuFacts] = {}
    for m in _WARP_DEVICE.finditer(body):
        if len(gpus) < MOST_GPUS:
            gpus.setdefault(int(m["i"]), named_gpu(int(m["i"]), m["n"].strip(), why,
                                                   compute_capability=_capability(m["sm"])))
    return _state(WARP, list(gpus.values()), False, cuda, why)


def parse(text: str) -> Partial | None:
    """CuPy's report, else Numba's, else Warp's banner, in `text`; None where none is there."""
    text = text[:LONGEST]
    return parse_cupy(text) or parse_numba(text) or parse_warp(text)

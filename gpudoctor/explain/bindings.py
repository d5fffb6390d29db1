"""Error codes as other languages' bindings spell them, decoded to the enumerations' names.

A binding prints a code in its own spelling, not the header's:

- Python wrappers of the math libraries: `libcudnn.cudnnStatusArchMismatch` (camelCase);
- NVML's bindings: pynvml's class per code (`NVMLError_GpuIsLost`), go-nvml's name without
  the prefix after an NVML context (`nvml.Init(): ERROR_LIBRARY_NOT_FOUND`), the message
  after an NVML context (`NVMLError_Unknown: Unknown Error`, `NVML: GPU is lost`), and the
  name in CamelCase near a mention of NVML, as .NET and other wrappers print it
  ("FunctionNotFound errors occurred while calling: nvmlQuery(…)", "NVML … status:
  GPUIsLost"; names of two words or more only);
- the CUDA driver API's result as an enum variant: Rust's rustacuda / cust
  (`CudaError::NoBinaryForGpu`, `Cuda(NoBinaryForGpu)` as `{:?}` prints it, `UnknownError`
  for CUDA_ERROR_UNKNOWN) and Go's gorgonia/cu (`panic: Unknown` raised in package `cu`): the
  header's name without `CUDA_ERROR_`, in CamelCase;
- Julia's CUDA.jl: `(code 209, ERROR_NO_BINARY_FOR_GPU)`;
- numba: `[999] Call to cuInit results in UNKNOWN_CUDA_ERROR` (the number names the code where
  numba has no name for it).

Each scanner yields (code, (start, end, excerpt)); `errcodes` turns them into diagnoses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from gpudoctor.explain.catalog import Catalog, Code, load_catalog
from gpudoctor.explain.found import anchored, hits, line_of

Span = tuple[int, int, str]
Found = Iterator[tuple[Code | None, Span]]

_CAMEL = re.compile(r"\b(cudnn|cublas|cusparse|cusolver|curand)Status([A-Z][A-Za-z]+)\b")
_NVML_CLASS = re.compile(r"\bNVMLError_([A-Z][A-Za-z]{2,40})\b")
_NVML_GO = re.compile(r"(?i:nvml)[^\n]{0,120}?\bERROR_([A-Z][A-Z_]{2,40})\b")
_NVML_MESSAGE = re.compile(r"\bnvml(?:error\w{0,30})?\b[^\n:]{0,60}:[ \t]{0,20}"
                           r"(?P<msg>[a-z][^\n]{2,80}?)[ \t.]{0,20}$", re.I | re.M)
# an enum variant of the driver API's result, where a binding prints one
_VARIANT = re.compile(r"\b(?:Cuda|CudaError|CuError|DriverError)(?:\(|::)"
                      r"(?P<name>[A-Z][A-Za-z]{2,40})\b")
# a Go panic whose value is the result, raised in the binding's package (its path ends in /cu)
_GO_PANIC = re.compile(r"panic: (?P<name>[A-Z][A-Za-z]{2,40})[ \t]{0,8}\n(?:[ \t]{0,8}\n){0,2}"
                       r"goroutine \d{1,9} \[running\]:\n(?P<frame>[^\n(]{1,200})")
_GO_PACKAGE = re.compile(r"(?:^|/)cu\.")
# numba's CudaAPIError: "[999] Call to cuInit results in UNKNOWN_CUDA_ERROR" (its name for a
# code it does not know), "[100] Call to cuInit results in CUDA_ERROR_NO_DEVICE"
_NUMBA = re.compile(r"\[(?P<n>-?\d{1,4})\] Call to (?P<fn>cu[A-Z]\w{1,40}) results in "
                    r"(?P<name>[A-Z][A-Z_]{2,60})")
_JULIA = re.compile(r"\(code (?P<n>-?\d{1,4}), ERROR_(?P<name>[A-Z][A-Z_]{2,50})\)")


def binding_codes(cat: Catalog, text: str, lowered: str) -> Found:
    """Every code the text names in a binding's spelling (see the module)."""
    if "status" in lowered:
        for m in hits(_CAMEL, text):
            name = f"{m[1].upper()}_STATUS_{_snake(m[2])}"
            yield cat.codes.get(name), (m.start(), m.end(), m.group(0))
    if "nvml" in lowered:
        yield from _nvml(cat, text, lowered)
    if "(" in text:
        yield from nvml_numbered(text)
    variants = _variants()
    if "cuda" in lowered or "cuerror" in lowered or "drivererror" in lowered:
        for m in hits(_VARIANT, text):
            yield variants.get(m["name"]), (m.start(), m.end(), line_of(text, m.start()))
    for m in anchored(_GO_PANIC, text, lowered, "panic: "):
        if _GO_PACKAGE.search(m["frame"]):
            yield variants.get(m["name"]), (m.start(), m.end(), m.group(0))
    if "call to cu" in lowered:
        for m in hits(_NUMBA, text):
            code = cat.codes.get(m["name"]) or cat.driver_by_number.get(int(m["n"]))
            yield code, (m.start(), m.end(), line_of(text, m.start()))
    if "(code " in lowered:
        for m in hits(_JULIA, text):
            yield cat.codes.get(f"CUDA_ERROR_{m['name']}"), (m.start(), m.end(),
                                                              line_of(text, m.start()))


@cache
def _nvml_phrases() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, Code]]:
    """NVML's messages of two words or more ("Insufficient Permissions", "GPU is lost"), as
    one pattern of them anywhere on a line that names NVML (pynvml's "could not be
    initialized Insufficient Permissions"), and one of them with their number after them
    ("GPU is lost (15)": message and number agreeing name the code without NVML's name)."""
    codes = {c.message.lower(): c for c in load_catalog().codes.values()
             if c.stem == "nvml" and " " in c.message.strip()}
    words = "|".join(re.escape(m) for m in sorted(codes, key=len, reverse=True))
    on_line = re.compile(rf"nvml[^\n]{{0,160}}?\b(?P<msg>{words})\b", re.I)  # at "nvml": anchored
    numbered = re.compile(rf"\b(?P<msg>{words})[ \t]{{0,4}}\((?P<n>\d{{1,3}})\)", re.I)
    return on_line, numbered, codes


def _nvml(cat: Catalog, text: str, lowered: str) -> Found:
    for m in anchored(_NVML_CLASS, text, lowered, "nvmlerror_"):
        name = "NVML_ERROR_" + _snake(m[1])
        yield cat.codes.get(name), (m.start(), m.end(), line_of(text, m.start()))
    for m in anchored(_NVML_GO, text, lowered, "nvml"):
        yield cat.codes.get("NVML_ERROR_" + m[1]), (m.start(1), m.end(), line_of(text, m.start()))
    messages = {c.message.lower().rstrip("."): c for c in cat.codes.values()
                if c.stem == "nvml" and c.message}
    for m in anchored(_NVML_MESSAGE, text, lowered, "nvml"):
        yield messages.get(m["msg"].strip().rstrip(".").lower()), (m.start(), m.end(), m.group(0))
    on_line, _, phrases = _nvml_phrases()
    for m in anchored(on_line, text, lowered, "nvml"):
        yield phrases.get(m["msg"].lower()), (m.start("msg"), m.end(), line_of(text, m.start()))
    yield from _nvml_camel(text, lowered)


_WORD = re.compile(r"\b[A-Za-z]{6,40}\b")
_NEAR = 200  # how far from "nvml" a CamelCase name is read


def _nvml_camel(text: str, lowered: str) -> Found:
    """NVML's codes in CamelCase near "nvml" (see the module), once each."""
    names, pos, seen = _nvml_variants(), 0, set()
    for _ in range(64):
        at = lowered.find("nvml", pos)
        if at < 0:
            return
        for m in _WORD.finditer(text, max(0, at - _NEAR), at + _NEAR):
            code = names.get(m[0].lower())
            if code is not None and code.name not in seen:
                seen.add(code.name)
                yield code, (m.start(), m.end(), line_of(text, m.start()))
        pos = at + _NEAR


@cache
def _nvml_variants() -> dict[str, Code]:
    """NVML's codes of two words or more by their CamelCase name, lower-cased
    (NVML_ERROR_FUNCTION_NOT_FOUND: "functionnotfound")."""
    return {"".join(code.name.removeprefix("NVML_ERROR_").split("_")).lower(): code
            for code in load_catalog().codes.values()
            if code.stem == "nvml" and code.name.startswith("NVML_ERROR_")
            and code.name.removeprefix("NVML_ERROR_").count("_") >= 1}


def nvml_numbered(text: str) -> Found:
    """NVML's message followed by its own number ("GPU is lost (15)"), NVML named or not."""
    _, numbered, phrases = _nvml_phrases()
    for m in hits(numbered, text):
        code = phrases.get(m["msg"].lower())
        if code is not None and code.number == int(m["n"]):
            yield code, (m.start(), m.end(), line_of(text, m.start()))


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


@cache
def _variants() -> dict[str, Code]:
    """The driver API's results by their CamelCase variant name (NoBinaryForGpu)."""
    out: dict[str, Code] = {}
    for code in sorted(load_catalog().numbered.get("cuda_driver", {}).values(),
                       key=lambda c: c.number):
        camel = "".join(w.capitalize() for w in code.name.removeprefix("CUDA_ERROR_").split("_"))
        out.setdefault(camel, code)
        out.setdefault(camel + "Error", code)  # rustacuda: UnknownError
    return out

"""The enumerations `gpudoctor explain` decodes, loaded and sorted into cause classes.

Data files beside this module, each citing its source and its count (a test checks both):
`codes/*.toml` (every code of the CUDA runtime and driver APIs, cuDNN, cuBLAS, cuSOLVER,
cuSPARSE, cuFFT, cuRAND, NCCL, NVRTC, NVML, NVENC and OptiX, from NVIDIA's headers; a code an
older release named otherwise is found by that name too, `formerly`) with
`codes/meanings.toml` (what the codes of headers without doc comments mean, from NVIDIA's API
references, and a library's `notes`: what NVIDIA's other documents add to a doc comment);
`xids.toml` (NVIDIA's Xid catalog); `sxids.toml` (NVSwitch SXids); `nvrm.toml` (the kernel
module's error messages); `nvstatus.toml` (its NV_STATUS codes);
`nccl_warnings.toml` (NCCL's WARN messages); `container_toolkit.toml` and
`libnvidia_container.toml` (the container stack's errors). `classes.toml` sorts every entry
into a cause class of `gpudoctor.explain.classes`, by hand. `load_catalog()` validates all of
it and raises `KnowledgeBaseError` naming the entry.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.kb import KnowledgeBaseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

# enumeration file stem → (the library as people name it, its message function's context)
CODE_FILES = {
    "cuda_runtime": "CUDA runtime", "cuda_driver": "CUDA driver", "cudnn9": "cuDNN",
    "cudnn8": "cuDNN", "cublas": "cuBLAS", "cusolver": "cuSOLVER", "cusparse": "cuSPARSE",
    "cufft": "cuFFT", "curand": "cuRAND", "nccl": "NCCL", "nvrtc": "NVRTC", "nvml": "NVML",
    "nvenc": "NVENC", "optix": "OptiX",
}
# where the doc comments of the headers that carry them are published
DOC_SOURCES = {
    "cuda_runtime": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    "cuda_driver": "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
    "cudnn9": "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html",
    "curand": "https://docs.nvidia.com/cuda/curand/group__HOST.html",
    "nvml": "https://github.com/NVIDIA/go-nvml/blob/v0.13.3-1/pkg/nvml/nvml.h",
    "nvenc": "https://github.com/FFmpeg/nv-codec-headers/blob/n13.0.19.0/include/ffnvcodec/"
             "nvEncodeAPI.h",
}
MESSAGE_FILES = ("nvrm", "nccl_warnings", "container_toolkit")
_SPEC = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z]|%[vwqsdT]")


@dataclass(frozen=True, slots=True)
class Code:
    """One error code of one library."""

    library: str  # "CUDA runtime"
    stem: str  # "cuda_runtime"
    name: str
    number: int
    message: str  # as the library prints it ("" when it prints none)
    meaning: str  # NVIDIA's description
    cause_class: str
    weak: bool  # a follow-on of another error, or says little alone
    source: str
    strong: bool = False  # states its cause outright: ranks above the symptoms beside it


@dataclass(frozen=True, slots=True)
class Message:
    """One message template of a program (`%s`-style fields), with the literal that finds it."""

    kind: str  # "nvrm" | "nccl_warnings" | "container_toolkit" | "libnvidia_container"
    template: str
    fragment: str  # its longest fixed text, lower-case, whitespace collapsed
    where: str  # the source file it comes from
    cause_class: str
    weak: bool
    parts: tuple[str, ...] = ()  # its fixed texts in order, lower-case (see `fixed_parts`)


@dataclass(frozen=True, slots=True)
class XidEntry:
    """One Xid (or SXid) of NVIDIA's catalog."""

    number: int
    mnemonic: str
    description: str
    immediate: str  # the catalog's action, as a sentence
    investigate: str
    cause_class: str
    weak: bool
    source: str


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every enumeration, indexed the ways the text names its entries."""

    codes: dict[str, Code]  # by name (cuDNN 9's entry where cuDNN 8 has the same name)
    runtime_by_number: dict[int, Code]
    driver_by_number: dict[int, Code]
    by_message: dict[str, Code]  # lower-cased printed message → runtime (else driver) code
    xids: dict[int, XidEntry]
    sxids: dict[int, XidEntry]
    messages: dict[str, tuple[Message, ...]]  # by kind
    container_stages: dict[str, str]  # nvidia-container-cli stage → what failed
    counts: dict[str, tuple[int, int]]  # file → (count stated, entries read)
    nv_status: dict[str, Code]  # the kernel module's NV_STATUS codes, by name
    numbered: dict[str, dict[int, Code]]  # enumeration file stem → number → code


def _read(name: str) -> dict[str, Any]:
    text = files("gpudoctor.explain").joinpath(name).read_text(encoding="utf-8")
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise KnowledgeBaseError(f"{name}: not TOML: {e}") from None
    return data


def _sorter(table: dict[str, Any], where: str, keys: set[Any]) -> tuple[
        dict[Any, str], set[Any], str]:
    """(entry → class, weak entries, default class) of one classes.toml table (its `strong`
    list is read by `_strong`)."""
    default = table.get("default")
    if default not in CAUSE_CLASSES:
        raise KnowledgeBaseError(f"classes.toml [{where}]: default {default!r} is no class")
    explicit: dict[Any, str] = {}
    for key, value in table.items():
        if key in ("default", "weak", "strong"):
            continue
        if key not in CAUSE_CLASSES:
            raise KnowledgeBaseError(f"classes.toml [{where}]: {key!r} is no cause class")
        for entry in value:
            if entry not in keys:
                raise KnowledgeBaseError(f"classes.toml [{where}]: {entry!r} is not in the "
                                         "enumeration")
            if entry in explicit:
                raise KnowledgeBaseError(f"classes.toml [{where}]: {entry!r} listed twice")
            explicit[entry] = key
    weak = set(table.get("weak", []))
    if weak - keys:
        raise KnowledgeBaseError(f"classes.toml [{where}]: weak {sorted(weak - keys)} not in "
                                 "the enumeration")
    return explicit, weak, default


def _strong(table: dict[str, Any], where: str, keys: set[Any], weak: set[Any]) -> set[Any]:
    """The entries of one classes.toml table that state their cause outright."""
    strong = set(table.get("strong", []))
    if strong - keys or strong & weak:
        raise KnowledgeBaseError(f"classes.toml [{where}]: strong {sorted(strong)} must be in "
                                 "the enumeration and not weak")
    return strong


def fragment(template: str) -> str:
    """The longest fixed text of a message template, lower-case, as it must appear."""
    parts = [" ".join(p.split()).strip(" .,:;'\"()[]") for p in _SPEC.split(template)]
    return max(parts, key=len).lower() if parts else ""


def fixed_parts(template: str) -> tuple[str, ...]:
    """Every fixed text of a message template (3+ characters), lower-case, in order: a line is
    that message only when all of them appear in it in this order, not just its longest one
    ("Invalid device %d (totalnDev=%d)" is not "Cuda failure 'invalid device function'")."""
    parts = (" ".join(p.split()).strip(" .,:;'\"()[]").lower() for p in _SPEC.split(template))
    return tuple(p for p in parts if len(p) >= 3)


def _codes(sorting: dict[str, Any], meanings: dict[str, Any]) -> tuple[
        dict[str, Code], dict[str, tuple[int, int]], list[Code]]:
    by_name: dict[str, Code] = {}
    counts: dict[str, tuple[int, int]] = {}
    every: list[Code] = []
    for stem, library in CODE_FILES.items():
        data = _read(f"codes/{stem}.toml")
        rows = data.get("code", [])
        counts[f"codes/{stem}.toml"] = (int(data.get("count", -1)), len(rows))
        names = {r["name"] for r in rows}
        explicit, weak, default = _sorter(sorting.get(stem, {}), f"codes.{stem}", names)
        strong = _strong(sorting.get(stem, {}), f"codes.{stem}", names, weak)
        docs = meanings.get(stem, {})
        notes = docs.get("notes", {})
        if set(notes) - names:
            raise KnowledgeBaseError(f"codes/meanings.toml [{stem}.notes]: "
                                     f"{sorted(set(notes) - names)} not in the enumeration")
        for r in rows:
            meaning = r.get("doc") or docs.get(r["name"], "")
            if not meaning:
                raise KnowledgeBaseError(f"{stem}: {r['name']} has no meaning (doc or "
                                         "codes/meanings.toml)")
            if r["name"] in notes:
                meaning = f"{meaning.rstrip('.')}. {notes[r['name']]}"
            code = Code(library, stem, r["name"], int(r["number"]), r.get("message", ""),
                        meaning, explicit.get(r["name"], default), r["name"] in weak,
                        docs.get("source") or DOC_SOURCES[stem], r["name"] in strong)
            every.append(code)
            if stem != "cudnn8" or code.name not in by_name:
                by_name[code.name] = code
            for old in r.get("formerly", ()):  # an older release's name of the same code
                by_name.setdefault(old, code)
    return by_name, counts, every


def _xids(sorting: dict[str, Any]) -> tuple[dict[int, XidEntry], dict[int, XidEntry],
                                            dict[str, tuple[int, int]]]:
    data = _read("xids.toml")
    buckets = data["bucket"]
    rows = data["xid"]
    explicit, weak, default = _sorter(sorting["xids"], "xids", {r[0] for r in rows})
    xids = {}
    for n, mnemonic, desc, now, later in rows:
        none = "no action given: see the Xid's entry in NVIDIA's catalog"
        xids[n] = XidEntry(n, mnemonic, desc, buckets.get(now, now) or none,
                           buckets.get(later, later) or none,
                           explicit.get(n, default), n in weak, data["source"])
    sdata = _read("sxids.toml")
    srows = sdata["sxid"]
    sexp, sweak, sdef = _sorter(sorting["sxids"], "sxids", {r[1] for r in srows})
    sxids = {n: XidEntry(n, name, name.removeprefix("NVSWITCH_ERR_HW_").replace("_", " ")
                         .lower(), "reset the GPUs and NVSwitches of the node (or reboot) "
                         "and restart the Fabric Manager", "contact NVIDIA or the system "
                         "vendor if it recurs", sexp.get(n, sdef), n in sweak, sdata["source"])
             for name, n in srows}
    counts = {"xids.toml": (int(data["count"]), len(rows)),
              "sxids.toml": (int(sdata["count"]), len(srows))}
    return xids, sxids, counts


def _messages(sorting: dict[str, Any]) -> tuple[dict[str, tuple[Message, ...]], dict[str, str],
                                                dict[str, tuple[int, int]]]:
    out: dict[str, tuple[Message, ...]] = {}
    counts: dict[str, tuple[int, int]] = {}
    for kind in MESSAGE_FILES:
        data = _read(f"{kind}.toml")
        rows = next(v for k, v in data.items() if isinstance(v, list))
        counts[f"{kind}.toml"] = (int(data["count"]), len(rows))
        explicit, weak, default = _sorter(sorting[kind], kind, {r[0] for r in rows})
        out[kind] = tuple(Message(kind, t, fragment(t), f, explicit.get(t, default), t in weak,
                                  fixed_parts(t)) for t, f in rows)
    lnc = _read("libnvidia_container.toml")
    counts["libnvidia_container.toml"] = (int(lnc["count"]), len(lnc["stage"]))
    explicit, weak, default = _sorter(sorting["libnvidia_container"], "libnvidia_container",
                                      {r[0] for r in lnc["detail"]})
    out["libnvidia_container"] = tuple(
        Message("libnvidia_container", t, fragment(t), src, explicit.get(t, default), t in weak,
                fixed_parts(t)) for t, src in lnc["detail"])
    return out, dict(lnc["stage"]), counts


def _nv_status(sorting: dict[str, Any]) -> tuple[dict[str, Code], tuple[int, int]]:
    """The kernel module's NV_STATUS codes: an entry listed under a class names a cause
    (strong); every other one is weak (classes.toml explains why)."""
    data = _read("nvstatus.toml")
    rows = data["status"]
    explicit, _, default = _sorter(sorting["nvstatus"], "nvstatus", {r[0] for r in rows})
    out = {name: Code("the NVIDIA kernel module", "nvstatus", name, int(number), message,
                      message, explicit.get(name, default), name not in explicit,
                      data["source"], name in explicit)
           for name, number, message in rows}
    return out, (int(data["count"]), len(rows))


@cache
def load_catalog() -> Catalog:
    """Every shipped enumeration, validated and sorted (cached)."""
    sorting = _read("classes.toml")
    meanings = _read("codes/meanings.toml")
    codes, counts, every = _codes(sorting["codes"], meanings)
    xids, sxids, xcounts = _xids(sorting)
    messages, stages, mcounts = _messages(sorting)
    nv_status, ncount = _nv_status(sorting)
    runtime = {c.number: c for c in every if c.stem == "cuda_runtime"}
    driver = {c.number: c for c in every if c.stem == "cuda_driver"}
    by_message: dict[str, Code] = {}
    for c in (*runtime.values(), *driver.values()):
        if c.message and c.number:
            by_message.setdefault(c.message.lower().rstrip("."), c)
    numbered: dict[str, dict[int, Code]] = {}
    for c in every:
        numbered.setdefault(c.stem, {}).setdefault(c.number, c)
    return Catalog(codes, runtime, driver, by_message, xids, sxids, messages, stages,
                   {**counts, **xcounts, **mcounts, "nvstatus.toml": ncount}, nv_status,
                   numbered)

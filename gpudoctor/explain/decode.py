"""Numbers in error texts, decoded: a driver's 11040 is CUDA 11.4, cuDNN's 8907 is 8.9.7 and
90100 is 9.1.0, sm_120 is compute capability 12.0 (Blackwell), an Xid is its catalog meaning.

The encodings are the ones gpudoctor already decodes (`gpudoctor.versions`), the families
come from the compat tables (`compat_tables/gpu.toml`), the Xid meanings from NVIDIA's Xid
catalog (`xids.toml`, through `gpudoctor.explain.catalog`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.explain.catalog import load_catalog
from gpudoctor.versions import decode_cuda_version, format_cudnn_version, normalize_cc

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

XID_CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


@dataclass(frozen=True, slots=True)
class Decoded:
    """One captured value: as written in the text, and what it means ("" when nothing more)."""

    name: str
    kind: str
    raw: str
    meaning: str
    action: str = ""  # what the documents say to do about it (an Xid's catalog action)


def decode(name: str, kind: str, raw: str, tables: Tables) -> Decoded:
    """The meaning of one capture; a value that does not decode keeps an empty meaning."""
    raw = raw.strip()
    meaning, action = "", ""
    if kind == "cuda-int" and raw.isdigit():
        meaning = f"CUDA {decode_cuda_version(int(raw))}"
    elif kind == "cudnn":
        meaning = _cudnn(raw)
    elif kind in ("arch", "cc"):
        meaning = _arch(raw, tables)
    elif kind == "xid" and raw.isdigit():
        entry = load_catalog().xids.get(int(raw))
        meaning = (f"Xid {int(raw)} ({entry.mnemonic}): {entry.description}" if entry else
                   f"Xid {int(raw)}: newer than NVIDIA's Xid catalog gpudoctor holds; look it "
                   f"up there ({XID_CATALOG})")
        action = entry.immediate if entry else f"see NVIDIA's Xid catalog ({XID_CATALOG})"
    elif kind == "size":
        size = parse_size(raw)
        meaning = f"{size / 2**30:.2f} GiB" if size is not None and size >= 2**30 else ""
    return Decoded(name, kind, raw, meaning, action)


_SIZE = re.compile(r"([\d.]+)\s*([KMGT]?i?B|bytes?)", re.I)
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str) -> float | None:
    """"2.50 MiB" → 2621440.0 bytes; None for text that is not a size."""
    text = text.strip()
    m = _SIZE.fullmatch(text) if len(text) <= 64 else None  # no size is longer (and the
    if m is None:  # regex is quadratic in a run of digits)
        return None
    try:
        return float(m[1]) * _UNITS[m[2].lower()]
    except (ValueError, KeyError):
        return None


def _cudnn(raw: str) -> str:
    parts = [p for p in re.split(r"[,\s]+", raw) if p]
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"cuDNN {'.'.join(str(int(p)) for p in parts)}"
    if raw.isdigit():
        return f"cuDNN {format_cudnn_version(int(raw))}"
    if re.fullmatch(r"\d+(?:\.\d+){1,2}", raw):
        return f"cuDNN {raw}"
    return ""


def _arch(raw: str, tables: Tables) -> str:
    cc = normalize_cc(raw)
    if cc is None:
        return ""
    row = tables.gpu_arch(cc)
    if row is None:
        return f"compute capability {cc} (not in gpudoctor's GPU table)"
    products = ", ".join(row.products[:3])
    return f"compute capability {cc}, {row.family}" + (f" ({products})" if products else "")

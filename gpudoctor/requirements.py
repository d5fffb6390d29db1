"""Requirements a CI job asserts about the machine: `--require gpus>=8`, `driver>=535`,
`cuda>=12.1`, `cudnn>=9`, `torch>=2.4`, `arch>=sm_80`, `gpu-memory>=40GiB`.

A leaf (stdlib only): the CLI parses the text into frozen `Requirement` values, which travel
to the checks inside the Environment (`Environment.requirements`), and the checks (GD601-GD607)
compare what they measure with `holds`. What each kind measures is the checks' business
(`gpudoctor.checks.requirements`); here is only the grammar and the arithmetic.

Versions are compared at the precision the requirement gives: `driver>=535` is met by
535.104.05, `cuda==12` by 12.4, `torch<2.5` by 2.4.1+cu121 (the local tag is ignored). A
measurement that states fewer parts than the requirement (torch's cuDNN integer, 9.26.0, has
no build number) is compared at the parts it states: `cudnn==9.26.0.51` holds for it.

Every value is ASCII digits and bounded (MAX_GPUS GPUs, version parts of at most
MAX_PART_DIGITS digits, a compute capability of two 2-digit numbers, memory below 2**63
bytes); anything else is a `RequirementError` naming the requirement, a usage error (exit 2).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gpudoctor.versions import parse_cc

# kind → what the value is, for the docs and for the usage error
KINDS: dict[str, str] = {
    "gpus": "a number of GPUs (gpus>=8)",
    "driver": "an NVIDIA driver version (driver>=535)",
    "cuda": "the highest CUDA version the driver runs (cuda>=12.1)",
    "cudnn": "a cuDNN version (cudnn>=9)",
    "torch": "a PyTorch version (torch>=2.4)",
    "arch": "a compute capability, sm_80 or 8.0 (arch>=sm_80)",
    "gpu-memory": "GPU memory with a unit: GiB, GB, MiB, MB, TiB, TB (gpu-memory>=40GiB)",
}
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, "<": operator.lt,
}
UNIT_NAMES = ("TiB", "GiB", "MiB", "TB", "GB", "MB")
UNITS: dict[str, int] = {u.lower(): (2 ** {"T": 40, "G": 30, "M": 20}[u[0]] if "i" in u
                     else 10 ** {"T": 12, "G": 9, "M": 6}[u[0]]) for u in UNIT_NAMES}

MAX_GPUS = 100_000  # more than any machine or job: a larger count is a typo
MAX_PART_DIGITS = 9  # a version part (535, 104, 05, 51; a date-like 20240101 too)
MAX_BYTES = 2**63 - 1  # no GPU has more memory; the facts are 64-bit
_SYNTAX = re.compile(r"\s*([a-z][a-z-]*)\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*", re.IGNORECASE)
_VERSION = re.compile(rf"[0-9]{{1,{MAX_PART_DIGITS}}}(?:\.[0-9]{{1,{MAX_PART_DIGITS}}}){{0,3}}")
_COUNT = re.compile(r"[0-9]{1,6}")
_CC = re.compile(r"(?:sm_)?[0-9]{1,4}(?:\.[0-9]{1,2})?", re.IGNORECASE)
_MEMORY = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,20})?)\s*([a-z]+)", re.IGNORECASE)


class RequirementError(ValueError):
    """A requirement that does not parse; the message names it and says what is expected."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `--require` value: `gpus>=8` is Requirement("gpus", ">=", "8")."""

    kind: str  # one of KINDS
    op: str  # one of OPERATORS
    value: str  # as written: "8", "535", "12.1", "sm_80", "40GiB"

    def __str__(self) -> str:
        return f"{self.kind}{self.op}{self.value}"


def parse_requirement(text: str) -> Requirement:
    """`"gpu-memory >= 40GiB"` → Requirement; RequirementError naming the text otherwise."""
    m = _SYNTAX.fullmatch(text)
    if m is None:
        raise RequirementError(
            f"--require {_shown(text)}: expected KIND OP VALUE, e.g. gpus>=8 (operators: "
            f"{' '.join(OPERATORS)}; kinds: {', '.join(KINDS)})")
    kind, op, value = m[1].lower(), m[2], m[3]
    if kind not in KINDS:
        raise RequirementError(f"--require {_shown(text)}: no requirement kind "
                               f"{_shown(kind)} (kinds: {', '.join(KINDS)})")
    req = Requirement(kind, op, value)
    try:
        target(req)
    except RequirementError as e:
        raise RequirementError(f"--require {_shown(text)}: {e}") from None
    return req


def _shown(text: str, most: int = 60) -> str:
    """`text` quoted for a message, cut to `most` characters (a 5000-digit value is named,
    not echoed whole)."""
    return repr(text) if len(text) <= most else repr(text[:most]) + "…"


def parse_requirements(texts: Iterable[str]) -> tuple[Requirement, ...]:
    """Every requirement of repeated / comma- or space-separated values, in order, without
    duplicates; the first that does not parse raises RequirementError."""
    items = [part for text in texts for part in re.split(r"[,\s]+", _glue(text)) if part]
    return tuple(dict.fromkeys(parse_requirement(item) for item in items))


def _glue(text: str) -> str:
    """'gpus >= 8' → 'gpus>=8', so that spaces around an operator do not split a value."""
    text = re.sub(r"\s*(>=|<=|==|!=|>|<)\s*", r"\1", text)
    return re.sub(r"(\d)\s+([TGM]i?B)\b", r"\1\2", text, flags=re.IGNORECASE)


def target(req: Requirement) -> int | tuple[int, ...]:
    """The requirement's value as what it is compared with: a count, a version tuple, a
    (major, minor) compute capability or a number of bytes. RequirementError if malformed."""
    kind, value = req.kind, req.value
    if req.op not in OPERATORS or kind not in KINDS:
        raise RequirementError(f"{req}: not a requirement")
    if kind == "gpus":
        if not _COUNT.fullmatch(value) or int(value) > MAX_GPUS:
            raise RequirementError(f"{_shown(value)} is not a whole number of GPUs "
                                   f"(0 to {MAX_GPUS})")
        return int(value)
    if kind == "arch":
        cc = parse_cc(value) if _CC.fullmatch(value) else None
        if cc is None or max(cc) > 99:
            raise RequirementError(f"{_shown(value)} is not a compute capability (sm_80 or 8.0)")
        return cc
    if kind == "gpu-memory":
        m = _MEMORY.fullmatch(value)
        if m is None or m[2].lower() not in UNITS:
            raise RequirementError(f"{_shown(value)} is not an amount of memory with a unit "
                                   f"({', '.join(UNIT_NAMES)})")
        size = float(m[1]) * UNITS[m[2].lower()]
        if not size < MAX_BYTES:
            raise RequirementError(f"{_shown(value)} is more memory than any GPU has (at most "
                                   f"{MAX_BYTES >> 60} EiB)")
        return round(size)
    if not _VERSION.fullmatch(value):
        raise RequirementError(f"{_shown(value)} is not a version (like 12.1 or 535.104.05; "
                               f"at most 4 parts of at most {MAX_PART_DIGITS} digits)")
    return tuple(int(x) for x in value.split("."))


def version_tuple(text: str) -> tuple[int, ...] | None:
    """"2.4.1+cu121" → (2, 4, 1); "535.104.05" → (535, 104, 5); None when no version leads
    (or a part is longer than MAX_PART_DIGITS: no real version is)."""
    m = re.match(rf"[0-9]{{1,{MAX_PART_DIGITS}}}(?:\.[0-9]{{1,{MAX_PART_DIGITS}}})*(?![0-9])",
                 text.strip())
    return tuple(int(x) for x in m[0].split(".")) if m else None


def holds(req: Requirement, measured: int | tuple[int, ...], stated: int | None = None) -> bool:
    """Whether a measured value meets the requirement; a version is cut (or padded with
    zeros) to the precision the requirement gives. `stated`: the measurement states only its
    first `stated` parts (torch's cuDNN: 3), so the requirement is cut to those."""
    want = target(req)
    if isinstance(want, tuple) and isinstance(measured, tuple) and req.kind != "arch":
        if stated is not None and len(want) > stated:
            want, measured = want[:stated], measured[:stated]
        measured = (measured + (0,) * len(want))[:len(want)]
    return bool(OPERATORS[req.op](measured, want))


def needs_gpu(reqs: Iterable[Requirement]) -> Requirement | None:
    """The first requirement that no GPU-less machine can meet (`gpus>=1`, `driver>=535`,
    `arch>=sm_80`, …), None when there is none (`torch>=2.4` alone, `gpus==0`)."""
    for r in reqs:
        if r.kind in ("driver", "cuda", "arch", "gpu-memory"):
            return r
        if r.kind == "gpus" and not holds(r, 0):
            return r
    return None


def format_bytes(n: int) -> str:
    """42949672960 → "40.0 GiB"."""
    return f"{n / 2**30:.1f} GiB"

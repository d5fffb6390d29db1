"""A GPU's name, as NVML, nvidia-smi or torch print it, matched to a product of the tables.

The names the driver prints are not the names NVIDIA's CUDA GPUs pages print: "Tesla
V100-SXM2-16GB" is the page's "NVIDIA V100", "NVIDIA GeForce RTX 3050 Laptop GPU" its "GeForce
RTX 3050", "NVIDIA A100-SXM4-40GB MIG 3g.20gb" a MIG slice of its "NVIDIA A100". Matching is by
rule, never by a row per variant; the rules, in the order they are tried:

1. name: a product named inside the given name, at word boundaries, case-insensitive, ignoring
   the words NVIDIA, GeForce, Tesla and Quadro; the longest such product wins. Tried on the name
   as printed, then on its core: the name without memory size and type ("80GB", "HBM3"), form
   factor ("SXM4", "PCIe", "NVL"), "Laptop GPU", "with Max-Q Design", "Mobile", "Generation",
   a MIG profile ("MIG 3g.20gb ...") and, for Tesla boards, a form-factor letter ("K40m",
   "V100S").
2. variant: the core names a product the page lists only as a variant ("GeForce GTX 1650" is
   on the page as "GeForce GTX 1650 Ti"; "Orin" as "Jetson AGX Orin", "Jetson Orin NX", ...):
   every product whose name contains the core, when they all have one compute capability.
3. series: a model number of a line whose every listed product has one compute capability:
   GeForce four-digit numbers share a generation in their first two digits (a "GTX 1660 SUPER"
   is a GeForce 16 like the listed "GTX 1650 Ti"), if the number is not below the lowest listed
   one (the RTX 2050 is an Ampere part below the Turing RTX 2060-2080); other lines ("RTX
   A4500" among "RTX A2000".."RTX A6000", "RTX 5880 Ada" among the "RTX ... Ada" parts) only
   between the lowest and the highest listed number.

4. line word: a GeForce four-digit number written with the other line word ("GTX 3090",
   "RTX 1080 Ti"), where no product of the word given has that number: the product of the
   same number under the other word (GeForce numbers are never both GTX and RTX).

Any tie between two compute capabilities gives no match: a name the rules cannot place is
unknown, and the caller falls back to the compute capability NVML reports (or says the report
lacks it). A name nvidia-smi cut short ("NVIDIA GeForce RTX 3060 ...") is matched by rule 1
only, and not at all where the cut may hide a longer product ("RTX 6000..." may be "RTX 6000
Ada"). Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpudoctor.compat.rows import UNVERIFIED, GpuProduct

_BRANDS = frozenset({"nvidia", "geforce", "tesla", "quadro"})
_VARIANT_WORDS = frozenset({"ti", "super"})
_NOISE = tuple(re.compile(p) for p in (
    r"\bmig\b.*$", r"\bwith max q design\b", r"\bmax q\b", r"\blaptop gpu\b", r"\blaptop\b",
    r"\bmobile\b", r"\b\d+ ?gb\b", r"\bhbm\d?e?\b", r"\bsxm\d?\b", r"\bpcie?\b", r"\bnvl\b",
    r"\bnvgpu\b", r"\bgeneration\b"))
_MODEL = re.compile(r"([a-z]*)(\d+)([a-z]*)")


@dataclass(frozen=True, slots=True)
class GpuMatch:
    """How a name was placed: the product row and the name on it, and the rule that matched."""

    given: str
    product: GpuProduct
    name: str  # the product's name as the page prints it
    rule: str  # "name" | "variant" | "series"

    @property
    def cc(self) -> str:
        """The compute capability the product row gives."""
        return self.product.cc

    def describe(self) -> str:
        """One phrase for messages: "GeForce GTX 1650 Ti (by the variant rule)"."""
        return self.name if self.rule == "name" else f"{self.name} (by the {self.rule} rule)"


_JOINED_LINE = re.compile(r"\b(rtx|gtx|gt|mx)(?=\d)")
# "5090d" as NVIDIA's "RTX 5090 D" (after four digits: "Quadro K2000D" spaced alike both sides)
_JOINED_SUFFIX = re.compile(r"(?<=\d)(ti|super)\b|(?<=\d{4})(d)\b")


def normalize(text: str) -> str:
    """Lower case, punctuation as spaces, a line word or suffix joined to the model number
    spaced ("rtx2060" → "rtx 2060", "4070ti" → "4070 ti"), without the brand words: "tesla v100
    sxm2 16gb"."""
    spaced = re.sub(r"[-_/(),*]", " ", text.lower())
    # people join the words a product's name spaces: "RTX2060", "GTX1080Ti", "4070ti"
    spaced = _JOINED_SUFFIX.sub(lambda m: f" {m[0]}", _JOINED_LINE.sub(r"\1 ", spaced))
    return " ".join(w for w in spaced.split() if w not in _BRANDS)


def core(text: str) -> str:
    """`normalize(text)` without memory, form-factor and MIG words (module docstring)."""
    name = normalize(text)
    for noise in _NOISE:
        name = noise.sub(" ", name)
    return " ".join(name.split())


_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _contains(haystack: str, needle: str) -> bool:
    """Whether `needle` is in `haystack` as whole words: no letter, digit or "." before it, no
    letter or digit after it. (Plain string search: a pattern per needle compiled for every
    table entry and every GPU of a report overflowed re's cache, 70 s for 1000 GPUs.)"""
    if not needle:
        return False
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        if (start == 0 or (haystack[start - 1] not in _WORD and haystack[start - 1] != ".")) and (
                end == len(haystack) or haystack[end] not in _WORD):
            return True
        start = haystack.find(needle, start + 1)
    return False


@dataclass(frozen=True, slots=True)
class _Entry:
    norm: str
    name: str
    product: GpuProduct

    @property
    def cc(self) -> str:
        return self.product.cc


@functools.lru_cache(maxsize=4)  # once per table: ~30 ms each, and a report names many GPUs
def _entries(products: tuple[GpuProduct, ...]) -> list[_Entry]:
    return [_Entry(normalize(name), name, row) for row in products if row.status != UNVERIFIED
            for name in row.names if normalize(name)]


def _one(entries: list[_Entry]) -> _Entry | None:
    """The entry of the single compute capability `entries` share (the first), else None."""
    return entries[0] if entries and len({e.product.cc for e in entries}) == 1 else None


def _by_name(given: str, entries: list[_Entry]) -> _Entry | None:
    inside = [e for e in entries if _contains(given, e.norm)]
    longest = max((len(e.norm) for e in inside), default=0)
    return _one([e for e in inside if len(e.norm) == longest])


def _brand(raw: str) -> str:
    words = set(re.sub(r"[^a-z0-9]+", " ", raw.lower()).split())
    return next((b for b in ("geforce", "quadro", "tesla") if b in words), "")


def _series(raw: str, name: str) -> tuple[tuple[object, ...], int] | None:
    """(the key of the line a model number belongs to, the number), or None."""
    words = name.split()
    at = next((i for i, w in enumerate(words) if _MODEL.fullmatch(w)), None)
    if at is None:
        return None
    match = _MODEL.fullmatch(words[at])
    assert match is not None
    prefix, digits, suffix = match.groups()
    brand, before = _brand(raw), tuple(words[:at])
    if brand == "geforce" and len(digits) == 4 and not prefix and not suffix:
        return ("geforce", before, digits[:2]), int(digits)
    after = tuple(w for w in words[at + 1:] if w not in _VARIANT_WORDS)
    return (brand, before, prefix, len(digits), suffix, after), int(digits)


def _by_series(raw: str, name: str, entries: list[_Entry]) -> _Entry | None:
    mine = _series(raw, name)
    if mine is None:
        return None
    key, number = mine
    same = [(e, s[1]) for e in entries if (s := _series(e.name, e.norm)) and s[0] == key]
    numbers = [n for _, n in same]
    if not same or number < min(numbers) or (key[0] != "geforce" and number > max(numbers)):
        return None
    if _one([e for e, _ in same]) is None:
        return None
    return min(same, key=lambda pair: abs(pair[1] - number))[0]  # the nearest listed number


def _tesla_board(raw: str, name: str) -> str:
    """A Tesla board's model without its form-factor letters: "k40m" -> "k40"."""
    if _brand(raw) != "tesla":
        return name
    return re.sub(r"\b([a-z]\d+)[a-z]+\b", r"\1", name)


@functools.lru_cache(maxsize=1024)  # the same names are asked for by many checks
def match_gpu(given: str, products: tuple[GpuProduct, ...]) -> GpuMatch | None:
    """The product `given` names, by the rules of the module docstring; None if none places it."""
    text = given.strip()
    cut = text.endswith(("...", "…"))
    text = text.rstrip(".…").strip()
    entries = _entries(products)
    if not text or not entries:
        return None
    if cut:  # the last word may be partial: refuse where it could begin a longer product
        shown = normalize(text)
        found = _by_name(shown, entries)
        if found is None:
            return None
        tail = shown[shown.index(found.norm) + len(found.norm):]
        hidden = [e for e in entries if e.norm.startswith(found.norm) and e.norm != found.norm
                  and e.norm[len(found.norm):].startswith(tail) and e.product.cc != found.cc]
        return None if hidden else GpuMatch(given, found.product, found.name, "name")
    name = core(text)
    for attempt in (normalize(text), name, _tesla_board(text, name)):
        found = _by_name(attempt, entries)
        if found is not None:
            return GpuMatch(given, found.product, found.name, "name")
    if not name:
        return None
    wider = sorted((e for e in entries if _contains(e.norm, name)), key=lambda e: len(e.norm))
    found = _one(wider)
    if found is not None:
        return GpuMatch(given, found.product, found.name, "variant")
    found = _by_series(text, name, entries)
    if found is not None:
        return GpuMatch(given, found.product, found.name, "series")
    m = _LINE_WORD.search(name)
    if m is not None and not any(_contains(e.norm, m[0]) for e in entries):
        # no product of the word given has the number: the other word's, if one has it
        other = "rtx" if m[1] == "gtx" else "gtx"
        found = _by_name(f"{name[:m.start()]}{other} {m[2]}{name[m.end():]}", entries)
        if found is not None:
            return GpuMatch(given, found.product, found.name, "line word")
    return None


_LINE_WORD = re.compile(r"\b(gtx|rtx) (\d{4})\b")  # GeForce's line word and model number

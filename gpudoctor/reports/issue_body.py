"""Find the report blocks in a pasted text: a bare tool output, or a whole GitHub issue body.

An issue body is Markdown: outputs sit in code fences (``` or ~~~, with or without a language),
often inside `<details>` with a `<summary>`, sometimes quoted (`> `) in a reply, sometimes
pasted with no fence at all. The text is cut into regions at fences, `<details>`/`<summary>`
tags and Markdown headings (a heading's own words are a region of their own: an issue's title
may be the error); within a region a block starts at a line that only one kind of
output has (collect_env's "PyTorch version:", nvidia-smi's banner, "NVSMI LOG",
`<nvidia_smi_log>`, an nvidia-smi error, a gpudoctor JSON object) and runs to the next such
line or the region's end. A fence that is never closed runs to the end of the text: a block
cut off mid-way is kept, and its reader uses what it has.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from gpudoctor.reports import (
    collect_env,
    env_tools,
    gpustat,
    nvidia_smi,
    nvidia_smi_csv,
    nvidia_smi_list,
    nvidia_smi_q,
)

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BREAK = re.compile(r"^\s*(?:</?details\b[^>]*>|<summary>.*?</summary>|</?summary>|#{1,6}\s)",
                    re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s+(\S[^\n]*)$")
_QUOTE = re.compile(r"^(?:\s{0,3}>\s?)+")
# Python logging's prefix before each line of a report a tool logs: mmdeploy's and mmcv's
# "2022-11-11 08:08:37,084 - mmdeploy - INFO - sys.platform: linux", mmengine's "10/07
# 17:11:55 - mmengine - INFO - ", and logging's default format "%(levelname)s:%(name)s:" (a
# script that called logging.basicConfig(): "INFO:root:sys.platform: linux")
_LOG = re.compile(r"^(?:(?:\d{4}-\d\d-\d\d[ T]|\d\d/\d\d )\d\d:\d\d:\d\d(?:[,.]\d{1,6})?"
                  r"[ \t]{1,4}-[ \t]{1,4}"
                  r"[\w.-]{1,40}[ \t]{1,4}-[ \t]{1,4}(?:INFO|WARNING|DEBUG|ERROR)"
                  r"[ \t]{1,4}-[ \t]{1,4}|(?:INFO|WARNING|DEBUG|ERROR):[\w.-]{1,40}:)")
# a line of `nvidia-smi -q`'s text: indented, "Key   : value" or a section's heading alone
_Q_LINE = re.compile(r"^ {4,}[A-Za-z][\w ./()-]{0,60}?(?: +: [^\n]{0,200})?[ \t]*$")

# kind → a line that starts a block of that kind
MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("collect_env", collect_env.START),
    ("nvidia-smi", nvidia_smi.BANNER),
    ("nvidia-smi (rows)", nvidia_smi.ROW_START),  # a table whose banner the paste cut off
    ("nvidia-smi -q", nvidia_smi_q.START_TEXT),
    ("nvidia-smi -q (headless)", nvidia_smi_q.HEADLESS),
    ("nvidia-smi -q -x", nvidia_smi_q.START_XML),
    ("nvidia-smi (error)", nvidia_smi.ERROR_START),
    ("nvidia-smi -L", nvidia_smi_list.START),
    ("nvidia-smi mig", nvidia_smi_list.MIG_START),
    ("nvidia-smi topo -m", nvidia_smi_list.TOPO_START),
    ("nvidia-smi --query-gpu", nvidia_smi_csv.START),
    ("gpustat", gpustat.START),
    ("nvidia-smi -q (fragment)", nvidia_smi_q.FRAGMENT),
    ("nvidia-smi -q -x (fragment)", nvidia_smi_q.FRAGMENT_XML),
    ("collect_env (cut)", collect_env.START_CUT),  # a collect_env whose top is cut off
    ("tool env", env_tools.START),  # detectron2's, mmcv's, SGLang's, Lightning's … reports
    ("tool env (cut)", env_tools.START_CUT),
    ("nvcc", env_tools.NVCC_START),
)


@dataclass(frozen=True, slots=True)
class Block:
    """One report found in the text."""

    kind: str  # a MARKERS kind, or "snapshot"
    text: str
    line: int  # where it starts, 1-based


def _regions(lines: list[str]) -> list[tuple[int, list[str], bool]]:
    """(first line number, lines, whether a fence's body) of each fence's body and of the text
    between them."""
    regions: list[tuple[int, list[str], bool]] = []
    current: list[str] = []
    start, fence = 1, ""
    xml = False  # inside <nvidia_smi_log>: its <summary> (fabric health, R590) is no HTML tag
    for number, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        xml = (xml or "<nvidia_smi_log" in line) and "</nvidia_smi_log>" not in line
        if fence:
            if m and m[1][0] == fence[0] and len(m[1]) >= len(fence) and not line.strip(
                    ).lstrip(m[1][0]):
                regions.append((start, current, True))
                current, start, fence, xml = [], number + 1, "", False
            else:
                current.append(line)
        elif m:
            regions.append((start, current, False))
            current, start, fence, xml = [], number + 1, m[1], False
        elif _BREAK.match(line) and not xml:
            regions.append((start, current, False))
            current, start = [], number + 1
            if (heading := _HEADING.match(line)) is not None:  # a title holds words too
                regions.append((number, [heading[1]], False))
        else:
            current.append(line)
    regions.append((start, current, bool(fence)))  # an unclosed fence runs to the end
    return [(s, r, f) for s, r, f in regions if any(line.strip() for line in r)]


def fenced(text: str) -> list[list[str]]:
    """The lines of each fenced code block of `text`, in order (one never closed runs to the
    text's end); blocks with nothing but blank lines are left out."""
    return [r for _, r, f in _regions(text.replace("\r\n", "\n").split("\n")) if f]


def _marker(line: str) -> str | None:
    for kind, pattern in MARKERS:
        if pattern.search(line):
            return kind
    return None


# Docker Compose's prefix before each line a service prints: "frigate    | ", "worker_1  | "
_SERVICE = re.compile(r"^[ \t]{0,8}([A-Za-z][\w.-]{0,60})[ \t]{1,20}\|[ \t]?(?=\S|$)")
_SERVICE_LEAST = 3  # lines with one service's prefix before it is taken for one


def _unprefixed(lines: list[str]) -> list[str]:
    """The lines with Docker Compose's service prefix taken off, where at least
    `_SERVICE_LEAST` lines carry the same one (a table row's first cell is no service)."""
    names = Counter(m[1] for line in lines[:20_000] if (m := _SERVICE.match(line)))
    services = {n for n, count in names.items() if count >= _SERVICE_LEAST}
    if not services:
        return lines
    return [_SERVICE.sub("", line, count=1) if (m := _SERVICE.match(line)) and m[1] in services
            else line for line in lines]


def find_blocks(text: str) -> list[Block]:
    """Every report block in `text`, in order."""
    lines = _unprefixed([_LOG.sub("", _QUOTE.sub("", line)) for line in text.replace(
        "\r\n", "\n").replace("\r", "\n").split("\n")])
    blocks: list[Block] = []
    for start, region, _ in _regions(lines):
        region = env_tools.undict(region)  # OpenMMLab's environment printed as a dict
        body = "\n".join(region)
        if body.lstrip().startswith("{") and '"environment"' in body:
            blocks.append(Block("snapshot", body, start))
            continue
        current: tuple[str, int] | None = None
        versioned = False  # the current collect_env block has had its "PyTorch version:"
        for i, line in enumerate(region):
            kind = _marker(line)
            if kind is None or (current and current[0] == kind and kind == "nvidia-smi (error)"):
                continue
            if kind in ("collect_env (cut)", "tool env (cut)"):
                if current and current[0] in ("collect_env", "tool env"):
                    continue  # a line of the block it is in
                kind = kind.removesuffix(" (cut)")
            if kind == "nvidia-smi (rows)" and current and current[0].startswith("nvidia-smi"):
                continue  # a GPU row of the table it is in (or of the next GPU)
            if kind in ("nvidia-smi -L", "gpustat") and current and current[0] == kind:
                continue  # the next GPU of the same list
            if kind == "tool env" and current and current[0] == "tool env":
                continue  # Lightning's "* CUDA:" inside its report, sys.platform inside one
            if kind == "nvidia-smi -q (headless)":
                if current and current[0] == "nvidia-smi -q":
                    continue  # the header's fields under its banner, or the next one
                kind = "nvidia-smi -q"
            if kind == "nvidia-smi -q (fragment)" and current and current[0].startswith(
                    "nvidia-smi -q"):
                continue  # a section inside a whole -q, or the next one of a fragment
            if kind == "nvidia-smi -q -x (fragment)" and current and current[0].startswith(
                    "nvidia-smi -q -x"):
                continue  # an element inside a whole -q -x, or the next one of a piece
            if kind == "nvidia-smi (error)" and current and current[0] == "nvidia-smi" and (
                    nvidia_smi.LOST.search(line)):
                continue  # a GPU's error printed with the table belongs to it
            if current and current[0] == kind == "collect_env" and not versioned:
                # "Collecting environment information...", warnings, then "PyTorch version:"
                versioned = bool(collect_env.VERSION_LINE.match(line))
                continue
            if current:
                blocks.append(Block(current[0], "\n".join(region[current[1]:i]),
                                    start + current[1]))
            # the table's frame line and timestamp belong to it; a -q fragment's indented
            # lines before its first known section (a paste that starts mid-GPU) to it
            back = 1 if kind == "nvidia-smi" and i and region[i - 1].lstrip().startswith("+") \
                else 0
            if kind == "nvidia-smi -q (fragment)":
                while i - back > (current[1] if current else 0) and _Q_LINE.match(
                        region[i - back - 1]):
                    back += 1
            current = (kind, i - back)
            versioned = bool(collect_env.VERSION_LINE.match(line))
        if current:
            blocks.append(Block(current[0], "\n".join(region[current[1]:]), start + current[1]))
    return blocks

"""`gpudoctor.renderers.fleet`: the fleet view as text (each fact's majority and the nodes that
deviate, then failing nodes and unreadable reports; `-v` the nodes × facts table, every row
starting with its status glyph), JSON and Markdown; names from the reports escaped.
(Reports written by the real `check`, aggregated through the CLI: tests/fleet/test_fleet.py.)"""

from __future__ import annotations

import io
import json

from rich.console import Console

from gpudoctor.fleet import FACTS, Fleet, Node, Unreadable, aggregate
from gpudoctor.renderers.fleet import render_json, render_markdown, render_text, summary

H100 = ("580.65.06", "13.0", "1 × NVIDIA H100 80GB HBM3", "2.13.0+cu130", "13.0", "9.20.0",
        "13.0", "Ubuntu 22.04.4 LTS", "5.15.0-105-generic", "3.11.7", "none")


def node(name: str, failed: tuple[str, ...] = (), **facts: str) -> Node:
    """A node of the recorded H100 machine, with `facts` (by FACTS name, spaces as _) changed."""
    values = tuple(facts.get(f.replace(" ", "_"), v) for f, v in zip(FACTS, H100, strict=True))
    return Node(name, f"/reports/{name}.json", values, failed, (), True)


def fleet() -> Fleet:
    return aggregate([node("gpu2", ("GD103",), driver="535.104.05"), node("gpu0"), node("gpu1")],
                     [Unreadable("/reports/bad.json", "not a JSON document")])


def text(f: Fleet, verbose: bool = False, width: int = 100) -> list[str]:
    console = Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)
    return render_text(f, console, verbose).splitlines()


def test_summary() -> None:
    assert summary(fleet()) == "3 nodes: 1 failing, 1 deviating, 1 unreadable"
    assert summary(aggregate([node("gpu0")])) == "1 node: 0 failing, 0 deviating"


def test_text_majorities_deviants_failing_and_unreadable() -> None:
    lines = text(fleet())
    width = max(len(f) for f in FACTS) + 2
    assert lines[0] == "driver".ljust(width) + "580.65.06  (2 of 3)"
    assert lines[1] == " " * width + "≠ 535.104.05: gpu2"
    assert "torch".ljust(width) + "2.13.0+cu130  (3 of 3)" in lines
    i = lines.index("Failing nodes")
    assert lines[i + 1] == "    ✗ gpu2: GD103"
    i = lines.index("Unreadable reports")
    assert lines[i + 1] == "    ✗ /reports/bad.json: not a JSON document"
    assert lines[-1] == "3 nodes: 1 failing, 1 deviating, 1 unreadable"
    assert not [line for line in lines if line.lstrip().startswith("node ")]  # no table


def test_verbose_table_is_whole_and_each_row_starts_with_its_status() -> None:
    f = aggregate([node("gpu2", ("GD103",), driver="535.104.05"), node("gpu0"),
                   node("gpu1", kernel="6.8.0")])
    for width in (40, 200):
        lines = text(f, verbose=True, width=width)
        assert lines[0].split()[:3] == ["node", "driver", "driver"]
        rows = {line.split()[1]: line for line in lines[1:4]}
        assert [line[0] for line in lines[1:4]] == ["✓", "≠", "✗"]  # sorted by name
        assert rows["gpu2"].split()[-1] == "GD103" and "535.104.05" in rows["gpu2"]
        assert "6.8.0" in rows["gpu1"] and all(line == line.rstrip() for line in lines)


def test_a_node_name_from_a_report_is_escaped_and_starts_no_line() -> None:
    evil = "gpu9\n✓ gpu0: all good\x1b[2J"
    f = aggregate([node(evil, ("GD101",), driver="1.0"), node("gpu0"), node("gpu1")])
    lines = text(f, verbose=True, width=400)
    assert "    ✗ gpu9\\n✓ gpu0: all good\\x1b[2J: GD101" in lines
    assert not [line for line in lines if line.startswith("✓ gpu0")]
    assert all("\x1b" not in line for line in lines)
    md = render_markdown(f)
    assert "\x1b" not in md and "\n✓ gpu0" not in md


def test_json_document() -> None:
    data = json.loads(render_json(fleet()))
    assert data["command"] == "fleet" and isinstance(data["schema_version"], int)
    assert data["summary"] == {"nodes": 3, "failing": 1, "deviating": 1, "unreadable": 1}
    assert data["facts"][0] == {"fact": "driver", "majority": "580.65.06", "count": 2,
                                "deviants": [{"value": "535.104.05", "nodes": ["gpu2"]}]}
    assert [f["fact"] for f in data["facts"]] == list(FACTS)
    assert data["failing"] == [{"node": "gpu2", "path": "/reports/gpu2.json",
                                "checks": ["GD103"]}]
    assert data["unreadable"] == [{"path": "/reports/bad.json", "reason": "not a JSON document"}]
    assert [n["node"] for n in data["nodes"]] == ["gpu0", "gpu1", "gpu2"]
    assert data["nodes"][0]["facts"] == dict(zip(FACTS, H100, strict=True))


def test_markdown_tables_and_the_folded_nodes() -> None:
    md = render_markdown(fleet()).splitlines()
    assert md[0].endswith(" fleet: 3 nodes: 1 failing, 1 deviating, 1 unreadable")
    assert "| driver | 580.65.06 | 2/3 | 535.104.05: gpu2 |" in md
    assert "| torch | 2.13.0+cu130 | 3/3 |  |" in md
    assert "| gpu2 | GD103 |" in md
    assert "- `/reports/bad.json`: not a JSON document" in md
    i = md.index("<details><summary>every node</summary>")
    assert md[i + 2] == "| node | " + " | ".join(FACTS) + " | failing |"
    assert md[i + 4].startswith("| gpu0 | 580.65.06 |") and md[-1] == "</details>"

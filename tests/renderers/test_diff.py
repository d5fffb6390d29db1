"""`gpudoctor.renderers.diff`: the facts that differ, layer by layer, and the verdicts that
change, as text (each fact behind `·`, names from a report escaped), JSON and Markdown, over
the real diff of two recorded machines. (`gpudoctor diff` through the CLI:
tests/fleet/test_diff.py.)"""

from __future__ import annotations

import dataclasses
import io
import json

from rich.console import Console

from gpudoctor.compat import load_tables
from gpudoctor.diff import Diff, FactChange, diff_environments
from gpudoctor.model import Layer, Status
from gpudoctor.renderers.diff import render_json, render_markdown, render_text, summary
from gpudoctor.renderers.interface import tally
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES


def env(name: str):  # type: ignore[no-untyped-def]
    return loads((FIXTURES[0].parent / f"{name}.json").read_text())


def old_driver() -> Diff:
    """The healthy H100 server against the machine whose driver is too old for its torch."""
    return diff_environments(env("h100-healthy"), env("old-driver-new-torch"), load_tables())


def text(d: Diff, a: str = "a.json", b: str = "b.json", width: int = 100) -> list[str]:
    console = Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)
    return render_text(d, a, b, console).splitlines()


def test_summary_counts_in_words() -> None:
    d = old_driver()
    assert len(d.facts) > 1 and len(d.verdicts) > 1
    assert summary(d) == (f"{len(d.facts)} facts differ (of {d.compared}), "
                          f"{len(d.verdicts)} verdicts change")
    one = dataclasses.replace(d, facts=d.facts[:1], verdicts=d.verdicts[:1])
    assert summary(one) == f"1 fact differs (of {d.compared}), 1 verdict changes"
    none = dataclasses.replace(d, facts=(), verdicts=())
    assert summary(none) == f"0 facts differ (of {d.compared}), 0 verdicts change"


def test_text_facts_by_layer_then_the_verdicts() -> None:
    d = old_driver()
    lines = text(d)
    assert lines[:3] == ["A a.json", "B b.json", ""]
    driver = next(c for c in d.facts if c.name == "driver version")
    i = lines.index(Layer.DRIVER.heading)
    assert lines[i + 1] == f"    · driver version: {driver.a}  →  {driver.b}"
    headings = [line for line in lines if line in {layer.heading for layer in Layer}]
    assert headings == [layer.heading for layer in Layer if any(c.layer is layer for c in d.facts)]
    gd103 = next(v for v in d.verdicts if v.check_id == "GD103")
    assert (gd103.a, gd103.b) == (Status.PASS, Status.FAIL)
    i = lines.index(next(x for x in lines if x.startswith("    ✓ → ✗ GD103 ")))
    assert lines[i + 1] == f"      A: {gd103.a_message}"
    assert lines.index("Verdicts that change") > max(lines.index(h) for h in headings)
    assert lines[-1] == f"A: {tally(d.a_report)}; B: {tally(d.b_report)}"


def test_text_of_two_equal_machines() -> None:
    d = diff_environments(env("h100-healthy"), env("h100-healthy"), load_tables())
    lines = text(d)
    assert lines[3] == "no fact differs" and "Verdicts that change" not in lines


def test_strings_from_a_report_are_escaped_and_start_no_line() -> None:
    d = old_driver()
    forged = FactChange(Layer.HOST, "MY_VAR\n    · driver version: ok", "a\x1b[2J", "b\r→ fix: x")
    lines = text(dataclasses.replace(d, facts=(forged,)), a="a\n✓ all good", b="b.json")
    assert lines[0] == "A a\\n✓ all good"
    assert "    · MY_VAR\\n    · driver version: ok: a\\x1b[2J  →  b\\r→ fix: x" in lines
    assert not [line for line in lines if line.lstrip().startswith(("✓ all", "→ fix: x"))]
    assert lines.count("    · driver version: ok") == 0


def test_json_document() -> None:
    d = old_driver()
    data = json.loads(render_json(d, "a.json", "b.json"))
    assert (data["command"], data["a"], data["b"]) == ("diff", "a.json", "b.json")
    assert data["summary"]["facts_compared"] == d.compared
    assert data["summary"]["facts_differ"] == len(d.facts) == len(data["facts"])
    assert data["summary"]["verdicts_changed"] == len(d.verdicts) == len(data["verdicts"])
    assert data["summary"]["b"]["fail"] == d.b_report.count(Status.FAIL)
    assert data["facts"][0] == {"layer": d.facts[0].layer.value, "fact": d.facts[0].name,
                                "a": d.facts[0].a, "b": d.facts[0].b}
    gd103 = next(v for v in data["verdicts"] if v["id"] == "GD103")
    assert (gd103["a"]["status"], gd103["b"]["status"]) == ("pass", "fail")


def test_markdown_one_table_per_layer_and_the_verdicts() -> None:
    d = old_driver()
    md = render_markdown(d, "a.json", "b.json").splitlines()
    assert md[2:4] == ["- **A**: a.json", "- **B**: b.json"]
    assert f"### {Layer.DRIVER.heading}" in md and "### Verdicts that change" in md
    driver = next(c for c in d.facts if c.name == "driver version")
    assert f"| driver version | {driver.a} | {driver.b} |" in md
    assert any(line.startswith("| `GD103` ") and "| ✅ " in line and "| ❌ " in line
               for line in md)
    assert md[-1] == f"**{summary(d)}**"

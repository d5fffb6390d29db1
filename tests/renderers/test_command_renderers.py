"""The renderers of the other commands (smoke-test, compat, recommend, the check catalogue)
keep the same rules as `check`'s: no trailing spaces, fixes unwrapped, nothing cut, strings
escaped, the one finding-to-JSON shape."""

from __future__ import annotations

import dataclasses
import io
import json

from rich.console import Console

from gpudoctor.actions.smoke import SmokeOptions, smoke_report
from gpudoctor.checks import REGISTRY
from gpudoctor.model import Status
from gpudoctor.model_smoke import RunError
from gpudoctor.renderers.catalog import CheckDoc, catalog_markdown, catalog_text, check_page
from gpudoctor.renderers.interface import finding_dict
from gpudoctor.renderers.smoke import render_json, smoke_text
from tests.smoke_kit import report, run


def console(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, legacy_windows=False, no_color=True)


def test_smoke_text_at_any_width() -> None:
    slow = report(run("native", 1.0), run("cudnn", 2.0), run("cudnn-benchmark", 2.0),
                  error=RunError("convnet training", "OutOfMemoryError: [red]x[/] \x1b[2J",
                                 oom=True))
    results = smoke_report(slow).results
    warned = [r for r in results if r.finding.status is Status.WARN and r.finding.fix]
    assert warned, "the slower cuDNN warns, with a fix"
    for width in (40, 80, 200):
        text = smoke_text(slow, results, console(width))
        lines = text.splitlines()
        assert all(line == line.rstrip() for line in lines)
        assert "…" not in text  # the timings table is never cut
        assert "\x1b" not in text and "OutOfMemoryError: [red]x[/] \\x1b[2J" in text
        for r in warned:
            assert f"  → fix: {r.finding.fix}" in lines


def test_smoke_json_findings_have_the_one_shape() -> None:
    r = report()
    results = smoke_report(r).results
    data = json.loads(render_json(SmokeOptions(), r, smoke_report(r)))
    assert data["findings"] == [finding_dict(x) for x in results]
    assert data["findings"][0]["docs_url"] == "docs/checks.md#gd450"


def docs() -> tuple[CheckDoc, ...]:
    return tuple(CheckDoc(c.id, c.slug, c.title, c.layer.heading, c.severity.name.lower(),
                          c.needs, c.doc) for c in REGISTRY)


def test_catalogue_text_and_markdown() -> None:
    text = catalog_text(docs())
    assert all(line == line.rstrip() for line in text.splitlines())
    assert text.splitlines()[0].split() == ["id", "slug", "layer", "title"]
    md = catalog_markdown(docs())
    for c in REGISTRY:
        assert f'<a id="{c.id.lower()}"></a>' in md and f"## {c.id} `{c.slug}`" in md


def test_check_page_keeps_paragraphs() -> None:
    d = dataclasses.replace(docs()[0], doc="First line\n    goes on.\n\n    Fix: do this.\n")
    assert check_page(d).splitlines()[3:6] == ["First line goes on.", "", "Fix: do this."]

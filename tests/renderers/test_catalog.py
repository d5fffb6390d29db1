"""`gpudoctor.renderers.catalog`: the check catalogue (`gpudoctor checks`), one check's page
and docs/checks.md keep the report's rules: no trailing spaces, one anchor per check, a
docstring's paragraphs kept."""

from __future__ import annotations

import dataclasses

from gpudoctor.checks import REGISTRY
from gpudoctor.renderers.catalog import CheckDoc, catalog_markdown, catalog_text, check_page


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

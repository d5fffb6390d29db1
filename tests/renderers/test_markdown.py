"""`gpudoctor.renderers.markdown`: `check --format markdown`, a table per layer."""

from __future__ import annotations

from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from tests.renderers.render_kit import console, report


def test_markdown_table() -> None:
    text = to_renderer(OutputFormat.MARKDOWN, console()).render(report("pascal-gpu-cu130-torch"))
    assert "### PyTorch" in text and "| ❌ | `GD404`" in text

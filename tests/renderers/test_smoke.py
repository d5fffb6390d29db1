"""`gpudoctor.renderers.smoke`: the smoke test's text and JSON keep the same rules as `check`'s
(no trailing spaces, fixes unwrapped, nothing cut, strings escaped, the one finding-to-JSON
shape), and show what a hand-built CUDA run measured."""

from __future__ import annotations

import io
import json

from rich.console import Console

from gpudoctor.actions.smoke import SmokeOptions, smoke_report
from gpudoctor.model import Status
from gpudoctor.model_smoke import RunError
from gpudoctor.renderers.interface import finding_dict
from gpudoctor.renderers.smoke import render_json, render_text, smoke_text
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


def test_gpu_report_renders() -> None:
    """The CLI's text and JSON for a hand-built CUDA report: speedups, differences, evidence."""
    r = report()
    console = Console(file=io.StringIO(), width=160, no_color=True)
    console.print(render_text(r, smoke_report(r).results))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "sm_90" in text
    assert "cuDNN 9.1.0" in text and "90100" not in text
    assert "TF32 conv on, matmul off" in text
    assert "3.75x" in text
    assert "1.0e-06" in text
    assert "libcudnn mapped: /lib/libcudnn.so.9" in text
    assert "smoke test passed in 3.0 s: 6 passed" in text
    data = json.loads(render_json(SmokeOptions(), r, smoke_report(r)))
    assert data["summary"]["pass"] == 6
    assert data["smoke"]["models"][0]["configs"][2]["name"] == "cudnn-benchmark"

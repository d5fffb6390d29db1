"""Every real error text under tests/fixtures/errors/ (the development set) is explained with
the cause class its thread's resolution supports, and a text whose cause is the program gets no
diagnosis or one of that class; where the index names a signature or a state, that one. The
same texts inside a large log are explained the same (the focus step loses none of them). The
README states the figure this measures."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import State, explain
from gpudoctor.explain.classes import CAUSE_CLASSES, NOT_ENVIRONMENT
from gpudoctor.explain.focus import WHOLE
from gpudoctor.explain.kb import load

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
ERRORS = ROOT / "tests" / "fixtures" / "errors"
INDEX = tomllib.loads((ERRORS / "index.toml").read_text(encoding="utf-8"))["error"]
TABLES = load_tables()


def top(entry: dict[str, str], around: str = "") -> tuple[str, str, str]:
    """(signature id, cause class, state) of the best diagnosis; never probes this machine."""
    text = (ERRORS / entry["file"]).read_text(encoding="utf-8")
    if around:
        half = around.rfind("\n", 0, len(around) // 2) + 1
        text = around[:half] + text + "\n" + around[half:]
    expl = explain(text, TABLES, probe=None)
    if not expl.diagnoses:
        return "", "", ""
    best = expl.diagnoses[0]
    return best.match.signature.id, best.match.signature.cause_class, best.state.value


def right(entry: dict[str, str], got: tuple[str, str, str]) -> bool:
    """The scoring of the held-out sets (tools/score_heldout.py), plus the index's own pins."""
    sig, cls, state = got
    if entry["class"] == NOT_ENVIRONMENT:
        ok = cls in ("", NOT_ENVIRONMENT)
    else:
        ok = cls == entry["class"] or cls in entry.get("also", [])
    return ok and sig == entry.get("expect", sig) and state == entry.get("confirmed", state)


def test_index_is_well_formed_and_large_enough() -> None:
    files = [e["file"] for e in INDEX]
    sources = [e["source"] for e in INDEX]
    assert len(files) == len(set(files)) >= 160
    assert sum(e["class"] == NOT_ENVIRONMENT for e in INDEX) >= 15
    ids = {s.id for s in load().signatures}
    for e in INDEX:
        assert (ERRORS / e["file"]).is_file(), e["file"]
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", e["source"])
        assert e["class"] in CAUSE_CLASSES, e["file"]
        assert "expect" not in e or e["expect"] in ids or "-" in e["expect"], e["expect"]
        assert e.get("confirmed", "confirmed") in {s.value for s in State}
    on_disk = {p.name for p in ERRORS.iterdir() if p.name != "index.toml"}
    assert on_disk <= set(files), f"files without an index entry: {on_disk - set(files)}"
    # at most one text per thread among the texts added from round 3 on (they carry a `why`)
    added = [e["source"] for e in INDEX if "why" in e]
    assert len(added) == len(set(added))
    assert len(set(sources)) >= 150


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"])
def test_real_error_text_is_explained(entry: dict[str, str]) -> None:
    got = top(entry)
    assert right(entry, got) is ("miss" not in entry), (entry["class"], entry.get("expect"), got)


def _log() -> str:
    rng = random.Random(19)
    lines, n = [], 0
    while n <= WHOLE + 4096:
        line = (f"2024-05-01 12:{n % 60:02d}:00 INFO step {n} loss={rng.random():.4f} cuda:0 "
                f"mem {rng.randint(9000, 23000)}MiB\n")
        lines.append(line)
        n += len(line)
    return "".join(lines)


LOG = _log()


@pytest.mark.slow
@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"])
def test_inside_a_large_log_the_text_is_explained_alike(entry: dict[str, str]) -> None:
    """Past WHOLE characters only the lines around trigger words and the end are read: none of
    the development texts may be lost by it, wherever it sits in the log."""
    assert top(entry, LOG)[1] == top(entry)[1]


@pytest.mark.slow
def test_readme_states_the_measured_figure() -> None:
    hits = sum(right(e, top(e)) for e in INDEX)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"explains (\d+) of the (\d+) real error texts", readme)
    assert m, "README states no hit rate for `gpudoctor explain`"
    assert (int(m[1]), int(m[2])) == (hits, len(INDEX))

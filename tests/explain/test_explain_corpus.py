"""Every real error text under tests/fixtures/errors/ is explained by the signature its index
names (and, where the text carries a report, confirmed against it); the README states the hit
rate this measures."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import State, explain
from gpudoctor.explain.kb import load

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
ERRORS = ROOT / "tests" / "fixtures" / "errors"
INDEX = tomllib.loads((ERRORS / "index.toml").read_text(encoding="utf-8"))["error"]
TABLES = load_tables()


def top(entry: dict[str, str]) -> tuple[str, str]:
    """The best diagnosis of a fixture: (signature id, state); never probes this machine."""
    expl = explain((ERRORS / entry["file"]).read_text(encoding="utf-8"), TABLES, probe=None)
    if not expl.diagnoses:
        return "", ""
    best = expl.diagnoses[0]
    return best.match.signature.id, best.state.value


def test_index_is_well_formed_and_large_enough() -> None:
    files = [e["file"] for e in INDEX]
    assert len(files) == len(set(files)) >= 60
    ids = {s.id for s in load().signatures}
    for e in INDEX:
        assert (ERRORS / e["file"]).is_file(), e["file"]
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", e["source"])
        assert e["expect"] in ids, e["expect"]
        assert e.get("confirmed", "confirmed") in {s.value for s in State}
    on_disk = {p.name for p in ERRORS.iterdir() if p.name != "index.toml"}
    assert on_disk <= set(files), f"files without an index entry: {on_disk - set(files)}"


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"])
def test_real_error_text_is_explained(entry: dict[str, str]) -> None:
    sig, state = top(entry)
    assert sig == entry["expect"]
    if "confirmed" in entry:
        assert state == entry["confirmed"]


def test_readme_states_the_measured_hit_rate() -> None:
    hits = 0
    for entry in INDEX:
        sig, state = top(entry)
        hits += sig == entry["expect"] and state == entry.get("confirmed", state)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"explains (\d+) of the (\d+) real error texts", readme)
    assert m, "README states no hit rate for `gpudoctor explain`"
    assert (int(m[1]), int(m[2])) == (hits, len(INDEX))

"""gpudoctor.compat.freshness: what on a machine is newer than the tables, and the report's
note on it."""

from __future__ import annotations

from dataclasses import replace

from gpudoctor.compat import Tables
from gpudoctor.compat.freshness import beyond_tables, note


def test_what_a_machine_runs_past_the_tables(tables: Tables) -> None:
    """The versions newer than every release of their kind, and the report's note on them."""
    past = beyond_tables(tables, torch="2.16.0+cu139", cuda="13.9", cudnn="9.30.0.1",
                         driver="625.10.01")
    assert [(b.what, b.newest) for b in past] == [
        ("torch", "2.15.0"), ("CUDA", "13.5.0"), ("cuDNN", "9.28.1"), ("driver", "R620")]
    text = note(tables, past)
    assert text is not None and text.startswith(
        "released after the compat tables (known until 2026-11-26): torch 2.16.0+cu139 "
        "(newest in the tables: 2.15.0); CUDA 13.9")
    held = beyond_tables(tables, torch="2.15.0", cuda="13.5", cudnn="9.28.1.4",
                         driver="620.10.02")
    assert held == () and note(tables, held) is None
    assert beyond_tables(tables, torch="garbage", cuda="13", cudnn="", driver="r999") == ()


def test_each_kind_alone_and_the_note_without_a_date(tables: Tables) -> None:
    (torch,) = beyond_tables(tables, torch="99.0.0+cu999")
    assert torch.text() == f"torch 99.0.0+cu999 (newest in the tables: {torch.newest})"
    assert [b.what for b in beyond_tables(tables, cuda="99.1")] == ["CUDA"]
    assert [b.what for b in beyond_tables(tables, cudnn="99.0.0")] == ["cuDNN"]
    assert [b.what for b in beyond_tables(tables, driver="999.10")] == ["driver"]
    assert beyond_tables(tables) == ()
    undated = replace(tables, known_until=None)
    text = note(undated, (torch,))
    assert text is not None and text.startswith(
        "released after the compat tables (known until an unknown date): torch 99.0.0+cu999")

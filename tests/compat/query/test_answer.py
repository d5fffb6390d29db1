"""gpudoctor.compat.query.answer: the shape of an answer, its errors, and the look-ups the
queries share."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from gpudoctor.compat import Tables, rules
from gpudoctor.compat.query import query_cudnn
from gpudoctor.compat.query.answer import (
    SCHEMA_VERSION,
    Answer,
    NotInTables,
    QueryError,
    Row,
    Section,
    arch_text,
    ascii_digits,
    build_for,
    cudnn_tarball,
    driver_runs,
    fact,
    not_in_tables,
    parse_arg,
    same_release,
    tag_text,
    torch_series,
    versions_text,
)
from tests.compat.query.kit import text_of


def test_cudnn_build_numbers_nvidias_tarballs_carry(tables: Tables) -> None:
    r915, r895 = tables.cudnn_release("9.15.0"), tables.cudnn_release("8.9.5")
    assert r915 is not None and (r915.build, r915.wheel_build) == ("9.15.0.58", "9.15.0.57")
    assert cudnn_tarball(tables, r915, "13") == (
        "cudnn-linux-x86_64-9.15.0.58_cuda13-archive.tar.xz", False)
    assert r895 is not None and r895.build == "8.9.5.30"
    assert cudnn_tarball(tables, r895, "12.0-12.2") == (
        "cudnn-linux-x86_64-8.9.5.30_cuda12-archive.tar.xz", False)
    by_wheel = text_of(query_cudnn(tables, "9.15.0.57"))  # the wheel's number finds it too
    assert "cuDNN 9.15.0 (build 9.15.0.58; PyPI wheels 9.15.0.57)" in by_wheel


def test_nearest_known_versions() -> None:
    known = ["1.0.0", "1.1.0", "1.1.1", "2.0.0", *(f"3.0.{n}" for n in range(12))]
    assert str(not_in_tables("x", "1.1", known, "3.0.11")) == (
        "x 1.1 is not in the tables (newest known: 3.0.11; nearest known: 1.1.0, 1.1.1)")
    assert str(not_in_tables("x", "1.5.0", known, "3.0.11")) == (
        "x 1.5.0 is not in the tables (newest known: 3.0.11; nearest known: 1.1.1, 2.0.0)")
    assert str(not_in_tables("x", "0.9.0", known, "3.0.11")) == (
        "x 0.9.0 is not in the tables (newest known: 3.0.11; nearest known: 1.0.0)")
    assert str(not_in_tables("x", "9.0.0", known, "3.0.11")) == (
        "x 9.0.0 is not in the tables (newest known: 3.0.11)")  # nothing nearer than the newest
    assert str(not_in_tables("x", "3.0.99", known, "3.0.11")) == (
        "x 3.0.99 is not in the tables (newest known: 3.0.11; nearest known: 3.0.0, 3.0.1, "
        "3.0.2, …, 3.0.9, 3.0.10, 3.0.11)")


# --- the answer's shape ------------------------------------------------------------------------

SRC = "https://example.org/the-primary-document"


def test_a_row_and_an_answer_as_json() -> None:
    row = Row("CUDA 12.4", (("cuda", "12.4"), ("linux", "550.54.14")), "copy", SRC)
    assert row.verified and not Row("x", (), "secondary", SRC).verified
    assert list(row.to_dict().items()) == [("cuda", "12.4"), ("linux", "550.54.14"),
                                           ("status", "copy"), ("source", SRC), ("note", None)]
    first, second = Section("a", "A", (row,)), Section("b", "B", (), "nothing known here")
    answer = Answer("cuda", "12.4", "CUDA 12.4", (first, second))
    assert answer.section("b") is second
    assert answer.to_dict() == {
        "schema_version": SCHEMA_VERSION, "kind": "cuda", "query": "12.4",
        "subject": "CUDA 12.4",
        "sections": {"a": {"title": "A", "note": None, "rows": [row.to_dict()]},
                     "b": {"title": "B", "note": "nothing known here", "rows": []}}}


def test_a_fact_carries_its_table_rows_origin(tables: Tables) -> None:
    origin = tables.cuda_releases[-1]
    row = fact("text", origin, version=origin.version)
    assert row == Row("text", (("version", origin.version),), origin.status, origin.source,
                      origin.note)


# --- the arguments -----------------------------------------------------------------------------


def test_an_argument_must_match_in_full() -> None:
    assert parse_arg(r"\d+\.\d+", " 12.4\n", "CUDA version") == "12.4"
    for text in ("12.4x", "v12.4", "12", ""):
        with pytest.raises(QueryError, match="is not a CUDA version"):
            parse_arg(r"\d+\.\d+", text, "CUDA version")


def test_only_ascii_digits_are_digits() -> None:
    """int() and `\\d` take any Unicode digit; the tables hold 0-9 only."""
    with pytest.raises(QueryError, match=r"non-ASCII digit '１' \(U\+FF11\)"):
        parse_arg(r"\d+\.\d+", "１２.４", "CUDA version")
    with pytest.raises(QueryError, match=r"non-ASCII digit '٨' \(U\+0668\)"):
        ascii_digits("٨.٦")
    assert ascii_digits("GeForce RTX 3090 — Ti") == "GeForce RTX 3090 — Ti"


def test_the_same_release_has_the_same_numbers() -> None:
    assert same_release("2.1.0", "2.1.0+cu121") and same_release("12.4", "12.4")
    assert not same_release("2.1", "2.1.0") and not same_release("12.4.1", "12.4.0")


def test_not_in_tables_adds_the_hint() -> None:
    error = not_in_tables("CUDA", "12.4.7", ["12.4.0", "12.4.1"], "13.5.0", "try 12.4")
    assert isinstance(error, NotInTables)
    assert str(error) == ("CUDA 12.4.7 is not in the tables (newest known: 13.5.0; nearest "
                          "known: 12.4.0, 12.4.1); try 12.4")


# --- the shared look-ups -----------------------------------------------------------------------


def test_build_for_names_the_build_covering_a_cuda(tables: Tables) -> None:
    rel = tables.cudnn_release("9.10.2")
    assert rel is not None and rel.cuda_builds == ("11.8", "12.0-12.9")
    assert [build_for(rel, c) for c in ("11.8", "12.4", "12.9.1", "10.2", "13.0", "x")] == [
        "11.8", "12.0-12.9", "12.0-12.9", None, None, None]


def test_the_tarball_seen_else_by_the_eras_naming_else_none(tables: Tables) -> None:
    old = tables.cudnn_release("7.6.5")
    assert old is not None
    assert cudnn_tarball(tables, old, "10.1") == ("cudnn-10.1-linux-x64-v7.6.5.32.tgz", True)
    minor_era = tables.cudnn_release("8.3.3")
    assert minor_era is not None and minor_era.build == "8.3.3.40"
    unseen = replace(minor_era, tarballs=())
    assert cudnn_tarball(tables, unseen, "10.2") == (
        "cudnn-linux-x86_64-8.3.3.40_cuda10.2-archive.tar.xz", False)
    assert cudnn_tarball(tables, unseen, "11.0-11.6") is None  # NVIDIA picked the minor
    major_era = tables.cudnn_release("9.10.2")
    assert major_era is not None and major_era.build
    assert cudnn_tarball(tables, replace(major_era, tarballs=()), "12.0-12.9") == (
        f"cudnn-linux-x86_64-{major_era.build}_cuda12-archive.tar.xz", False)
    assert cudnn_tarball(tables, replace(major_era, tarballs=(), build=None), "12") is None


def test_driver_runs_is_the_driver_rules(tables: Tables) -> None:
    for driver, cuda in [("580.65.06", "13.0"), ("580.65.06", "13.2"), ("535.104.05", "12.4"),
                         ("470.82.01", "12.0"), ("418.39", "10.1")]:
        assert driver_runs(tables, driver, cuda) == rules.driver_runs(tables, driver, cuda)
    assert driver_runs(tables, "580.65.06", "13.2") == "mvc"


def test_torch_series_group_the_rows_newest_first(tables: Tables) -> None:
    series = torch_series(tables)
    assert [r for group in reversed(series) for r in group] == list(tables.torch_releases)
    for group in series:
        first = group[0]
        assert all(r.version.split(".")[:2] == first.version.split(".")[:2]
                   and (r.variants, r.install, r.status) == (first.variants, first.install,
                                                             first.status) for r in group)
    for newer, older in itertools.pairwise(series):  # a split is a real difference
        a, b = older[-1], newer[0]
        assert (a.version.split(".")[:2] != b.version.split(".")[:2]
                or (a.variants, a.install, a.status) != (b.variants, b.install, b.status))
    assert versions_text(next(g for g in series if len(g) > 1)).count(", ") >= 1


def test_the_texts_of_a_variant(tables: Tables) -> None:
    rel = tables.torch_release("2.13.0")
    assert rel is not None
    cu132, cu130 = rel.variant("cu132"), rel.variant("cu130")
    assert cu132 is not None and cu132.experimental and cu130 is not None
    assert tag_text(cu132) == "cu132 (experimental)"
    assert tag_text(cu130, "cu130") == "cu130 (PyPI default)"
    assert tag_text(cu130, "cu126") == "cu130"
    assert arch_text(("8.0", "9.0")) == "arch 8.0 9.0"
    assert arch_text(None) == "arch list not in the tables"
    assert versions_text(tuple(tables.torch_releases[:2])) == ", ".join(
        r.version for r in tables.torch_releases[:2])


def test_a_series_splits_where_its_rows_differ(tables: Tables) -> None:
    """2.14.0 and 2.14.1 share one row's variants: one series; served otherwise, two."""
    (group,) = [g for g in torch_series(tables) if g[-1].version == "2.14.1"]
    assert [r.version for r in group] == ["2.14.0", "2.14.1"]
    for change in ({"install": "extra-index-url"}, {"status": "secondary"},
                   {"variants": group[1].variants[:1]}):
        moved = replace(group[1], **change)  # type: ignore[arg-type]
        split = replace(tables, torch_releases=(group[0], moved))
        assert [[r.version for r in g] for g in torch_series(split)] == [["2.14.1"],
                                                                         ["2.14.0"]], change

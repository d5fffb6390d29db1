"""gpudoctor.compat.query.cuda: `compat cuda X.Y` and `compat driver VERSION`, answered from
the tables (what the CLI prints of them: tests/cli/test_compat_cli.py)."""

from __future__ import annotations

import pytest
from packaging.version import Version

from gpudoctor.compat import UNVERIFIED, Tables
from gpudoctor.compat.query import (
    NotInTables,
    QueryError,
    driver_runs,
    query_cuda,
    query_driver,
    torch_series,
)
from gpudoctor.compat.query.cuda import TORCH_SERIES_SHOWN
from gpudoctor.compat.wheels import pip_line

# --- compat cuda -------------------------------------------------------------------------------


def test_cuda_answers_drivers_cudnn_and_torch_of_one_minor(tables: Tables) -> None:
    answer = query_cuda(tables, " 12.4 ")
    assert (answer.kind, answer.query, answer.subject) == ("cuda", " 12.4 ", "CUDA 12.4")
    assert [s.key for s in answer.sections] == ["releases", "min_driver", "cudnn", "torch"]
    assert [dict(r.values)["version"] for r in answer.section("releases").rows] == [
        r.version for r in tables.cuda_releases if r.minor == "12.4"]
    need = tables.cuda_min_driver("12.4")
    assert need is not None
    full, family = answer.section("min_driver").rows
    assert dict(full.values) == {"scope": "full", "cuda": need.cuda, "linux": need.full,
                                 "windows": need.windows_full}
    assert (full.status, full.source) == (need.status, need.source)
    assert dict(family.values) == {"scope": "family", "cuda": "12.x", "linux": need.family,
                                   "windows": need.windows_family}
    assert (family.status, family.source) == (need.family_status, need.family_source)
    assert answer.section("min_driver").note is None


def test_before_cuda_11_there_is_no_family_row(tables: Tables) -> None:
    section = query_cuda(tables, "10.1").section("min_driver")
    assert [dict(r.values)["scope"] for r in section.rows] == ["full"]
    assert section.note == "minor-version compatibility starts with CUDA 11"


def test_cuda_lists_each_cudnn_release_and_torch_wheel_built_for_it(tables: Tables) -> None:
    answer = query_cuda(tables, "12.4")
    assert [dict(r.values)["version"] for r in answer.section("cudnn").rows] == [
        r.version for r in tables.cudnn_for_cuda("12.4")]
    wheels = [(series[-1], v) for series in torch_series(tables) for v in series[-1].variants
              if v.cuda == "12.4"]
    rows = answer.section("torch").rows
    assert wheels and len(rows) == len(wheels)
    for row, (rel, v) in zip(rows, wheels, strict=True):
        values = dict(row.values)
        assert (values["variant"], values["cuda"], values["pip"]) == (
            v.tag, "12.4", pip_line(rel, v))
        assert values["versions"][-1] == rel.version


def test_a_release_is_answered_exactly_or_not_at_all(tables: Tables) -> None:
    assert query_cuda(tables, "12.4.1").subject == "CUDA 12.4.1"
    with pytest.raises(NotInTables, match=r"^CUDA 12\.4\.7 is not in the tables .*; `gpudoctor "
                                          r"compat cuda 12\.4` answers for the 12\.4 series$"):
        query_cuda(tables, "12.4.7")
    with pytest.raises(NotInTables, match=r"^CUDA 12\.7 is not in the tables"):
        query_cuda(tables, "12.7")
    for text in ("12", "12.x", "v12.4", "12.4.1.1", ""):
        with pytest.raises(QueryError, match="is not a CUDA version"):
            query_cuda(tables, text)


def test_query_errors_are_typed(tables: Tables) -> None:
    with pytest.raises(QueryError):
        query_cuda(tables, "x")
    with pytest.raises(NotInTables):
        query_cuda(tables, "10.3")


# --- compat driver -----------------------------------------------------------------------------


def test_driver_answers_the_highest_cuda_it_runs(tables: Tables) -> None:
    answer = query_driver(tables, "535.104.05")
    assert (answer.kind, answer.subject) == ("driver", "driver 535.104.05 (Linux)")
    assert [s.key for s in answer.sections] == ["highest_cuda", "minor_version_compat", "torch"]
    met = [b for b in tables.driver_branches if b.status != UNVERIFIED and b.min_driver
           and Version(b.min_driver) <= Version("535.104.05")]
    top = max(met, key=lambda b: Version(b.cuda))
    (highest,) = answer.section("highest_cuda").rows
    assert dict(highest.values) == {"cuda": top.cuda, "branch": top.branch,
                                    "min_driver": top.min_driver}
    assert top.cuda == "12.2"
    (family,) = answer.section("minor_version_compat").rows
    assert dict(family.values)["major"] == 12  # newer 12.x runtimes run by MVC


def test_driver_lists_the_newest_torch_series_it_runs(tables: Tables) -> None:
    rows = query_driver(tables, "535.104.05").section("torch").rows
    assert rows
    assert len({dict(r.values)["version"] for r in rows}) <= TORCH_SERIES_SHOWN
    for row in rows:
        values = dict(row.values)
        how = driver_runs(tables, "535.104.05", str(values["cuda"]))
        assert values["runs"] == how and how in ("full", "mvc")
        assert ("[minor-version compatibility]" in row.text) is (how == "mvc")


def test_unverified_branches_are_not_answered_from(tables: Tables) -> None:
    """R620's row is unverified: a 620 driver is answered from the newest verified branch."""
    last = tables.driver_branches[-1]
    assert last.status == UNVERIFIED
    (highest,) = query_driver(tables, f"{last.branch}.1").section("highest_cuda").rows
    verified = max((b for b in tables.driver_branches if b.status != UNVERIFIED),
                   key=lambda b: Version(b.cuda))
    assert dict(highest.values)["cuda"] == verified.cuda != last.cuda


def test_a_driver_outside_the_tables_is_not_guessed(tables: Tables) -> None:
    with pytest.raises(NotInTables, match=r"^driver 300\.10 is not in the tables \(oldest known"):
        query_driver(tables, "300.10")
    last = tables.driver_branches[-1]
    with pytest.raises(NotInTables, match=r"its branch R999 is newer than any they hold$"):
        query_driver(tables, "999.99")
    assert last.branch < 999
    with pytest.raises(QueryError, match="is not a driver version"):
        query_driver(tables, "r580")

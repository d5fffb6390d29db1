"""Releases added to the compat tables to 2026-11: CUDA 13.4.3 / 13.5.0 and branch R620, torch
2.13-2.15 (variants, Python minors, companions), cuDNN build numbers, and `known_until`."""

from __future__ import annotations

import datetime

import pytest

from gpudoctor.compat import Tables, known_until, load_tables
from gpudoctor.compat.freshness import beyond_tables, note
from gpudoctor.compat.query import query_cudnn, query_torch
from gpudoctor.compat.query.answer import cudnn_tarball


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def text_of(answer: object) -> str:
    return "\n".join(r.text for s in answer.sections for r in s.rows)  # type: ignore[attr-defined]


def test_cuda_13_4_3_and_13_5_0(tables: Tables) -> None:
    rows = {r.version: r for r in tables.cuda_releases}
    assert (rows["13.4.3"].label, rows["13.4.3"].kind) == ("13.4 Update 2", "update")
    assert (rows["13.5.0"].label, rows["13.5.0"].kind) == ("13.5 GA", "ga")
    assert rows["13.5.0"].min_driver_linux is None  # not bundled on Linux from 13.4
    need = tables.cuda_min_driver("13.5")
    assert need is not None and (need.full, need.family) == (None, "580.65.06")
    r620 = next(b for b in tables.driver_branches if b.branch == 620)
    assert (r620.cuda, r620.status) == ("13.5", "unverified")
    assert tables.cuda_for_driver("620.10", include_unverified=True) == "13.5"


def test_torch_python_minors_are_the_wheels(tables: Tables) -> None:
    """No 3.15 for 2.13.0 or 2.14.x (PyPI has no cp315 wheel of them); 2.15.0 has one."""
    for version in ("2.13.0", "2.14.0", "2.14.1"):
        release = tables.torch_release(version)
        assert release is not None and release.python == ("3.10", "3.11", "3.12", "3.13", "3.14")
    r215 = tables.torch_release("2.15.0")
    assert r215 is not None and r215.python == ("3.11", "3.12", "3.13", "3.14", "3.15")
    r17 = tables.torch_release("1.7.1")
    assert r17 is not None and r17.python == ("3.6", "3.7", "3.8", "3.9")


def test_torch_variants_only_on_the_pytorch_index_are_marked(tables: Tables) -> None:
    r213, r215 = tables.torch_release("2.13.0"), tables.torch_release("2.15.0")
    assert r213 is not None and r215 is not None
    cu129, cu130 = r213.variant("cu129"), r215.variant("cu130")
    assert cu129 is not None and (cu129.status, cu129.cudnn, cu129.arch_list) == (
        "secondary", None, None)
    assert cu129.source == "https://github.com/pytorch/pytorch/issues/187834"
    assert cu130 is not None and cu130.status == "secondary"
    assert r215.variant("cu126") is None  # 2.15 dropped CUDA 12.6 (pytorch/pytorch#190385)
    variants = {r.values[0][1]: r for s in query_torch(tables, "2.15.0").sections
                for r in s.rows if s.key == "variants"}
    assert variants["cu130"].status == "secondary"
    assert variants["cu130"].source == "https://github.com/pytorch/pytorch/issues/190385"
    assert variants["cu132"].status == "verified"
    r211 = tables.torch_release("2.11.0")
    assert r211 is not None
    cu128 = r211.variant("cu128")
    assert cu128 is not None and cu128.arch_list == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")


def test_companions_and_torchaudio_shown(tables: Tables) -> None:
    r2141, r215 = tables.torch_release("2.14.1"), tables.torch_release("2.15.0")
    assert r2141 is not None and r2141.torchvision == "0.29.1"
    assert r215 is not None and r215.torchvision == "0.29.2"
    assert "torchaudio 2.11.0" in text_of(query_torch(tables, "2.11.0"))
    assert "torchaudio none paired in the tables" in text_of(query_torch(tables, "2.14.1"))


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


def test_known_until_is_one_date_in_the_tables(tables: Tables) -> None:
    """cuda.toml's known_until, read by the loader and by the one-file accessor alike."""
    assert isinstance(tables.known_until, datetime.date)
    assert tables.known_until == known_until()  # `refresh_compat.py --stamp` moves the date
    assert tables.known_until >= datetime.date(2026, 11, 4)  # cuda-toolkit 13.5.0 is inside


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

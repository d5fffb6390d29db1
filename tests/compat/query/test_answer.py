"""gpudoctor.compat.query.answer: the shape of an answer, its errors, and the look-ups the
queries share."""

from __future__ import annotations

from gpudoctor.compat import Tables
from gpudoctor.compat.query import query_cudnn
from gpudoctor.compat.query.answer import cudnn_tarball, not_in_tables
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

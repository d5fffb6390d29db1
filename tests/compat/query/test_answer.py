"""gpudoctor.compat.query.answer: the shape of an answer, its errors, and the look-ups the
queries share."""

from __future__ import annotations

from gpudoctor.compat import Tables
from gpudoctor.compat.query import query_cudnn
from gpudoctor.compat.query.answer import cudnn_tarball
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

"""`gpudoctor.checks.cudnn_versions`: what each part of one cuDNN copy says its version is
(GD302's readings), on hand-built copies."""

from __future__ import annotations

import pytest

from gpudoctor.checks.cudnn_versions import (
    describe,
    disagree,
    file_versions,
    library_side,
    readings,
)
from gpudoctor.model import CudnnInstall, CudnnLibrary, Reason, Unavailable

LIB = "/usr/local/cuda/lib64"
UNREAD = Unavailable(Reason.NOT_INSTALLED, "not read")


def lib(name: str, target: str | None = None) -> CudnnLibrary:
    return CudnnLibrary(name, f"{LIB}/{name}", target, 1 << 20, 0o644, True)


def copy(header: str | Unavailable = "9.1.0", library: str | Unavailable = "9.1.0",
         *names: str) -> CudnnInstall:
    return CudnnInstall(
        origin="toolkit /usr/local/cuda", lib_dir=LIB, header="/usr/local/cuda/include/cudnn.h",
        header_version=header, libraries=tuple(lib(n) for n in names),
        library_version=library, missing_deps=(), cuda_build="12")


def test_file_versions_are_the_real_files_x_y_z_oldest_first() -> None:
    i = copy("9.2.0", "9.2.0", "libcudnn.so", "libcudnn.so.9", "libcudnn.so.9.10.2",
             "libcudnn.so.9.2.0", "libcudnn_ops.so.9.3.0", "libcudnn.so.8.9.7.29",
             "libcudnn.so.9.2.0.70")
    # the SONAME links and sub-libraries tell no release; a fourth component is dropped;
    # 9.10.2 sorts after 9.2.0 (as numbers, not as text)
    assert file_versions(i) == ("8.9.7", "9.2.0", "9.10.2")


def test_no_versioned_file_tells_nothing() -> None:
    assert file_versions(copy("9.1.0", "9.1.0", "libcudnn.so", "libcudnn.so.9")) == ()


def test_readings_name_only_the_ways_that_tell() -> None:
    whole = copy("8.5.0", "9.1.0", "libcudnn.so.8.5.0", "libcudnn.so.9.1.0")
    assert readings(whole) == {"header": ("8.5.0",), "cudnnGetVersion": ("9.1.0",),
                               "file name": ("8.5.0", "9.1.0")}
    assert readings(copy(UNREAD, UNREAD)) == {}
    assert readings(copy(UNREAD, "9.1.0")) == {"cudnnGetVersion": ("9.1.0",)}


@pytest.mark.parametrize(("said", "differ"), [
    ({}, False),
    ({"header": ("9.1.0",)}, False),
    ({"header": ("9.1.0",), "cudnnGetVersion": ("9.1.0",), "file name": ("9.1.0",)}, False),
    ({"header": ("8.5.0",), "cudnnGetVersion": ("9.1.0",)}, True),
    ({"file name": ("8.5.0", "9.1.0")}, True),  # two releases' files in one directory
])
def test_disagree_is_more_than_one_version(said: dict[str, tuple[str, ...]],
                                           differ: bool) -> None:
    assert disagree(said) is differ


def test_describe_says_each_reading_in_order() -> None:
    said = {"header": ("8.5.0",), "cudnnGetVersion": ("9.1.0",), "file name": ("8.5.0", "9.1.0")}
    assert describe(said) == (
        "header says 8.5.0, cudnnGetVersion says 9.1.0, file names say 8.5.0 and 9.1.0")
    assert describe(said, "said") == (
        "header said 8.5.0, cudnnGetVersion said 9.1.0, file names said 8.5.0 and 9.1.0")
    # as evidence (no verb): the readings only
    assert describe(said, "") == "header 8.5.0, cudnnGetVersion 9.1.0, file name 8.5.0 and 9.1.0"
    assert describe({}) == ""


def test_library_side_is_what_runs() -> None:
    said = readings(copy("8.5.0", "9.1.0", "libcudnn.so.8.5.0", "libcudnn.so.9.2.0"))
    assert library_side(said) == "9.1.0"  # cudnnGetVersion first
    no_call = copy("8.5.0", UNREAD, "libcudnn.so.8.5.0", "libcudnn.so.9.2.0")
    assert library_side(readings(no_call)) == "9.2.0"  # then the newest file
    assert library_side(readings(copy("8.5.0", UNREAD))) is None  # a header alone runs nothing

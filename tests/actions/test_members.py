"""`gpudoctor.actions.members`: what one member of a cuDNN tarball may be, judged from its tar
header and first bytes (pure functions: the install's tests show a refused member is never
written). Real compiled libraries from tests/cudnn_kit.py."""

from __future__ import annotations

import platform
import tarfile

import pytest

from gpudoctor.actions import members
from gpudoctor.actions.members import (
    MAX_HEADER,
    MAX_MEMBER,
    MAX_RATIO,
    RATIO_FROM,
    ArchiveError,
    bound,
    clean,
    library_machine,
    refuse_bomb,
    refuse_unsafe,
    role,
    size_text,
)
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

MACHINE = platform.machine()


def member(name: str, type: bytes = tarfile.REGTYPE, size: int = 0,
           linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = type, size, linkname
    return info


def refusal(info: tarfile.TarInfo) -> str:
    with pytest.raises(ArchiveError) as caught:
        refuse_unsafe(info, clean(info.name))
    return caught.value.message


# ------------------------------------------------------------------------ names and roles


@pytest.mark.parametrize(("raw", "cleaned"), [
    ("./cuda/lib64/", "cuda/lib64"), ("././cuda", "cuda"), ("cuda/include/cudnn.h",
                                                             "cuda/include/cudnn.h"),
    ("./", ""), ("/etc/passwd", "/etc/passwd")])
def test_clean_drops_leading_dot_slashes_and_trailing_slashes(raw: str, cleaned: str) -> None:
    assert clean(raw) == cleaned


@pytest.mark.parametrize(("name", "said"), [
    ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive/include/cudnn_version.h", "header"),
    ("cuda/include/cudnn.h", "header"),
    ("cuda/include/cudnn_adv_infer_v8.h", "header"),
    ("cuda/lib64/libcudnn.so.8.9.7", "library"),
    ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn_graph.so.9", "library"),
    ("cuda/include/cuda_runtime.h", "other"),  # not cuDNN's
    ("cuda/lib64/libcublas.so.12", "other"),
    ("cuda/LICENSE", "other"),
    ("a/b/include/cudnn.h", "other"),  # deeper than a tarball's top directory
    ("cuda/bin/libcudnn.so", "other"),
])
def test_role_by_directory_and_name(name: str, said: str) -> None:
    assert role(name) == said


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 bytes"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (int(12.3 * (1 << 20)), "12.3 MiB"),
    (4 << 30, "4.0 GiB")])
def test_size_text(n: int, text: str) -> None:
    assert size_text(n) == text


# ------------------------------------------------------------------------ unsafe members


def test_regular_files_directories_and_links_beside_them_pass() -> None:
    for info in (member("cuda/include/cudnn.h"), member("cuda/lib64", tarfile.DIRTYPE),
                 member("cuda/lib64/libcudnn.so.9", tarfile.SYMTYPE,
                        linkname="libcudnn.so.9.1.0")):
        refuse_unsafe(info, clean(info.name))


@pytest.mark.parametrize(("info", "said"), [
    (member("/etc/cron.d/evil"), "member '/etc/cron.d/evil' has an absolute path"),
    (member("./"), "has an absolute path"),  # nothing left once cleaned
    (member("cuda/../../etc/passwd"), "'cuda/../../etc/passwd' climbs out of the archive"),
    (member("cuda/lib64/l.so", tarfile.LNKTYPE, linkname="cuda/x"),
     "'cuda/lib64/l.so' is a hard link (to 'cuda/x')"),
    (member("cuda/dev/null", tarfile.CHRTYPE), "is a character device"),
    (member("cuda/dev/sda", tarfile.BLKTYPE), "is a block device"),
    (member("cuda/fifo", tarfile.FIFOTYPE), "is a FIFO"),
    (member("cuda/x", b"Z"), "has an unsupported type b'Z'"),
    (member("cuda/lib64/a.so", tarfile.SYMTYPE, linkname="/etc/shadow"), "points outside"),
    (member("cuda/lib64/a.so", tarfile.SYMTYPE, linkname="../x.so"), "points outside"),
    (member("cuda/lib64/a.so", tarfile.SYMTYPE, linkname=".."), "points outside"),
    (member("cuda/lib64/a.so", tarfile.SYMTYPE, linkname=""), "points outside"),
], ids=["absolute", "empty", "dot-dot", "hard-link", "char", "block", "fifo", "unknown-type",
        "link-absolute", "link-up", "link-parent", "link-empty"])
def test_unsafe_members_are_refused_by_name(info: tarfile.TarInfo, said: str) -> None:
    message = refusal(info)
    assert message.startswith("refused: ") and said in message, message


# ------------------------------------------------------------------------ sizes and bombs


def test_a_member_past_its_roles_bound_is_refused_from_its_header() -> None:
    header = member("cuda/include/cudnn.h", size=MAX_HEADER + 1)
    with pytest.raises(ArchiveError, match=r"is 4\.0 MiB, larger than any real cuDNN header"):
        bound(header, header.name, "header", 0, "t.tgz")
    assert bound(member("cuda/lib64/libcudnn.so.9", size=MAX_HEADER + 1), "lib", "library", 5,
                 "t.tgz") == MAX_HEADER + 6  # a library may be that large: the new total
    big = member("cuda/lib64/libcudnn.so.9", size=MAX_MEMBER + 1)
    with pytest.raises(ArchiveError, match=r"larger than any real cuDNN file") as caught:
        bound(big, big.name, "library", 0, "t.tgz")
    assert caught.value.fix is not None and members.DOWNLOAD in caught.value.fix


def test_a_sparse_member_is_refused() -> None:
    sparse = member("cuda/lib64/libcudnn.so.9", tarfile.GNUTYPE_SPARSE, size=10)
    with pytest.raises(ArchiveError, match="is a sparse file"):
        bound(sparse, sparse.name, "library", 0, "t.tgz")


def test_a_stream_that_expands_past_the_ratio_is_a_bomb() -> None:
    refuse_bomb("t.tgz", 1, RATIO_FROM)  # small output: not judged yet
    refuse_bomb("t.tgz", RATIO_FROM // MAX_RATIO + 1, RATIO_FROM + 1)  # under the ratio
    with pytest.raises(ArchiveError, match=r"t.tgz is a decompression bomb: 1\.0 KiB expanded "
                       r"to over 16\.0 MiB"):
        refuse_bomb("t.tgz", 1024, RATIO_FROM + 1)


# ------------------------------------------------------------------------ libraries


@pytest.mark.slow
def test_a_shared_library_for_this_machine_passes_and_names_its_machine(
        cudnn_kit: CudnnKit) -> None:
    so = cudnn_kit.shared_object()
    assert library_machine("cuda/lib64/libcudnn.so.9.1.0", so, len(so), MACHINE) == MACHINE
    assert library_machine("cuda/lib64/libcudnn.so", so, len(so)) == MACHINE  # --force: any
    assert library_machine("cuda/lib64/libcudnn_static.a", b"!<arch>\nrest", 20) is None


@pytest.mark.slow
def test_what_is_not_a_library_of_its_name_is_refused(cudnn_kit: CudnnKit) -> None:
    so = cudnn_kit.shared_object()
    other = "aarch64" if MACHINE != "aarch64" else "x86_64"
    cases = {
        ("cuda/lib64/libcudnn.so.9", b"#!/bin/sh\n", 10, None): "is not a shared library",
        ("cuda/lib64/libcudnn.so.9", cudnn_kit.program(), len(cudnn_kit.program()), None):
            "is a program (a position-independent executable",
        ("cuda/lib64/libcudnn.so.9", so, len(so), other): f"is built for {MACHINE}",
        ("cuda/lib64/libcudnn_static.a", so, len(so), None): "is not a static library",
        ("cuda/lib64/libcudnn.txt", so, len(so), None): "is neither a shared library",
    }
    for (name, head, size, machine), said in cases.items():
        with pytest.raises(ArchiveError) as caught:
            library_machine(name, head, size, machine)
        assert said in caught.value.message, (name, caught.value.message)
    with pytest.raises(ArchiveError) as caught:
        library_machine("cuda/lib64/libcudnn.so.9", so, len(so), other)
    assert f"download the linux-{other} tarball" in (caught.value.fix or "")


# ------------------------------------------------------------------------ real files


def test_the_bounds_are_above_every_real_cudnn_file() -> None:
    # the largest real files (actions/members.py docstring): 8.9.2.26's libcudnn_cnn_infer.so.8
    # and the 1.1 GB static archive of an 8.x; 9.28.1.4's cudnn_graph.h
    assert members.MAX_MEMBER > 3 * 1_100_000_000 > 3 * 647_553_136
    assert members.MAX_HEADER > 15 * 253_191
    info = tarfile.TarInfo("cuda/lib64/libcudnn_ops_infer.so.8.9.2")
    info.size = 647_553_136
    total = members.bound(info, info.name, "library", 0, "t.tgz")
    info.size = members.MAX_MEMBER
    for _ in range(3):
        total = members.bound(info, info.name, "library", total, "t.tgz")
    with pytest.raises(ArchiveError, match=r"t.tgz unpacks to more than 16.0 GiB \(reached at "):
        members.bound(info, info.name, "library", total, "t.tgz")

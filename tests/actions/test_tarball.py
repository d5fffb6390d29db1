"""`gpudoctor.actions.tarball`: one pass over a cuDNN tarball. The compression from the magic
bytes, what a real tarball (tests/cudnn_kit.py) is found to hold, the members handed to the
sink, the Replay stream; and, through the install, truncated, broken and non-cuDNN archives
refused with the prefix unchanged."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.members import ArchiveError
from gpudoctor.actions.tarball import Member, Readable, Replay, detect_compression, read_archive
from tests.cudnn_kit import CudnnKit

MakeTarball = Callable[..., Path]  # the make_tarball fixture (tests/actions/conftest.py)
state = CudnnKit.tree_state
add = CudnnKit.add_member


@pytest.mark.parametrize(("head", "kind"), [
    (b"\x1f\x8b\x08rest", "gzip"), (b"\xfd7zXZ\x00rest", "xz"), (b"BZh91AY", "bzip2"),
    (b"\x28\xb5\x2f\xfdrest", "zstd"), (bytes(257) + b"ustar\x0000", "none"),
    (bytes(512), "unknown"), (b"", "unknown"), (bytes(257) + b"usta", "unknown"),
    (b"BZ0rest", "unknown"),
])
def test_compression_from_the_magic_bytes(head: bytes, kind: str) -> None:
    assert detect_compression(head) == kind


@pytest.mark.slow
@pytest.mark.parametrize(("layout", "cuda", "compression", "said"), [
    ("archive", "12", None, ("xz", "archive (<dir>/include, <dir>/lib)", "12", "9.1.0.29")),
    ("legacy", "11.8", None, ("gzip", "legacy (cuda/include, cuda/lib64)", "11.8", "9.1.0.29")),
    ("legacy", "12", None, ("gzip", "legacy (cuda/include, cuda/lib64)", None, "9.1.0.29")),
    ("archive", "12", "", ("none", "archive (<dir>/include, <dir>/lib)", "12", "9.1.0.29")),
])
def test_what_a_real_tarball_holds(make_tarball: MakeTarball, layout: str, cuda: str,
                                   compression: str | None, said: tuple[str | None, ...]) -> None:
    """The CUDA build from the archive's directory (`…_cuda12-archive`) or the file name
    (`cudnn-11.8-linux-…`); a legacy name without X.Y tells none."""
    tarball = make_tarball("9.1.0", layout=layout, cuda=cuda, compression=compression)
    seen: list[tuple[str, str, bytes | None]] = []
    progress: list[tuple[int, int]] = []

    def sink(m: Member, stream: Readable | None) -> None:
        seen.append((m.name, m.kind, stream.read(4) if stream is not None else None))

    archive = read_archive(str(tarball), sink, lambda d, t: progress.append((d, t)))
    assert (archive.compression, archive.layout, archive.cuda_build, archive.name_version) == said
    assert archive.version == "9.1.0"
    assert archive.version_header.endswith("include/cudnn_version.h")
    assert (archive.cuda_build_from is None) is (said[2] is None)
    assert [m.name for m in archive.installable] == [name for name, _, _ in seen]
    files = [head for _, kind, head in seen if kind == "file"]
    assert files and all(h is not None for h in files)
    assert any(h == b"\x7fELF" for h in files)  # a library's bytes reach the sink
    assert progress[-1] == (tarball.stat().st_size,) * 2


@pytest.mark.slow
def test_a_library_for_another_machine_never_reaches_the_sink(make_tarball: MakeTarball) -> None:
    import platform

    other = "aarch64" if platform.machine() != "aarch64" else "x86_64"
    handed: list[str] = []
    with pytest.raises(ArchiveError, match=f"this machine is {other}"):
        read_archive(str(make_tarball("9.1.0")),
                     lambda m, s: handed.append(m.name) if m.kind == "file" else None, None,
                     other)
    assert not any(".so" in n for n in handed)
    assert read_archive(str(make_tarball("9.1.0")), None, None, None).version == "9.1.0"


def test_replay_gives_back_the_bytes_read_then_the_rest() -> None:
    r = Replay(b"head", io.BytesIO(b"-rest"))
    assert r.read(2) == b"he" and r.read(4) == b"ad-r" and r.read() == b"est"
    assert r.whole is None
    whole = Replay(b"#define CUDNN_MAJOR 9\n")
    assert whole.read() == b"#define CUDNN_MAJOR 9\n" and whole.read() == b""
    assert whole.whole == b"#define CUDNN_MAJOR 9\n"


# ------------------------------------------------------------------------ through the install


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
@pytest.mark.parametrize("compression", ["gz", "bz2", "", "xz"])
def test_compression_is_read_from_content_not_name(
        toolkit: Path, make_tarball: MakeTarball, compression: str) -> None:
    tarball = make_tarball(compression=compression, name="cudnn-misnamed.tgz", cuda="12")
    result = install_cudnn(tarball, toolkit, dry_run=True, gpus=())
    assert result.plan is not None, result.error
    expected = {"gz": "gzip", "bz2": "bzip2", "": "none", "xz": "xz"}[compression]
    assert result.plan.compression == expected
    assert result.plan.cuda_build == "12"  # still told, from the directory inside


def _truncate(path: Path, keep: int) -> Path:
    out = path.with_name("cut-" + path.name)
    out.write_bytes(path.read_bytes()[:keep])
    return out


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
def test_truncated_and_broken_archives(toolkit: Path, make_tarball: MakeTarball) -> None:
    before = state(toolkit)
    plain = make_tarball("8.9.7", compression="", name="c.tar")
    with tarfile.open(plain) as tf:
        last = tf.getmembers()[-1]
        cut_inside = last.offset_data + 10 if last.size else last.offset + 100
        first_lib = next(m for m in tf.getmembers() if m.name.endswith(".so.8.9.7"))
        end = max(m.offset_data + -(-m.size // 512) * 512 for m in tf.getmembers())
    xz = make_tarball("8.9.7")
    cases = {
        _truncate(plain, first_lib.offset_data + 100): f"inside member '{first_lib.name}'",
        _truncate(plain, end): "without the end-of-archive blocks",
        _truncate(xz, xz.stat().st_size // 2): "is truncated",
        _truncate(plain, cut_inside): "is truncated",
    }
    empty = plain.with_name("empty.tgz")
    empty.write_bytes(b"")
    cases[empty] = "is not a tar archive"
    garbage = plain.with_name("garbage.tgz")
    garbage.write_bytes(os.urandom(4096))
    cases[garbage] = "is not a tar archive"
    zstd = plain.with_name("c.tar.zst")
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + os.urandom(100))
    cases[zstd] = "zstd-compressed"
    for path, expected in cases.items():
        result = install_cudnn(path, toolkit, gpus=())
        assert result.error is not None, path
        assert expected in result.error.message, path
        assert state(toolkit) == before


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
def test_archives_that_are_not_cudnn(toolkit: Path, tmp_path: Path,
                                     cudnn_kit: CudnnKit) -> None:
    before = state(toolkit)
    not_cudnn = tmp_path / "cuda-samples.tgz"
    with tarfile.open(not_cudnn, "w:gz") as tf:
        add(tf, "samples/include/helper.h", b"int x;\n")
        add(tf, "samples/lib/libhelper.so", b"\x7fELF")
    result = install_cudnn(not_cudnn, toolkit, gpus=())
    assert result.error is not None
    assert "is not a cuDNN archive" in result.error.message
    no_version = tmp_path / "cudnn-noversion.tgz"
    with tarfile.open(no_version, "w:gz") as tf:
        add(tf, "cuda/include/cudnn.h", b'#include "cudnn_version.h"\n')
        add(tf, "cuda/lib64/libcudnn.so.8.9.7", cudnn_kit.shared_object())
    result = install_cudnn(no_version, toolkit, gpus=())
    assert result.error is not None
    assert "its version cannot be read" in result.error.message
    assert state(toolkit) == before

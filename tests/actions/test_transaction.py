"""`gpudoctor.actions.transaction`: all-or-nothing file placement. The journal and its rollback,
FileOps' primitives (modes whatever the umask, never through a symlink, a stream that outgrows
its header), the manifest, and, through the real install, a fault or a Ctrl-C at any step
leaving the prefix byte-identical (CudnnKit.tree_state)."""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.members import ArchiveError
from gpudoctor.actions.tarball import Readable
from gpudoctor.actions.transaction import (
    FILE_MODE,
    Entry,
    FileOps,
    Manifest,
    Transaction,
    describe,
    make_dir,
    private_dirs,
    prune_empty,
    state_dirs,
    write_text,
)
from tests.cudnn_kit import CudnnKit

MakeTarball = Callable[..., Path]  # the make_tarball fixture (tests/actions/conftest.py)
state = CudnnKit.tree_state


@pytest.fixture(params=[0, 0o077], ids=["umask-0", "umask-077"])
def umask(request: pytest.FixtureRequest) -> object:
    """The modes are the same under a permissive and a restrictive umask."""
    old = os.umask(request.param)
    yield
    os.umask(old)


def mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


# ------------------------------------------------------------------------ the journal


def test_rollback_undoes_every_step_in_reverse(tmp_path: Path) -> None:
    (tmp_path / "old.so").write_bytes(b"old")
    (tmp_path / "new.so").write_bytes(b"new")
    before = state(tmp_path)
    t = Transaction(FileOps())
    t.move(tmp_path / "old.so", tmp_path / "trash/a/old.so")  # creates trash/ and trash/a/
    t.move(tmp_path / "new.so", tmp_path / "old.so")
    assert [(k, b.relative_to(tmp_path).as_posix()) for k, _, b in t.journal] == [
        ("mkdir", "trash"), ("mkdir", "trash/a"), ("move", "trash/a/old.so"),
        ("move", "old.so")]
    assert (tmp_path / "old.so").read_bytes() == b"new"
    assert t.rollback() == []
    assert state(tmp_path) == before and t.journal == []


def test_a_step_that_cannot_be_undone_is_named_and_the_rest_still_undone(
        tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"a")
    t = Transaction(FileOps())
    t.move(tmp_path / "a", tmp_path / "d/a")
    (tmp_path / "d/extra").write_bytes(b"someone else's")  # d/ no longer empty
    problems = t.rollback()
    assert (tmp_path / "a").read_bytes() == b"a"  # the move was undone
    assert len(problems) == 1 and problems[0].startswith(f"could not undo mkdir {tmp_path}/d")


def test_a_move_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    with pytest.raises(FileExistsError):
        FileOps().move(tmp_path / "a", tmp_path / "b")
    (tmp_path / "link").symlink_to("nowhere")  # a dangling link is something there too
    with pytest.raises(FileExistsError):
        FileOps().move(tmp_path / "a", tmp_path / "link")
    assert (tmp_path / "b").read_bytes() == b"b"


# ------------------------------------------------------------------------ writing files


def test_written_files_get_their_mode_and_time_whatever_the_umask(
        tmp_path: Path, umask: object) -> None:
    dst = tmp_path / "libcudnn.so.9"
    FileOps().write(dst, io.BytesIO(b"x" * 3000), 0o644, 1_000_000, size=3000)
    assert dst.read_bytes() == b"x" * 3000
    assert mode(dst) == 0o644 and dst.stat().st_mtime == 1_000_000
    FileOps().mkdir(tmp_path / "d")
    assert mode(tmp_path / "d") == 0o755


def test_a_write_never_follows_a_symlink_or_replaces_a_file(tmp_path: Path) -> None:
    target = tmp_path / "etc-shadow"
    target.write_text("secret")
    (tmp_path / "dst").symlink_to(target)
    with pytest.raises(FileExistsError):
        FileOps().write(tmp_path / "dst", io.BytesIO(b"evil"), 0o644, 0)
    assert target.read_text() == "secret"


def test_a_stream_longer_than_its_header_is_stopped(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="grew past the 10 bytes its tar header states"):
        FileOps().write(tmp_path / "f", io.BytesIO(b"y" * (2 << 20)), 0o644, 0, size=10)
    assert (tmp_path / "f").stat().st_size <= 10  # not written on


def test_own_files_and_directories(tmp_path: Path, umask: object) -> None:
    write_text(tmp_path / "manifest.json", "{}\n")
    assert mode(tmp_path / "manifest.json") == FILE_MODE
    with pytest.raises(FileExistsError):
        write_text(tmp_path / "manifest.json", "again")
    make_dir(tmp_path / "m", 0o750)
    assert mode(tmp_path / "m") == 0o750
    private_dirs(tmp_path / "stage/a/b", tmp_path)
    assert [mode(tmp_path / p) for p in ("stage", "stage/a", "stage/a/b")] == [0o700] * 3


def test_the_state_directory_is_created_or_closed(tmp_path: Path) -> None:
    prefix = tmp_path / "cuda"
    prefix.mkdir()
    state_dirs(prefix / ".gpudoctor/cudnn", prefix)
    assert [mode(prefix / p) for p in (".gpudoctor", ".gpudoctor/cudnn")] == [0o755, 0o755]
    (prefix / ".gpudoctor/cudnn").chmod(0o2777)
    state_dirs(prefix / ".gpudoctor/cudnn", prefix)
    assert mode(prefix / ".gpudoctor/cudnn") == 0o755
    prefix.chmod(0o777)
    state_dirs(prefix / ".gpudoctor/cudnn", prefix)
    assert mode(prefix) == 0o777


def test_prune_empty_stops_at_the_first_directory_in_use(tmp_path: Path) -> None:
    (tmp_path / "a/b/c").mkdir(parents=True)
    (tmp_path / "a/keep").write_text("x")
    prune_empty(tmp_path / "a/b/c", tmp_path)
    assert not (tmp_path / "a/b").exists() and (tmp_path / "a").is_dir()
    (tmp_path / "e/f").mkdir(parents=True)
    prune_empty(tmp_path / "e/f", tmp_path / "e")  # up to, not including, stop
    assert (tmp_path / "e").is_dir() and not (tmp_path / "e/f").exists()


# ------------------------------------------------------------------------ the manifest


def test_describe_what_is_at_a_path(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    (tmp_path / "l").symlink_to("f")
    assert describe(tmp_path / "f") == {"kind": "file", "size": 5, "target": None}
    assert describe(tmp_path / "l") == {"kind": "symlink", "size": 0, "target": "f"}
    assert describe(tmp_path / "none") is None


def test_the_manifest_round_trips(tmp_path: Path) -> None:
    m = Manifest("9.1.0", "12", "/tmp/cudnn.tar.xz", {
        "lib64/libcudnn.so.9": Entry("lib64/libcudnn.so.9", {"kind": "symlink", "size": 0,
                                                              "target": "libcudnn.so.9.1.0"},
                                     None),
        "include/cudnn.h": Entry("include/cudnn.h", None, ".gpudoctor/cudnn/backup/cudnn.h")},
        ["lib64"], [{"version": "8.9.7"}])
    (tmp_path / "manifest.json").write_text(m.dump())
    assert Manifest.load(tmp_path / "manifest.json") == m
    (tmp_path / "old.json").write_text('{"version": "8.9.7", "tarball": "t", "entries": []}')
    old = Manifest.load(tmp_path / "old.json")  # written before cuda_build and history
    assert (old.cuda_build, old.created_dirs, old.history) == (None, [], [])
    (tmp_path / "bad.json").write_text('{"version": "8.9.7"}')
    with pytest.raises(KeyError):
        Manifest.load(tmp_path / "bad.json")


# ------------------------------------------------------------------------ through the install


class Faulty(FileOps):
    """FileOps that raise `exc` on the `at`-th call of `op` (every other call is real)."""

    def __init__(self, op: str, at: int, exc: BaseException) -> None:
        self.op, self.at, self.exc, self.calls = op, at, exc, 0

    def _maybe_fail(self, op: str) -> None:
        if op == self.op:
            self.calls += 1
            if self.calls == self.at:
                raise self.exc

    def move(self, src: Path, dst: Path) -> None:
        self._maybe_fail("move")
        super().move(src, dst)

    def write(self, dst: Path, stream: Readable, mode: int, mtime: int,
              size: int | None = None) -> None:
        self._maybe_fail("write")
        super().write(dst, stream, mode, mtime, size)


DENIED = PermissionError(errno.EACCES, "Permission denied")
FULL = OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
@pytest.mark.parametrize(("op", "at", "exc"), [
    ("move", 1, DENIED), ("move", 9, FULL), ("move", 30, DENIED), ("move", 45, FULL),
    ("write", 1, FULL), ("write", 8, DENIED)])
def test_a_fault_midway_rolls_back_to_byte_identical(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit, op: str, at: int,
        exc: OSError) -> None:
    cudnn_kit.populate(toolkit, "8.9.6", chain=False)  # something to back up and restore
    before = state(toolkit)
    faulty = Faulty(op, at, exc)  # 45 moves in all: the 45th puts the manifest in place
    result = install_cudnn(make_tarball("8.9.7"), toolkit, ops=faulty, gpus=())
    assert faulty.calls == at
    assert result.error is not None
    assert result.rolled_back is (op == "move" and at > 1)  # else nothing visible was done
    assert os.strerror(exc.errno or 0) in result.error.message
    assert "rolled back, the prefix is as it was" in result.error.message
    assert state(toolkit) == before


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
@pytest.mark.parametrize("at", [1, 20, 30])
def test_ctrl_c_midway_rolls_back_then_propagates(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit, at: int) -> None:
    cudnn_kit.populate(toolkit, "8.9.6")
    before = state(toolkit)
    faulty = Faulty("move", at, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        install_cudnn(make_tarball("8.9.7"), toolkit, ops=faulty, gpus=())
    assert faulty.calls == at
    assert state(toolkit) == before


@pytest.mark.subprocess  # the mark it had in test_install_modes.py
@pytest.mark.slow
def test_an_existing_state_directory_that_others_may_write_is_closed(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    (toolkit / ".gpudoctor/cudnn").mkdir(parents=True)
    for d in (toolkit / ".gpudoctor", toolkit / ".gpudoctor/cudnn"):
        d.chmod(0o1777)
    assert install_cudnn(make_tarball("9.1.0"), toolkit, gpus=()).ok
    for d in (toolkit / ".gpudoctor", toolkit / ".gpudoctor/cudnn"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o755

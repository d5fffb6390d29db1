"""`gpudoctor.actions.uninstall_cudnn`: uninstall-cudnn keeps what changed after the install:
real tarball, real install, real edits.

A file whose size, kind or link target is no longer what the install recorded is left in place
with its backup and its manifest row; everything else is undone; exit 1 says the job is not
finished, and `--force` finishes it. Without a manifest it undoes nothing and names what is
there; a fault midway leaves the install in place; the manifest it keeps is its own (0644).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
import runner

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.transaction import FileOps
from gpudoctor.actions.uninstall_cudnn import uninstall_cudnn
from gpudoctor.probes.cudnn import MANIFEST
from tests.actions.test_transaction import DENIED, Faulty
from tests.cudnn_kit import CudnnKit, GpuEnv, MakeTarball

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

state = CudnnKit.tree_state
USER_HEADER = "/* the user's own cudnn_version.h, from before the install */\n"
EDITED_HEADER = "/* edited by hand after the install */\n#define CUDNN_MAJOR 9\n"
EDITED_LIB = b"\x7fELF not the library gpudoctor installed" * 1000


def installed(toolkit: Path, make_tarball: MakeTarball) -> tuple[dict[str, tuple[str, ...]],
                                                                 Path]:
    """The toolkit's state before the install, and the versioned libcudnn the install placed."""
    (toolkit / "include/cudnn_version.h").write_text(USER_HEADER)
    original = state(toolkit)
    result = install_cudnn(make_tarball("9.1.0"), toolkit, gpus=())
    assert result.ok, result.error
    lib = toolkit / "lib64/libcudnn.so.9.1.0"
    assert lib.is_file() and not lib.is_symlink()
    return original, lib


def edit(toolkit: Path, lib: Path) -> None:
    """What a user (or another tool) does after the install: overwrite two installed files."""
    lib.write_bytes(EDITED_LIB)
    (toolkit / "include/cudnn_version.h").write_text(EDITED_HEADER)


def run(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    p = runner.gpudoctor(*args, env=env, timeout=120)
    assert "Traceback" not in p.stdout + p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


@pytest.mark.slow
def test_cli_keeps_changed_files_says_so_and_force_finishes(
        toolkit: Path, make_tarball: MakeTarball, gpu_env: GpuEnv) -> None:
    original, lib = installed(toolkit, make_tarball)
    edit(toolkit, lib)
    env = {**gpu_env(), "NO_COLOR": "1", "COLUMNS": "400"}  # no line wrapped (behind ┆)
    code, out, err = run(env, "uninstall-cudnn", "--prefix", str(toolkit))
    assert code == 1, out + err
    header = toolkit / "include/cudnn_version.h"
    assert lib.read_bytes() == EDITED_LIB  # neither deleted nor restored over
    assert header.read_text() == EDITED_HEADER
    # everything else the install placed is gone; the toolkit's own files are there
    left = {p.name for p in (toolkit / "lib64").iterdir()} | {
        p.name for p in (toolkit / "include").iterdir()}
    assert left == {"libcudnn.so.9.1.0", "libnvToolsExt.so.1", "cudnn_version.h",
                    "cuda_runtime.h"}
    # one line per kept file, on stderr, naming it, why, and the command that finishes
    kept_lines = [line for line in err.splitlines() if line.startswith("gpudoctor: error: kept")]
    assert len(kept_lines) == 2, err
    assert any(str(lib) in line and f"{len(EDITED_LIB)} bytes now" in line for line in kept_lines)
    assert any(str(header) in line and f"{len(EDITED_HEADER)} bytes now" in line
               for line in kept_lines)
    assert all(line.endswith(f"--prefix {toolkit} --force") for line in kept_lines)
    words = " ".join(out.split())  # rich wraps long paths
    assert "except 2 files changed since the install (kept)" in words
    assert f"kept {lib} (changed since the install: {len(EDITED_LIB)} bytes now" in words
    # the backup of the user's own header and a manifest of the kept files remain
    manifest = json.loads((toolkit / MANIFEST).read_text())
    assert sorted(e["path"] for e in manifest["entries"]) == [
        "include/cudnn_version.h", "lib64/libcudnn.so.9.1.0"]
    backup = toolkit / ".gpudoctor/cudnn/backup/include/cudnn_version.h"
    assert backup.read_text() == USER_HEADER

    # a second run without --force changes nothing and says the same
    before = state(toolkit)
    code, out, err = run(env, "uninstall-cudnn", "--prefix", str(toolkit), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False
    assert {k["path"] for k in data["kept"]} == {str(lib), str(header)}
    assert {k["backup"] for k in data["kept"]} == {str(backup), None}
    assert state(toolkit) == before

    code, out, err = run(env, "uninstall-cudnn", "--prefix", str(toolkit), "--force")
    assert code == 0, out + err
    assert state(toolkit) == original  # the user's header restored, every trace gone


@pytest.mark.slow
def test_unchanged_install_uninstalls_as_before(toolkit: Path, make_tarball: MakeTarball) -> None:
    original, _ = installed(toolkit, make_tarball)
    result = uninstall_cudnn(toolkit)
    assert result.ok
    assert result.kept == ()
    assert state(toolkit) == original


@pytest.mark.slow
def test_retargeted_link_and_a_file_become_link_are_kept(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    installed(toolkit, make_tarball)
    link = toolkit / "lib64/libcudnn.so.9"
    assert link.is_symlink()
    link.unlink()
    link.symlink_to("libnvToolsExt.so.1")
    ops = toolkit / "lib64/libcudnn_ops.so.9.1.0"
    ops.unlink()
    ops.symlink_to("libcudnn.so.9.1.0")
    result = uninstall_cudnn(toolkit)
    assert not result.ok
    assert result.error is None
    reasons = {k.path: k.reason for k in result.kept}
    assert set(reasons) == {str(link), str(ops)}
    assert "links to libnvToolsExt.so.1 now" in reasons[str(link)]
    assert "a symlink now, the install placed a file" in reasons[str(ops)]
    assert os.readlink(link) == "libnvToolsExt.so.1"
    assert os.readlink(ops) == "libcudnn.so.9.1.0"
    assert not (toolkit / "lib64/libcudnn.so.9.1.0").exists()  # unchanged: removed


@pytest.mark.slow
def test_a_deleted_file_is_not_kept(toolkit: Path, make_tarball: MakeTarball) -> None:
    original, lib = installed(toolkit, make_tarball)
    lib.unlink()  # gone is not changed: there is nothing to keep
    result = uninstall_cudnn(toolkit)
    assert result.ok
    assert state(toolkit) == original


class FailOnMove(FileOps):
    """Moves that fail with EACCES on the `at`-th call."""

    def __init__(self, at: int) -> None:
        self.at, self.calls = at, 0

    def move(self, src: Path, dst: Path) -> None:
        self.calls += 1
        if self.calls == self.at:
            raise PermissionError(errno.EACCES, "Permission denied", str(src))
        super().move(src, dst)


@pytest.mark.slow
def test_a_failure_with_kept_files_leaves_the_prefix_as_it_was(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    _, lib = installed(toolkit, make_tarball)
    edit(toolkit, lib)
    counting = FailOnMove(at=0)
    assert uninstall_cudnn(toolkit, ops=counting).kept  # how many moves a partial run makes
    moves = counting.calls
    assert moves > 3
    for at in (1, moves // 2, moves):  # the first, a middle one, the new manifest's move
        assert uninstall_cudnn(toolkit, force=True).ok
        installed(toolkit, make_tarball)
        edit(toolkit, lib)
        before = state(toolkit)
        result = uninstall_cudnn(toolkit, ops=FailOnMove(at))
        assert result.error is not None
        assert "Permission denied" in result.error.message
        assert result.kept == ()
        assert state(toolkit) == before


# ------------------------------------------------------------ without a manifest, faults, modes


def test_uninstall_without_a_manifest_and_without_cudnn(toolkit: Path) -> None:
    before = state(toolkit)
    result = uninstall_cudnn(toolkit)
    assert not result.ok
    assert result.error is not None
    assert result.error.message == (
        f"{toolkit}/.gpudoctor/cudnn/manifest.json does not exist: gpudoctor installed no "
        f"cuDNN into {toolkit}, and it holds no cuDNN files: there is nothing to undo")
    assert result.error.fix is None  # no `rm` of files that do not exist
    assert state(toolkit) == before


def test_uninstall_without_a_manifest_names_only_files_that_exist(
        toolkit: Path, cudnn_kit: CudnnKit) -> None:
    cudnn_kit.populate(toolkit, "8.9.6")  # copied by hand: include/ and lib64/, no lib/
    (toolkit / "lib").symlink_to("lib64")  # the same files twice: named once
    before = state(toolkit)
    result = uninstall_cudnn(toolkit)
    assert result.error is not None
    assert "gpudoctor installed no cuDNN" in result.error.message
    assert result.error.fix == (f"to remove them by hand: rm {toolkit}/include/cudnn*.h "
                                f"{toolkit}/lib64/libcudnn*")
    assert state(toolkit) == before


@pytest.mark.slow
def test_a_failed_uninstall_leaves_the_install_in_place(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    (toolkit / "include/cudnn.h").write_text("/* mine */\n")
    assert install_cudnn(make_tarball("8.9.7"), toolkit, gpus=()).ok
    installed = state(toolkit)
    result = uninstall_cudnn(toolkit, ops=Faulty("move", 12, DENIED))
    assert result.error is not None
    assert state(toolkit) == installed
    assert uninstall_cudnn(toolkit).ok


def test_the_manifest_an_uninstall_keeps_is_0644_under_umask_0(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    assert install_cudnn(make_tarball("9.1.0"), toolkit, gpus=()).ok
    (toolkit / "lib64/libcudnn_ops.so.9.1.0").write_bytes(b"\x7fELF edited by hand")
    old = os.umask(0)
    try:
        result = uninstall_cudnn(toolkit)
    finally:
        os.umask(old)
    assert result.kept  # the edited file stays, and a manifest listing it
    manifest = toolkit / ".gpudoctor/cudnn/manifest.json"
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o644

"""install-cudnn / uninstall-cudnn on real tarballs, real libraries and real file systems.

The prefix is compared byte for byte (every file's sha256, mode and symlink target) before and
after each run that must leave it unchanged. Faults midway are injected through the `FileOps`
hook: these tests run as root, for whom `chmod` cannot make a directory unwritable. (The
unwritable-prefix message, proven in a forked child that drops to `nobody`, and ldconfig are
tests/actions/test_system.py's; the rollbacks, test_transaction.py's; broken archives,
test_tarball.py's.)
"""

from __future__ import annotations

import json
import os
import stat
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
import runner

from gpudoctor.actions.install_cudnn import InstallResult, install_cudnn
from gpudoctor.actions.uninstall_cudnn import uninstall_cudnn
from gpudoctor.model import Status
from tests.cudnn_kit import CudnnKit, GpuEnv

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

MakeTarball = Callable[..., Path]  # the make_tarball fixture (tests/actions/conftest.py)
state = CudnnKit.tree_state
add = CudnnKit.add_member


def statuses(result: InstallResult) -> dict[str, Status]:
    assert result.report is not None
    return {r.check_id: r.finding.status for r in result.report.results}


# --------------------------------------------------------------------------- happy paths


@pytest.mark.slow
def test_archive_layout_installs_with_links_modes_and_passing_checks(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    tarball = make_tarball("8.9.7", mode=0o600)  # NVIDIA's files readable by owner only
    result = install_cudnn(tarball, toolkit, gpus=())
    assert result.error is None
    assert result.ok
    plan = result.plan
    assert plan is not None
    assert (plan.version, plan.cuda_build, plan.compression) == ("8.9.7", "12", "xz")
    assert "directory name" in (plan.cuda_build_from or "")
    assert plan.layout.startswith("archive")
    assert plan.lib_dir == str(toolkit / "lib64")
    lib = toolkit / "lib64"
    assert os.readlink(lib / "libcudnn_cnn_infer.so.8") == "libcudnn_cnn_infer.so.8.9.7"
    assert os.readlink(lib / "libcudnn.so") == "libcudnn.so.8"
    assert stat.S_IMODE((lib / "libcudnn.so.8.9.7").stat().st_mode) == 0o644  # a+r
    assert stat.S_IMODE((toolkit / "include/cudnn_version.h").stat().st_mode) == 0o644
    assert not (toolkit / "LICENSE").exists()
    assert any(s.endswith("/LICENSE") for s in plan.skipped)
    assert (lib / "libnvToolsExt.so.1").read_text() == "not cuDNN either\n"
    assert statuses(result) == {
        "GD301": Status.PASS, "GD302": Status.PASS, "GD303": Status.PASS, "GD304": Status.PASS,
        "GD305": Status.PASS, "GD306": Status.PASS, "GD307": Status.PASS, "GD308": Status.PASS,
        "GD309": Status.SKIP, "GD310": Status.PASS}
    manifest = json.loads((toolkit / ".gpudoctor/cudnn/manifest.json").read_text())
    assert manifest["version"] == "8.9.7"
    assert manifest["cuda_build"] == "12"


def test_legacy_tgz_and_a_prefix_that_uses_lib(tmp_path: Path, make_tarball: MakeTarball) -> None:
    prefix = tmp_path / "cuda-10.1"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "version.txt").write_text("CUDA Version 10.1.243\n")
    tarball = make_tarball("7.6.5", layout="legacy", cuda="10.1")
    assert tarball.name == "cudnn-10.1-linux-x64-v7.6.5.32.tgz"
    result = install_cudnn(tarball, prefix, gpus=())  # whatever GPU is here: 7.6.5 stops at sm_75
    assert result.ok, result.error
    assert result.plan is not None
    assert result.plan.layout.startswith("legacy")
    assert (result.plan.cuda_build, result.plan.toolkit_cuda) == ("10.1", "10.1.243")
    assert os.readlink(prefix / "lib/libcudnn.so.7") == "libcudnn.so.7.6.5"
    assert (prefix / "include/cudnn.h").exists()  # include/ was created, and recorded
    manifest = json.loads((prefix / ".gpudoctor/cudnn/manifest.json").read_text())
    assert manifest["created_dirs"] == ["include"]


@pytest.mark.slow
def test_dry_run_prints_the_exact_plan_and_writes_nothing(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    (toolkit / "include/cudnn.h").write_text("/* an older hand-copied cudnn.h */\n")
    before = state(toolkit)
    result = install_cudnn(make_tarball("9.1.0"), toolkit, dry_run=True, gpus=())
    assert state(toolkit) == before
    assert result.plan is not None
    assert result.report is None
    by_dest = {f.dest: f for f in result.plan.files}
    assert by_dest[str(toolkit / "include/cudnn.h")].action == "replace"
    link = by_dest[str(toolkit / "lib64/libcudnn_graph.so.9")]
    assert (link.action, link.kind, link.target) == ("create", "symlink", "libcudnn_graph.so.9.1.0")
    assert len(result.plan.files) == 8 * 3 + 7


@pytest.mark.slow
def test_rerun_is_idempotent_and_uninstall_restores_every_byte(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    (toolkit / "include/cudnn.h").write_text("/* the user's own cudnn.h */\n")
    original = state(toolkit)
    tarball = make_tarball("8.9.7")
    assert install_cudnn(tarball, toolkit, gpus=()).ok
    installed = state(toolkit)
    again = install_cudnn(tarball, toolkit, gpus=())
    assert again.ok
    assert again.plan is not None
    assert again.plan.count("unchanged") == len(again.plan.files)
    assert state(toolkit) == installed
    undone = uninstall_cudnn(toolkit)
    assert undone.ok
    assert str(toolkit / "include/cudnn.h") in undone.restored
    assert state(toolkit) == original


@pytest.mark.slow
def test_upgrade_over_a_hand_copied_cudnn_replaces_it_cleanly(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit) -> None:
    # `sudo cp cuda/lib64/libcudnn* /usr/local/cuda/lib64` without -P: copies, not links
    cudnn_kit.populate(toolkit, "8.9.6", chain=False)
    original = state(toolkit)
    result = install_cudnn(make_tarball("8.9.7"), toolkit, gpus=())
    assert result.ok, result.report
    assert result.plan is not None
    assert result.plan.count("remove") == 7
    assert not (toolkit / "lib64/libcudnn.so.8.9.6").exists()
    assert statuses(result)["GD305"] is Status.PASS
    assert uninstall_cudnn(toolkit).ok
    assert state(toolkit) == original


@pytest.mark.slow
def test_progress_is_reported_up_to_the_size(toolkit: Path, make_tarball: MakeTarball) -> None:
    seen: list[tuple[int, int]] = []
    tarball = make_tarball()
    install_cudnn(tarball, toolkit, progress=lambda done, total: seen.append((done, total)),
                  gpus=())
    assert seen[-1] == (tarball.stat().st_size,) * 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


# --------------------------------------------------------------------------- refusals


@pytest.mark.slow
def test_cuda_major_mismatch_is_refused_unless_forced(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    before = state(toolkit)
    tarball = make_tarball("8.9.7", cuda="11")
    result = install_cudnn(tarball, toolkit, gpus=())
    assert result.error is not None
    assert not result.ok
    assert "is the CUDA 11 build" in result.error.message
    assert "toolkit in the prefix is CUDA 12.4" in result.error.message
    assert "--force" in (result.error.fix or "")
    assert state(toolkit) == before
    forced = install_cudnn(tarball, toolkit, force=True, gpus=())
    assert forced.error is None
    assert forced.plan is not None
    assert any("--force" in n for n in forced.plan.notes)


@pytest.mark.slow
def test_cuda_build_from_the_libraries_when_the_names_say_nothing(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    tarball = make_tarball("8.9.7", layout="legacy", name="cudnn.tgz",
                           needs=["libcublas.so.11"])
    before = state(toolkit)
    # legacy layout: the top directory is just cuda/
    result = install_cudnn(tarball, toolkit, gpus=())
    assert result.error is not None
    assert "CUDA 11 build (from the CUDA libraries it links)" \
        in result.error.message
    assert state(toolkit) == before


def _member(name: str, data: bytes = b"x", **attrs: object) -> Callable[[tarfile.TarFile], None]:
    return lambda tf: add(tf, name, data, **attrs)


HOSTILE = {
    "absolute path": (_member("/etc/cron.d/evil", data=b"* * * * * root sh\n"),
                      "member '/etc/cron.d/evil' has an absolute path"),
    "dot-dot": (_member("cuda/lib64/../../../../etc/passwd", data=b"root::0:0\n"),
                "'cuda/lib64/../../../../etc/passwd' climbs out of the archive"),
    "symlink out": (_member("cuda/lib64/libcudnn_evil.so", type=tarfile.SYMTYPE,
                            linkname="/etc/shadow"),
                    "symlink 'cuda/lib64/libcudnn_evil.so' points outside its directory"),
    "symlink up": (_member("cuda/lib64/libcudnn_up.so", type=tarfile.SYMTYPE,
                           linkname="../../../etc/shadow"), "points outside its directory"),
    "dangling symlink": (_member("cuda/lib64/libcudnn_x.so", type=tarfile.SYMTYPE,
                                 linkname="libcudnn_x.so.1"),
                         "points at 'libcudnn_x.so.1', which is not an installed file"),
    "symlink loop": (lambda tf: (add(tf, "cuda/lib64/libcudnn_a.so", type=tarfile.SYMTYPE,
                                     linkname="libcudnn_b.so"),
                                 add(tf, "cuda/lib64/libcudnn_b.so", type=tarfile.SYMTYPE,
                                     linkname="libcudnn_a.so")), "is part of a loop"),
    "hard link": (_member("cuda/lib64/libcudnn_hard.so", type=tarfile.LNKTYPE,
                          linkname="cuda/lib64/libcudnn.so.8.9.7"),
                  "'cuda/lib64/libcudnn_hard.so' is a hard link"),
    "fifo": (_member("cuda/lib64/libcudnn_fifo", type=tarfile.FIFOTYPE),
             "'cuda/lib64/libcudnn_fifo' is a FIFO"),
    "char device": (_member("cuda/dev/null", type=tarfile.CHRTYPE),
                    "'cuda/dev/null' is a character device"),
    "block device": (_member("cuda/dev/sda", type=tarfile.BLKTYPE),
                     "'cuda/dev/sda' is a block device"),
    "empty library": (_member("cuda/lib64/libcudnn_empty.so.8", data=b""),
                      "'cuda/lib64/libcudnn_empty.so.8' is an empty file"),
    "duplicate": (_member("cuda/include/cudnn.h", data=b"#define X 1\n"),
                  "'cuda/include/cudnn.h' appears twice"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_members_are_refused_by_name_and_nothing_changes(
        toolkit: Path, make_tarball: MakeTarball, case: str) -> None:
    extra, expected = HOSTILE[case]
    # the bad member comes last, after every good one was staged: the prefix still never sees it
    tarball = make_tarball("8.9.7", layout="legacy", extra=extra)
    before = state(toolkit)
    for dry_run in (True, False):
        result = install_cudnn(tarball, toolkit, dry_run=dry_run, gpus=())
        assert result.error is not None
        assert expected in result.error.message
        assert state(toolkit) == before
    assert not Path("/etc/cron.d/evil").exists()


# --------------------------------------------------------------------------- the commands


@pytest.mark.slow
def test_cli_exit_codes_and_formats(toolkit: Path, make_tarball: MakeTarball,
                                    gpu_env: GpuEnv) -> None:
    """The commands as a user runs them, in a child that sees no GPU (`gpu_env`): the verdicts
    are about the tarball, whatever GPU this machine has."""
    env = {**gpu_env(), "NO_COLOR": "1"}

    def run(*args: str) -> tuple[int, str, str]:
        p = runner.gpudoctor(*args, env=env, timeout=120)
        assert "Traceback" not in p.stdout + p.stderr, p.stderr
        return p.returncode, p.stdout, p.stdout + p.stderr

    tarball = make_tarball("9.1.0")
    code, _, output = run("install-cudnn", "--tarball", str(tarball), "--prefix", str(toolkit),
                          "--dry-run")
    assert code == 0, output
    assert "dry run: nothing was written" in output
    assert f"create  {toolkit}/lib64/libcudnn_ops.so.9 -> libcudnn_ops.so.9.1.0" in output
    code, out, output = run("install-cudnn", "-t", str(tarball), "--prefix", str(toolkit),
                            "--format", "json")
    assert code == 0, output
    data = json.loads(out)
    assert data["ok"]
    assert data["plan"]["version"] == "9.1.0"
    assert {c["id"]: c["status"] for c in data["checks"]}["GD304"] == "pass"
    code, _, output = run("install-cudnn", "-t", str(make_tarball(cuda="11")), "--prefix",
                          str(toolkit))
    assert code == 1
    assert "is the CUDA 11 build" in output
    assert run("install-cudnn", "-t", "/nonexistent.tgz")[0] == 2
    code, _, output = run("uninstall-cudnn", "--prefix", str(toolkit))
    assert code == 0
    assert "removed cuDNN 9.1.0" in output
    code, _, output = run("uninstall-cudnn", "--prefix", str(toolkit))
    assert code == 1
    assert "gpudoctor installed no cuDNN" in output

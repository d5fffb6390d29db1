"""`gpudoctor.cli.install`: install-cudnn takes a readable regular file only (a device, a FIFO,
a directory is a usage error before anything is read), writes the result the renderer makes
and one error line, exit 0 / 1; uninstall-cudnn names each file it kept and how to finish.
The actions are stood in for here: real installs of real tarballs are in
tests/actions/test_install_cudnn.py, hostile tarball paths in
tests/hostile/test_selection_and_explain_inputs.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import typer

from gpudoctor.actions.install_cudnn import InstallResult
from gpudoctor.actions.system import ActionError
from gpudoctor.actions.uninstall_cudnn import KeptFile, UninstallResult
from gpudoctor.cli import install as command
from gpudoctor.renderers.install import install_json, uninstall_json
from gpudoctor.renderers.interface import OutputFormat


def refused(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    with pytest.raises(typer.Exit) as e:
        command._regular_file_size(path)
    assert e.value.exit_code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_a_tarball_is_a_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tarball = tmp_path / "cudnn.tar.xz"
    tarball.write_bytes(b"x" * 1234)
    assert command._regular_file_size(tarball) == 1234
    assert refused(capsys, Path(os.devnull)) == (
        f"gpudoctor: error: --tarball {os.devnull}: a character device, not a tarball file; "
        "pass the path of the downloaded cuDNN tarball")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert f"--tarball {fifo}: a FIFO (pipe), not a tarball file" in refused(capsys, fifo)
    assert refused(capsys, tmp_path / "gone.tgz").startswith(
        f"gpudoctor: error: --tarball {tmp_path / 'gone.tgz'}: cannot read: ")


def test_kinds_of_files() -> None:
    assert command._kind(stat.S_IFCHR) == "a character device"
    assert command._kind(stat.S_IFBLK) == "a block device"
    assert command._kind(stat.S_IFIFO) == "a FIFO (pipe)"
    assert command._kind(stat.S_IFSOCK) == "a socket"
    assert command._kind(stat.S_IFDIR) == "a directory"
    assert command._kind(stat.S_IFLNK) == "not a regular file"


def installed(monkeypatch: pytest.MonkeyPatch, result: InstallResult) -> list[dict[str, object]]:
    calls: list[dict[str, object]] = []

    def run_install(tarball: Path, prefix: Path, **kw: object) -> InstallResult:
        calls.append({"tarball": tarball, "prefix": prefix, **kw})
        return result

    monkeypatch.setattr(command, "run_install", run_install)
    return calls


def test_install_passes_the_options_and_writes_the_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    tarball = tmp_path / "cudnn.tar.xz"
    tarball.write_bytes(b"x")
    result = InstallResult(dry_run=True, plan=None)
    calls = installed(monkeypatch, result)
    with pytest.raises(typer.Exit) as e:
        command.install_cudnn(tarball, tmp_path, dry_run=True, force=True,
                              allow_incomplete=False, ldconfig=True, fmt=OutputFormat.JSON)
    assert e.value.exit_code == 0
    (call,) = calls
    assert (call["tarball"], call["prefix"], call["dry_run"], call["force"],
            call["allow_incomplete"], call["ldconfig"]) == (tarball, tmp_path, True, True,
                                                            False, True)
    assert call["progress"] is None  # no terminal: no bar
    out, err = capsys.readouterr()
    assert json.loads(out) == json.loads(install_json(result)) and err == ""


def test_a_failed_install_exits_1_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    tarball = tmp_path / "cudnn.tar.xz"
    tarball.write_bytes(b"x")
    error = ActionError("/usr/local/cuda is not writable", "run it with sudo")
    installed(monkeypatch, InstallResult(dry_run=False, plan=None, error=error))
    with pytest.raises(typer.Exit) as e:
        command.install_cudnn(tarball, tmp_path, fmt=OutputFormat.TEXT)
    assert e.value.exit_code == 1
    out, err = capsys.readouterr()
    assert out == "install-cudnn stopped (nothing was written)\n"
    assert err == ("gpudoctor: error: /usr/local/cuda is not writable (fix: run it with "
                   "sudo)\n")


def test_uninstall_names_each_file_kept_and_how_to_finish(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    kept = (KeptFile("/opt/my cuda/lib64/libcudnn.so.9", "4096 bytes now, the install wrote "
                     "1234", None),)
    result = UninstallResult("/opt/my cuda", "9.1.0", removed=("/opt/my cuda/include/cudnn.h",),
                             kept=kept)
    got: list[tuple[object, object]] = []

    def run_uninstall(prefix: Path, *, command: object, force: bool) -> UninstallResult:
        got.append((prefix, force))
        return result

    monkeypatch.setattr(command, "run_uninstall", run_uninstall)
    with pytest.raises(typer.Exit) as e:
        command.uninstall_cudnn(Path("/opt/my cuda"), force=False, fmt=OutputFormat.JSON)
    assert e.value.exit_code == 1 and got == [(Path("/opt/my cuda"), False)]
    out, err = capsys.readouterr()
    assert json.loads(out) == json.loads(uninstall_json(result))
    assert err == ("gpudoctor: error: kept /opt/my cuda/lib64/libcudnn.so.9: changed since "
                   "gpudoctor installed it (4096 bytes now, the install wrote 1234); remove it "
                   "too: gpudoctor uninstall-cudnn --prefix '/opt/my cuda' --force\n")


def test_uninstall_with_nothing_to_undo(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    """A prefix gpudoctor never installed into: the real action, exit 1, one line."""
    with pytest.raises(typer.Exit) as e:
        command.uninstall_cudnn(tmp_path, force=False, fmt=OutputFormat.TEXT)
    assert e.value.exit_code == 1
    out, err = capsys.readouterr()
    assert out == "uninstall-cudnn stopped; the prefix is unchanged\n"
    (line,) = err.splitlines()
    assert line.startswith("gpudoctor: error: ") and str(tmp_path) in line

"""`gpudoctor.actions.system`: what the cuDNN actions ask of the machine. The sudo line, a prefix
that cannot be written (for real: a forked child that drops to `nobody`), the loader's
configuration and ldconfig, the toolkit at a prefix, the manifest, an OSError midway."""

from __future__ import annotations

import errno
import json
import os
import pickle
import platform
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.system import (
    ActionError,
    Refused,
    lib_dir_name,
    load_manifest,
    loader_dirs,
    os_error,
    require_writable,
    run_ldconfig,
    sudo_line,
    toolkit_version,
)
from gpudoctor.linux import library_dirs
from tests.cudnn_kit import CudnnKit

MakeTarball = Callable[..., Path]  # the make_tarball fixture (tests/actions/conftest.py)
state = CudnnKit.tree_state


# ------------------------------------------------------------------------ the sudo line


def test_the_sudo_line_repeats_the_users_command_quoted() -> None:
    command = ["gpudoctor", "install-cudnn", "-t", "/tmp/my cudnn.tar.xz", "--prefix", "/opt/c"]
    assert sudo_line(command, None, Path("/ignored")) == (
        "sudo gpudoctor install-cudnn -t '/tmp/my cudnn.tar.xz' --prefix /opt/c")


def test_without_the_users_command_it_is_built_from_this_interpreter() -> None:
    line = sudo_line(None, Path("/tmp/c.tar.xz"), Path("/usr/local/cuda"))
    assert line == (f"sudo {shlex.quote(sys.executable)} -m gpudoctor install-cudnn --tarball "
                    "/tmp/c.tar.xz --prefix /usr/local/cuda")
    assert sudo_line([], None, Path("/usr/local/cuda"), "uninstall") == (
        f"sudo {shlex.quote(sys.executable)} -m gpudoctor uninstall-cudnn --prefix "
        "/usr/local/cuda")


def test_a_prefix_that_is_no_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for prefix in (tmp_path / "none", tmp_path / "file"):
        with pytest.raises(Refused) as caught:
            require_writable(prefix, "sudo true")
        assert caught.value.error.message == f"{prefix} does not exist or is not a directory"
        assert "--prefix" in (caught.value.error.fix or "")
    require_writable(tmp_path, "sudo true")  # writable: nothing said


# ------------------------------------------------------------------------ the loader


def test_loader_dirs_follow_includes_and_skip_comments(tmp_path: Path) -> None:
    (tmp_path / "ld.so.conf.d").mkdir()
    (tmp_path / "ld.so.conf").write_text(
        "# the system's\ninclude ld.so.conf.d/*.conf\n/opt/own/lib  # trailing comment\n\n")
    (tmp_path / "ld.so.conf.d/b.conf").write_text("/usr/local/cuda/lib64\n")
    (tmp_path / "ld.so.conf.d/a.conf").write_text(f"include {tmp_path}/abs.conf\n")
    (tmp_path / "abs.conf").write_text("/opt/abs\n")
    trusted = list(library_dirs(platform.machine()))
    assert loader_dirs(tmp_path / "ld.so.conf") == [
        *trusted, "/opt/abs", "/usr/local/cuda/lib64", "/opt/own/lib"]
    assert loader_dirs(tmp_path / "missing.conf") == trusted


def test_an_include_loop_ends(tmp_path: Path) -> None:
    (tmp_path / "loop.conf").write_text("/opt/x\ninclude loop.conf\n")
    dirs = loader_dirs(tmp_path / "loop.conf")
    assert dirs.count("/opt/x") == 6  # the file and five levels of includes, then it stops


def test_ldconfig_is_not_run_for_a_directory_off_the_loader_path(tmp_path: Path) -> None:
    conf = tmp_path / "ld.so.conf"
    conf.write_text("/opt/other\n")
    lib = tmp_path / "my cuda/lib64"
    said = run_ldconfig(lib, ["false"], conf)
    assert said == (f"not run: {lib} is not on the system loader path ({conf}); to add it: "
                    f"echo {shlex.quote(str(lib))} | sudo tee /etc/ld.so.conf.d/cudnn.conf && "
                    "sudo ldconfig")


@pytest.mark.subprocess
def test_what_ldconfig_did_is_said(tmp_path: Path) -> None:
    lib = tmp_path / "lib64"
    lib.mkdir()
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"{lib}\n")
    assert run_ldconfig(lib, ["true"], conf) == "ran true"
    said = run_ldconfig(lib, ["sh", "-c", "echo not a symbolic link >&2; exit 1"], conf)
    assert said == ("exited 1: sh -c 'echo not a symbolic link >&2; exit 1'; it said: not a "
                    "symbolic link")
    missing = run_ldconfig(lib, [str(tmp_path / "no-ldconfig")], conf)
    assert missing.endswith("could not run: No such file or directory"), missing


# ------------------------------------------------------------------------ the prefix


def test_the_library_directory_of_a_prefix(tmp_path: Path) -> None:
    assert lib_dir_name(tmp_path) == "lib64"  # neither: lib64
    (tmp_path / "lib").mkdir()
    assert lib_dir_name(tmp_path) == "lib"
    (tmp_path / "lib64").mkdir()
    assert lib_dir_name(tmp_path) == "lib64"


def test_the_toolkit_version_of_a_prefix(tmp_path: Path) -> None:
    assert toolkit_version(tmp_path) is None  # not a toolkit
    (tmp_path / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    assert toolkit_version(tmp_path) == "12.4"


def test_the_manifest_of_a_prefix(tmp_path: Path) -> None:
    assert load_manifest(tmp_path) is None
    state_dir = tmp_path / ".gpudoctor/cudnn"
    state_dir.mkdir(parents=True)
    (state_dir / "manifest.json").write_text('{"version": "9.1.0", "tarball": "t", '
                                             '"entries": []}')
    manifest = load_manifest(tmp_path)
    assert manifest is not None and manifest.version == "9.1.0"
    (state_dir / "manifest.json").write_text("{not json")
    with pytest.raises(Refused) as caught:
        load_manifest(tmp_path)
    assert caught.value.error.message.startswith(f"{state_dir}/manifest.json is unreadable or "
                                                 "damaged (")
    assert f"inspect {state_dir}" in (caught.value.error.fix or "")


@pytest.mark.parametrize(("e", "said", "fix"), [
    (OSError(errno.ENOSPC, "No space left on device", "/opt/c/lib64/libcudnn.so.9"),
     "changing /opt/c failed at /opt/c/lib64/libcudnn.so.9: No space left on device",
     "free some space"),
    (PermissionError(errno.EACCES, "Permission denied"),
     "changing /opt/c failed at /opt/c: Permission denied", "fix the cause above"),
    (OSError("no errno"), "changing /opt/c failed at /opt/c: no errno", "fix the cause above"),
])
def test_an_os_error_midway_is_one_line_and_its_fix(e: OSError, said: str, fix: str) -> None:
    error = os_error(e, Path("/opt/c"))
    assert isinstance(error, ActionError)
    assert error.message == said + "; every change was rolled back, the prefix is as it was"
    assert (error.fix or "").startswith(fix)


# ------------------------------------------------------------------------ through the install


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
@pytest.mark.slow
def test_ldconfig_runs_only_when_the_prefix_is_on_the_loader_path(
        toolkit: Path, make_tarball: MakeTarball, tmp_path: Path) -> None:
    lib = toolkit / "lib64"
    conf = tmp_path / "ld.so.conf"
    conf.write_text("include ld.so.conf.d/*.conf\n")
    (tmp_path / "ld.so.conf.d").mkdir()
    tarball = make_tarball()
    result = install_cudnn(tarball, toolkit, ldconfig=True, ld_conf=conf,
                           ldconfig_argv=("ldconfig", "-n", str(lib)), gpus=())
    assert (result.ldconfig or "").startswith(f"not run: {lib} is not on the system loader")
    assert "sudo tee /etc/ld.so.conf.d/cudnn.conf" in (result.ldconfig or "")
    (tmp_path / "ld.so.conf.d/cuda.conf").write_text(f"{lib}\n")
    result = install_cudnn(tarball, toolkit, ldconfig=True, ld_conf=conf,
                           ldconfig_argv=("ldconfig", "-n", str(lib)), gpus=())
    # the links are right: ldconfig has nothing to say ("is not a symbolic link" otherwise)
    assert result.ldconfig == f"ran ldconfig -n {lib}"


def as_nobody(fn: Callable[[], object]) -> object:
    """Run fn in a forked child that really is `nobody`; its result (or exception repr)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, pickle.dumps(fn()))
        except BaseException as e:  # noqa: BLE001 - the child reports anything, never returns
            os.write(write, pickle.dumps(f"raised {e!r}"))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


@pytest.mark.subprocess  # the mark it had in test_install_cudnn.py
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_unwritable_prefix_gets_the_sudo_line(toolkit: Path, make_tarball: MakeTarball) -> None:
    tarball = make_tarball()
    command = ["gpudoctor", "install-cudnn", "-t", str(tarball), "--prefix", str(toolkit)]
    # pytest's tmp_path is private to root: nobody cannot even look at the tarball
    error = as_nobody(lambda: install_cudnn(tarball, toolkit, command=command, gpus=()).error)
    assert isinstance(error, ActionError), error
    assert error.message == f"cannot access {tarball}: Permission denied"
    # in a world-readable place, root-owned and 0755: readable, not writable
    public = Path(tempfile.mkdtemp(prefix="gpudoctor-test-"))
    try:
        public.chmod(0o755)
        prefix = public / "cuda"
        shutil.copytree(toolkit, prefix, symlinks=True)
        shutil.copy(tarball, public / tarball.name)
        before = state(prefix)
        command[3], command[5] = str(public / tarball.name), str(prefix)
        error = as_nobody(lambda: install_cudnn(command[3], prefix, command=command, gpus=()).error)
        assert isinstance(error, ActionError), error
        assert error.message == f"cannot write to {prefix}: permission denied"
        assert error.fix == f"run: sudo {shlex.join(command)}"
        assert state(prefix) == before
    finally:
        shutil.rmtree(public)

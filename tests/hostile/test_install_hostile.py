"""install-cudnn against hostile and broken input, run as a user runs it.

Every case runs `python -m gpudoctor install-cudnn` as a real subprocess (or the action itself,
for the many-case fuzz), and hashes the whole prefix tree (contents, modes, symlink targets)
before and after: any non-zero exit must leave it byte-identical, and say what is wrong in one
line, without a traceback. Bombs are built cheaply: a sparse file through GNU tar, and a gzip
stream of concatenated members that each expand 64 MiB of zeros.
"""

from __future__ import annotations

import gzip
import os
import random
import resource
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import runner

from gpudoctor.actions.install_cudnn import install_cudnn
from gpudoctor.actions.uninstall_cudnn import uninstall_cudnn
from tests.cudnn_kit import (  # noqa: F401 - the fixtures
    CudnnKit,
    MakeTarball,
    cudnn_kit_fixture,
    gpu_env_fixture,
    make_tarball_fixture,
    toolkit_fixture,
)

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

state = CudnnKit.tree_state
add = CudnnKit.add_member
ZEROS = 64 << 20


def gpudoctor(*args: str, preexec: Callable[[], None] | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """`python -m gpudoctor ARGS`, as a user runs it."""
    return runner.gpudoctor(*args, env={"COLUMNS": "200"}, timeout=120, preexec_fn=preexec)


def refused(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    """The run exited `code` with one error line that holds every needle, and no traceback."""
    output = result.stdout + result.stderr
    assert result.returncode == code, output
    assert "Traceback" not in output, output
    errors = [line for line in result.stderr.splitlines() if "rror" in line]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


@pytest.fixture(autouse=True)
def _children_see_no_gpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """install-cudnn refuses a cuDNN that does not support a GPU that NVML shows; these tests are
    about the tarball, so every `python -m gpudoctor` child here sees none (`gpu_env`: the fake
    libnvidia-ml), whatever this machine has. Without gcc there is no fake, and no tarball."""
    if shutil.which("gcc") is None:
        return
    env = request.getfixturevalue("gpu_env")()
    monkeypatch.setenv("LD_LIBRARY_PATH", env["LD_LIBRARY_PATH"])
    monkeypatch.setenv("FAKE_NVML_GPUS", env["FAKE_NVML_GPUS"])


def install(tarball: Path, prefix: Path, *extra: str,
            preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    """install-cudnn TARBALL into PREFIX through the command line."""
    return gpudoctor("install-cudnn", "--tarball", str(tarball), "--prefix", str(prefix), *extra,
                     preexec=preexec)


def gzip_bomb(out: Path, name: str, size: int, head: bytes = b"") -> Path:
    """A .tgz whose member `name` says (and holds) `size` bytes: `head`, then zeros. About
    1/1000 of `size` on disk: gzip members of 64 MiB of zeros, concatenated."""
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o755
    block = gzip.compress(bytes(ZEROS), compresslevel=9)
    with out.open("wb") as f:
        f.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT) + head))
        for _ in range((size - len(head)) // ZEROS):
            f.write(block)
        f.write(gzip.compress(bytes((size - len(head)) % ZEROS + 1024)))
    return out


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at path (skips where mounting is not permitted)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], capture_output=True, check=False)


# --------------------------------------------------------------------------- bombs


@pytest.mark.slow
def test_a_10_gib_sparse_member_is_refused_by_its_header(
        toolkit: Path, cudnn_kit: CudnnKit, tmp_path: Path) -> None:
    if shutil.which("tar") is None:
        pytest.skip("GNU tar is needed to write a sparse member")
    src = cudnn_kit.populate(tmp_path / "src" / "cuda", "8.9.7")
    with (src / "lib64/libcudnn_huge.so.8.9.7").open("wb") as f:
        f.truncate(10 << 30)  # all hole: no blocks on disk
    tarball = tmp_path / "cudnn-12.4-linux-x64-v8.9.7.29.tgz"
    subprocess.run(["tar", "-S", "-czf", str(tarball), "-C", str(tmp_path / "src"), "cuda"],
                   check=True)
    assert tarball.stat().st_size < 1 << 20
    before = state(toolkit)
    result = install(tarball, toolkit)
    refused(result, 1, "member 'cuda/lib64/libcudnn_huge.so.8.9.7' is 10.0 GiB, larger than "
            "any real cuDNN file (the bound is 4.0 GiB)")
    assert state(toolkit) == before


@pytest.mark.slow
def test_a_member_whose_header_says_10_gib_is_refused_before_its_data(
        toolkit: Path, tmp_path: Path) -> None:
    bomb = gzip_bomb(tmp_path / "cudnn-12.4-linux-x64-v8.9.7.29.tgz",
                     "cuda/lib64/libcudnn.so.8.9.7", 10 << 30)
    assert bomb.stat().st_size < 16 << 20  # 10 GiB of zeros in ~10 MB
    before = state(toolkit)
    result = install(bomb, toolkit)
    refused(result, 1, "member 'cuda/lib64/libcudnn.so.8.9.7' is 10.0 GiB")
    assert state(toolkit) == before


@pytest.mark.slow
@pytest.mark.parametrize(("name", "role"), [
    ("cuda/lib64/libcudnn.so.8.9.7", "library"), ("cuda/doc/zeros.bin", "other")])
def test_a_decompression_bomb_under_the_size_bound_is_stopped_while_it_expands(
        toolkit: Path, tmp_path: Path, cudnn_kit: CudnnKit, name: str, role: str) -> None:
    # 512 MiB is under the per-member bound, and the library has a real ELF header: only the
    # count while decompressing can tell it from a real member. (Not larger: the free-space
    # preflight would rightly refuse it first on a disk with less free, as CI's once had.)
    head = cudnn_kit.shared_object() if role == "library" else b""
    bomb = gzip_bomb(tmp_path / "cudnn-12.4-linux-x64-v8.9.7.29.tgz", name, 512 << 20, head)
    before = state(toolkit)
    result = install(bomb, toolkit)
    refused(result, 1, "is a decompression bomb", "expanded to over ")
    assert state(toolkit) == before


# --------------------------------------------------------------------------- broken files


@pytest.mark.slow
def test_broken_and_missing_tarballs(toolkit: Path, make_tarball: MakeTarball,
                                     tmp_path: Path) -> None:
    good_xz, good_tgz = make_tarball("8.9.7"), make_tarball("8.9.7", layout="legacy")
    cases: dict[Path, tuple[int, str]] = {}
    garbage = tmp_path / "garbage.tgz"
    garbage.write_bytes(random.Random(9).randbytes(64 << 10))
    cases[garbage] = (1, "is not a tar archive")
    data = good_tgz.read_bytes()
    cut_tgz = tmp_path / "cut.tgz"
    cut_tgz.write_bytes(data[:len(data) // 2])
    cases[cut_tgz] = (1, "is truncated")
    data = good_xz.read_bytes()
    cut_xz = tmp_path / "cut.tar.xz"
    cut_xz.write_bytes(data[:len(data) * 2 // 3])
    cases[cut_xz] = (1, "is truncated")
    cases[tmp_path / "missing.tgz"] = (2, "does not exist")
    (tmp_path / "a-directory.tgz").mkdir()
    cases[tmp_path / "a-directory.tgz"] = (2, "is a directory")
    before = state(toolkit)
    for tarball, (code, needle) in cases.items():
        refused(install(tarball, toolkit), code, needle)
        assert state(toolkit) == before, tarball


@pytest.mark.slow
def test_random_corruption_never_escapes_and_never_half_installs(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    rng = random.Random(2024)
    sources = [make_tarball("8.9.7", layout="legacy"),
               make_tarball("9.1.0", compression="", name="cudnn-9.tar")]
    before = state(toolkit)
    outcomes = {"refused": 0, "installed": 0}
    for i in range(60):
        data = bytearray(rng.choice(sources).read_bytes())
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at:at + 4] = rng.randbytes(4)
        bad = toolkit.parent / f"corrupt-{i}.tgz"
        bad.write_bytes(bytes(data))
        result = install_cudnn(bad, toolkit, gpus=())  # never raises; about the tarball
        if result.error is None:  # the damage missed everything that matters
            outcomes["installed"] += 1
            assert uninstall_cudnn(toolkit).ok
        else:
            outcomes["refused"] += 1
        assert state(toolkit) == before, (i, result.error)
    assert outcomes["refused"] > 30, outcomes


# --------------------------------------------------------------------------- the file system


@pytest.mark.slow
def test_a_read_only_prefix(toolkit: Path, make_tarball: MakeTarball, tmp_path: Path) -> None:
    tarball = make_tarball("8.9.7")
    with tmpfs(tmp_path / "ro", "4m") as mount:
        prefix = mount / "cuda"
        shutil.copytree(toolkit, prefix, symlinks=True)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        before = state(prefix)
        result = install(tarball, prefix)
        refused(result, 1, f"{prefix} is on a read-only file system")
        assert state(prefix) == before


@pytest.mark.slow
def test_a_full_file_system_refuses_the_member_that_does_not_fit(
        toolkit: Path, make_tarball: MakeTarball, tmp_path: Path) -> None:
    big = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib/libcudnn_cnn_infer_static.a"
    tarball = make_tarball("8.9.7", extra=lambda tf: add(
        tf, big, b"!<arch>\n" + os.urandom(2 << 20)))
    with tmpfs(tmp_path / "tiny", "1m") as mount:
        prefix = mount / "cuda"
        shutil.copytree(toolkit, prefix, symlinks=True)
        before = state(prefix)
        for extra in (("--dry-run",), ()):
            result = install(tarball, prefix, *extra)
            refused(result, 1, f"member {big!r} does not fit: the file system of {prefix} has")
            assert state(prefix) == before


@pytest.mark.slow
def test_a_file_size_limit_refuses_the_member_over_it(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    big = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib/libcudnn_cnn_infer_static.a"
    tarball = make_tarball("8.9.7", extra=lambda tf: add(
        tf, big, b"!<arch>\n" + os.urandom(1 << 20)))
    before = state(toolkit)

    def limit() -> None:  # `ulimit -f 512` (KiB) in the child only
        resource.setrlimit(resource.RLIMIT_FSIZE, (512 << 10, resource.RLIM_INFINITY))

    result = install(tarball, toolkit, preexec=limit)
    refused(result, 1, f"member {big!r} (1.0 MiB) is larger than this process may write into "
            "one file (512.0 KiB, `ulimit -f`)")
    assert state(toolkit) == before
    assert install(tarball, toolkit).returncode == 0  # without the limit it installs

"""`gpudoctor.checks.cudnn`: the cuDNN checks GD301-GD307 on real probed trees (compiled
libraries, real links) and hand-built facts (GD308-GD310: test_cudnn_builds.py; GD307's mixed
loads: test_mixed_loads.py).

Where a check prints a fix command, the test runs it (without `sudo`) on the tree and probes
again: the fix must make the check pass.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gpudoctor.checks import cudnn, cudnn_builds, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    CudnnLibrary,
    Environment,
    Finding,
    Reason,
    Status,
    Unavailable,
)
from gpudoctor.probes.cudnn import probe_cudnn_at
from gpudoctor.probes.interface import Deps
from tests.checks.envbuilder import env, host, toolkit, torch
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture, version_header  # noqa: F401 - the fixture

TABLES = load_tables()
CHECKS = cudnn.CHECKS + cudnn_builds.CHECKS  # GD301-GD310
NO_TORCH = Unavailable(Reason.SKIPPED, "PyTorch was not probed (--no-torch)")


def run(e: Environment) -> dict[str, Finding]:
    return {r.check_id: r.finding for r in run_checks(e, TABLES, CHECKS).results}


def probed(prefix: Path, cuda: str = "12.4", **kw: object) -> Environment:
    """The environment of a machine whose toolkit `prefix` (CUDA `cuda`) holds this cuDNN."""
    facts = probe_cudnn_at(str(prefix), Deps(environ={"PATH": "/usr/bin:/bin"}))
    kw.setdefault("torch", NO_TORCH)
    return env(cudnn=facts, toolkits=toolkit(cuda, root=str(prefix)), **kw)


def apply(fix: str) -> None:
    """Run a printed fix without its sudo (tests run in a throwaway tree)."""
    subprocess.run(fix.replace("sudo ", ""), shell=True, check=True)


def manifest(prefix: Path, cuda_build: str) -> None:
    path = prefix / ".gpudoctor/cudnn/manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"cuda_build": cuda_build}))


@pytest.mark.slow
def test_well_placed_copy_passes_everything(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    manifest(prefix, "12")
    results = run(probed(prefix))
    statuses = {k: f.status for k, f in results.items()}
    assert statuses == {
        "GD301": Status.PASS, "GD302": Status.PASS, "GD303": Status.PASS, "GD304": Status.PASS,
        "GD305": Status.PASS, "GD306": Status.PASS, "GD307": Status.PASS, "GD308": Status.PASS,
        "GD309": Status.SKIP, "GD310": Status.PASS,
    }, {k: f.message for k, f in results.items()}
    assert "PyTorch was not probed" in results["GD309"].message


def test_every_check_skips_without_cudnn_and_names_why() -> None:
    e = env(cudnn=Unavailable(Reason.NOT_INSTALLED, "no cuDNN found (looked in …)"))
    for check_id, f in run(e).items():
        if check_id != "GD309":  # judged on torch's facts alone
            assert f.status is Status.SKIP, check_id
            assert f.message, check_id


@pytest.mark.slow
def test_plain_cp_copies_warn_and_the_ln_commands_fix_them(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0", chain=False)
    f = run(probed(prefix))["GD304"]
    assert f.status is Status.WARN
    assert "is not a symbolic link" in f.message
    lib = prefix / "lib64"
    assert (f.fix or "").startswith(f"cd -- {lib} && sudo ln -sf -- ")
    assert "sudo ln -sf -- libcudnn_ops.so.9.1.0 libcudnn_ops.so.9 &&" in (f.fix or "")
    assert (f.fix or "").endswith("sudo ln -sf -- libcudnn_ops.so.9 libcudnn_ops.so")
    apply(f.fix or "")
    assert (lib / "libcudnn_ops.so.9").readlink() == Path("libcudnn_ops.so.9.1.0")
    assert run(probed(prefix))["GD304"].status is Status.PASS


@pytest.mark.slow
@pytest.mark.subprocess
def test_dangling_or_missing_soname_link_fails(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0")
    (prefix / "lib64/libcudnn_cnn.so.9").unlink()
    (prefix / "lib64/libcudnn_adv.so.9").unlink()
    (prefix / "lib64/libcudnn_adv.so.9").symlink_to("libcudnn_adv.so.9.0.0")
    f = run(probed(prefix))["GD304"]
    assert f.status is Status.FAIL
    assert "libcudnn_cnn.so.9 is missing" in f.message
    assert "dangles" in f.message
    apply(f.fix or "")
    assert run(probed(prefix))["GD304"].status is Status.PASS


@pytest.mark.slow
@pytest.mark.subprocess
def test_files_not_world_readable_get_the_chmod_line(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", mode=0o600)
    f = run(probed(prefix))["GD303"]
    # root can read them; everybody else cannot
    assert f.status is Status.WARN
    assert "600" in f.message
    assert f.fix == f"sudo chmod a+r -- {prefix}/lib64/libcudnn* {prefix}/include/cudnn*.h"
    apply(f.fix)
    assert run(probed(prefix))["GD303"].status is Status.PASS


def test_unreadable_by_this_user_fails() -> None:
    lib = CudnnLibrary("libcudnn.so.9.1.0", "/opt/c/lib/libcudnn.so.9.1.0", None, 10, 0o600,
                       False, readable=False)
    f = run(env(cudnn=CudnnFacts((hand_install(libraries=(lib,)),))))["GD303"]
    assert f.status is Status.FAIL
    assert "cannot read them either" in f.message


@pytest.mark.slow
@pytest.mark.subprocess
def test_missing_and_mixed_sublibraries(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0")
    for name in ("libcudnn_heuristic.so.9", "libcudnn_heuristic.so.9.1.0",
                 "libcudnn_heuristic.so"):
        (prefix / "lib64" / name).unlink()
    f = run(probed(prefix))["GD305"]
    assert f.status is Status.FAIL
    assert "lacks libcudnn_heuristic.so.9" in f.message
    assert f"--prefix {prefix}" in (f.fix or "")
    # an older install's sub-library left behind
    other = cudnn_kit.populate(tmp_path / "old", "9.0.0", sublibs=["libcudnn_heuristic"])
    for p in (other / "lib64").iterdir():
        p.rename(prefix / "lib64" / p.name)
    f = run(probed(prefix))["GD305"]
    assert f.status is Status.FAIL
    assert "mixes cuDNN 9.0.0, 9.1.0" in f.message


@pytest.mark.slow
def test_header_and_library_disagree(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.6.0")
    (prefix / "include/cudnn_version.h").write_text(version_header("8.9.7"))
    f = run(probed(prefix))["GD302"]
    assert f.status is Status.FAIL
    assert "header says 8.9.7" in f.message
    assert "cudnnGetVersion says 8.6.0" in f.message
    assert "gpudoctor install-cudnn" in (f.fix or "")


@pytest.mark.slow
@pytest.mark.subprocess
def test_headers_missing_or_garbage(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    (prefix / "include/cudnn_version.h").write_text("nothing here\n")
    f = run(probed(prefix))["GD301"]
    assert f.status is Status.FAIL
    assert "defines no CUDNN_MAJOR" in f.message
    for h in (prefix / "include").iterdir():
        h.unlink()
    f = run(probed(prefix))["GD301"]
    assert f.status is Status.FAIL
    assert "no cudnn_version.h or cudnn.h" in f.message


@pytest.mark.slow
def test_unresolved_dependency_is_named(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", needs=["libcublas.so.11"])
    results = run(probed(prefix, cuda="12.4"))
    f = results["GD306"]
    assert f.status is Status.FAIL
    assert "libcublas.so.11 not found" in f.message
    assert "nvidia-cublas-cu11" in (f.fix or "")
    # …and the same copy is the CUDA 11 build in a CUDA 12 toolkit (told by ldd)
    f = results["GD308"]
    assert f.status is Status.FAIL
    assert "CUDA 11 build; the toolkit is CUDA 12.4" in f.message
    assert f.fix == ("gpudoctor install-cudnn --tarball "
                     f"cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz --prefix {prefix}")


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_library_that_crashes_its_loader_fails(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", abort=True)
    f = run(probed(prefix))["GD306"]
    assert f.status is Status.FAIL
    assert "crashed the process that loaded it (signal 6)" in f.message


def hand_install(**kw: object) -> CudnnInstall:
    base = CudnnInstall(
        origin="toolkit /usr/local/cuda", lib_dir="/usr/local/cuda/lib64",
        header="/usr/local/cuda/include/cudnn_version.h", header_version="9.1.0",
        libraries=(), library_version="9.1.0", missing_deps=(), cuda_build="12",
        found_by=("/usr/local/cuda",), prefix="/usr/local/cuda", in_use=True,
        real_lib_dir="/usr/local/cuda-12.4/lib64")
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


WHEEL = "/venv/site-packages/nvidia/cudnn/lib"


def shadow_env(loaded: str | None) -> Environment:
    on_path = hand_install(origin="LD_LIBRARY_PATH", lib_dir="/opt/cudnn8/lib64",
                           real_lib_dir="/opt/cudnn8/lib64", prefix=None, in_use=False,
                           found_by=("LD_LIBRARY_PATH",), library_version="8.9.7",
                           header_version="8.9.7")
    wheel = hand_install(origin=f"pip wheel {WHEEL[:-4]}", lib_dir=WHEEL, real_lib_dir=WHEEL,
                         prefix=None, in_use=False, found_by=("pip wheel",))
    t = torch("2.13.0+cu130", "13.0", ("H100",), cudnn=92000)
    if loaded is not None:
        assert not isinstance(t.runtime, Unavailable)
        t = dataclasses.replace(t, runtime=dataclasses.replace(
            t.runtime, mapped_libraries=(loaded, "/x/libcublas.so.13")))
    else:
        t = dataclasses.replace(t, runtime=Unavailable(Reason.CRASHED, "import torch died"))
    h = host(env=(("LD_LIBRARY_PATH", "/opt/cudnn8/lib64:/usr/local/lib"),))
    return env(cudnn=CudnnFacts((on_path, wheel)), torch=t, host=h)


def test_copy_on_ld_library_path_shadowing_torchs_wheel() -> None:
    f = run(shadow_env("/opt/cudnn8/lib64/libcudnn.so.8.9.7"))["GD307"]
    assert f.status is Status.WARN
    assert "shadows the cuDNN 9.1.0" in f.message
    assert f.fix == "export LD_LIBRARY_PATH=/usr/local/lib"
    assert ("/opt/cudnn8/lib64", "cuDNN 8.9.7, LD_LIBRARY_PATH; found by LD_LIBRARY_PATH "
            "← loaded by torch") in f.evidence
    f = run(shadow_env(None))["GD307"]  # torch could not tell: a different version may shadow
    assert f.status is Status.WARN
    assert "may shadow" in f.message
    f = run(shadow_env(f"{WHEEL}/libcudnn.so.9"))["GD307"]
    assert f.status is Status.PASS
    assert f"torch loads {WHEEL}/libcudnn.so.9" in f.message


# ---------------------------------------------------------------------------- GD302, for real


@pytest.mark.subprocess
def test_header_of_one_release_beside_libraries_of_another(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    """cudnn_version.h of 8.5.0 copied beside 9.1.0 libraries: both versions named."""
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0")
    (prefix / "include/cudnn_version.h").write_text(version_header("8.5.0"))
    f = run(probed(prefix))["GD302"]
    assert f.status is Status.FAIL
    assert "header says 8.5.0, cudnnGetVersion says 9.1.0, file name says 9.1.0" in f.message
    assert f.fix == (f"reinstall cuDNN 9.1.0 into {prefix} from its tarball (TARBALL, "
                     "downloaded from NVIDIA): gpudoctor install-cudnn --tarball TARBALL "
                     f"--prefix {prefix}")


@pytest.mark.slow
def test_two_releases_of_libraries_in_one_directory(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    """9.1.0 copied over 8.5.0 with its header left behind: the old files stay too."""
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.5.0")
    new = cudnn_kit.populate(tmp_path / "new", "9.1.0")
    for p in (new / "lib64").glob("*.so.9.1.0"):
        shutil.copyfile(p, prefix / "lib64" / p.name)
        (prefix / "lib64" / p.name.replace(".so.9.1.0", ".so.9")).symlink_to(p.name)
    f = run(probed(prefix))["GD302"]
    assert f.status is Status.FAIL
    assert "file names say 8.5.0 and 9.1.0" in f.message
    assert "header says 8.5.0" in f.message and "cudnnGetVersion says 9.1.0" in f.message



"""probe_cudnn against real trees: compiled libraries, real symlinks, real ldd/ldconfig runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor import snapshot
from gpudoctor.model import CudnnFacts, CudnnInstall, Reason, Unavailable
from gpudoctor.probes.cudnn import (
    decode_version,
    parse_version_header,
    probe_cudnn,
    probe_cudnn_at,
    split_library_name,
)
from gpudoctor.probes.interface import Deps
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture


def deps_for(root: Path, **kw: object) -> Deps:
    """A hermetic Deps: `root` stands for /, no environment, a Python with no site-packages."""
    python = root / "fake-python"
    if not python.exists():
        python.write_text("#!/bin/sh\necho '[]'\n")
        python.chmod(0o755)
    kw.setdefault("environ", {"PATH": "/usr/bin:/bin"})
    kw.setdefault("python", str(python))
    return Deps(root=root, **kw)  # type: ignore[arg-type]


def only(facts: CudnnFacts | Unavailable) -> CudnnInstall:
    assert isinstance(facts, CudnnFacts), facts
    assert len(facts.installs) == 1, [i.origin for i in facts.installs]
    return facts.installs[0]


def test_pure_helpers() -> None:
    assert decode_version(8907) == "8.9.7"
    assert decode_version(90100) == "9.1.0"
    assert decode_version(7605) == "7.6.5"
    assert split_library_name("libcudnn_ops.so.9.1.0") == ("libcudnn_ops", "9.1.0")
    assert split_library_name("libcudnn.so") == ("libcudnn", None)
    assert split_library_name("libcudnn_static_v8.a") is None
    assert split_library_name("libcublas.so.12") is None
    # the trap of compat_facts §3.2: parse the three macros, never CUDNN_VERSION
    text = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n" \
           "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100)\n"
    assert parse_version_header(text) == "8.9.7"
    assert parse_version_header("#define CUDNN_MAJOR 8\n") is None


@pytest.mark.slow
def test_toolkit_copy_v8_with_intact_chains(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    inst = only(probe_cudnn(deps_for(tmp_path, cuda_home=str(prefix))))
    assert inst.origin == f"toolkit {prefix}"
    assert inst.found_by == ("--cuda-home",)
    assert inst.in_use
    assert inst.prefix == str(prefix)
    assert inst.header == str(prefix / "include" / "cudnn_version.h")
    assert inst.header_version == "8.9.7"
    assert inst.library_version == "8.9.7"  # cudnnGetVersion() of the compiled library
    assert inst.missing_deps == ()
    assert len(inst.libraries) == 21  # 7 sub-libraries x (real file, .so.8, .so)
    by_name = {lib.name: lib for lib in inst.libraries}
    assert by_name["libcudnn_cnn_infer.so.8"].symlink_target == "libcudnn_cnn_infer.so.8.9.7"
    assert by_name["libcudnn_cnn_infer.so"].symlink_target == "libcudnn_cnn_infer.so.8"
    real = by_name["libcudnn.so.8.9.7"]
    assert real.symlink_target is None
    assert real.size > 0
    assert real.mode == 0o644
    assert real.world_readable
    assert real.readable
    assert {h.name for h in inst.headers} >= {"cudnn.h", "cudnn_version.h"}


@pytest.mark.subprocess
def test_v7_header_is_cudnn_h(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "7.6.5")
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert inst.header == str(prefix / "include" / "cudnn.h")
    assert (inst.header_version, inst.library_version) == ("7.6.5", "7.6.5")


@pytest.mark.slow
def test_copies_instead_of_symlinks_are_recorded(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0", chain=False, mode=0o600)
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert all(lib.symlink_target is None for lib in inst.libraries)
    assert not any(lib.world_readable for lib in inst.libraries)
    assert inst.library_version == "9.1.0"


@pytest.mark.slow
def test_unresolved_dependency_and_cuda_build_from_ldd(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    # the sub-libraries link libcublas.so.11, which is nowhere on the loader path
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", needs=["libcublas.so.11"])
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert inst.missing_deps == ("libcublas.so.11",)
    assert inst.cuda_build == "11"
    assert inst.cuda_build_from == "linked CUDA libraries (ldd)"


@pytest.mark.slow
def test_the_toolkits_own_cublas_resolves(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0", needs=["libcublas.so.12"])
    shutil.copy(cudnn_kit.stubs / "libcublas.so.12", prefix / "lib64")
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert inst.missing_deps == ()
    assert inst.cuda_build == "12"


@pytest.mark.subprocess
def test_a_library_that_aborts_its_loader_is_a_fact(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", abort=True)
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert isinstance(inst.library_version, Unavailable)
    assert inst.library_version.reason is Reason.CRASHED
    assert inst.header_version == "8.9.7"


@pytest.mark.slow
@pytest.mark.subprocess
def test_header_without_macros_and_dangling_include(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    (prefix / "include" / "cudnn_version.h").write_text("garbage\n")
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert isinstance(inst.header_version, Unavailable)
    assert inst.header_version.reason is Reason.ERROR
    (prefix / "include" / "cudnn_version.h").unlink()
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    assert inst.header == str(prefix / "include" / "cudnn.h")
    assert isinstance(inst.header_version, Unavailable)
    assert inst.header_version.reason is Reason.NOT_INSTALLED
    assert "cudnn_version.h" in inst.header_version.message


@pytest.mark.subprocess
def test_dangling_symlink(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    (prefix / "lib64" / "libcudnn_adv_train.so.8.9.7").unlink()
    inst = only(probe_cudnn_at(str(prefix), deps_for(tmp_path)))
    lib = {x.name: x for x in inst.libraries}["libcudnn_adv_train.so.8"]
    assert (lib.size, lib.readable) == (-1, False)


@pytest.mark.subprocess
def test_same_directory_two_ways_is_one_copy(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "usr/local/cuda-12.4", "9.1.0")
    (tmp_path / "usr/local/cuda").symlink_to("cuda-12.4")
    environ = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{prefix}/lib64"}
    inst = only(probe_cudnn(deps_for(tmp_path, environ=environ)))
    assert inst.found_by == ("/usr/local/cuda", "/usr/local/cuda-*", "LD_LIBRARY_PATH")
    assert inst.in_use


@pytest.mark.subprocess
def test_toolkit_in_use_is_the_first_that_exists(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    first = tmp_path / "opt/first"
    first.mkdir(parents=True)  # exists, holds no cuDNN: still the toolkit in use
    cudnn_kit.populate(tmp_path / "usr/local/cuda", "9.1.0")
    environ = {"PATH": "/usr/bin:/bin", "CUDA_HOME": str(first)}
    inst = only(probe_cudnn(deps_for(tmp_path, environ=environ)))
    assert inst.origin == f"toolkit {tmp_path / 'usr/local/cuda'}"
    assert not inst.in_use


@pytest.mark.subprocess
def test_debian_style_headers_and_libraries(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    root = tmp_path
    cudnn_kit.populate(root / "usr", "8.9.7", include="include/x86_64-linux-gnu",
                       lib="lib/x86_64-linux-gnu")
    inc = root / "usr/include/x86_64-linux-gnu"
    (inc / "cudnn_version.h").rename(inc / "cudnn_version_v8.h")
    (root / "usr/include/cudnn_version.h").symlink_to("x86_64-linux-gnu/cudnn_version_v8.h")
    inst = only(probe_cudnn(deps_for(root)))
    assert inst.origin == "system"
    assert inst.found_by == ("system headers",)
    assert inst.header == str(inc / "cudnn_version_v8.h")
    assert inst.header_version == inst.library_version == "8.9.7"


@pytest.mark.subprocess
@pytest.mark.parametrize("machine", ["aarch64", "ppc64le"])
def test_debian_style_cudnn_of_another_architecture(tmp_path: Path, cudnn_kit: CudnnKit,
                                                    machine: str) -> None:
    """An Arm (or POWER) machine's distribution puts cuDNN under its own multiarch triplet:
    found there (before, only x86_64-linux-gnu was looked in)."""
    triplet = {"aarch64": "aarch64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu"}[machine]
    cudnn_kit.populate(tmp_path / "usr", "8.9.7", include=f"include/{triplet}",
                       lib=f"lib/{triplet}")
    inst = only(probe_cudnn(deps_for(tmp_path, machine=machine)))
    assert inst.origin == "system" and inst.lib_dir == str(tmp_path / "usr/lib" / triplet)
    assert inst.header_version == inst.library_version == "8.9.7"
    other = probe_cudnn(deps_for(tmp_path, machine="x86_64"))  # not where an x86_64 looks
    assert isinstance(other, Unavailable) or not other.installs


@pytest.mark.slow
@pytest.mark.subprocess
def test_ldconfig_cache(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    if shutil.which("ldconfig", path="/sbin:/usr/sbin:/usr/bin:/bin") is None:
        pytest.skip("no ldconfig")
    libdir = cudnn_kit.populate(tmp_path / "opt/cudnn", "9.1.0") / "lib64"
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "ld.so.conf").write_text(f"{libdir}\n")
    subprocess.run(["ldconfig", "-X", "-C", str(etc / "ld.so.cache"), "-f",
                    str(etc / "ld.so.conf")], check=True, capture_output=True)
    inst = only(probe_cudnn(deps_for(tmp_path)))
    assert inst.found_by == ("ldconfig",)
    assert inst.lib_dir == str(libdir)
    assert inst.include_dir == str(libdir.parent / "include")
    assert inst.header_version == inst.library_version == "9.1.0"


@pytest.mark.slow
@pytest.mark.subprocess
def test_pip_wheel_finds_its_sibling_cublas(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    site = tmp_path / "venv/site-packages"
    wheel = site / "nvidia/cudnn"
    # wheels hold no symlinks: only the SONAME files, linking libcublas.so.12
    cudnn_kit.populate(wheel, "9.1.0", lib="lib", chain=False, needs=["libcublas.so.12"])
    for p in (wheel / "lib").glob("*"):
        if not p.name.endswith(".so.9"):
            p.unlink()
    cublas = site / "nvidia/cublas/lib"
    cublas.mkdir(parents=True)
    shutil.copy(cudnn_kit.stubs / "libcublas.so.12", cublas)
    (site / "nvidia_cudnn_cu12-9.1.0.70.dist-info").mkdir()
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho '{json.dumps([str(site), str(site), '/nonexistent'])}'\n")
    python.chmod(0o755)
    inst = only(probe_cudnn(deps_for(tmp_path, python=str(python))))
    assert inst.origin == f"pip wheel {wheel}"
    assert inst.found_by == ("pip wheel",)
    assert inst.missing_deps == ()  # resolved through site-packages/nvidia/cublas/lib
    assert (inst.cuda_build, inst.cuda_build_from) == (
        "12", "dist-info nvidia_cudnn_cu12-9.1.0.70.dist-info")
    assert inst.library_version == "9.1.0"


@pytest.mark.slow
@pytest.mark.subprocess
def test_conda_and_manifest_cuda_build(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    conda = cudnn_kit.populate(tmp_path / "conda/env", "8.9.7", lib="lib")
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7")
    manifest = prefix / ".gpudoctor/cudnn/manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"cuda_build": "12"}))
    environ = {"PATH": "/usr/bin:/bin", "CONDA_PREFIX": str(conda)}
    facts = probe_cudnn(deps_for(tmp_path, environ=environ, cuda_home=str(prefix)))
    assert isinstance(facts, CudnnFacts)
    toolkit, env = facts.installs
    assert toolkit.cuda_build == "12"
    assert "manifest" in (toolkit.cuda_build_from or "")
    assert env.origin == f"conda {conda}"
    assert isinstance(env.cuda_build, Unavailable)


@pytest.mark.subprocess
def test_nothing_found(tmp_path: Path) -> None:
    facts = probe_cudnn(deps_for(tmp_path))
    assert isinstance(facts, Unavailable)
    assert facts.reason is Reason.NOT_INSTALLED


@pytest.mark.slow
@pytest.mark.subprocess
def test_real_interpreter_site_packages_is_cheap(tmp_path: Path) -> None:
    # the default Deps.python is this interpreter: no child process is started for it
    facts = probe_cudnn(Deps(root=tmp_path, environ={}, python=sys.executable))
    assert isinstance(facts, CudnnFacts | Unavailable)


@pytest.mark.slow
@pytest.mark.subprocess
def test_facts_round_trip_through_a_snapshot(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "8.9.7", needs=["libcublas.so.11"])
    facts = probe_cudnn_at(str(prefix), deps_for(tmp_path))
    data = json.loads(json.dumps(snapshot.to_data(facts)))
    assert snapshot.from_data(CudnnFacts | Unavailable, data) == facts


@pytest.mark.slow
@pytest.mark.subprocess
def test_patients_own_venv_wheel_is_found(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    """`--python` of another venv: its own site-packages hold the cuDNN wheel (the child asks
    that interpreter as it runs: with -S a venv reports its base's site-packages instead)."""
    venv = tmp_path / "cu124-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=60)
    python = venv / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=30).stdout.strip())
    wheel = site / "nvidia" / "cudnn"
    cudnn_kit.populate(wheel, "9.1.0", lib="lib", chain=False)
    for p in (wheel / "lib").glob("*"):
        if not p.name.endswith(".so.9"):  # a wheel ships only the SONAME files
            p.unlink()
    dist = site / "nvidia_cudnn_cu12-9.1.0.70.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\n"
                                   "Version: 9.1.0.70\n")
    (dist / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
    facts = probe_cudnn(deps_for(tmp_path, python=str(python)))
    inst = only(facts)
    assert inst.origin == f"pip wheel {wheel}"
    assert inst.library_version == inst.header_version == "9.1.0"
    assert (inst.cuda_build, inst.cuda_build_from) == (
        "12", "dist-info nvidia_cudnn_cu12-9.1.0.70.dist-info")

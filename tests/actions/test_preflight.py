"""`gpudoctor.actions.preflight`: what install-cudnn checks before it writes: a complete tarball
(the tables' file lists), real shared libraries for this machine, a prefix that is a CUDA
toolkit and never `/`, the GPUs' support range, the free space; after a completed install the
checks only warn.

Every refusal is asserted with the prefix hashed before and after (CudnnKit.tree_state):
byte-identical, whatever the error.
"""

from __future__ import annotations

import ast
import json
import os
import platform
import shlex
import tarfile
from pathlib import Path

import pytest
import runner

from gpudoctor.actions.install_cudnn import InstallResult, install_cudnn
from gpudoctor.actions.preflight import Space
from gpudoctor.actions.system import Refused
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
from tests.actions.test_install_fix_lines import NEWLINE, between, hostile_toolkit
from tests.cudnn_kit import NVML_RTX5090, CudnnKit, GpuEnv, MakeTarball
from tests.cudnn_kit import SUBLIBS as ALL_SUBLIBS

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

state = CudnnKit.tree_state
add = CudnnKit.add_member
SUBLIBS = ALL_SUBLIBS[8]


def statuses(result: InstallResult) -> dict[str, Status]:
    assert result.report is not None
    return {r.check_id: r.finding.status for r in result.report.results}


# --------------------------------------------------------------------------- completeness


def test_incomplete_archive_is_refused_naming_what_it_lacks(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    tarball = make_tarball("9.1.0", sublibs=["libcudnn", "libcudnn_graph"])
    before = state(toolkit)
    layout = load_tables().cudnn_layout(9)
    assert layout is not None
    lacking = [lib for lib in layout.libraries if lib not in ("libcudnn.so.9",
                                                             "libcudnn_graph.so.9")]
    for dry_run in (True, False):
        result = install_cudnn(tarball, toolkit, dry_run=dry_run, gpus=())
        assert result.error is not None
        assert not result.ok
        assert result.error.message == (f"refused: {tarball.name} lacks sub-libraries of cuDNN "
                                        f"9: {', '.join(lacking)}")
        assert "--allow-incomplete" in (result.error.fix or "")
        assert state(toolkit) == before


def test_allow_incomplete_installs_and_the_checks_only_warn(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    tarball = make_tarball("9.1.0", sublibs=["libcudnn", "libcudnn_graph"])
    result = install_cudnn(tarball, toolkit, allow_incomplete=True, gpus=())
    assert result.error is None
    assert result.ok  # the prefix holds the new cuDNN: exit 0
    assert (toolkit / "lib64/libcudnn_graph.so.9").is_symlink()
    assert statuses(result)["GD305"] is Status.WARN  # what the checks find is a warning
    assert result.plan is not None
    assert any("--allow-incomplete" in n and "libcudnn_ops.so.9" in n for n in result.plan.notes)


def test_every_major_of_the_tables_is_complete_as_the_kit_builds_it(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    for version, layout in (("7.6.5", "legacy"), ("8.9.7", "archive"), ("9.1.0", "archive")):
        result = install_cudnn(make_tarball(version, layout=layout), toolkit, dry_run=True,
                               force=True, gpus=())
        assert result.error is None, (version, result.error)


@pytest.mark.slow
def test_forced_cuda_11_build_that_needs_cublas_11_installs_with_warnings(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    # cuDNN 8 for CUDA 11 links libcublas.so.11, absent here: it cannot load in this toolkit
    tarball = make_tarball("8.9.7", cuda="11", needs=["libcublas.so.11"])
    result = install_cudnn(tarball, toolkit, force=True, gpus=())
    assert result.error is None
    assert result.ok
    found = statuses(result)
    assert found["GD306"] is Status.WARN  # `ldd`: libcublas.so.11 => not found
    assert found["GD308"] is Status.WARN  # the CUDA 11 build in a CUDA 12.4 toolkit
    assert Status.FAIL not in found.values()
    assert os.readlink(toolkit / "lib64/libcudnn_ops_infer.so.8") == "libcudnn_ops_infer.so.8.9.7"


# --------------------------------------------------------------------------- libraries


ELF = {"relocatable": ({16: b"\x01\x00"}, "is a relocatable object (.o), not a shared library"),
       "executable": ({16: b"\x02\x00"}, "is an executable program, not a shared library"),
       "not elf": ({0: b"MZ\x90\x00"}, "is not a shared library (it starts with b'MZ\\x90\\x00"),
       "text": ({0: b"#!/bin/sh\nrm -rf /\n"},
                "is not a shared library (it starts with b'#!/bin/sh\\nrm'"),
       # real files: a program gcc built as a PIE (ET_DYN, like a library, but with PT_INTERP),
       # a copy of /bin/true (a PIE on every current distribution), a library cut to 200 bytes
       "pie": ("gcc -pie", "is a program (a position-independent executable with an "
               "interpreter), not a shared library"),
       "/bin/true": ("/bin/true", "is a program (a position-independent executable with an "
                     "interpreter), not a shared library"),
       "cut": ("cut", "is cut short: its ELF headers say it has at least ")}


def bad_library(cudnn_kit: CudnnKit, case: str) -> bytes:
    """The bytes of the ELF case `case`, from real files."""
    how = ELF[case][0]
    if how == "gcc -pie":
        return cudnn_kit.program()
    if how == "/bin/true":
        true = Path("/bin/true").read_bytes()
        if true[16:18] != b"\x03\x00":
            pytest.skip("/bin/true is not a position-independent executable here")
        return true
    if how == "cut":
        return cudnn_kit.shared_object()[:200]
    assert isinstance(how, dict)
    return cudnn_kit.shared_object(patch=how)


@pytest.mark.parametrize("case", sorted(ELF))
@pytest.mark.parametrize("compression", ["gz", ""])  # streamed, and read in place (plain tar)
def test_a_library_that_is_not_a_shared_object_is_refused(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit, case: str,
        compression: str) -> None:
    expected = ELF[case][1]
    name = "cuda/lib64/libcudnn_ops_infer.so.8.9.7"
    bad = bad_library(cudnn_kit, case)
    # a link to it (libcudnn_ops_infer.so.8 -> …) is fine: the file itself is what is judged
    tarball = make_tarball("8.9.7", layout="legacy", compression=compression,
                           sublibs=[s for s in SUBLIBS if s != "libcudnn_ops_infer"],
                           extra=lambda tf: (add(tf, name, bad), add(
                               tf, "cuda/lib64/libcudnn_ops_infer.so.8", type=tarfile.SYMTYPE,
                               linkname="libcudnn_ops_infer.so.8.9.7")))
    before = state(toolkit)
    for dry_run in (True, False):
        result = install_cudnn(tarball, toolkit, dry_run=dry_run, gpus=())
        assert result.error is not None
        assert result.error.message.startswith(f"refused: member {name!r} {expected}")
        assert state(toolkit) == before


@pytest.mark.slow
def test_static_archives_must_be_ar_archives(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    good = make_tarball("8.9.7", extra=lambda tf: add(
        tf, "cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib/libcudnn_static.a",
        b"!<arch>\n" + bytes(60)))
    result = install_cudnn(good, toolkit, gpus=())
    assert result.ok, result.error
    assert (toolkit / "lib64/libcudnn_static.a").read_bytes().startswith(b"!<arch>\n")
    before = state(toolkit)
    bad = make_tarball("8.9.7", extra=lambda tf: add(
        tf, "cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib/libcudnn_adv_static.a",
        b"\x7fELF" + bytes(60)))
    result = install_cudnn(bad, toolkit, gpus=())
    assert result.error is not None
    assert "libcudnn_adv_static.a' is not a static library (it has no ar header)" \
        in result.error.message
    assert state(toolkit) == before


@pytest.mark.slow
def test_libraries_for_another_machine_are_refused_unless_forced(
        toolkit: Path, make_tarball: MakeTarball, cudnn_kit: CudnnKit) -> None:
    host = platform.machine()
    other, code = ("x86_64", 62) if host == "aarch64" else ("aarch64", 183)
    name = "cuda/lib64/libcudnn_cnn_train.so.8.9.7"
    foreign = cudnn_kit.shared_object(patch={18: code.to_bytes(2, "little")})
    tarball = make_tarball("8.9.7", layout="legacy",
                           sublibs=[s for s in SUBLIBS if s != "libcudnn_cnn_train"],
                           extra=lambda tf: (add(tf, name, foreign), add(
                               tf, "cuda/lib64/libcudnn_cnn_train.so.8", type=tarfile.SYMTYPE,
                               linkname="libcudnn_cnn_train.so.8.9.7")))
    before = state(toolkit)
    result = install_cudnn(tarball, toolkit, gpus=())
    assert result.error is not None
    assert result.error.message == (f"refused: member {name!r} is built for {other}; this "
                                    f"machine is {host}")
    assert state(toolkit) == before
    forced = install_cudnn(tarball, toolkit, force=True, gpus=())
    assert forced.ok, forced.error
    assert forced.plan is not None
    assert any(f"built for {other}" in n for n in forced.plan.notes)


# --------------------------------------------------------------------------- the prefix


@pytest.mark.parametrize("spelling", ["/", "//", "/.", "/usr/..", "link"])
def test_the_root_directory_is_never_a_prefix(
        make_tarball: MakeTarball, tmp_path: Path, spelling: str) -> None:
    prefix = tmp_path / "root-link" if spelling == "link" else Path(spelling)
    if spelling == "link":
        prefix.symlink_to("/")
    tarball = make_tarball("8.9.7")
    assert not Path("/include/cudnn.h").exists()
    for dry_run, force in ((True, False), (False, False), (False, True)):
        result = install_cudnn(tarball, prefix, dry_run=dry_run, force=force, gpus=())
        assert result.error is not None
        assert "is the root directory /" in result.error.message
    assert not Path("/include/cudnn.h").exists()
    assert not Path("/.gpudoctor").exists()


@pytest.mark.slow
def test_a_prefix_that_is_not_a_toolkit_is_refused_unless_forced(
        make_tarball: MakeTarball, tmp_path: Path) -> None:
    prefix = tmp_path / "not-cuda"
    (prefix / "lib64").mkdir(parents=True)
    (prefix / "README").write_text("a directory of my own\n")
    before = state(prefix)
    tarball = make_tarball("8.9.7")
    for dry_run in (True, False):
        result = install_cudnn(tarball, prefix, dry_run=dry_run, gpus=())
        assert result.error is not None
        assert result.error.message == (f"refused: {prefix} is not a CUDA toolkit: it has no "
                                        "version.json, version.txt, bin/nvcc or "
                                        "include/cuda_runtime.h")
        assert "--force" in (result.error.fix or "")
        assert state(prefix) == before
    forced = install_cudnn(tarball, prefix, force=True, gpus=())
    assert forced.ok, forced.error
    assert forced.plan is not None
    assert any("is not a CUDA toolkit" in n for n in forced.plan.notes)
    assert (prefix / "lib64/libcudnn.so.8").is_symlink()


@pytest.mark.parametrize("mark", ["bin/nvcc", "version.txt", "include/cuda_runtime_api.h",
                                  "targets/x86_64-linux/include/cuda_runtime.h",
                                  "lib64/libcudart.so.12"])
def test_what_makes_a_prefix_a_toolkit(
        make_tarball: MakeTarball, tmp_path: Path, mark: str) -> None:
    prefix = tmp_path / "cuda"
    (prefix / mark).parent.mkdir(parents=True)
    (prefix / mark).write_text("CUDA Version 12.4.131\n" if mark == "version.txt" else "x\n")
    result = install_cudnn(make_tarball("8.9.7"), prefix, dry_run=True, gpus=())
    assert result.error is None, result.error


# --------------------------------------------------------------------------- the command


@pytest.mark.slow
def test_the_command_exits_1_unchanged_or_0_installed(
        toolkit: Path, make_tarball: MakeTarball, gpu_env: GpuEnv) -> None:
    tarball = make_tarball("9.1.0", sublibs=["libcudnn", "libcudnn_graph"])
    argv = ["install-cudnn", "--tarball", str(tarball), "--prefix", str(toolkit), "--format",
            "json"]
    env = gpu_env()  # no GPU: about the tarball, whatever GPU is here
    before = state(toolkit)
    refused = runner.gpudoctor(*argv, env=env)
    assert refused.returncode == 1, refused.stderr
    assert "lacks sub-libraries of cuDNN 9" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert json.loads(refused.stdout)["ok"] is False
    assert state(toolkit) == before
    done = runner.gpudoctor(*argv, "--allow-incomplete", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is True
    assert {c["id"]: c["status"] for c in data["checks"]}["GD305"] == "warn"
    assert (toolkit / ".gpudoctor/cudnn/manifest.json").is_file()


# --------------------------------------------------------------------------- GPU support range

RTX5090 = (("NVIDIA GeForce RTX 5090", "12.0"),)
H100 = (("NVIDIA H100 80GB HBM3", "9.0"),)


def toolkit_at(toolkit: Path, version: str) -> Path:
    """The `toolkit` prefix, re-labelled as CUDA `version`."""
    (toolkit / "version.json").write_text(json.dumps(
        {"cuda": {"name": "CUDA SDK", "version": version}}))
    return toolkit


def test_cudnn_that_does_not_support_a_gpu_here_is_refused(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    """cuDNN 8.9.7 stops at sm_90 (NVIDIA's support matrix): on an RTX 5090 it is refused
    before anything is written, dry run or not, naming the range, the GPU and the way out."""
    tarball = make_tarball("8.9.7")
    support = load_tables().cudnn_gpu_support("8.9.7", "12.4.1")
    assert support is not None and not support.supports("12.0")
    before = state(toolkit)
    for dry_run in (True, False):
        result = install_cudnn(tarball, toolkit, dry_run=dry_run, gpus=RTX5090)
        assert result.error is not None and not result.ok
        message = result.error.message
        assert message.startswith("refused: cuDNN 8.9.7 with CUDA 12.4 supports compute "
                                  f"capability {support.min_cc}-{support.max_cc}"), message
        assert "NVIDIA GeForce RTX 5090 (sm_120) is outside it" in message
        assert "gpudoctor compat gpu sm_120" in (result.error.fix or "")
        assert "--force" in (result.error.fix or "")
        assert state(toolkit) == before


@pytest.mark.slow
def test_the_command_refuses_for_a_gpu_nvml_shows(
        toolkit: Path, make_tarball: MakeTarball, gpu_env: GpuEnv) -> None:
    """The GPUs come from NVML (here the fake libnvidia-ml showing one RTX 5090, sm_120):
    cuDNN 8.9.7 does not support it, so the command exits 1 with the prefix byte for byte as
    it was; the same tarball installs where NVML shows no GPU."""
    argv = ["install-cudnn", "--tarball", str(make_tarball("8.9.7")), "--prefix", str(toolkit)]
    before = state(toolkit)
    refused = runner.gpudoctor(*argv, timeout=120, env=gpu_env(NVML_RTX5090))
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    assert "refused: cuDNN 8.9.7 with CUDA 12.4 supports compute capability" in refused.stderr
    assert "NVIDIA GeForce RTX 5090 (sm_120) is outside it" in refused.stderr
    assert state(toolkit) == before
    done = runner.gpudoctor(*argv, "--dry-run", timeout=120, env=gpu_env())
    assert done.returncode == 0, done.stderr
    assert state(toolkit) == before


def test_forced_past_the_gpu_range_installs_with_a_note(
        toolkit: Path, make_tarball: MakeTarball) -> None:
    result = install_cudnn(make_tarball("8.9.7"), toolkit, dry_run=True, force=True, gpus=RTX5090)
    assert result.error is None and result.plan is not None
    assert any("sm_120" in n and "(--force)" in n for n in result.plan.notes), result.plan.notes


def test_a_supported_gpu_passes_silently(toolkit: Path, make_tarball: MakeTarball) -> None:
    result = install_cudnn(make_tarball("8.9.7"), toolkit, dry_run=True, gpus=H100)
    assert result.error is None and result.plan is not None
    assert not [n for n in result.plan.notes if "support" in n], result.plan.notes


@pytest.mark.slow
@pytest.mark.parametrize(("cuda", "refused"), [("12.4.1", True), ("12.8.1", False)])
def test_the_toolkit_picks_the_range_of_a_cuda12_tarball(
        toolkit: Path, make_tarball: MakeTarball, cuda: str, refused: bool) -> None:
    """cuDNN 9.8.0's one `cuda12` tarball supports Blackwell only with CUDA 12.8+ (the matrix
    lists sm_120 for its 12.8-12.9 builds, not for 12.0-12.6): the prefix's toolkit decides."""
    tables = load_tables()
    assert tables.cudnn_release("9.8.0") is not None
    row = tables.cudnn_gpu_support("9.8.0", cuda)
    assert row is not None and row.supports("12.0") is not refused
    result = install_cudnn(make_tarball("9.8.0"), toolkit_at(toolkit, cuda), dry_run=True,
                           gpus=RTX5090)
    assert (result.error is not None) is refused, result.error
    if refused:
        assert result.error is not None and "with CUDA 12.4 " in result.error.message


@pytest.mark.slow
def test_every_test_names_the_gpus_it_installs_for() -> None:
    """Called in-process, the action reads the GPUs from this machine's NVML unless told: a
    test that leaves `gpus=` out would pass in CI and fail on a Blackwell workstation (cuDNN 8
    stops at sm_90). Children get `gpu_env` (tests/cudnn_kit.py) instead."""
    tests = Path(__file__).resolve().parents[1]
    calls = [(path, node) for path in sorted(tests.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "install_cudnn"]
    assert len(calls) > 30  # the walk finds them
    unnamed = [f"{path.relative_to(tests)}:{node.lineno}" for path, node in calls
               if not any(k.arg in ("gpus", None) for k in node.keywords)]  # None: **kwargs
    assert not unnamed, f"install_cudnn(...) without gpus=: {unnamed}"


# --------------------------------------------------------------------------- free space


def test_the_df_line(tmp_path: Path) -> None:
    prefix = hostile_toolkit(tmp_path, NEWLINE)
    space = Space(prefix)
    with pytest.raises(Refused) as caught:
        space.take("cudnn/lib/libcudnn.so.9.1.0", space.free + (1 << 30))
    fix = caught.value.error.fix or ""
    assert shlex.split(between(fix, "(", ")")) == ["df", "-h", "--", str(prefix)]

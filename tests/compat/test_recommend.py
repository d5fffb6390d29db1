"""gpudoctor.compat.recommend: the wheel and tarball picked for recorded and hand-built
machines (`gpudoctor recommend` itself: tests/cli/ and tests/test_recommend.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from packaging.version import Version

import tests.checks.envbuilder as B
from gpudoctor.compat import Tables
from gpudoctor.compat.advice import torch_advice
from gpudoctor.compat.query import VERIFIED
from gpudoctor.compat.recommend import recommend
from gpudoctor.model import (
    Environment,
    LibcudaFacts,
    Reason,
    TorchFacts,
    TorchStatic,
    Unavailable,
)
from gpudoctor.snapshot import loads
from gpudoctor.versions import arch_list_supports

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "envs"


def snapshot(name: str) -> Environment:
    return loads((FIXTURES / f"{name}.json").read_text())


def k80_machine(**kw: object) -> Environment:
    k80 = dataclasses.replace(B.gpu("H100"), name="Tesla K80", compute_capability="3.7")
    base = B.env(nvml=B.nvml("470.82.01", 11040, k80),
                 libcuda=LibcudaFacts("libcuda.so.1", 11040, "470.82.01"),
                 toolkits=B.toolkit("11.4"), torch=B.torch("1.12.1+cu113", "11.3", (), (), 8302))
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def newest_stable(tables: Tables, tag: str, cc: str | None = None) -> str:
    """The newest release with a non-experimental `tag` wheel (whose arch list the tables
    hold and includes compute capability `cc`, if given)."""
    return [r for r in tables.torch_releases
            if (v := r.variant(tag)) is not None and not v.experimental
            and (cc is None or (v.arch_list is not None
                                and arch_list_supports(v.arch_list, cc)))][-1].version


def newest_with(tables: Tables, tag: str) -> str:
    """The newest release the tables give a `tag` wheel (2.15.0 has only its cu132 one)."""
    return [r for r in tables.torch_releases if r.variant(tag)][-1].version


def test_pascal_gets_the_cu126_wheel(tables: Tables) -> None:
    rec = recommend(snapshot("pascal-gpu-cu130-torch"), tables)
    assert rec.torch is not None
    assert (rec.torch.version, rec.torch.variant) == (newest_with(tables, "cu126"), "cu126")
    assert rec.torch.arch_confirmed and rec.torch.runs == "full"
    # torch is installed: an exact pin that the installed 2.13.0+cu130 does not satisfy, for
    # the interpreter that was diagnosed
    assert rec.torch.command == (f"/usr/bin/python3 -m pip install torch=={rec.torch.version}"
                                 "+cu126 --index-url https://download.pytorch.org/whl/cu126")
    # the installed 2.13.0+cu130 has no sm_61; the same release's cu126 wheel has
    assert rec.installed_fits is False and "sm_61" in (rec.installed_why or "")
    same = rec.torch_installed_release
    assert same is not None and (same.version, same.variant) == ("2.13.0", "cu126")
    # no cuDNN with a CUDA 13 build supports Pascal: say so, name the last that does
    assert rec.cudnn is None
    assert "9.10.2" in rec.cudnn_notes[0] and "sm_61" in rec.cudnn_notes[0]


def test_h100_keeps_cu130(tables: Tables) -> None:
    rec = recommend(snapshot("h100-healthy"), tables)
    # driver 580.65.06 runs CUDA 13.0 in full and 13.2 only by minor-version compatibility,
    # which GD103 warns about: the newest release with a cu130 wheel, not 2.15.0's cu132
    assert rec.torch is not None and rec.torch.runs == "full"
    assert (rec.torch.version, rec.torch.variant) == (newest_stable(tables, "cu130", "9.0"),
                                                      "cu130")
    assert any("cu132 runs here only by minor-version compatibility" in n
               or "only by minor-version compatibility (cu132" in n for n in rec.notes)
    assert rec.installed_fits is True and rec.torch_installed_release is None
    assert rec.cudnn is not None
    # the newest release verified beyond its mere existence on PyPI with a CUDA 13 build
    verified = [r for r in tables.cudnn_releases
                if r.status in VERIFIED and r.supports_cuda("13.0")]
    assert rec.cudnn.version == verified[-1].version
    assert rec.cudnn.tarball == (f"cudnn-linux-x86_64-{rec.cudnn.build}_cuda13-archive.tar.xz")
    assert rec.cudnn.command == (f"gpudoctor install-cudnn --tarball {rec.cudnn.tarball} "
                                 "--prefix /usr/local/cuda")


def test_old_driver_gets_a_wheel_it_runs_in_full(tables: Tables) -> None:
    """Driver 535.104.05 runs 12.x wheels by minor-version compatibility (GD103 warns) and
    CUDA ≤ 12.2 in full: the newest release with a full-feature wheel, and the newer one it
    passed over named with the driver that would run it in full."""
    rec = recommend(snapshot("old-driver-new-torch"), tables)
    assert rec.torch is not None and rec.torch.runs == "full" and rec.torch.arch_confirmed
    assert Version(rec.torch.cuda) <= Version("12.2")
    assert any(f"{newest_stable(tables, 'cu126')} cu126 runs here only by minor-version" in n
               for n in rec.notes)
    assert rec.installed_fits is False and "CUDA 13.0" in (rec.installed_why or "")
    assert rec.cudnn is not None and rec.cudnn.cuda_build == "12"


def test_cpu_torch_on_a_gpu_machine(tables: Tables) -> None:
    rec = recommend(snapshot("cpu-torch-on-gpu-machine"), tables)
    assert rec.installed_fits is False and rec.installed_why == "a CPU-only build"
    assert rec.torch is not None and rec.torch.variant.startswith("cu12")
    assert rec.cudnn is None and "no CUDA toolkit" in rec.cudnn_notes[0]


def test_no_driver_says_why_and_follows_the_toolkit(tables: Tables) -> None:
    rec = recommend(snapshot("no-driver-cuda-torch"), tables)
    assert "GD101" in rec.notes[0] and "CUDA 13.0 toolkit" in rec.notes[0]
    assert rec.installed_fits is None
    # the same line GD402 gives a GPU-less machine: a wheel of the toolkit's CUDA major
    assert rec.torch is not None and rec.torch.runs == "no-driver"
    assert rec.torch.cuda.split(".")[0] == "13"


def test_wsl_uses_the_cuda_version_libcuda_reports(tables: Tables) -> None:
    rec = recommend(snapshot("wsl-libcuda-only"), tables)
    assert rec.driver is None and rec.driver_cuda == "12.8"
    assert rec.gpus[0].compute_capability == "8.6"  # from torch: no NVML here
    assert rec.torch is not None and rec.torch.cuda == "12.6"


def test_kepler_gets_the_last_release_whose_arch_list_has_it(tables: Tables) -> None:
    rec = recommend(k80_machine(), tables)
    assert rec.torch is not None
    # 2.4 and 2.5's cu118 wheels hold sm_37 too (derived from their build script) but bundle
    # cuDNN 9, which dropped Kepler: 2.3.1's (cuDNN 8.7) is the last whose libraries all run
    assert (rec.torch.version, rec.torch.variant) == ("2.3.1", "cu118")
    assert rec.torch.arch_list is not None and arch_list_supports(rec.torch.arch_list, "3.7")
    assert rec.torch.runs == "mvc"
    assert any("too old for torch" in n for n in rec.notes)
    assert rec.cudnn is not None and rec.cudnn.version.startswith("8.")  # cuDNN 9 dropped Kepler


def test_no_gpu_seen_skips_the_arch_check(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000),
                torch=B.torch("2.13.0+cu130", "13.0", (), B.ARCH_CU130, 92000))
    rec = recommend(env, tables)
    assert rec.torch is not None and rec.torch.runs == "full"
    assert (rec.torch.version, rec.torch.variant) == (newest_stable(tables, "cu130"), "cu130")
    assert any("arch lists were not checked" in n for n in rec.notes)


def test_garbage_compute_capability_is_not_a_crash(tables: Tables) -> None:
    odd = dataclasses.replace(B.gpu("H100"), compute_capability="?")
    env = B.env(nvml=B.nvml("580.65.06", 13000, odd),
                torch=B.torch("2.13.0+cu130", "13.0", (), B.ARCH_CU130, 92000))
    rec = recommend(env, tables)
    assert rec.torch is not None and rec.installed_fits is None


def test_every_gpu_must_be_in_the_arch_list(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("H100", 0), B.gpu("GTX1080", 1)))
    rec = recommend(env, tables)
    assert rec.torch is not None and rec.torch.variant == "cu126"


def test_torch_not_installed_needs_no_force_reinstall(tables: Tables) -> None:
    env = B.env(torch=Unavailable(Reason.NOT_INSTALLED, "torch is not installed"))
    rec = recommend(env, tables)
    assert rec.installed_torch is None and rec.torch is not None
    # no torch to name the interpreter: `python`, and the documented (unforced) line
    assert rec.torch.command.startswith("python -m pip install torch==")
    assert "--force-reinstall" not in rec.torch.command


def test_newer_release_with_unknown_arch_list_is_named(tables: Tables) -> None:
    rec = recommend(k80_machine(nvml=B.nvml("470.82.01", 11040, B.gpu("RTX3090"))), tables)
    assert rec.torch is not None  # 2.5.1 cu118: the newest whose arch list the tables hold
    assert (rec.torch.version, rec.torch.variant) == ("2.5.1", "cu118")
    note = next(n for n in rec.notes if "arch lists are not in the tables" in n)
    assert "torch==2.7.1+cu118 --index-url https://download.pytorch.org/whl/cu118" in note


def test_only_unknown_arch_lists_fit_then_the_pick_says_so(tables: Tables) -> None:
    b200 = dataclasses.replace(B.gpu("H100"), name="NVIDIA B200", compute_capability="10.0")
    rec = recommend(k80_machine(nvml=B.nvml("470.82.01", 11040, b200)), tables)
    assert rec.torch is not None and rec.torch.arch_list is None
    assert not rec.torch.arch_confirmed
    assert any("may not include sm_100" in n for n in rec.notes)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_the_torch_pick_is_the_advice(path: Path, tables: Tables) -> None:
    """recommend keeps its shape but no selection of its own: pick, line and notes are
    gpudoctor.compat.advice's, the source of every install line the checks print."""
    env = loads(path.read_text())
    rec, advice = recommend(env, tables), torch_advice(env, tables)
    assert (rec.torch, rec.torch_installed_release, rec.notes) == (
        advice.pick, advice.same_release, advice.why)
    assert (rec.gpus, rec.installed_torch, rec.installed_fits) == (
        advice.gpus, advice.installed, advice.installed_fits)


def test_installed_companions_are_pinned(tables: Tables) -> None:
    env = snapshot("pascal-gpu-cu130-torch")
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic)
    static = dataclasses.replace(t.static, companions=(("torchvision", "0.28.0+cu130"),))
    rec = recommend(dataclasses.replace(env, torch=dataclasses.replace(t, static=static)), tables)
    assert rec.torch is not None
    rel = tables.torch_release(rec.torch.version)
    assert rel is not None and rel.torchvision is not None
    assert f"torchvision=={rel.torchvision}+cu126" in rec.torch.command.split()
    assert f"torch=={rel.version}+cu126" in rec.torch.command.split()


def blackwell_on(toolkit: str) -> Environment:
    """An RTX 5090 (sm_120) on driver 580, with a CUDA `toolkit` in /usr/local/cuda."""
    return B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("RTX5090")), toolkits=B.toolkit(toolkit),
                 torch=B.torch("2.13.0+cu130", "13.0", ("RTX5090",), B.ARCH_CU130, 92000))


def test_cudnn_pick_honours_the_range_of_the_build_for_the_toolkit(tables: Tables) -> None:
    """cuDNN 9.7+ supports Blackwell only in its builds for CUDA 12.8+: with a 12.4 toolkit no
    cuDNN build supports an sm_120 GPU, and the note names the builds that do."""
    rec = recommend(blackwell_on("12.4"), tables)
    assert rec.cudnn is None
    note = rec.cudnn_notes[0]
    assert "CUDA 12.4" in note and "sm_120" in note and "12.8-12.9" in note, note
    newest = next(r for r in reversed(tables.cudnn_releases) if r.status in VERIFIED
                  and not tables.known_bad_cudnn(r.version)
                  and any(s.supports("12.0") for s in tables.cudnn_support_rows(r.version)))
    assert f"is {newest.version} " in note


def test_cudnn_pick_for_blackwell_on_cuda_12_8(tables: Tables) -> None:
    rec = recommend(blackwell_on("12.8"), tables)
    assert rec.cudnn is not None and rec.cudnn.cuda_build == "12"
    support = tables.cudnn_gpu_support(rec.cudnn.version, "12.8")
    assert support is not None and support.supports("12.0") and support.max_cc != "9.0"
    # every newer verified release with a CUDA 12.8 build was passed over only for a reason
    for rel in tables.cudnn_for_cuda("12.8"):
        if rel.version == rec.cudnn.version:
            break
        row = tables.cudnn_gpu_support(rel.version, "12.8")
        assert (rel.status not in VERIFIED or tables.known_bad_cudnn(rel.version)
                or row is None or not row.supports("12.0")), rel.version


def test_cudnn_pick_refuses_a_gpu_above_the_release_range(tables: Tables) -> None:
    """A Blackwell GPU with a CUDA 11.8 toolkit: cuDNN 8.x and the CUDA 11 builds of 9.x stop
    at sm_90, so nothing is picked rather than a release that does not support the GPU."""
    rec = recommend(blackwell_on("11.8"), tables)
    assert rec.cudnn is None and "sm_120" in rec.cudnn_notes[0]


def test_cubins_beat_an_old_ptx_for_a_newer_gpu(tables: Tables) -> None:
    """https://github.com/pytorch/pytorch/issues/57922: an A100 (sm_80) on driver 450 (CUDA
    11.0), Python 3.8. torch 1.5.1+cu102 reaches sm_80 only by JIT-compiling compute_37 PTX
    with CUDA 10.2's libraries; torch 1.7.1+cu110 is built by a CUDA that compiles sm_80.
    Before, the PTX-only list counted as confirmed and the pick was torch 1.5.1."""
    name = "r1-016.txt"
    path = TESTS / "fixtures" / "heldout" / "round3" / "reports-A"
    from gpudoctor.reports.read import read_reports
    rec = recommend(read_reports([(name, (path / name).read_text(encoding="utf-8"))]), tables)
    assert rec.torch is not None
    assert (rec.torch.version, rec.torch.variant) == ("1.7.1", "cu110"), rec.torch
    # the installed 1.8.1+cu102: the PyPI build's list cannot tell for the same-named other one
    assert rec.installed_fits is None and rec.installed_why
    assert "download.pytorch.org" in rec.installed_why


def test_an_arm_machine_gets_no_x86_64_wheel_nor_tarball(tables: Tables) -> None:
    """The tables' wheels, their arch lists and cuDNN's tarball names are Linux x86_64's. On
    a machine that states aarch64, or whose GPU NVIDIA builds into Arm machines only (round
    18's r40-018 named a Jetson Thor, and got torch 1.5.1+cu102 by PTX: no such aarch64
    wheel exists), recommend names none and says why; an x86_64 machine still gets both."""
    arm = B.env(host=B.host(machine="aarch64"))
    rec = recommend(arm, tables)
    assert rec.torch is None and rec.cudnn is None
    assert any("aarch64" in n and "x86_64 wheels" in n for n in rec.notes)
    assert any("aarch64" in n for n in rec.cudnn_notes)
    grace = dataclasses.replace(B.gpu("H100"), name="NVIDIA GH200 480GB", compute_capability="9.0")
    unstated = B.env(host=B.host(machine=Unavailable(Reason.NOT_REPORTED, "not in the report")),
                     nvml=B.nvml("580.65.06", 13000, grace))
    assert recommend(unstated, tables).torch is None
    assert any("the NVIDIA GH200 480GB is built into Arm machines only" in n
               for n in recommend(unstated, tables).notes)
    x86 = recommend(B.env(), tables)
    assert x86.torch is not None and x86.cudnn is not None

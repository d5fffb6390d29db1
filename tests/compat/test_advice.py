"""gpudoctor.compat.advice: the one torch install line, for hand-built machines, every recorded
snapshot and every real report; and the one rule that keeps a line from being a no-op."""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from gpudoctor import views as V
from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables
from gpudoctor.compat.advice import (
    UNKNOWN_PYTHON,
    TorchAdvice,
    compute_capabilities,
    install_fix,
    shadowing_torch,
    torch_advice,
)
from gpudoctor.compat.pick import GpuSeen
from gpudoctor.compat.recommend import recommend
from gpudoctor.model import (
    Environment,
    LibcudaFacts,
    Reason,
    Status,
    TorchDevice,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from gpudoctor.snapshot import loads
from gpudoctor.versions import arch_list_supports

TESTS = Path(__file__).resolve().parents[1]
ENVS = TESTS / "fixtures" / "envs"
REPORTS = TESTS / "fixtures" / "reports"
HELDOUT = TESTS / "fixtures" / "heldout"
import tests.advice_kit as K  # noqa: E402
import tests.checks.envbuilder as B  # noqa: E402

INDEX = "https://download.pytorch.org/whl/"
# sm_* entries of the torch 2.5.1+cu124 wheel's torch.cuda.get_arch_list()
ARCH_CU124 = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
NO_DRIVER = {"nvml": B.NO_NVML, "libcuda": B.NO_LIBCUDA,
             "host": B.host(dev_nodes=())}


def gpu(name: str, cc: str, index: int = 0) -> object:
    return dataclasses.replace(B.gpu("H100", index), name=name, compute_capability=cc)


def with_static(env: Environment, **kw: object) -> Environment:
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic)
    return dataclasses.replace(env, torch=dataclasses.replace(
        t, static=dataclasses.replace(t.static, **kw)))  # type: ignore[arg-type]


def with_runtime(env: Environment, **kw: object) -> Environment:
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.runtime, TorchRuntime)
    return dataclasses.replace(env, torch=dataclasses.replace(
        t, runtime=dataclasses.replace(t.runtime, **kw)))  # type: ignore[arg-type]


def newest_with(tables: Tables, tag: str, *companions: str) -> str:
    """The newest verified-enough release with a `tag` wheel (and pairings for `companions`)."""
    rows = [r for r in tables.torch_releases if r.status != "unverified" and r.variant(tag)
            and not r.variant(tag).experimental  # type: ignore[union-attr]
            and all(getattr(r, c) for c in companions)]
    return max(rows, key=lambda r: Version(r.version)).version


def torch_pin(command: str) -> str:
    """The `torch==...` requirement of an install line."""
    return next(w for w in shlex.split(command) if w.startswith("torch=="))


def assert_not_a_noop(advice: TorchAdvice, pip_sees: str | None = None) -> None:
    """pip keeps an installed torch that satisfies the line's pin: such a line must force.
    `pip_sees`: the installed distribution's metadata version, which pip compares (PyPI's
    default wheel is "2.11.0" to pip while torch calls itself 2.11.0+cu130); else the version
    the advice shows."""
    assert advice.pick is not None
    installed = pip_sees or advice.installed
    if installed is None:
        return
    pin = torch_pin(advice.pick.command)[len("torch=="):]
    if SpecifierSet(f"=={pin}").contains(installed.split(" ")[0], prereleases=True):
        assert "--force-reinstall" in advice.pick.command, advice.pick.command


# --------------------------------------------------------------------------- hand-built machines


def test_gtx1080_with_a_cu130_torch_gets_the_cu126_line(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce GTX 1080", "6.1")),
                torch=B.torch("2.13.0+cu130", "13.0", ("GTX1080",), B.ARCH_CU130, 92000))
    a = torch_advice(env, tables)
    assert a.pick is not None and a.pick.variant == "cu126"
    assert a.pick.arch_list is not None and arch_list_supports(a.pick.arch_list, "6.1")
    version = newest_with(tables, "cu126")
    assert a.command == (f"/usr/bin/python3 -m pip install torch=={version}+cu126 "
                         f"--index-url {INDEX}cu126")
    assert a.installed_fits is False and "sm_61" in (a.installed_why or "")
    assert_not_a_noop(a)


def test_a_build_without_the_gpus_arch_does_not_fit_whatever_the_driver(
        tables: Tables) -> None:
    """https://github.com/Comfy-Org/ComfyUI/issues/9705 (round 13's r30-002): ComfyUI's system
    information names torch 2.8.0+cu129 and a GTX 1070, not the driver's version. Which CUDA the
    driver runs is unknown, but the build's arch list (sm_75 and newer) decides: it does not
    fit; with the driver unknown and the list holding the GPU, whether it fits stays open."""
    path = HELDOUT / "round13" / "reports-L" / "r30-002.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    a = torch_advice(env, tables)
    assert a.installed_fits is False and "sm_61" in (a.installed_why or "")
    fits = dataclasses.replace(env, torch=B.torch("2.8.0+cu126", "12.6", (),
                                                  ("sm_50", "sm_60", "sm_70"), 91002))
    b = torch_advice(fits, tables)
    assert b.installed_fits is None and b.installed_why == "the driver's version is not known"


@pytest.mark.parametrize(("name", "fits", "why"), [
    # pytorch/pytorch#33135 (round 3's r1-051): torch 1.4.0 "CUDA used to build PyTorch:
    # 10.0.130" on driver 410.79 (CUDA 10.0): 1.4.0's PyPI default is cu101, not this build; the
    # driver runs its CUDA 10.0, its arch list is not in the tables: not "its CUDA 10.1"
    ("reports-A/r1-051.txt", None, "its variant is not in the tables"),
    # pytorch/pytorch#29301 (r1-018): torch 1.3.0 built for CUDA 9.2 on driver 391.74 (9.1): too
    # old for the build's own CUDA
    ("reports-B/r1-018.md", False, "the driver does not run its CUDA 9.2"),
])
def test_a_build_is_judged_by_its_own_cuda_not_its_releases_default(
        name: str, fits: bool | None, why: str, tables: Tables) -> None:
    path = HELDOUT / "round3" / name
    a = torch_advice(read_reports([(path.name, path.read_text(encoding="utf-8"))]), tables)
    assert (a.installed_fits, a.installed_why) == (fits, why)


def test_gd402_for_a_cpu_torch_on_a_gtx1080_names_the_cu126_line(tables: Tables) -> None:
    """The disagreement this module ends: GD402 once said cu132 here, recommend cu126."""
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce GTX 1080", "6.1")),
                torch=B.torch("2.13.0+cpu", None))
    fix = {r.check_id: r.finding.fix for r in run_checks(env, tables).results}["GD402"]
    rec = recommend(env, tables)
    assert rec.torch is not None and rec.torch.variant == "cu126"
    assert fix == rec.torch.command


def test_rtx5090_with_torch_2_5_gets_a_cuda_12_8_or_newer_release(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce RTX 5090", "12.0")),
                torch=B.torch("2.5.1+cu124", "12.4", ("H100",), ARCH_CU124, 90100))
    env = with_runtime(env, devices=(TorchDevice(0, "NVIDIA GeForce RTX 5090", "12.0", 2**35),))
    a = torch_advice(env, tables)
    assert a.pick is not None and Version(a.pick.cuda) >= Version("12.8")
    assert a.pick.arch_confirmed and arch_list_supports(a.pick.arch_list or (), "12.0")
    assert a.installed_fits is False and "sm_120" in (a.installed_why or "")
    # another build is installed: the exact local pin replaces it, no force needed
    assert torch_pin(a.pick.command) == f"torch=={a.pick.version}+{a.pick.variant}"
    assert "--force-reinstall" not in a.pick.command
    assert_not_a_noop(a)


def test_no_driver_follows_the_toolkit(tables: Tables) -> None:
    env = B.env(**NO_DRIVER, toolkits=B.toolkit("12.4"), torch=B.torch("2.13.0+cpu", None))
    a = torch_advice(env, tables)
    assert a.pick is not None and a.pick.runs == "no-driver"
    # the toolkit's major (cpp_extension refuses another), not newer where the release has one
    cuda = Version(a.pick.cuda)
    rel = tables.torch_release(a.pick.version)
    assert rel is not None and a.pick.version == newest_with(tables, a.pick.variant)
    older = [v for v in rel.variants if Version(v.cuda).major == 12
             and Version(v.cuda) <= Version("12.4") and not v.experimental]
    assert cuda.major == 12 and (cuda <= Version("12.4") or not older)
    assert "GD101" in a.why[0] and "12.4" in a.why[0]
    assert a.installed_fits is False and a.installed_why == "a CPU-only build"


def test_no_driver_no_toolkit_takes_the_pypi_default(tables: Tables) -> None:
    env = B.env(**NO_DRIVER, toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"),
                torch=Unavailable(Reason.NOT_INSTALLED, "PyTorch is not installed"))
    a = torch_advice(env, tables)
    assert a.pick is not None
    rel = tables.torch_release(a.pick.version)
    assert rel is not None and a.pick.variant == rel.pypi_default
    # torch is not installed: the documented fresh line, which names no interpreter it cannot
    assert a.command == (f"python -m pip install torch=={a.pick.version} "
                         f"--index-url {INDEX}{a.pick.variant}")
    assert UNKNOWN_PYTHON in a.fix


def test_wsl_judges_torchs_devices_against_what_libcuda_reports(tables: Tables) -> None:
    env = B.env(nvml=B.NO_NVML, libcuda=LibcudaFacts("libcuda.so.1", 12080, Unavailable(
        Reason.NOT_INSTALLED, "/proc/driver/nvidia/version is not readable")),
        toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"),
        torch=B.torch("2.7.1+cu128", "12.8", ("RTX3090",), B.ARCH_CU128, 90701))
    a = torch_advice(env, tables)
    assert [g.compute_capability for g in a.gpus] == ["8.6"]
    assert a.pick is not None and Version(a.pick.cuda) <= Version("12.8")
    assert a.pick.runs == "full" and a.installed_fits is True


def test_a_report_names_no_interpreter(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce GTX 1080", "6.1")),
                torch=B.torch("2.13.0+cu130", "13.0", ("GTX1080",), B.ARCH_CU130, 92000))
    t = env.torch
    assert isinstance(t, TorchFacts)
    unnamed = dataclasses.replace(t, python=Unavailable(Reason.NOT_REPORTED, "not in the report"))
    env = dataclasses.replace(env, sources=("collect_env in issue-1.md",), torch=unnamed)
    a = torch_advice(env, tables)
    assert a.python is None and a.command is not None
    assert a.command.startswith("python -m pip install torch==")
    assert a.fix == f"{a.command} ({UNKNOWN_PYTHON})"


def test_installed_torchvision_is_pinned_alongside(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce GTX 1080", "6.1")),
                torch=B.torch("2.13.0+cu130", "13.0", ("GTX1080",), B.ARCH_CU130, 92000))
    env = with_static(env, companions=(("torchvision", "0.28.0+cu130"),))
    a = torch_advice(env, tables)
    version = newest_with(tables, "cu126", "torchvision")
    rel = tables.torch_release(version)
    assert a.pick is not None and rel is not None and rel.torchvision
    assert a.command == (f"/usr/bin/python3 -m pip install torch=={version}+cu126 "
                         f"torchvision=={rel.torchvision}+cu126 --index-url {INDEX}cu126")
    if version != newest_with(tables, "cu126"):  # a newer torch has no torchvision paired
        assert any("pair no torchvision with the newest torch" in w for w in a.why)


def test_installed_torchaudio_keeps_to_releases_that_have_one(tables: Tables) -> None:
    env = B.env(torch=B.torch("2.13.0+cu130", "13.0", ("H100",), B.ARCH_CU130, 92000))
    env = with_static(env, companions=(("torchvision", "0.28.0"), ("torchaudio", "2.11.0")))
    a = torch_advice(env, tables)
    rel = tables.torch_release(a.pick.version) if a.pick else None
    assert rel is not None and rel.torchvision and rel.torchaudio
    words = shlex.split(a.command or "")
    assert f"torchvision=={rel.torchvision}+{a.pick.variant}" in words  # type: ignore[union-attr]
    assert f"torchaudio=={rel.torchaudio}+{a.pick.variant}" in words  # type: ignore[union-attr]


def test_the_same_build_is_forced_never_a_noop(tables: Tables) -> None:
    # the newest release's newest wheel (2.15.0+cu132), on a driver that runs it in full
    version = newest_with(tables, "cu132")
    env = B.env(nvml=B.nvml("595.45.04", 13020, gpu("NVIDIA H100 80GB HBM3", "9.0")),
                torch=B.torch(f"{version}+cu132", "13.2", ("H100",), B.ARCH_CU130, 92600))
    a = torch_advice(env, tables)
    assert a.pick is not None and (a.pick.version, a.pick.variant) == (version, "cu132")
    assert a.command == (f"/usr/bin/python3 -m pip install --force-reinstall "
                         f"torch=={version}+cu132 --index-url {INDEX}cu132")
    assert any("already installed" in w for w in a.why)
    assert_not_a_noop(a)


def test_a_broken_cudnn_is_mended_by_force(tables: Tables) -> None:
    env = with_runtime(B.env(), cudnn_version=None)
    a = torch_advice(env, tables)
    assert a.pick is not None and "--force-reinstall" in a.pick.command
    assert any("no cuDNN" in w for w in a.why)


def test_old_releases_follow_their_documented_lines(tables: Tables) -> None:
    """1.7.1 (find-links): the PyPI default cu102 has no local label, so a cu101 build
    installed satisfies `torch==1.7.1` and the line must force; a fresh install takes PyPI."""
    old = dataclasses.replace(tables, torch_releases=tuple(
        r for r in tables.torch_releases if r.version == "1.7.1"))
    machine = {"nvml": B.nvml("440.33.01", 10020), "toolkits": B.toolkit("10.2"),
               "libcuda": LibcudaFacts("libcuda.so.1", 10020, "440.33.01")}
    env = B.env(**machine, torch=B.torch("1.7.1+cu101", "10.1", (), ("sm_60", "sm_75")))
    env = with_static(env, companions=(("torchvision", "0.8.2+cu101"), ("torchaudio", "0.7.2")))
    env = dataclasses.replace(env, torch=dataclasses.replace(  # 1.7.1 has wheels for 3.6-3.9
        env.torch, python_version="3.8.10"))  # type: ignore[type-var]
    a = torch_advice(env, old)
    assert a.command == ("/usr/bin/python3 -m pip install --force-reinstall torch==1.7.1 "
                         "torchvision==0.8.2 torchaudio==0.7.2")
    assert_not_a_noop(a)
    fresh = torch_advice(B.env(**machine, torch=Unavailable(Reason.NOT_INSTALLED, "none")), old)
    assert fresh.command == "python -m pip install torch==1.7.1"


def test_rocm_without_nvidia_gets_no_cuda_line(tables: Tables) -> None:
    env = with_runtime(B.env(**NO_DRIVER, torch=B.torch("2.9.1+rocm6.4", None)),
                       hip="6.4.43482")
    a = torch_advice(env, tables)
    assert a.pick is None and a.command is None and "ROCm" in a.fix and "pip" not in a.fix


def test_nothing_probed_points_at_recommend(tables: Tables) -> None:
    """`smoke-test` probes only the smoke fact: no line is guessed from nothing."""
    skipped = Unavailable(Reason.SKIPPED, "not probed")
    a = torch_advice(B.env(nvml=skipped, libcuda=skipped, torch=skipped), tables)
    assert a.pick is None and "gpudoctor recommend" in a.fix and "pip" not in a.fix


# --------------------------------------------------------------------------- check == recommend


# a torch install line, however written: "pip install --force-reinstall torch==...", "python -m
# pip install torch --index-url ..." (cuDNN's nvidia-cudnn-cu12 lines are not torch's)
TORCH_LINE = re.compile(r"\bpip3? install(?: -[-\w]+)* torch(?![-\w])")


def _environments() -> list[tuple[str, Environment]]:
    found = [(p.name, loads(p.read_text())) for p in sorted(ENVS.glob("*.json"))]
    try:
        from gpudoctor.reports.read import ReportError, read_reports  # type: ignore[attr-defined]
    except ImportError:
        return found  # the report readers are not there yet
    for path in sorted(REPORTS.rglob("*")) if REPORTS.is_dir() else ():
        if path.is_file() and path.suffix not in (".toml", ".py") and path.name != "README.md":
            try:
                found.append((path.name, read_reports([(path.name, path.read_text())])))
            except (ReportError, UnicodeDecodeError):
                continue
    return found


@pytest.mark.parametrize("env", [pytest.param(env, id=name) for name, env in _environments()])
def test_every_install_line_is_recommends(env: Environment, tables: Tables) -> None:
    rec = recommend(env, tables)
    command = rec.torch.command if rec.torch else None
    for check_id, fix in install_fixes(env, tables):
        assert command is not None and command in fix, (check_id, fix, command)
        assert not TORCH_LINE.search(fix.replace(command, "")), (check_id, fix)
    if rec.torch is not None:
        advice = torch_advice(env, tables)
        assert advice.command == command
        static = V.torch_static(env)
        assert_not_a_noop(advice, static.version if static else None)


def install_fixes(env: Environment, tables: Tables) -> list[tuple[str, str]]:
    """(check id, fix) of every finding whose fix holds a torch install line."""
    return [(r.check_id, r.finding.fix) for r in run_checks(env, tables).results
            if r.finding.fix and TORCH_LINE.search(r.finding.fix)]


@pytest.mark.slow
def test_the_fixtures_exercise_the_agreement(tables: Tables) -> None:
    """The recorded machines make GD401, GD402, GD103 and GD404 print install lines (so the
    test above compares something), and GD404's for the GTX 1080 is recommend's cu126 line."""
    seen = {check_id for _, env in _environments() for check_id, _ in install_fixes(env, tables)}
    assert {"GD401", "GD402", "GD103", "GD404"} <= seen, seen
    pascal = loads((ENVS / "pascal-gpu-cu130-torch.json").read_text())
    rec = recommend(pascal, tables)
    assert rec.torch is not None and rec.torch.variant == "cu126"
    assert dict(install_fixes(pascal, tables))["GD404"].endswith(rec.torch.command)


# --------------------------------------------------------------------------- the pick's rules


def follow_wheel(env: Environment, tables: Tables) -> dict[str, Status]:
    """The verdicts after installing the advised wheel (tests/advice_kit.py)."""
    a = torch_advice(env, tables)
    assert a.pick is not None
    after = K.with_wheel(env, tables, a.pick)
    return {r.check_id: r.finding.status for r in run_checks(after, tables).results}


def test_a_healthy_h100_on_driver_580_keeps_a_wheel_it_runs_in_full(tables: Tables) -> None:
    """Driver 580.65.06 runs CUDA 13.0 in full and 13.2 only by minor-version compatibility:
    the pick is a cu130 wheel, not 2.15.0's cu132, after which GD103 would warn and a
    `--strict` job exit 1 (what `recommend` once said)."""
    env = loads((ENVS / "h100-healthy.json").read_text())
    a = torch_advice(env, tables)
    assert a.pick is not None and a.pick.variant == "cu130" and a.pick.runs == "full"
    assert follow_wheel(env, tables)["GD103"] is Status.PASS


def test_driver_550_gets_a_line_gd103_does_not_warn_about(tables: Tables) -> None:
    """Driver 550.54.14 runs CUDA ≤ 12.4 in full, 12.6 by minor-version compatibility only."""
    env = B.env(nvml=B.nvml("550.54.14", 12040, gpu("NVIDIA GeForce RTX 3090", "8.6")),
                libcuda=LibcudaFacts("libcuda.so.1", 12040, "550.54.14"),
                torch=B.torch("2.13.0+cpu", None))
    a = torch_advice(env, tables)
    assert a.pick is not None and a.pick.runs == "full", a.why
    assert Version(a.pick.cuda) <= Version("12.4")
    after = follow_wheel(env, tables)
    assert after["GD103"] is Status.PASS and after["GD402"] is Status.PASS
    # and the newer wheel it passed over is named, with the driver that runs it in full
    assert any("runs here only by minor-version compatibility" in w for w in a.why)


def test_python_3_10_is_never_offered_a_release_without_its_wheels(tables: Tables) -> None:
    """torch 2.15.0 has wheels for Python 3.11 and newer: Ubuntu 22.04's python3 (3.10) gets
    the newest release that has a 3.10 wheel, even on a driver that runs 2.15.0 in full."""
    env = B.env(nvml=B.nvml("595.45.04", 13020, gpu("NVIDIA H100 80GB HBM3", "9.0")),
                torch=dataclasses.replace(B.torch("2.13.0+cu130", "13.0", ("H100",),
                                                  B.ARCH_CU130, 92000),
                                          python_version="3.10.12"))
    a = torch_advice(env, tables)
    assert a.pick is not None
    rel = tables.torch_release(a.pick.version)
    assert rel is not None and rel.python is not None and "3.10" in rel.python
    newest = tables.newest_torch()
    if newest.python is not None and "3.10" not in newest.python:
        assert a.pick.version != newest.version
        assert any(f"torch {newest.version} has wheels for Python" in w for w in a.why)


def test_a_real_report_gets_a_wheel_for_its_python(tables: Tables) -> None:
    """https://github.com/vllm-project/vllm (the corpus file's source): Python 3.10.12 on
    Ubuntu 22.04, an RTX 4090, driver 535: a release with cp310 wheels, run in full."""
    name = "collect_env-rtx4090-cu121-driver535-compat.txt"
    from gpudoctor.reports.read import read_reports

    env = read_reports([(name, (REPORTS / name).read_text(encoding="utf-8"))])
    a = torch_advice(env, tables)
    assert a.pick is not None and a.pick.runs == "full"
    rel = tables.torch_release(a.pick.version)
    assert rel is not None and rel.python is not None and "3.10" in rel.python
    assert arch_list_supports(a.pick.arch_list or (), "8.9") or not a.pick.arch_confirmed


def test_a_shadowing_torch_is_named_with_what_to_do() -> None:
    """A torch that imports from a ./torch checkout is not the installed one: the fix says to
    leave the directory, or to install the checkout with the one builder's line."""
    from tests.test_views import torch_at

    site = "/venv/lib/python3.11/site-packages/torch"
    assert shadowing_torch(torch_at(f"{site}/__init__.py", (("2.13.0", site),), "/home/u")) \
        is None
    found = shadowing_torch(torch_at("/home/u/torch/__init__.py", (("2.13.0", site),),
                                     "/home/u"))
    assert found is not None and "./torch, a source checkout" in found.message
    assert "(pip install -e . in the checkout)" in found.fix
    elsewhere = shadowing_torch(torch_at("/opt/copy/torch/__init__.py", (("2.13.0", site),),
                                         "/home/u"))
    assert elsewhere is not None and "remove /opt/copy from PYTHONPATH" in elsewhere.fix


def test_install_fix_is_the_advices_fix(tables: Tables) -> None:
    env = B.env(nvml=B.nvml("580.65.06", 13000, gpu("NVIDIA GeForce GTX 1080", "6.1")))
    assert install_fix(env, tables) == torch_advice(env, tables).fix
    assert "cu126" in install_fix(env, tables)


def test_compute_capabilities_once_each_oldest_first() -> None:
    seen = (GpuSeen("NVIDIA H100", "9.0"), GpuSeen("NVIDIA GeForce RTX 3090", "sm_86"),
            GpuSeen("NVIDIA H100", "9.0"), GpuSeen("NVIDIA B200", "10.0"), GpuSeen("odd", "?"))
    assert compute_capabilities(seen) == ["8.6", "9.0", "10.0"]

"""`gpudoctor.checks.pytorch`: GD401-GD406 on hand-built machines, pasted reports and the real
report corpus.

- GD401 / GD406: PyPI's default wheel (metadata `2.5.1`, `torch.__version__` `2.5.1+cu124`) is
  one copy; a source checkout or a copy on PYTHONPATH shadowing the installed torch is named;
- GD403, one cause counted once: a driver too old for torch's CUDA fails GD103, and GD403 (which
  sees `torch.cuda.is_available()` False for that very reason) skips "… see GD103", keeping
  torch's reason as evidence. GD403 still fails for every other reason, and when the driver's
  state is not known;
- GD404 and the one arch rule (`gpudoctor.versions`): cubins run on the same major, PTX on any
  newer GPU, `a` targets on exactly one compute capability, `f` targets on their family. Arch
  lists are real wheels' (`torch.cuda.get_arch_list()` of the PyPI / download.pytorch.org
  builds, as recorded in compat_tables/torch.toml). Where torch's arch list is not known (a
  report that does not show it, a wheel the tables lack), the arch rule
  (`compat.rules.arch_in_build`) decides where the build's CUDA cannot hold code for a GPU, and
  the finding says the rule decided, with its source; on an empty arch list its reason for
  skipping follows what torch said of CUDA;
- GD405 shows torch's cuDNN version as people write it (92000 → 9.20.0).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    Environment,
    Finding,
    HostFacts,
    LibcudaFacts,
    Reason,
    Status,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import (
    ARCH_CU126,
    ARCH_CU128,
    ARCH_CU130,
    SCENARIOS,
    env,
    finding,
    gpu,
    host,
    not_reported,
    nvml,
    reported_env,
    reported_gpu,
    reported_torch,
    torch,
)
from tests.checks.test_partial_facts import REPORTS as PARTIAL
from tests.checks.test_partial_facts import _findings
from tests.compat.test_machine import reported_torch as stated_torch

TABLES = load_tables()
REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
NVCC = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list"


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def verdicts(env: Environment, tables: Tables) -> dict[str, Any]:
    return {str(r.check_id): r.finding for r in run_checks(env, tables).results}


def gd404(env: Environment) -> Finding:
    return check_gpu_arch.run(env, TABLES)

def with_versions(imported: str, metadata: str) -> Environment:
    """torch whose import says `imported` and whose installed metadata says `metadata`."""
    t = torch(imported, "12.4", ("H100",), cudnn=90100)
    assert isinstance(t.static, TorchStatic)
    loc = t.static.location
    static = dataclasses.replace(t.static, version=metadata, distributions=((metadata, loc),),
                                 cwd="/home/user")
    return env(torch=dataclasses.replace(t, static=static))

def shadowed(where: str, cwd: str, runtime_ok: bool = True) -> TorchFacts:
    """torch imported from `where`, the installed 2.5.1 in site-packages beneath it."""
    t = torch("0.0.0-src", "12.4", ("H100",), cudnn=90100)
    assert isinstance(t.static, TorchStatic)
    static = dataclasses.replace(
        t.static, version="0.0.0-src", location=where, cwd=cwd,
        distributions=(("2.5.1", "/venv/lib/python3.11/site-packages/torch"),))
    runtime = t.runtime if runtime_ok else Unavailable(
        Reason.ERROR, "`import torch` failed: ModuleNotFoundError: No module named "
        "'torch._C'", "Traceback …")
    return dataclasses.replace(t, static=static, runtime=runtime)

def with_runtime(env: Environment, **changes: object) -> Environment:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    rt = dataclasses.replace(env.torch.runtime, **changes)  # type: ignore[arg-type]
    return dataclasses.replace(env, torch=dataclasses.replace(env.torch, runtime=rt))


# -------------------------------------- GD401 / GD406: which torch is imported


@pytest.mark.parametrize(
    ("imported", "metadata", "status"),
    [("2.5.1+cu124", "2.5.1", Status.PASS),  # PyPI's default wheel: one copy
     ("2.5.1", "2.5.1+cu124", Status.PASS),
     ("2.5.1+cu124", "2.5.1+cu124", Status.PASS),
     ("2.5.1+cu124", "2.4.0", Status.WARN),  # a real difference
     ("2.5.1+cpu", "2.5.1+cu124", Status.WARN),
     ("2.5.1+cu124", "2.5.1.post1", Status.WARN)],
)
def test_local_version_missing_on_one_side_is_one_copy(imported: str, metadata: str,
                                                       status: Status) -> None:
    f = finding(with_versions(imported, metadata), "GD406")
    assert f.status is status, f.message
    if status is Status.WARN:
        assert imported in f.message and metadata in f.message


def test_snapshot_without_the_new_facts_still_compares_versions() -> None:
    # a snapshot from before distributions/cwd were recorded: versions alone decide
    t = torch("2.5.1+cu124", "12.4", ("H100",), cudnn=90100)
    assert isinstance(t.static, TorchStatic)
    old = dataclasses.replace(t, static=dataclasses.replace(t.static, version="2.5.1"))
    assert finding(env(torch=old), "GD406").status is Status.PASS
    old = dataclasses.replace(t, static=dataclasses.replace(t.static, version="2.4.0"))
    assert finding(env(torch=old), "GD406").status is Status.WARN


def test_source_checkout_in_the_working_directory_is_named() -> None:
    f = finding(env(torch=shadowed("/src/pytorch/torch", "/src/pytorch")), "GD406")
    assert f.status is Status.WARN
    assert f.message.startswith("torch imports from ./torch, a source checkout")
    assert "/src/pytorch/torch" in f.message and "installed torch 2.5.1" in f.message
    assert (f.fix or "").startswith("cd to another directory")


def test_a_source_checkout_that_fails_to_import_is_the_cause_not_a_reinstall() -> None:
    e = env(torch=shadowed("/src/pytorch/torch", "/src/pytorch", runtime_ok=False))
    f = finding(e, "GD401")
    assert f.status is Status.FAIL
    assert "./torch" in f.message
    assert (f.fix or "").startswith("cd to another directory")
    assert "unknown" not in (f.fix or "")
    assert finding(e, "GD406").status is Status.SKIP  # one cause, told once


def test_reinstall_line_never_pins_an_unknown_version() -> None:
    t = torch("2.5.1", "12.4")
    assert isinstance(t.static, TorchStatic)
    static = dataclasses.replace(t.static, version="unknown (no package metadata)")
    crash = Unavailable(Reason.CRASHED, "`import torch` crashed the interpreter (SIGSEGV)")
    f = finding(env(torch=dataclasses.replace(t, static=static, runtime=crash)), "GD401")
    assert "pip install" in (f.fix or "")
    assert "unknown" not in (f.fix or "")


def test_copy_on_pythonpath_is_named() -> None:
    f = finding(env(torch=shadowed("/opt/old/torch", "/home/user")), "GD406")
    assert f.status is Status.WARN
    assert f.message.startswith("torch imports from /opt/old/torch (version 0.0.0-src)")
    assert (f.fix or "").startswith("remove /opt/old from PYTHONPATH")


def test_two_installed_copies() -> None:
    t = torch("2.4.0", "12.4", ("H100",), cudnn=90100)
    assert isinstance(t.static, TorchStatic)
    user = "/home/u/.local/lib/python3.11/site-packages/torch"
    static = dataclasses.replace(t.static, version="2.4.0", location=user, cwd="/home/u",
                                 distributions=(("2.4.0", user), ("2.5.1", "/usr/lib/torch")))
    f = finding(env(torch=dataclasses.replace(t, static=static)), "GD406")
    assert f.status is Status.WARN
    assert f"2.4.0 at {user} is imported, 2.5.1 at /usr/lib/torch is shadowed" in f.message


def test_torch_without_dist_info_outside_the_working_directory_is_no_shadow() -> None:
    t = torch("2.5.1", "12.4", ("H100",), cudnn=90100)
    assert isinstance(t.static, TorchStatic)
    static = dataclasses.replace(t.static, version="2.5.1", distributions=(), cwd="/home/u")
    assert finding(env(torch=dataclasses.replace(t, static=static)), "GD406").status is \
        Status.PASS
    checkout = dataclasses.replace(static, location="/home/u/torch")
    f = finding(env(torch=dataclasses.replace(t, static=checkout)), "GD406")
    assert f.status is Status.WARN
    assert "no torch is installed by pip" in f.message


# ---------------------------------------------- GD403: one cause, counted once


INDEX: list[dict[str, Any]] = [
    e for e in tomllib.loads((REPORTS / "index.toml").read_text(encoding="utf-8"))["report"]
    if e.get("recognised", True)]


@pytest.fixture(scope="module")
def corpus(tables: Tables) -> dict[str, dict[str, Any]]:
    return {e["file"]: verdicts(read_reports(
        [(e["file"], (REPORTS / e["file"]).read_text(encoding="utf-8"))]), tables)
        for e in INDEX}


@pytest.mark.slow
def test_no_report_fails_both_gd103_and_gd403(corpus: dict[str, dict[str, Any]]) -> None:
    both = [name for name, got in corpus.items()
            if got["GD103"].status is Status.FAIL and got["GD403"].status is Status.FAIL]
    assert not both, both


@pytest.mark.slow
def test_gd403_points_at_gd103_where_the_driver_is_too_old(
        corpus: dict[str, dict[str, Any]]) -> None:
    too_old = {name: got for name, got in corpus.items()
               if got["GD103"].status is Status.FAIL and got["GD403"].status is Status.SKIP
               and "see GD103" in got["GD403"].message}
    assert too_old, "the corpus holds driver-too-old reports: GD403 must skip on them"
    for name, got in too_old.items():
        f = got["GD403"]
        assert f.message.startswith("torch.cuda.is_available() is False: "), name
        assert got["GD103"].message in f.message, name  # GD103's own words, not a copy
        assert f.fix is None and dict(f.evidence).get("torch.cuda.init()"), name


def test_old_driver_scenario_skips_with_torchs_reason(tables: Tables) -> None:
    got = verdicts(SCENARIOS["old-driver-new-torch"], tables)
    assert got["GD103"].status is Status.FAIL
    f = got["GD403"]
    assert f.status is Status.SKIP and f.message.endswith("see GD103"), f
    assert "too old (found version 12020)" in dict(f.evidence)["torch.cuda.init()"]


def test_new_enough_driver_still_fails_gd403(tables: Tables) -> None:
    """The same machine with a driver that runs torch's CUDA 13.0: GD103 passes, so whatever
    keeps CUDA from torch is GD403's to report."""
    base = SCENARIOS["old-driver-new-torch"]
    env = dataclasses.replace(base, nvml=nvml("580.65.06", 13000, *base.nvml.gpus),  # type: ignore[union-attr]
                              libcuda=LibcudaFacts("libcuda.so.1", 13000, "580.65.06"))
    got = verdicts(env, tables)
    assert got["GD103"].status is Status.PASS
    assert got["GD403"].status is Status.FAIL, got["GD403"]


def test_visible_devices_hiding_every_gpu_still_fails(tables: Tables) -> None:
    """CUDA_VISIBLE_DEVICES="" hides every GPU: its own cause, even beside an old driver."""
    base = SCENARIOS["old-driver-new-torch"]
    assert isinstance(base.host, HostFacts)
    host = dataclasses.replace(base.host, env=(("CUDA_VISIBLE_DEVICES", ""),))
    got = verdicts(dataclasses.replace(base, host=host), tables)
    assert got["GD103"].status is Status.FAIL
    assert got["GD403"].status is Status.FAIL
    assert "CUDA_VISIBLE_DEVICES" in (got["GD403"].fix or "")


def test_unknown_driver_state_still_fails(tables: Tables) -> None:
    """A report without the driver's view: GD103 cannot judge, GD403 fails and asks for it."""
    base = SCENARIOS["old-driver-new-torch"]
    env = dataclasses.replace(base, nvml=not_reported("nvidia-smi"),
                              libcuda=not_reported("libcuda"))
    got = verdicts(env, tables)
    assert got["GD103"].status is Status.SKIP
    assert got["GD403"].status is Status.FAIL and "nvidia-smi" in (got["GD403"].fix or "")

def test_driver_present_but_cuda_unavailable_still_fails_gd403() -> None:
    f = finding(env(host=host(env=(("CUDA_VISIBLE_DEVICES", "-1"),)),
                    torch=torch("2.13.0+cu130", "13.0", (), ("sm_90",), 92000)), "GD403")
    assert f.status is Status.FAIL
    assert f.fix == "unset CUDA_VISIBLE_DEVICES (it hides every GPU)"

def test_cuda_not_available_without_torchs_reason_asks_for_it() -> None:
    found = _findings(PARTIAL["no-driver-line"])
    f = found["GD403"]
    assert f.status is Status.FAIL  # type: ignore[attr-defined]
    assert "not in the report" in f.message and "nvidia-smi" in (f.fix or "")  # type: ignore[attr-defined]


def test_torch_facts_a_report_lacks_skip_or_say_so() -> None:
    found = _findings(PARTIAL["gpu-names-only"])
    assert found["GD403"].status is Status.PASS  # type: ignore[attr-defined]
    assert "not in the report" in found["GD403"].message  # type: ignore[attr-defined]
    assert found["GD405"].status is Status.SKIP  # type: ignore[attr-defined]
    assert "not in the report" in found["GD405"].message  # type: ignore[attr-defined]
    assert found["GD404"].status is Status.PASS  # type: ignore[attr-defined]
    assert found["GD102"].status is Status.PASS  # type: ignore[attr-defined]


# ------------------------------ GD404: the GPU's architecture in torch's build


@pytest.mark.parametrize(
    ("kind", "arch", "status", "needle"),
    [
        ("RTX4090", ARCH_CU126, Status.PASS, "sm_86 cubins run on sm_89 (same major)"),
        ("H100", ARCH_CU130, Status.PASS, "sm_90 cubins run natively on sm_90"),
        ("GTX1080", ARCH_CU128, Status.FAIL, "no cubin or PTX in the build runs on it"),
        ("RTX5090", ARCH_CU126, Status.FAIL, "no cubin or PTX"),
        ("RTX5090", ARCH_CU130, Status.PASS, "sm_120 cubins run natively"),
    ],
)
def test_gd404_on_probed_machines(kind: str, arch: tuple[str, ...], status: Status,
                                  needle: str) -> None:
    e = env(nvml=nvml("580.65.06", 13000, gpu(kind)),
            torch=torch("2.13.0+cu130", "13.0", (kind,), arch, 92000))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is status, f
    assert any(needle in v for _, v in f.evidence), f.evidence


def test_gd404_report_cc_from_product_name_and_arch_list_from_the_wheel_table() -> None:
    """collect_env gives neither the compute capability nor torch's arch list: the product
    name gives the first, the compat table's row for the wheel the second; both are cited."""
    e = reported_env(reported_torch("2.8.0+cu126", "12.6"), reported_gpu(
        "NVIDIA GeForce RTX 4090"))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.PASS, f
    text = " ".join(v for _, v in f.evidence)
    assert "from the product name" in text and "compat_tables/torch.toml" in text
    assert "sm_86 cubins run on sm_89 (same major)" in text


def test_gd404_report_with_torchs_own_arch_list_fails_a_5090() -> None:
    e = reported_env(reported_torch("2.6.0+cu126", "12.6", arch=ARCH_CU126),
                     reported_gpu("NVIDIA GeForce RTX 5090 D"))
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.FAIL and "sm_120" in f.message, f


@pytest.mark.parametrize(
    ("torch_facts", "gpus", "needle"),
    [
        # a product the GPU table does not list: its compute capability stays unknown
        (reported_torch("2.8.0+cu126", "12.6"), (reported_gpu("NVIDIA GeForce GTX 860M"),),
         "compute capability of NVIDIA GeForce GTX 860M is not in the report"),
        # a build the tables do not have (a source build): its arch list stays unknown
        (reported_torch("2.1.0a0+git1234", "12.1"), (reported_gpu("NVIDIA A100-SXM4-80GB"),),
         "arch list is not in the report"),
        # a wheel whose arch list the tables lack, on a GPU only the oldest entry of the nearest
        # known list (2.5's cu118) has code for: no rule tells
        (reported_torch("2.7.1+cu118", "11.8"), (reported_gpu("Tesla K80"),),
         "the tables lack the arch list of torch 2.7.1 cu118"),
    ],
)
def test_gd404_skips_on_what_the_report_lacks(torch_facts: object, gpus: tuple[object, ...],
                                              needle: str) -> None:
    e = reported_env(torch_facts, *gpus)  # type: ignore[arg-type]
    f = check_gpu_arch.run(e, TABLES)
    assert f.status is Status.SKIP and needle in f.message, f

@pytest.mark.subprocess  # the mark it had in test_cudnn_version_display.py
def test_gd404_empty_arch_list_with_cuda_available() -> None:
    env = with_runtime(B.env(), arch_list=())  # CUDA available, an H100 visible
    f = finding(env, "GD404")
    assert f.status is Status.SKIP, f
    assert f.message.startswith("CUDA is available but torch reported no arch list"), f.message
    assert "GD403" not in f.message and "cannot judge" in f.message


@pytest.mark.subprocess  # the mark it had in test_cudnn_version_display.py
def test_gd404_empty_arch_list_without_cuda_points_at_gd403() -> None:
    env = with_runtime(B.env(), arch_list=(), cuda_available=False,
                       cuda_init_error="RuntimeError: No CUDA GPUs are available")
    f = finding(env, "GD404")
    assert f.status is Status.SKIP, f
    assert "CUDA is not available: see GD403" in f.message, f.message


def test_gd404_passes_when_every_build_covers_the_gpu(tables: Tables) -> None:
    """A report that does not tell which build of a release torch is (no tag, no CUDA): GD404
    passes when every CUDA build of the release the tables know has code for each GPU
    (compat.machine.every_build_covers)."""
    untagged = with_runtime(stated_torch("2.8.0", None), cuda=not_reported("its CUDA"))
    found = {r.check_id: r.finding for r in run_checks(untagged, tables).results}
    assert found["GD404"].status is Status.PASS, found["GD404"]
    assert "every CUDA build of torch 2.8.0" in found["GD404"].message


# -------------------- GD404 by the arch rule, where the arch list is not known


def test_a_real_report_fails_by_the_rule() -> None:
    """https://github.com/pytorch/pytorch/issues/31876: torch 1.2.0 (CUDA 10.0) on a
    GeForce 210 (Tesla, cc 1.2). The report shows no arch list; the tables hold the PyPI
    wheel's, which lacks sm_12, and no CUDA 10 build can hold code for it (CUDA 6.5 was the
    last toolkit that compiled for it), so the other build of the same name (1.x's
    download.pytorch.org wheel) cannot have it either: a failure, not PyPI's-build warning.
    Before the rule, GD404 skipped."""
    name = "issue_body-geforce210-torch1.2-windows.md"
    env = read_reports([(name, (REPORTS / name).read_text(encoding="utf-8"))])
    f = {r.check_id: r.finding for r in run_checks(env, TABLES).results}["GD404"]
    assert f.status is Status.FAIL, f
    assert "the arch rule" in f.message and "sm_12" in f.message
    assert any(NVCC in v for _, v in f.evidence)  # the rule's source
    assert f.fix and "install a torch build that includes it" in f.fix


@pytest.mark.parametrize("torch_version", ["2.15.0+cu130", "2.16.0+cu130"])
def test_gtx1080_on_a_cuda_13_build_fails_by_the_rule(torch_version: str) -> None:
    """A GTX 1080 (sm_61) on a cu130 torch whose arch list neither the report nor the tables
    hold (2.15.0's secondary cu130 wheel; a release past the tables): CUDA 13 compiles for
    sm_75 and newer only, so no arch list can include it. Before the rule, GD404 skipped."""
    env = reported_env(reported_torch(torch_version, "13.0"),
                       reported_gpu("NVIDIA GeForce GTX 1080"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.FAIL, f
    assert "NVIDIA GeForce GTX 1080 (sm_61)" in f.message
    assert "no CUDA 13.0 build can hold code for sm_61" in f.message
    assert "rule: arch-range" in f.message and NVCC in f.message
    # the fix is the one install line, for a build that has sm_61 (a CUDA 12 wheel)
    assert f.fix and "cu12" in f.fix


def test_where_the_rule_cannot_tell_it_skips_and_says_what_it_knows() -> None:
    """sm_75 is the oldest entry of the nearest known cu130 list (2.14's): a later build may
    have dropped it, so neither rule tells."""
    env = reported_env(reported_torch("2.16.0+cu130", "13.0"),
                       reported_gpu("NVIDIA GeForce RTX 2080 Ti"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.SKIP, f
    assert "by the arch rule: CUDA 13.0 compiles cubins that run on sm_75" in f.message


def test_the_neighbouring_builds_decide_a_pass_and_say_so() -> None:
    """An RTX 3090 (sm_86) on a cu130 build past the tables: 2.14's cu130 list has sm_86
    inside it (neither its oldest nor its newest entry)."""
    env = reported_env(reported_torch("2.16.0+cu130", "13.0"),
                       reported_gpu("NVIDIA GeForce RTX 3090"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.PASS, f
    assert "by the neighbouring-builds rule: torch 2.14.1's builds for CUDA 13.0" in f.message
    assert "this build's own list is not known" in f.message


def test_an_arch_list_in_the_report_still_decides() -> None:
    """The rule stands in only for a missing list: torch's own list wins."""
    env = reported_env(reported_torch("2.16.0+cu130", "13.0", arch=("sm_60", "sm_75")),
                       reported_gpu("NVIDIA GeForce GTX 1080"), driver="580.65.06")
    f = gd404(env)
    assert f.status is Status.PASS, f
    assert "arch rule" not in f.message


# --- a 1.x wheel of two builds: PyPI's arch list does not judge the other ---------------------

HELDOUT_A = REPORTS.parent / "heldout" / "round3" / "reports-A"


def test_pypi_list_of_a_1x_wheel_warns_instead_of_failing() -> None:
    """https://github.com/pytorch/pytorch/issues/57922: torch 1.8.1+cu102 on an A100. The table's
    arch list is the PyPI wheel's (sm_37 sm_50 sm_60 sm_70, no PTX), but the same-named wheel
    from download.pytorch.org carries compute_37 PTX that runs on sm_80, and the report does
    not say which was installed. Before the rule GD404 failed a machine whose torch ran."""
    name = "r1-016.txt"
    env = read_reports([(name, (HELDOUT_A / name).read_text(encoding="utf-8"))])
    f = gd404(env)
    assert f.status is Status.WARN and f.severity is None, f
    assert "as built for PyPI has no kernels for A100-SXM4-40GB (sm_80)" in f.message
    assert "https://download.pytorch.org/whl/torch_stable.html" in f.message
    assert f.fix and f.fix.startswith("see its arch list on that machine: python -c 'import "
                                      "torch; print(torch.cuda.get_arch_list())'")
    # the install line names a build with sm_80 cubins (CUDA 11.0), not torch 1.5.1's
    # compute_37 PTX
    assert "torch==1.7.1+cu110" in f.fix


@pytest.mark.parametrize("version", ["1.8.1", "1.8.1+cu102", "1.9.0+cu102"])
def test_pypi_default_of_a_find_links_release_warns(version: str) -> None:
    env = reported_env(reported_torch(version, "10.2"), reported_gpu("NVIDIA A100-SXM4-40GB"),
                       driver="450.80.02")
    assert gd404(env).status is Status.WARN


@pytest.mark.parametrize(("version", "cuda", "gpu", "driver"), [
    # from 2.0 (index-url) PyPI's and download.pytorch.org's default builds are the same
    ("2.5.1", "12.4", "NVIDIA GeForce RTX 5090", "570.86.10"),
    ("2.5.1+cu124", "12.4", "NVIDIA GeForce RTX 5090", "570.86.10"),
])
def test_one_build_still_fails(version: str, cuda: str, gpu: str, driver: str) -> None:
    env = reported_env(reported_torch(version, cuda), reported_gpu(gpu), driver=driver)
    f = gd404(env)
    assert f.status is Status.FAIL, f


def test_the_arch_list_the_report_shows_still_fails() -> None:
    """torch's own warning names the arch list: nothing is guessed, the failure stands."""
    env = reported_env(reported_torch("1.8.1+cu102", "10.2", arch=("sm_37", "sm_50", "sm_60",
                                                                     "sm_70")),
                       reported_gpu("NVIDIA A100-SXM4-40GB"), driver="450.80.02")
    assert gd404(env).status is Status.FAIL


# ----------------------------------------------------------------------- GD405


@pytest.mark.subprocess  # the mark it had in test_cudnn_version_display.py
@pytest.mark.parametrize(("raw", "shown"), [(92000, "9.20.0"), (90100, "9.1.0"),
                                             (8907, "8.9.7")])
def test_gd405_names_cudnn_as_a_version(raw: int, shown: str) -> None:
    f = finding(with_runtime(B.env(), cudnn_version=raw), "GD405")
    assert f.status is Status.PASS, f
    assert f.message == f"cuDNN {shown} ran a convolution", f.message


@pytest.mark.parametrize("path", ["round4/reports-C/r4-024.txt", "round6/reports-E/r10-008.txt",
                                  "round12/reports-K/r27-020.txt",
                                  "round18/reports-Q/r39-030.txt"])
def test_a_pasted_report_that_ran_where_torch_does_not_import_fails(path: str) -> None:
    """collect_env's "PyTorch version: N/A": the interpreter that made the report has no torch
    that imports. A report made to show torch, pasted: GD401 fails (it warned or noted, as
    this machine's run does, where torch may live in another environment)."""
    file = Path(__file__).parents[1] / "fixtures" / "heldout" / path
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    f = finding(env, "GD401")
    assert f.status is Status.FAIL
    assert "the environment the report shows has no torch that imports" in f.message

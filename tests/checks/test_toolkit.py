"""The CUDA toolkit checks (GD2xx, `gpudoctor.checks.toolkit`).

- GD201 toolkit-found: a CUDA_HOME / CUDA_PATH that is no toolkit is named with what breaks
  (the real probe over prepared trees, every check run as `check` runs them);
- GD204 gpu-supported-by-toolkit: the local toolkit can compile for every GPU; for a GPU the
  GPU table has no verified row for, the arch rule (`compat.rules.arch_in_build`) decides from
  the toolkits' own rows, and says so.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import tests.checks.envbuilder as B
from gpudoctor.checks.toolkit import CHECKS, check_toolkit_vs_gpus
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    Environment,
    Finding,
    GpuFacts,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.policy import Verdict, verdict
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.toolkit import probe_toolkits
from tests.checks.envbuilder import env, finding, gpu, nvml, reported_gpu, results, toolkit

TABLES = load_tables()


# ---------------------------------------------------------------------------- GD201: CUDA_HOME


def probed_toolkits(tmp_path: Path, **environ: str) -> Environment:
    deps = Deps(root=tmp_path / "sys", environ={"PATH": "/bin", **environ})
    return env(toolkits=probe_toolkits(deps))


@pytest.mark.parametrize(
    ("make", "says"),
    [(lambda p: None, "does not exist"),
     (lambda p: p.write_text("x"), "is a file, not a directory"),
     (lambda p: p.mkdir(), "is an empty directory"),
     (lambda p: (p / "lib64").mkdir(parents=True), "is not a CUDA toolkit"),
     (lambda p: (p.mkdir(), (p / "version.json").write_text(
         '{"cuda": {"version": "12.4.1"}}')),
      "is not a toolkit for building: it has no bin/nvcc and no include/cuda_runtime.h")],
    ids=["missing", "file", "empty", "not-a-toolkit", "version-json-only"],
)
def test_cuda_home_that_is_no_toolkit_is_named_with_what_breaks(
        tmp_path: Path, make: object, says: str) -> None:
    home = tmp_path / "cuda-home"
    make(home)  # type: ignore[operator]
    r = results(probed_toolkits(tmp_path, CUDA_HOME=str(home)))["GD201"]
    f = r.finding
    assert f.status is Status.WARN and r.severity is Severity.WARNING
    assert verdict(r) is Verdict.WARNING
    assert f"CUDA_HOME={home} {says}" in f.message
    assert "torch.utils.cpp_extension" in f.message
    assert (f.fix or "").startswith("unset CUDA_HOME")


@pytest.mark.subprocess
def test_cuda_home_broken_beside_a_real_toolkit_points_at_it(tmp_path: Path) -> None:
    kit = tmp_path / "sys" / "usr" / "local" / "cuda"
    (kit / "bin").mkdir(parents=True)
    (kit / "include").mkdir()
    (kit / "version.json").write_text('{"cuda": {"version": "12.4.1"}}')
    (kit / "bin" / "nvcc").write_text("#!/bin/sh\nexit 1\n")
    (kit / "include" / "cuda_runtime.h").write_text("\n")
    f = finding(probed_toolkits(tmp_path, CUDA_HOME=str(tmp_path / "gone")), "GD201")
    assert f"without it they would use CUDA 12.4 at {kit}" in f.message
    assert f.fix == f"export CUDA_HOME={kit}"


@pytest.mark.subprocess
def test_cuda_path_broken_while_cuda_home_is_set(tmp_path: Path) -> None:
    good = tmp_path / "good"
    (good / "bin").mkdir(parents=True)
    (good / "bin" / "nvcc").write_text("#!/bin/sh\nexit 1\n")
    (good / "include").mkdir()
    (good / "include" / "cuda_runtime.h").write_text("\n")
    (good / "include" / "cuda.h").write_text("#define CUDA_VERSION 12040\n")
    f = finding(probed_toolkits(tmp_path, CUDA_HOME=str(good), CUDA_PATH=str(tmp_path / "gone")),
                "GD201")
    assert f.status is Status.WARN
    assert "torch.utils.cpp_extension reads CUDA_HOME instead" in f.message


def test_runtime_only_toolkit_found_by_search_is_a_note(tmp_path: Path) -> None:
    kit = tmp_path / "sys" / "usr" / "local" / "cuda"
    kit.mkdir(parents=True)
    (kit / "version.json").write_text('{"cuda": {"version": "12.4.1"}}')
    r = results(probed_toolkits(tmp_path))["GD201"]
    assert verdict(r) is Verdict.NOTE
    assert "not a toolkit for building" in r.finding.message


# ---------------------------------------------------------------------------- GD204


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def custom(name: str, cc: str, index: int = 0) -> GpuFacts:
    return dataclasses.replace(gpu("H100", index), name=name, compute_capability=cc)


def run(e: Environment, tables: Tables) -> Finding:
    return check_toolkit_vs_gpus.run(e, tables)


def test_registered_in_the_toolkit_module() -> None:
    assert check_toolkit_vs_gpus in CHECKS
    assert (check_toolkit_vs_gpus.id, check_toolkit_vs_gpus.slug) == (
        "GD204", "gpu-supported-by-toolkit")
    assert "CUDA 12.0 dropped" in check_toolkit_vs_gpus.doc


@pytest.mark.parametrize(
    ("tk", "kind", "cc"),
    [("13.0", "H100", None), ("12.2", "RTX3090", None), ("12.9", "GTX1080", None),
     ("11.8", "K80", "3.7"), ("12.9.1", "Maxwell", "5.0")],
)
def test_pass(tables: Tables, tk: str, kind: str, cc: str | None) -> None:
    g = custom(kind, cc) if cc else gpu(kind)
    f = run(env(toolkits=toolkit(tk), nvml=nvml("580.65.06", 13000, g)), tables)
    assert f.status is Status.PASS, f
    assert f"CUDA {tk} compiles for every GPU" in f.message


def test_cuda_13_drops_pascal(tables: Tables) -> None:
    f = run(env(toolkits=toolkit("13.0"), nvml=nvml("580.65.06", 13000, gpu("GTX1080"))), tables)
    assert f.status is Status.FAIL
    assert "sm_61" in f.message and "CUDA 12.9 was the last" in f.message
    assert f.fix is not None and "CUDA Toolkit 12.9" in f.fix
    assert "export CUDA_HOME=/usr/local/cuda-12.9" in f.fix
    assert ("toolkit", "CUDA 13.0 at /usr/local/cuda") in f.evidence


@pytest.mark.parametrize("cc", ["3.5", "3.7"])
def test_cuda_12_drops_kepler(tables: Tables, cc: str) -> None:
    f = run(env(toolkits=toolkit("12.0"), nvml=nvml("470.82.01", 11040, custom("Tesla K80", cc))),
            tables)
    assert f.status is Status.FAIL
    assert "CUDA 11.8 was the last" in f.message
    assert f.fix is not None and "cuda-11.8" in f.fix


@pytest.mark.parametrize("cc", ["5.0", "5.2", "6.0", "6.1", "7.0", "7.2"])
def test_cuda_13_drops_sm50_to_sm72(tables: Tables, cc: str) -> None:
    f = run(env(toolkits=toolkit("13.1"), nvml=nvml("590.44.01", 13010, custom("old GPU", cc))),
            tables)
    assert f.status is Status.FAIL, f


def test_toolkit_older_than_the_gpu_warns(tables: Tables) -> None:
    f = run(env(toolkits=toolkit("11.0"), nvml=nvml("580.65.06", 13000, gpu("RTX3090"))), tables)
    assert f.status is Status.WARN
    assert "predates" in f.message and "from CUDA 11.1" in f.message
    assert f.fix is not None and "11.1 or newer" in f.fix


def test_secondary_row_only_warns(tables: Tables) -> None:
    turing = tables.gpu_arch("7.5")
    assert turing is not None and turing.status == "secondary"  # the fact this test relies on
    f = run(env(toolkits=toolkit("9.2"), nvml=nvml("580.65.06", 13000, custom("Tesla T4", "7.5"))),
            tables)
    assert f.status is Status.WARN


def test_one_bad_gpu_among_good_ones_fails(tables: Tables) -> None:
    e = env(toolkits=toolkit("13.0"),
            nvml=nvml("580.65.06", 13000, gpu("H100", 0), gpu("GTX1080", 1)))
    f = run(e, tables)
    assert f.status is Status.FAIL and "GTX 1080" in f.message
    assert len([k for k, _ in f.evidence if k.startswith("GPU")]) == 2


def test_no_single_toolkit_fits(tables: Tables) -> None:
    e = env(toolkits=toolkit("13.0"),
            nvml=nvml("580.65.06", 13000, custom("Tesla K80", "3.7", 0),
                      custom("RTX 5090", "12.0", 1)))
    f = run(e, tables)
    assert f.status is Status.FAIL
    assert f.fix is not None and "no single CUDA toolkit" in f.fix


def test_unknown_or_unverified_compute_capability_is_skipped(tables: Tables) -> None:
    f = run(env(toolkits=toolkit("13.0"), nvml=nvml("580.65.06", 13000, custom("future", "15.0"))),
            tables)
    assert f.status is Status.SKIP and "no verified row for sm_150" in f.message
    f = run(env(toolkits=toolkit("13.0"), nvml=nvml("580.65.06", 13000, custom("?", "8.8"))),
            tables)
    assert f.status is Status.SKIP  # the sm_88 row is unverified: no verdict rests on it


def test_skips_without_inputs(tables: Tables) -> None:
    no_toolkit = env(toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"))
    assert run(no_toolkit, tables).status is Status.SKIP
    no_nvml = env(nvml=Unavailable(Reason.NOT_INSTALLED, "no driver"))
    f = run(no_nvml, tables)
    assert f.status is Status.SKIP and "no driver" in f.message
    assert run(env(nvml=nvml("580.65.06", 13000)), tables).status is Status.SKIP


def test_gd204_takes_the_cc_from_the_product_name() -> None:
    """A pasted report names the GPU only (Unavailable(NOT_REPORTED) for the rest)."""
    e = env(nvml=nvml("580.65.06", 13000, reported_gpu("NVIDIA GeForce GTX 1080")),
            toolkits=toolkit("13.0"))
    f = finding(e, "GD204")
    assert f.status is Status.FAIL, f  # CUDA 13 cannot compile for Pascal
    assert any("from the product name" in v for _, v in f.evidence)


# ------------------------------------------------------------- GD204: GPUs without a verified row


def without(cc: str) -> Tables:
    """The tables without the row of compute capability `cc`: a GPU they do not know."""
    return dataclasses.replace(TABLES, gpu_archs=tuple(a for a in TABLES.gpu_archs
                                                       if a.cc != cc))


def unknown_gpu(cc: str) -> object:
    return dataclasses.replace(B.gpu("H100"), name="an unknown GPU", compute_capability=cc)


def test_a_gpu_below_the_toolkits_floor_fails_by_the_rule() -> None:
    """sm_21 with no row of its own, under CUDA 12.4: CUDA 12.4 compiles sm_50 and up, and
    the rows below sm_50 are all retired by then, so everything older is too (NVIDIA retires
    architectures oldest first). Before the rule: skipped, "no verified row"."""
    tables = without("2.1")
    env = B.env(nvml=B.nvml("550.54.14", 12040, unknown_gpu("2.1")), toolkits=B.toolkit("12.4"))
    f = check_toolkit_vs_gpus.run(env, tables)
    assert f.status is Status.FAIL, f
    assert "judged by the arch rule" in f.message and "compiles for sm_50 and newer" in f.message
    assert "rule: arch-range" in f.message


def test_a_gpu_above_what_the_toolkit_compiles_is_not_guessed() -> None:
    """sm_120 with no row, under CUDA 12.6: the rule can tell only that older PTX alone could
    run there, which a build may or may not carry: skipped, with what the rule said."""
    tables = without("12.0")
    env = B.env(nvml=B.nvml("560.28.03", 12060, unknown_gpu("12.0")), toolkits=B.toolkit("12.6"))
    f = check_toolkit_vs_gpus.run(env, tables)
    assert f.status is Status.SKIP, f
    assert any("only PTX of an older architecture" in v for _, v in f.evidence)


def test_with_the_row_the_row_decides() -> None:
    env = B.env(nvml=B.nvml("550.54.14", 12040, unknown_gpu("2.1")), toolkits=B.toolkit("12.4"))
    f = check_toolkit_vs_gpus.run(env, TABLES)
    assert f.status in (Status.FAIL, Status.WARN) and "arch rule" not in f.message, f
    assert "CUDA 8.0 was the last toolkit" in f.message

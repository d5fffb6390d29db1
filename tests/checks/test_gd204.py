"""GD204 gpu-supported-by-toolkit: the local toolkit can compile for every GPU."""

from __future__ import annotations

import dataclasses

import pytest

from gpudoctor.checks.cuda import CHECKS, check_toolkit_vs_gpus
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import Environment, Finding, GpuFacts, Reason, Status, Unavailable
from tests.checks.envbuilder import env, gpu, nvml, toolkit


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def custom(name: str, cc: str, index: int = 0) -> GpuFacts:
    return dataclasses.replace(gpu("H100", index), name=name, compute_capability=cc)


def run(e: Environment, tables: Tables) -> Finding:
    return check_toolkit_vs_gpus.run(e, tables)


def test_registered_in_the_cuda_module() -> None:
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

"""GD204 for a GPU the GPU table has no verified row for: the arch rule
(`compat.rules.arch_in_build`) decides from the toolkits' own rows, and says so."""

from __future__ import annotations

import dataclasses

import tests.checks.envbuilder as B
from gpudoctor.checks.cuda import check_toolkit_vs_gpus
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import Status

TABLES = load_tables()


def without(cc: str) -> Tables:
    """The tables without the row of compute capability `cc`: a GPU they do not know."""
    return dataclasses.replace(TABLES, gpu_archs=tuple(a for a in TABLES.gpu_archs
                                                       if a.cc != cc))


def gpu(cc: str) -> object:
    return dataclasses.replace(B.gpu("H100"), name="an unknown GPU", compute_capability=cc)


def test_a_gpu_below_the_toolkits_floor_fails_by_the_rule() -> None:
    """sm_21 with no row of its own, under CUDA 12.4: CUDA 12.4 compiles sm_50 and up, and
    the rows below sm_50 are all retired by then, so everything older is too (NVIDIA retires
    architectures oldest first). Before the rule: skipped, "no verified row"."""
    tables = without("2.1")
    env = B.env(nvml=B.nvml("550.54.14", 12040, gpu("2.1")), toolkits=B.toolkit("12.4"))
    f = check_toolkit_vs_gpus.run(env, tables)
    assert f.status is Status.FAIL, f
    assert "judged by the arch rule" in f.message and "compiles for sm_50 and newer" in f.message
    assert "rule: arch-range" in f.message


def test_a_gpu_above_what_the_toolkit_compiles_is_not_guessed() -> None:
    """sm_120 with no row, under CUDA 12.6: the rule can tell only that older PTX alone could
    run there, which a build may or may not carry: skipped, with what the rule said."""
    tables = without("12.0")
    env = B.env(nvml=B.nvml("560.28.03", 12060, gpu("12.0")), toolkits=B.toolkit("12.6"))
    f = check_toolkit_vs_gpus.run(env, tables)
    assert f.status is Status.SKIP, f
    assert any("only PTX of an older architecture" in v for _, v in f.evidence)


def test_with_the_row_the_row_decides() -> None:
    env = B.env(nvml=B.nvml("550.54.14", 12040, gpu("2.1")), toolkits=B.toolkit("12.4"))
    f = check_toolkit_vs_gpus.run(env, TABLES)
    assert f.status in (Status.FAIL, Status.WARN) and "arch rule" not in f.message, f
    assert "CUDA 8.0 was the last toolkit" in f.message

"""The grammar's scanners cost a bounded amount per occurrence of their literal: a run of
whitespace where a message or a number is expected (a hostile or mangled paste) is no
polynomial backtracking. "cuda error" and 2,000 spaces took 47 s, "Xid" and 1,000 spaces 5 s,
before every whitespace run between optional tokens was bounded."""

from __future__ import annotations

import time

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain

TABLES = load_tables()
RUN = 1500  # characters: the old cubic patterns took ~20 s on this much, the bounded ones ms


@pytest.mark.parametrize("prefix", [
    "RuntimeError: CUDA error", "Cuda failure:", "NVRM: Xid", "CUresult(", "status:",
    "cudaMalloc returned 2", "== cudaSuccess", "panic: Unknown", "NVRM version: Kernel Module",
    "nvidia-container-cli: mount error:", "undefined symbol:",
])
@pytest.mark.parametrize("fill", [" ", "\t", " \n"])
def test_a_whitespace_run_after_a_scanners_literal_costs_little(prefix: str, fill: str) -> None:
    text = prefix + fill * (RUN // len(fill)) + "\n"
    start = time.perf_counter()
    explain(text, TABLES, probe=None)
    assert time.perf_counter() - start < 1.0

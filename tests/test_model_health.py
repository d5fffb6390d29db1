"""`gpudoctor.model_health`: a GPU's health facts. The 13 counters every snapshot has are
required; each one added later defaults to NOT_RECORDED, so that a snapshot written before it
reads back. A leaf below `gpudoctor.model`, which re-exports it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import gpudoctor.model as model
import gpudoctor.model_health as model_health
from gpudoctor.model_base import NOT_RECORDED, Reason, Unavailable
from gpudoctor.model_health import GpuHealth, GpuProcess

NA = Unavailable(Reason.NOT_SUPPORTED, "N/A")
FIRST = ("ecc_mode", "ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable",
         "ecc_volatile_correctable", "ecc_aggregate_correctable", "retired_pages_single_bit",
         "retired_pages_double_bit", "retired_pages_pending", "remapped_rows_correctable",
         "remapped_rows_uncorrectable", "remapped_rows_pending", "remapped_rows_failure",
         "clock_events")


def test_the_first_counters_are_required_and_the_later_ones_not_recorded() -> None:
    fields = dataclasses.fields(GpuHealth)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    assert tuple(required) == FIRST
    h = GpuHealth(*([NA] * len(FIRST)))  # what an older snapshot has
    later = [f.name for f in fields if f.name not in FIRST]
    assert later and all(getattr(h, name) is NOT_RECORDED for name in later)


def test_a_process_is_a_compute_one_unless_said() -> None:
    p = GpuProcess(4242, "python", 1 << 30)
    assert p.kind == "C"
    assert dataclasses.replace(p, kind="C+G") != p


def test_a_leaf_below_the_model_which_reexports_it() -> None:
    tree = ast.parse(Path(model_health.__file__).read_text(encoding="utf-8"))
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m.startswith("gpudoctor")} == {"gpudoctor.model_base"}
    assert (model.GpuHealth, model.GpuProcess) == (GpuHealth, GpuProcess)

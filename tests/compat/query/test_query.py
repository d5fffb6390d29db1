"""gpudoctor.compat.query (the package's __init__): one query function per `compat` subject,
and the names it exports."""

from __future__ import annotations

import pytest

import gpudoctor.compat.query as query
from gpudoctor.compat import Tables
from gpudoctor.compat.query import QUERIES, Answer

SAMPLES = {"cuda": "12.4", "cudnn": "9.1.0", "driver": "580.65.06", "torch": "2.13.0",
           "gpu": "sm_90"}


def test_one_query_per_subject() -> None:
    assert {"cuda": query.query_cuda, "cudnn": query.query_cudnn, "driver": query.query_driver,
            "torch": query.query_torch, "gpu": query.query_gpu} == QUERIES


# ids "compat-<kind>": a bare "gpu" id would be read as the gpu marker (tests/conftest.py)
@pytest.mark.parametrize("kind", sorted(SAMPLES), ids=lambda k: f"compat-{k}")
def test_each_query_answers_its_own_kind(tables: Tables, kind: str) -> None:
    answer = QUERIES[kind](tables, SAMPLES[kind])
    assert isinstance(answer, Answer) and answer.kind == kind and answer.query == SAMPLES[kind]
    assert answer.sections and all(r.source.startswith("https://")
                                   for s in answer.sections for r in s.rows)


def test_every_exported_name_is_there() -> None:
    assert sorted(query.__all__) == sorted(set(query.__all__))
    assert [n for n in query.__all__ if not hasattr(query, n)] == []

"""Answers to `gpudoctor compat ...`: one question to the compat tables, as plain data.

Each `query_*` function takes the tables and the user's string and returns an `Answer`: titled
sections of rows, every row with the sentence text output shows, the values JSON output shows,
and the `status`, `source` and `note` of the table row it comes from. Both renderings print the
same Answer, so they cannot disagree. Pure: no I/O.

A string that is not a version (or GPU) raises `QueryError` (a usage error); a well-formed one
the tables do not hold raises `NotInTables`, whose message names the newest known entry. No
answer is ever guessed from a neighbouring row.
"""

from __future__ import annotations

from gpudoctor.compat.query.answer import (
    SCHEMA_VERSION,
    VERIFIED,
    Answer,
    NotInTables,
    QueryError,
    Row,
    Section,
    build_for,
    cudnn_tarball,
    driver_runs,
    torch_series,
)
from gpudoctor.compat.query.cuda import query_cuda, query_driver
from gpudoctor.compat.query.cudnn import query_cudnn
from gpudoctor.compat.query.gpu import query_gpu
from gpudoctor.compat.query.pytorch import query_torch

QUERIES = {"cuda": query_cuda, "cudnn": query_cudnn, "driver": query_driver,
           "torch": query_torch, "gpu": query_gpu}

__all__ = [
    "QUERIES", "SCHEMA_VERSION", "VERIFIED", "Answer", "NotInTables", "QueryError", "Row",
    "Section", "build_for", "cudnn_tarball", "driver_runs", "query_cuda",
    "query_cudnn", "query_driver", "query_gpu", "query_torch", "torch_series",
]

"""gpudoctor.compat.query.pytorch: `compat torch X.Y.Z`, answered from the tables."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables
from gpudoctor.compat.query import NotInTables, QueryError, query_torch
from gpudoctor.compat.wheels import pip_line
from tests.compat.query.kit import text_of


def test_torch_variants_only_on_the_pytorch_index_are_marked(tables: Tables) -> None:
    r213, r215 = tables.torch_release("2.13.0"), tables.torch_release("2.15.0")
    assert r213 is not None and r215 is not None
    cu129, cu130 = r213.variant("cu129"), r215.variant("cu130")
    assert cu129 is not None and (cu129.status, cu129.cudnn, cu129.arch_list) == (
        "secondary", None, None)
    assert cu129.source == "https://github.com/pytorch/pytorch/issues/187834"
    assert cu130 is not None and cu130.status == "secondary"
    assert r215.variant("cu126") is None  # 2.15 dropped CUDA 12.6 (pytorch/pytorch#190385)
    variants = {r.values[0][1]: r for s in query_torch(tables, "2.15.0").sections
                for r in s.rows if s.key == "variants"}
    assert variants["cu130"].status == "secondary"
    assert variants["cu130"].source == "https://github.com/pytorch/pytorch/issues/190385"
    assert variants["cu132"].status == "verified"
    r211 = tables.torch_release("2.11.0")
    assert r211 is not None
    cu128 = r211.variant("cu128")
    assert cu128 is not None and cu128.arch_list == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")


def test_companions_and_torchaudio_shown(tables: Tables) -> None:
    r2141, r215 = tables.torch_release("2.14.1"), tables.torch_release("2.15.0")
    assert r2141 is not None and r2141.torchvision == "0.29.1"
    assert r215 is not None and r215.torchvision == "0.29.2"
    assert "torchaudio 2.11.0" in text_of(query_torch(tables, "2.11.0"))
    assert "torchaudio none paired in the tables" in text_of(query_torch(tables, "2.14.1"))


def test_torch_answers_the_release_and_each_variant(tables: Tables) -> None:
    rel = tables.torch_release("2.1.0")
    assert rel is not None
    answer = query_torch(tables, "2.1.0")
    assert (answer.kind, answer.subject) == ("torch", "PyTorch 2.1.0")
    (head,) = answer.section("release").rows
    values = dict(head.values)
    assert (values["torchvision"], values["pypi_default"], values["python"]) == (
        rel.torchvision, rel.pypi_default, list(rel.python or ()))
    assert values["pypi_command"] == pip_line(rel, None)
    rows = answer.section("variants").rows
    assert [dict(r.values)["variant"] for r in rows] == [v.tag for v in rel.variants]
    for row, v in zip(rows, rel.variants, strict=True):
        need = tables.cuda_min_driver(v.cuda)
        assert need is not None
        assert dict(row.values)["pip"] == pip_line(rel, v)
        assert (dict(row.values)["min_driver"], dict(row.values)["min_driver_mvc"]) == (
            need.full, need.family)
        # a variant with its own source (2.1's cu118: its arch list derived from the build
        # script) shows it; the others show the release row's
        assert (row.status, row.source) == (v.status or rel.status, v.source or rel.source)
    assert any(v.status == "derived" for v in rel.variants)


def test_a_local_tag_picks_the_variant(tables: Tables) -> None:
    rows = query_torch(tables, "2.1.0+cu118").section("variants").rows
    assert [dict(r.values)["variant"] for r in rows] == ["cu118"]
    assert len(query_torch(tables, "2.1.0+cpu").section("variants").rows) == 2  # not a CUDA tag
    with pytest.raises(NotInTables, match=r"^torch 2\.1\.0 has no cu999 variant in the tables "
                                          r"\(its variants: cu118, cu121\)$"):
        query_torch(tables, "2.1.0+cu999")


def test_torch_is_answered_exactly_or_not_at_all(tables: Tables) -> None:
    with pytest.raises(NotInTables, match=r"^torch 2\.1 is not in the tables"):
        query_torch(tables, "2.1")
    with pytest.raises(NotInTables, match=r"^torch 0\.4\.1 is not in the tables"):
        query_torch(tables, "0.4.1")
    for text in ("2.x", "2", "2.1.0+CU121", "torch 2.1.0"):
        with pytest.raises(QueryError, match="is not a PyTorch version"):
            query_torch(tables, text)

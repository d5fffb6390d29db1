"""gpudoctor.compat.query.pytorch: `compat torch X.Y.Z`, answered from the tables."""

from __future__ import annotations

from gpudoctor.compat import Tables
from gpudoctor.compat.query import query_torch
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

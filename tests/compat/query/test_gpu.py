"""gpudoctor.compat.query.gpu: `compat gpu sm_XY` and `compat gpu "PRODUCT"`."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables
from gpudoctor.compat.query import NotInTables, query_gpu

CURRENT = "https://developer.nvidia.com/cuda-gpus"  # NVIDIA's CUDA GPUs page


def test_compat_gpu_names_the_product_its_rule_and_page(tables: Tables) -> None:
    answer = query_gpu(tables, "NVIDIA GeForce GTX 1660 SUPER")
    rows = [row for section in answer.sections for row in section.rows]
    product = next(r for r in rows if dict(r.values).get("product"))
    values = dict(product.values)
    assert values["product"] == "GeForce GTX 1650 Ti"
    assert values["rule"] == "series" and product.source == CURRENT
    assert "GeForce GTX 1660 SUPER" in product.text and "series" in product.text
    with pytest.raises(NotInTables, match="nvidia-smi --query-gpu=name,compute_cap"):
        query_gpu(tables, "NVIDIA GeForce MX450")

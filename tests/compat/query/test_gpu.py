"""gpudoctor.compat.query.gpu: `compat gpu sm_XY` and `compat gpu "PRODUCT"`."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables
from gpudoctor.compat.query import NotInTables, QueryError, query_gpu

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
        query_gpu(tables, "NVIDIA GeForce GTX 860M")


@pytest.mark.parametrize("spelling", ["sm_86", "SM86", "compute_86", "compute86", "8.6", "86",
                                      " sm_86 "])
def test_a_compute_capability_in_any_spelling(tables: Tables, spelling: str) -> None:
    answer = query_gpu(tables, spelling)
    assert (answer.kind, answer.subject) == ("gpu", "GPU sm_86 (Ampere)")
    assert [s.key for s in answer.sections] == ["arch", "toolkits", "cudnn", "torch"]


def test_gpu_answers_arch_toolkits_cudnn_and_torch(tables: Tables) -> None:
    arch = tables.gpu_arch("8.6")
    assert arch is not None
    answer = query_gpu(tables, "sm_86")
    (head,) = answer.section("arch").rows
    assert dict(head.values)["products"] == list(arch.products)  # JSON: all of them
    more = len(arch.products) - 8
    assert more > 0 and head.text.endswith(f" and {more} more")  # text: the first eight
    (toolkit,) = answer.section("toolkits").rows
    assert toolkit.text == f"toolkits that compile for it: CUDA {arch.first_cuda} - current"
    cudnn = answer.section("cudnn").rows
    assert cudnn and all(dict(r.values)["supported"] is (r.text.split(": ")[1].startswith(
        "supported")) for r in cudnn)
    for row in answer.section("torch").rows:
        values = dict(row.values)
        rel = tables.torch_release(str(values["versions"][-1]))  # type: ignore[index]
        assert rel is not None
        listed = {v.tag for v in rel.variants if v.arch_list is not None}
        assert set(values["includes"]) | set(values["excludes"]) == listed  # type: ignore[arg-type]


def test_a_product_name_is_placed_and_said_how(tables: Tables) -> None:
    answer = query_gpu(tables, "NVIDIA GeForce RTX 3090")
    assert answer.subject == "GPU sm_86 (Ampere)"
    (product,) = answer.section("product").rows
    assert dict(product.values)["rule"] == "name" and " by the " not in product.text


def test_a_gpu_not_in_the_tables_is_not_guessed(tables: Tables) -> None:
    last = tables.gpu_archs[-1]
    with pytest.raises(NotInTables, match=rf"^compute capability 'sm_99' is not in the tables "
                                          rf"\(newest known: sm_{last.cc.replace('.', '')}, "):
        query_gpu(tables, "sm_99")
    for text in ("sm_x", "compute_", " ", ""):
        with pytest.raises(QueryError):
            query_gpu(tables, text)
    with pytest.raises(QueryError, match="non-ASCII digit"):
        query_gpu(tables, "sm_８６")

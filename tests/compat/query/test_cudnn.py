"""gpudoctor.compat.query.cudnn: `compat cudnn X.Y.Z`, answered from the tables."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables
from gpudoctor.compat.query import (
    NotInTables,
    QueryError,
    cudnn_tarball,
    query_cudnn,
    torch_series,
)


def test_compat_cudnn_shows_the_whole_range_and_each_builds(tables: Tables) -> None:
    """`compat cudnn X` gives min_cc AND max_cc: the release's range over all its CUDA builds,
    then each build whose range differs (Blackwell only in the 12.8+ builds of 9.7-9.10)."""
    from gpudoctor.renderers.compat import answer_text

    answer = query_cudnn(tables, "9.8.0")
    (gpus,) = [s for s in answer.sections if s.key == "gpus"]
    rows = [dict(r.values) for r in gpus.rows]
    expected = tables.cudnn_support_rows("9.8.0")
    assert [(r["min_cc"], r["max_cc"], r["cuda"]) for r in rows if "max_cc" in r] == [
        (s.min_cc, s.max_cc, s.cuda) for s in expected]
    assert expected[0].cuda is None and any(s.cuda and not s.supports("12.0") for s in expected)
    text = answer_text(answer, verbose=False)
    whole = expected[0]
    assert (f"supports compute capability {whole.min_cc}-{whole.max_cc} "
            f"(sm_{whole.min_cc.replace('.', '')} to sm_{whole.max_cc.replace('.', '')}) over "
            "all its CUDA builds") in text
    for s in expected[1:]:
        assert f"CUDA {s.cuda} builds: compute capability {s.min_cc}-{s.max_cc}" in text
    # cuDNN 7.6.5 stops at Turing: the upper bound is printed, not only the lower one
    old = answer_text(query_cudnn(tables, "7.6.5"), verbose=False)
    assert "3.0-7.5 (sm_30 to sm_75)" in old


def test_cudnn_answers_builds_drivers_gpus_layout_and_torch(tables: Tables) -> None:
    answer = query_cudnn(tables, "7.6.5")
    assert (answer.kind, answer.query, answer.subject) == ("cudnn", "7.6.5", "cuDNN 7.6.5")
    assert [s.key for s in answer.sections] == ["release", "cuda_builds", "gpus", "layout",
                                                "torch"]
    rel = tables.cudnn_release("7.6.5")
    assert rel is not None
    builds = answer.section("cuda_builds").rows
    assert [dict(r.values)["cuda_build"] for r in builds] == list(rel.cuda_builds)
    for row in builds:
        values = dict(row.values)
        assert values["tarball"] == cudnn_tarball(tables, rel, str(values["cuda_build"]))[0]  # type: ignore[index]
        assert values["min_driver"] == rel.min_driver_for(str(values["cuda_build"]))
        assert f"driver ≥ {values['min_driver']} (cuDNN support matrix)" in row.text
    (layout,) = answer.section("layout").rows
    assert dict(layout.values)["version_multiplier"] == 1000


def test_cudnn_lists_the_torch_wheels_that_bundle_it(tables: Tables) -> None:
    rows = query_cudnn(tables, "9.1.0").section("torch").rows
    bundled = [(series[-1].version, v.tag) for series in torch_series(tables)
               for v in series[-1].variants if v.cudnn == "9.1.0.70"]
    assert bundled and [(dict(r.values)["versions"][-1], dict(r.values)["variant"])  # type: ignore[index]
                        for r in rows] == bundled
    assert all(dict(r.values)["cudnn"] == "9.1.0.70" for r in rows)


def test_a_build_number_answers_only_that_build(tables: Tables) -> None:
    assert query_cudnn(tables, "9.1.0.70").subject == "cuDNN 9.1.0"
    with pytest.raises(NotInTables, match=r"^cuDNN 9\.1\.0\.71 is not in the tables .*nearest "
                                          r"known: 9\.1\.0\.70\)$"):
        query_cudnn(tables, "9.1.0.71")
    with pytest.raises(NotInTables, match=r"^cuDNN 9\.1 is not in the tables"):
        query_cudnn(tables, "9.1")  # "9.1" is not "9.1.0"
    for text in ("x", "9", "9.1.0.70.1", "v9.1.0"):
        with pytest.raises(QueryError, match="is not a cuDNN version"):
            query_cudnn(tables, text)

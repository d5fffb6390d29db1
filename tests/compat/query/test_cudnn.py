"""gpudoctor.compat.query.cudnn: `compat cudnn X.Y.Z`, answered from the tables."""

from __future__ import annotations

from gpudoctor.compat import Tables


def test_compat_cudnn_shows_the_whole_range_and_each_builds(tables: Tables) -> None:
    """`compat cudnn X` gives min_cc AND max_cc: the release's range over all its CUDA builds,
    then each build whose range differs (Blackwell only in the 12.8+ builds of 9.7-9.10)."""
    from gpudoctor.compat.query import query_cudnn
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

"""The knowledge base is data: the shipped files load, and every entry is well formed."""

from __future__ import annotations

import re

import pytest

from gpudoctor.checks import REGISTRY
from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.kb import (
    MIN_NEEDLE,
    PRIORITIES,
    KnowledgeBaseError,
    load,
    needle_of,
    parse,
    placeholders,
)

KB = load()
FAMILIES = {"arch", "driver", "torch-build", "toolkit", "cudnn", "cublas", "library",
            "container", "memory", "nccl", "hardware", "runtime", "wsl", "program",
            "scheduler", "mpi"}


def test_at_least_sixty_signatures_across_the_families() -> None:
    assert len(KB.signatures) >= 60
    assert {s.family for s in KB.signatures} <= FAMILIES
    # the families the issue names are all covered
    assert {"arch", "driver", "cudnn", "cublas", "library", "container", "memory", "nccl",
            "hardware", "wsl", "toolkit", "program"} <= {s.family for s in KB.signatures}


@pytest.mark.parametrize("sig", KB.signatures, ids=lambda s: s.id)
def test_signature_is_well_formed(sig) -> None:  # type: ignore[no-untyped-def]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", sig.id)
    assert sig.title and sig.cause.endswith((".", ")")) and sig.fix
    known = {c.id for c in REGISTRY}
    assert set(sig.confirm) <= known, f"{sig.id}: confirm names no such check"
    assert sig.sources and all(u.startswith("https://") for u in sig.sources)
    assert sig.cause_class in CAUSE_CLASSES
    assert sig.priority in PRIORITIES
    for pattern, needle in zip(sig.patterns, sig.needles, strict=True):
        assert pattern.flags & re.IGNORECASE
        assert len(needle) >= MIN_NEEDLE
        assert needle == needle.lower()
    for name in placeholders(sig.cause + sig.fix):
        base = name.removesuffix("_decoded").removesuffix("_action")
        assert name == "torch_install" or all(base in p.groupindex for p in sig.patterns)


def test_ids_are_unique() -> None:
    ids = [s.id for s in KB.signatures]
    assert len(ids) == len(set(ids))


def test_the_programs_own_bugs_outrank_the_cuda_errors_they_cause() -> None:
    """A stated program bug (priority 2) ranks above every environment cause's signature."""
    program = [s for s in KB.signatures if s.cause_class == "not-environment"]
    assert {"tensors-on-different-devices", "shapes-do-not-match",
            "index-out-of-range-assert"} <= {s.id for s in program}
    assert max(s.priority for s in KB.signatures if s.cause_class != "not-environment") < 2


@pytest.mark.parametrize(("pattern", "needle"), [
    (r"no kernel image is available", "no kernel image is available"),
    (r"found version (?P<v>\d{4,5})\)", "found version "),
    (r"libcudnn\w*\.so\.\d+", "libcudnn"),  # the longest certain run
    (r"CUDA_VISIBLE_DEVICES=\[\d", "cuda_visible_devices=["),
    (r"abc|defghij", ""),  # a top-level alternative: no literal is certain
    (r"NCCL (?:error|Error \d)[^\n]{0,300}?unhandled system error", "unhandled system error"),
    (r"colou?r scheme", "r scheme"),
])
def test_needle_is_a_literal_every_match_contains(pattern: str, needle: str) -> None:
    assert needle_of(pattern) == needle


BASE = """[[signature]]
id = "x"
title = "t"
family = "driver"
cause_class = "driver-too-old"
patterns = ['some distinct text (?P<v>\\d+)']
captures = { v = "cuda-int" }
cause = "c {v_decoded}."
fix = "f"
confirm = ["GD103"]
sources = ["https://github.com/a/b/issues/1"]
"""


@pytest.mark.parametrize(("change", "message"), [
    (("id = \"x\"", "id = \"Not Kebab\""), "kebab-case"),
    (("['some distinct text (?P<v>\\d+)']", "['ab(?P<v>\\d+)']"), "literal"),
    (("['some distinct text (?P<v>\\d+)']", "['some distinct text (']"), "bad pattern"),
    (("\"GD103\"", "\"X103\""), "check ids"),
    (("https://github.com/a/b/issues/1", "not a url"), "https"),
    (("c {v_decoded}.", "c {w}."), "not every pattern captures"),
    (("v = \"cuda-int\"", "v = \"roman\""), "captures map"),
    (("title = \"t\"", "title = \"t\"\ncolour = 1"), "unknown keys"),
    (("cause_class = \"driver-too-old\"", "cause_class = \"gremlins\""), "cause_class"),
    (("cause_class = \"driver-too-old\"\n", ""), "cause_class"),
])
def test_malformed_entries_are_refused_naming_them(change: tuple[str, str], message: str) -> None:
    assert parse(BASE).signatures[0].id == "x"
    with pytest.raises(KnowledgeBaseError, match=message):
        parse(BASE.replace(*change))


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(KnowledgeBaseError, match="duplicate signature"):
        parse(BASE + "\n" + BASE)
    with pytest.raises(KnowledgeBaseError, match="not TOML"):
        parse("[[signature")

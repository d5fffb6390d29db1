"""The registry: unique, well-formed, documented."""

from __future__ import annotations

import re

from gpudoctor.checks import REGISTRY, select
from gpudoctor.model import Layer


def test_ids_unique_and_well_formed() -> None:
    ids = [c.id for c in REGISTRY]
    assert len(ids) == len(set(ids)), "duplicate check id"
    slugs = [c.slug for c in REGISTRY]
    assert len(slugs) == len(set(slugs)), "duplicate slug"
    for c in REGISTRY:
        assert re.fullmatch(r"GD\d{3}", c.id), c.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", c.slug), c.slug
        assert c.title and c.needs
        assert len(c.doc) > 40, f"{c.id} needs a docstring (it is the docs page)"


def test_hundreds_digit_is_the_area() -> None:
    area = {"1": Layer.DRIVER, "2": Layer.CUDA, "3": Layer.CUDNN, "4": Layer.PYTORCH,
            "5": Layer.HOST, "6": Layer.REQUIREMENTS}
    for c in REGISTRY:
        assert area[c.id[2]] is c.layer, c.id


def test_select_by_id_slug_layer_and_unknown() -> None:
    kept, unknown = select(REGISTRY, only=["GD101", "torch-cuda-available", "host"])
    ids = {c.id for c in kept}
    assert {"GD101", "GD403", "GD501"} <= ids and "GD201" not in ids
    assert unknown == ()
    kept, unknown = select(REGISTRY, only=["GD999"], skip=["cuda"])
    assert kept == () and unknown == ("GD999",)
    kept, _ = select(REGISTRY, skip=["pytorch"])
    assert all(c.layer is not Layer.PYTORCH for c in kept)


def test_readme_documents_every_check_and_command() -> None:
    from pathlib import Path

    from gpudoctor.cli import COMMANDS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for c in REGISTRY:
        assert f"| {c.id} | {c.slug} |" in readme, f"README's checks table lacks {c.id}"
    usage = readme[readme.index("## Usage"):readme.index("## Checks")]
    for name in COMMANDS:
        assert f"gpudoctor {name}" in usage, f"README's usage lacks `gpudoctor {name}`"

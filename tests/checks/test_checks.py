"""`gpudoctor.checks`: the registry (unique, well-formed, documented), `select`, and every
registered check's `Check.reads`, exact enough to run only the selected checks' probes.

Every check runs over every recorded environment, and over variants of each where one fact is
missing (the SKIP branches), through a recorder that notes each Environment field read: a
field read but not declared fails. And, what selection relies on, a check's finding does not
change when the fields it does not declare are replaced by "not gathered".
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.checks import REGISTRY, Check, select
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import ENVIRONMENT_FIELDS, Environment, Layer, Reason, Unavailable
from gpudoctor.probes.gather import NOT_GATHERED
from gpudoctor.snapshot import loads

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"
MISSING = Unavailable(Reason.NOT_INSTALLED, "missing in this variant")


class Recorder:
    """An Environment stand-in that notes which fact fields are read."""

    def __init__(self, env: Environment) -> None:
        object.__setattr__(self, "_env", env)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name: str) -> Any:
        if name in ENVIRONMENT_FIELDS:
            self.read.add(name)
        return getattr(self._env, name)


def _environments() -> list[tuple[str, Environment]]:
    found = []
    for path in sorted(ENVS.glob("*.json")):
        env = loads(path.read_text(encoding="utf-8"))
        found.append((path.stem, env))
        found += [(f"{path.stem}-no-{name}", dataclasses.replace(env, **{name: MISSING}))
                  for name in sorted(ENVIRONMENT_FIELDS)]
    return found


ENVIRONMENTS = _environments()


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def test_fixtures_exist() -> None:
    assert len(ENVIRONMENTS) > len(ENVIRONMENT_FIELDS)


@pytest.mark.slow
@pytest.mark.parametrize("check", REGISTRY, ids=lambda c: c.id)
def test_reads_only_declared_facts(check: Check, tables: Tables) -> None:
    undeclared: dict[str, set[str]] = {}
    for name, env in ENVIRONMENTS:
        recorder = Recorder(env)
        check.run(recorder, tables)  # type: ignore[arg-type]
        if recorder.read - check.reads:
            undeclared[name] = recorder.read - check.reads
    assert not undeclared, f"{check.id} reads fields missing from its reads=: {undeclared}"


@pytest.mark.slow
@pytest.mark.parametrize("check", REGISTRY, ids=lambda c: c.id)
def test_finding_unchanged_without_undeclared_facts(check: Check, tables: Tables) -> None:
    for name, env in ENVIRONMENTS:
        trimmed = dataclasses.replace(
            env, **dict.fromkeys(ENVIRONMENT_FIELDS - check.reads, NOT_GATHERED))
        assert check.run(trimmed, tables) == check.run(env, tables), name


def test_every_check_declares_its_facts() -> None:
    """None of them falls back to "every field" (which would run every probe)."""
    assert [c.id for c in REGISTRY if c.reads == ENVIRONMENT_FIELDS] == []


def test_host_checks_need_no_torch() -> None:
    host = [c for c in REGISTRY if c.layer.value == "host"]
    assert host
    assert all("torch" not in c.reads for c in host)


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

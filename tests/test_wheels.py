"""gpudoctor.compat.wheels: the one pip-line builder. Each era's naming as PyTorch's
previous-versions page prints it (https://pytorch.org/get-started/previous-versions/), the
Pythons of each release, and every torch line gpudoctor prints, built by it."""

from __future__ import annotations

import shlex

import pytest

from gpudoctor.compat import Tables, load_tables, wheels
from gpudoctor.compat.query import query_cuda, query_gpu, query_torch
from gpudoctor.compat.wheels import Target, pip_line, python_fits, pythons_text

INDEX = "https://download.pytorch.org/whl/"


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def line(tables: Tables, version: str, tag: str | None, target: Target | None = None) -> str:
    rel = tables.torch_release(version)
    assert rel is not None
    return pip_line(rel, rel.variant(tag) if tag else None, target)


def test_the_pypi_default_of_the_find_links_era_has_no_label(tables: Tables) -> None:
    """torch 1.7.1's cu102 was PyPI's `torch==1.7.1`: no file `torch-1.7.1+cu102-...` exists
    on the find-links page, so `torch==1.7.1+cu102` finds no distribution. Before the one
    builder, `compat torch 1.7.1` printed exactly that."""
    assert line(tables, "1.7.1", "cu102") == "pip install torch==1.7.1"
    assert line(tables, "1.7.1", "cu101") == (
        "pip install torch==1.7.1+cu101 -f https://download.pytorch.org/whl/torch_stable.html")
    rows = query_torch(tables, "1.7.1").section("variants").rows
    pip = {dict(r.values)["variant"]: dict(r.values)["pip"] for r in rows}
    assert pip["cu102"] == "pip install torch==1.7.1"
    assert not any("+cu102" in p for p in pip.values())  # type: ignore[operator]


def test_the_extra_index_and_index_url_eras(tables: Tables) -> None:
    assert line(tables, "1.12.1", "cu113") == (
        f"pip install torch==1.12.1+cu113 --extra-index-url {INDEX}cu113")
    assert line(tables, "2.5.1", "cu121") == f"pip install torch==2.5.1 --index-url {INDEX}cu121"
    # installed: exact local pins (another build does not satisfy them), companions alike
    installed = Target("/venv/bin/python", "2.4.0+cu118", False, (("torchvision", "0.19.0"),))
    assert line(tables, "2.5.1", "cu121", installed) == (
        "/venv/bin/python -m pip install torch==2.5.1+cu121 torchvision==0.20.1+cu121 "
        f"--index-url {INDEX}cu121")
    # the same build installed: pip would keep it, so the line forces
    same = Target("/venv/bin/python", "2.5.1+cu121")
    assert "--force-reinstall" in line(tables, "2.5.1", "cu121", same)
    # an interpreter path with a space is quoted
    spaced = Target("/opt/my env/bin/python")
    assert shlex.split(line(tables, "2.5.1", "cu121", spaced))[0] == "/opt/my env/bin/python"


def test_the_pythons_of_a_release(tables: Tables) -> None:
    newest = tables.newest_torch()
    assert newest.python is not None
    oldest_py = newest.python[0]
    assert python_fits(newest, f"{oldest_py}.4") is True
    major, minor = (int(x) for x in oldest_py.split("."))
    assert python_fits(newest, f"{major}.{minor - 1}.12") is False
    assert python_fits(newest, None) is None
    old = tables.torch_release("2.0.1")
    assert old is not None and python_fits(old, "3.12.1") is False
    assert python_fits(old, "3.8.18") is True
    assert pythons_text(old) == "Python 3.8-3.11"


def test_every_compat_line_is_the_builders(tables: Tables) -> None:
    """`compat torch|cuda|gpu` print the builder's line for each variant, and the rows'
    `install_command` agrees with it (two builders once disagreed on 1.7.1)."""
    for rel in tables.torch_releases:
        rows = query_torch(tables, rel.version).section("variants").rows
        for row in rows:
            values = dict(row.values)
            variant = rel.variant(str(values["variant"]))
            assert values["pip"] == pip_line(rel, variant), (rel.version, values["variant"])
        for v in rel.variants:
            tag_line = pip_line(rel, None if v.tag == rel.pypi_default else v)
            assert rel.install_command(v.tag) == tag_line, (rel.version, v.tag)
    lines = [dict(r.values).get("pip") for a in (query_cuda(tables, "12.4"),
                                                 query_gpu(tables, "sm_86"))
             for s in a.sections for r in s.rows]
    assert any(lines)
    for text in filter(None, lines):
        words = shlex.split(str(text))
        pin = next(w for w in words if w.startswith("torch=="))
        version, _, tag = pin[len("torch=="):].partition("+")
        rel = tables.torch_release(version)
        assert rel is not None
        variant = rel.variant(tag) if tag else next(
            (v for v in rel.variants if v.index_url in words), None)
        assert text == pip_line(rel, variant), text


def test_install_command_delegates_to_the_builder(tables: Tables,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`TorchRelease.install_command` writes no pip line of its own: whatever the builder
    writes, it returns (agreement on today's rows alone would not catch a second builder that
    drifts the day `pip_line` learns something new)."""
    calls: list[tuple[str, str | None]] = []

    def builder(release: object, variant: object, target: object = None) -> str:
        calls.append((getattr(release, "version", "?"), getattr(variant, "tag", None)))
        return "the builder's line"

    monkeypatch.setattr(wheels, "pip_line", builder)
    rel = tables.torch_release("1.12.1")
    assert rel is not None and rel.pypi_default is not None
    other = next(v.tag for v in rel.variants if v.tag != rel.pypi_default)
    assert rel.install_command(other) == "the builder's line"
    assert rel.install_command(rel.pypi_default) == "the builder's line"
    assert rel.install_command("cu999") == "the builder's line"  # a tag it lacks: PyPI's
    assert calls == [("1.12.1", other), ("1.12.1", None), ("1.12.1", None)]

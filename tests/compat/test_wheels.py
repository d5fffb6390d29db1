"""gpudoctor.compat.wheels: the one pip-line builder. Each era's naming as PyTorch's
previous-versions page prints it (https://pytorch.org/get-started/previous-versions/), the
Pythons of each release, and every torch line gpudoctor prints, built by it."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from gpudoctor.compat import Tables, wheels
from gpudoctor.compat.query import query_cuda, query_gpu, query_torch
from gpudoctor.compat.wheels import Target, pip_line, python_fits, pythons_text

ROOT = Path(__file__).resolve().parents[2]

INDEX = "https://download.pytorch.org/whl/"


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
    """`compat torch|cuda|gpu` print the builder's line for each variant (the rows' own
    builder once disagreed with it on 1.7.1; it is gone: `test_only_wheels_writes_pip_lines`)."""
    for rel in tables.torch_releases:
        rows = query_torch(tables, rel.version).section("variants").rows
        for row in rows:
            values = dict(row.values)
            variant = rel.variant(str(values["variant"]))
            assert values["pip"] == pip_line(rel, variant), (rel.version, values["variant"])
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


def _pip_lines(path: Path) -> list[str]:
    """Each string of a module (constant, or literal part of an f-string) that writes `pip
    install`, docstrings aside (they describe, they print nothing)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [f"{path.name}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings and re.search(r"\bpip install\b", node.value)]


# explain's knowledge base is its owner's: general advice sentences ("pip install
# --no-build-isolation from source"), not lines for this machine
ELSEWHERE = {"explain"}


@pytest.mark.slow
def test_only_wheels_writes_pip_lines() -> None:
    """compat/wheels.py is the one pip-line builder: no other module writes `pip install`
    (before: TorchRelease.install_command, compat.query's pip_line, the cuDNN and cuBLAS
    lines of checks/cudnn.py and cudnn_builds.py, the nvidia-ml-py lines of the NVML probes,
    the source-checkout line of the shadowing torch)."""
    package = ROOT / "gpudoctor"
    writers = [hit for path in sorted(package.rglob("*.py"))
               if path != package / "compat" / "wheels.py"
               and path.relative_to(package).parts[0] not in ELSEWHERE
               for hit in _pip_lines(path)]
    assert writers == []


def test_the_scan_finds_a_second_writer(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""pip install x: a docstring describes"""\n'
                      'def fix(v):\n    return f"pip install --force-reinstall cudnn=={v}"\n')
    assert _pip_lines(module) == ["m.py:3"]


def test_the_library_lines(tables: Tables) -> None:
    assert wheels.cudnn_wheel_line("12", "9.1.0.70") == (
        "pip install --force-reinstall nvidia-cudnn-cu12==9.1.0.70")
    assert wheels.cudnn_wheel_line(12, None, "/venv/bin/python") == (
        "/venv/bin/python -m pip install --force-reinstall nvidia-cudnn-cu12")
    assert wheels.cuda_library_line("cublas", "11", "/a b/python") == (
        "'/a b/python' -m pip install nvidia-cublas-cu11")
    assert wheels.package_line("x>=1", upgrade=True) == "pip install -U 'x>=1'"


def test_torch_install_commands(tables: Tables) -> None:
    def command(version: str, tag: str | None) -> str:
        release = tables.torch_release(version)
        assert release is not None
        return pip_line(release, None if tag == release.pypi_default else release.variant(tag))

    assert command("2.5.1", "cu121") == (
        "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121"
    )
    assert command("2.5.1", "cu124") == "pip install torch==2.5.1"  # the PyPI default
    assert command("1.7.1", "cu110") == (
        "pip install torch==1.7.1+cu110 -f https://download.pytorch.org/whl/torch_stable.html"
    )
    assert command("1.12.1", "cu116") == (
        "pip install torch==1.12.1+cu116 --extra-index-url https://download.pytorch.org/whl/cu116"
    )
    assert command("1.8.2", "cu111").endswith("https://download.pytorch.org/whl/lts/1.8/cu111")


def test_pip_runs_through_the_interpreter_when_it_is_known() -> None:
    assert wheels.pip(None) == "pip"
    assert wheels.pip("/usr/bin/python3") == "/usr/bin/python3 -m pip"
    assert wheels.pip("/opt/my env/python") == "'/opt/my env/python' -m pip"
    assert wheels.cudnn_wheel_name(12) == wheels.cudnn_wheel_name("12") == "nvidia-cudnn-cu12"


def test_which_installed_versions_a_pin_keeps() -> None:
    """pip keeps an installed torch the pin matches (PEP 440): an unlabelled pin matches every
    local build of that version, a labelled one only its own."""
    assert wheels.satisfies("2.5.1+cu124", "2.5.1", None)
    assert wheels.satisfies("2.5.1+cu124", "2.5.1", "cu124")
    assert not wheels.satisfies("2.5.1+cu121", "2.5.1", "cu124")
    assert not wheels.satisfies("2.5.0", "2.5.1", None)
    assert not wheels.satisfies("not a version", "2.5.1", None)
    assert not wheels.satisfies("2.5.1", "2.5.1", "cu 124")  # not a specifier: never kept


def test_labels_and_companions_of_each_era(tables: Tables) -> None:
    old, new = tables.torch_release("1.7.1"), tables.torch_release("2.5.1")
    assert old is not None and new is not None and old.pypi_default == "cu102"
    cu102, cu101 = old.variant("cu102"), old.variant("cu101")
    assert cu102 is not None and cu101 is not None
    assert not wheels.labelled(old, cu102) and wheels.labelled(old, cu101)
    assert all(wheels.labelled(new, v) for v in new.variants)  # index-url: always labelled
    assert wheels.companion_version(new, "torchvision") == new.torchvision == "0.20.1"
    assert wheels.companion_version(new, "torchaudio") == new.torchaudio
    assert wheels.companion_version(new, "torchtext") is None

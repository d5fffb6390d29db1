"""The import-linter contracts of pyproject.toml hold, and they can fail (issue 22, item 2).

CI runs `lint-imports`; these tests prove the contracts are not decoration: a wrong-way import
(at the top of a module, or hidden in a function) breaks them, every temporary exception is
still needed, and every module of the package has a layer (import-linter's `exhaustive` needs
containers, which this layout has none of).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
CONFIG = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]

needs_import_linter = pytest.mark.skipif(
    importlib.util.find_spec("importlinter") is None,
    reason="import-linter is not installed (it needs Python >= 3.11)")

_RUN = ("import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package under `root` with the pyproject.toml there."""
    environ = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", _RUN, "--no-cache", "--config",
                           str(root / "pyproject.toml")], cwd=root, env=environ,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the package and of pyproject.toml, to break on purpose."""
    shutil.copytree(ROOT / "gpudoctor", tmp_path / "gpudoctor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.slow
@pytest.mark.subprocess
@needs_import_linter
def test_the_tree_keeps_every_contract() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.subprocess
@needs_import_linter
def test_a_wrong_way_import_breaks_the_layers(copy: Path) -> None:
    model = copy / "gpudoctor" / "model.py"
    model.write_text(model.read_text(encoding="utf-8") + "\nimport gpudoctor.cli\n",
                     encoding="utf-8")
    result = lint(copy)
    assert result.returncode == 1
    assert "gpudoctor.model is not allowed to import gpudoctor.cli" in result.stdout


@pytest.mark.slow
@pytest.mark.subprocess
@needs_import_linter
def test_an_import_hidden_in_a_function_breaks_them_too(copy: Path) -> None:
    versions = copy / "gpudoctor" / "versions.py"
    versions.write_text(versions.read_text(encoding="utf-8")
                        + "\n\ndef _f() -> object:\n    from gpudoctor.renderers import to_renderer"
                        "\n\n    return to_renderer\n", encoding="utf-8")
    result = lint(copy)
    assert result.returncode == 1
    assert "gpudoctor.versions is not allowed to import gpudoctor.renderers" in result.stdout


def _exceptions() -> list[tuple[str, str]]:
    return [(c["id"], line) for c in CONFIG["contracts"] for line in c.get("ignore_imports", ())]


@needs_import_linter
@pytest.mark.parametrize(("contract", "line"), _exceptions())
def test_every_listed_exception_is_still_needed(copy: Path, contract: str, line: str) -> None:
    """Without the line its contract breaks: an exception whose import is gone fails too
    (import-linter's unmatched-ignore alert), so the list can only shrink."""
    text = (copy / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index(f'id = "{contract}"')
    end = text.find("[[tool.importlinter.contracts]]", start)
    end = len(text) if end < 0 else end
    section = text[start:end]
    assert f'"{line}",' in section
    (copy / "pyproject.toml").write_text(
        text[:start] + section.replace(f'    "{line}",\n', "", 1) + text[end:], encoding="utf-8")
    result = lint(copy)
    assert result.returncode == 1, result.stdout


def _layer_names() -> list[tuple[str, bool]]:
    """Every module named in the layers contract, and whether it is marked optional."""
    (layers,) = (c["layers"] for c in CONFIG["contracts"] if c["type"] == "layers")
    names = []
    for layer in layers:
        for part in re.split(r"[|:]", layer):
            part = part.strip()
            names.append((part.strip("()"), part.startswith("(")))
    return names


def test_every_module_of_the_package_has_a_layer() -> None:
    package = ROOT / "gpudoctor"
    modules = {f"gpudoctor.{p.stem}" for p in package.glob("*.py") if p.name != "__init__.py"}
    modules |= {f"gpudoctor.{p.name}" for p in package.iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    named = {name for name, _ in _layer_names()}
    assert modules - named == set(), "give each new module a layer in pyproject.toml"


def test_a_module_marked_optional_does_not_exist_yet() -> None:
    """`(gpudoctor.x)` is for a module a later step creates: once it exists, the parentheses
    go (else a typo in its name would pass unchecked)."""
    package = ROOT / "gpudoctor"
    for name, optional in _layer_names():
        leaf = name.removeprefix("gpudoctor.")
        exists = (package / f"{leaf}.py").exists() or (package / leaf / "__init__.py").exists()
        assert exists != optional, name

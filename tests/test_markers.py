"""The test markers are declared and do what the README says (issue 22 item 4).

pyproject.toml declares `slow`, `subprocess`, `needs_torch` and `gpu` with `--strict-markers`
(a misspelt marker is an error, not a test silently in the wrong subset); the README's "Running
the tests" section gives the command of each subset, the fast subset's measured time, and only
paths that exist; `.ci/run` still finds the full-suite command where it looks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import conftest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 runner
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

MARKERS = {"slow", "subprocess", "needs_torch", "gpu"}
FAST = 'python -m pytest -q -m "not slow"'
COMMANDS = (
    "python -m pytest -q\n",  # the full suite
    FAST,
    'python -m pytest -q -m "not slow and not subprocess"',
    "python -m pytest -q --run-gpu -m gpu",
    "ruff check gpudoctor tests benchmarks",
    "mypy gpudoctor",
    "lint-imports",
)


def pytest_options() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        options: dict[str, Any] = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    return options


def running_the_tests() -> str:
    """The README's "Running the tests" section."""
    m = re.search(r"^## Running the tests\n(.*?)(?=^## )", README, re.M | re.S)
    assert m, "README.md has no '## Running the tests' section"
    return m.group(1)


def test_the_markers_are_declared_and_strict() -> None:
    options = pytest_options()
    declared = {line.split(":", 1)[0].strip() for line in options["markers"]}
    assert declared >= MARKERS, f"declare in pyproject.toml: {sorted(MARKERS - declared)}"
    assert "--strict-markers" in options["addopts"].split()


def test_the_readme_gives_each_subset_and_the_fast_time() -> None:
    section = running_the_tests()
    missing = [c.strip() for c in COMMANDS if c not in section]
    assert not missing, f"README 'Running the tests' lacks {missing}"
    assert f"- `{FAST}`" in section, "a bullet on the fast subset, with its time here"
    bullet = section.split(f"- `{FAST}`", 1)[1].split("\n- ", 1)[0]
    assert re.search(r"\bin \d+ s here\b", bullet), f"its measured time ('in N s here'): {bullet!r}"
    for path in re.findall(r"\btests/[\w/]+\.py\b", section):
        assert (ROOT / path).is_file(), f"README 'Running the tests' names {path}: no such file"


def test_ci_still_runs_the_full_suite_from_the_readme() -> None:
    """.ci/run evals the first line of the first ```bash block after 'Set up and run the
    tests': it must stay there and run the whole suite (no -m filter)."""
    after = README.split("\nSet up and run the tests", 1)[1]
    command = after.split("```bash\n", 1)[1].split("\n", 1)[0]
    assert command.endswith("python3 -m pytest -q"), command


def item(*keywords: str) -> Any:
    added: list[Any] = []
    return SimpleNamespace(keywords=set(keywords), add_marker=added.append, added=added)


@pytest.mark.parametrize("torch_found", [True, False])
def test_needs_torch_skips_only_without_torch(monkeypatch: pytest.MonkeyPatch,
                                              torch_found: bool) -> None:
    real = conftest.importlib.util.find_spec
    monkeypatch.setattr(conftest.importlib.util, "find_spec", lambda name, *a: (
        (real("pytest") if torch_found else None) if name == "torch" else real(name, *a)))
    config = SimpleNamespace(getoption=lambda name: True)
    needs, plain = item("needs_torch"), item()
    conftest.pytest_collection_modifyitems(config, [needs, plain])  # type: ignore[arg-type]
    assert plain.added == []
    if torch_found:
        assert needs.added == []
    else:
        [mark] = needs.added
        assert mark.name == "skip" and "torch" in mark.kwargs["reason"]


def test_gpu_tests_skip_unless_asked() -> None:
    for run_gpu, skipped in ((False, True), (True, False)):
        gpu = item("gpu")
        config = SimpleNamespace(getoption=lambda name, run_gpu=run_gpu: run_gpu)
        conftest.pytest_collection_modifyitems(config, [gpu])  # type: ignore[arg-type]
        assert bool(gpu.added) is skipped

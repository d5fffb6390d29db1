"""Every module has its unit tests at the mirrored path (STYLE.md §1, issue 22 item 4).

gpudoctor/a/b.py is tested in tests/a/test_b.py, a package's __init__.py in tests/a/test_a.py,
gpudoctor/x.py in tests/test_x.py. Exempt, with the reason: the package's own __init__.py (its
version only) and the child scripts, which run under the diagnosed interpreter and are tested
through the runners that start them. `NOT_YET` lists the modules still without their file:
it may only shrink (a listed module that gains its file, or no longer exists, fails here).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gpudoctor"

EXEMPT = {
    "__init__.py": "the version only",
    "probes/_torch_child.py": "the torch probe's child script: tested through probes/pytorch.py",
    "actions/_smoke_child.py": "the smoke test's child script: tested through actions/smoke.py",
    "actions/_distributed_child.py": "the distributed smoke child: tested through "
                                     "actions/distributed.py",
    "actions/__init__.py": "a docstring only",
    "reports/__init__.py": "a docstring only (the entry is reports/read.py)",
}

NOT_YET: set[str] = set()


def mirrored(module: Path) -> Path:
    """The test file of `module` (a path relative to the package)."""
    if module.name == "__init__.py":
        return ROOT / "tests" / module.parent / f"test_{module.parent.name}.py"
    return ROOT / "tests" / module.parent / f"test_{module.stem}.py"


def modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if "__pycache__" not in p.parts}


def test_every_module_has_its_mirrored_test_file() -> None:
    lacking = {m for m in modules() - EXEMPT.keys() - NOT_YET if not mirrored(Path(m)).exists()}
    assert not lacking, "write the tests at " + ", ".join(
        str(mirrored(Path(m)).relative_to(ROOT)) for m in sorted(lacking))


def test_the_not_yet_list_only_shrinks() -> None:
    done = {m for m in NOT_YET if mirrored(Path(m)).exists()}
    assert not done, f"remove from NOT_YET (their tests are in place): {sorted(done)}"
    gone = NOT_YET - modules()
    assert not gone, f"remove from NOT_YET (no such module): {sorted(gone)}"
    assert not EXEMPT.keys() - modules()


def test_a_module_without_its_file_is_found(tmp_path: Path) -> None:
    """The rule can fail: a new module with no test file is reported."""
    assert not mirrored(Path("checks/brand_new.py")).exists()
    assert mirrored(Path("checks/__init__.py")) == ROOT / "tests" / "checks" / "test_checks.py"
    assert mirrored(Path("snapshot.py")) == ROOT / "tests" / "test_snapshot.py"


def test_every_test_directory_is_a_package() -> None:
    """The mirrored layout repeats basenames (tests/cli/test_recommend.py for cli/recommend.py,
    tests/compat/test_recommend.py for compat/recommend.py): pytest imports a test module by its
    basename unless its directory is a package, and a second file of the same name then stops
    the whole run at collection ('import file mismatch', CI on 4f7722e). Every directory holding
    a Python file under tests/ (fixtures aside) has its __init__.py."""
    tests = ROOT / "tests"
    dirs = {p.parent for p in tests.rglob("*.py")
            if "fixtures" not in p.relative_to(tests).parts and "__pycache__" not in p.parts}
    lacking = sorted(str(d.relative_to(ROOT)) for d in dirs
                     if d.name != "support" and not (d / "__init__.py").exists())
    assert not lacking, f"add an __init__.py to: {lacking}"

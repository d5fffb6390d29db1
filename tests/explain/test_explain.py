"""The explain package (its __init__.py): what it exports, and its shape: every import at module
top (none hidden in a function), and no import cycle among its modules, counting the imports
made only for type checking."""

from __future__ import annotations

import ast
from pathlib import Path

import gpudoctor.explain as package
from gpudoctor.explain import core

PACKAGE = Path(__file__).resolve().parents[2] / "gpudoctor" / "explain"
MODULES = {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.glob("*.py")}


def _siblings(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[:2] == ["gpudoctor", "explain"]:
                out |= {parts[2]} if len(parts) > 2 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[2] for a in node.names
                    if a.name.startswith("gpudoctor.explain.")}
    return out & set(MODULES)


def test_no_import_is_hidden_in_a_function() -> None:
    hidden = [f"{name}.py:{node.lineno}"
              for name, tree in MODULES.items()
              for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
              for node in ast.walk(fn) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert hidden == []


def test_the_modules_import_each_other_without_a_cycle() -> None:
    graph = {name: _siblings(tree) - {name} for name, tree in MODULES.items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*path, node])):
                return cycle
        state[node] = 2
        return []

    cycles = [c for name in sorted(graph) if name not in state and (c := visit(name, []))]
    assert cycles == []


def test_the_package_exports_cores_entry_and_its_types() -> None:
    """`from gpudoctor.explain import explain, State` is the entry the CLI and the tests use."""
    assert sorted(package.__all__) == ["Diagnosis", "Explanation", "State", "explain"]
    assert all(getattr(package, name) is getattr(core, name) for name in package.__all__)

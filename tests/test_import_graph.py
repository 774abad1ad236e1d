"""The package's folders import each other without a cycle, at run time or for types.

A node is a subpackage folder (``results/``, ``classification/``, ...) or a
module at the package's top (``api``, ``estimator``, ``_compare``, ...); an
edge is any import of one node by a module of another: at the top of a file,
inside a function, or under ``if TYPE_CHECKING:``. The imports are read with
``ast``, nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "confrf"


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(package: Path) -> dict[str, dict[str, list[str]]]:
    """node -> imported node -> the imports behind the edge (``"module -> module"``)."""
    root = package.name
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}

    def node(module: str) -> str:
        parts = module.split(".")
        if len(parts) == 1:
            return root  # the package's __init__
        return f"{parts[1]}/" if (package / parts[1]).is_dir() else parts[1]

    def known(name: str) -> str:
        while name not in modules and "." in name:  # an attribute of a module: the module
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, dict[str, list[str]]] = {}
    for module, path in modules.items():
        here = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for stmt in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(stmt, ast.ImportFrom):
                if stmt.level:
                    parts = here.split(".")[: len(here.split(".")) - stmt.level + 1]
                    base = ".".join(parts + ([stmt.module] if stmt.module else []))
                else:
                    base = stmt.module or ""
                # "from .results import compare" imports the submodule when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in stmt.names]
            elif isinstance(stmt, ast.Import):
                targets = [a.name for a in stmt.names]
            else:
                continue
            for target in targets:
                if target != root and not target.startswith(f"{root}."):
                    continue
                a, b = node(module), node(known(target))
                if a != b:
                    edges.setdefault(a, {}).setdefault(b, []).append(f"{module} -> {target}")
    return edges


def cycles(edges: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(edges) | {w for out in edges.values() for w in out}):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_folders():
    edges = import_edges(PACKAGE)
    found = cycles(edges)
    detail = [
        f"{a} -> {b}: {edges[a][b][:3]}"
        for component in found
        for a in component
        for b in component
        if b in edges.get(a, {})
    ]
    assert not found, f"import cycles between folders {found}:\n" + "\n".join(detail)


def test_graph_reads_every_kind_of_import(tmp_path):
    # a toy package with one cycle made of each kind of import the check must see
    pkg = tmp_path / "toy"
    for folder in ("a", "b", "c"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "top.py").write_text("import toy.c.mod\n")
    (pkg / "a" / "mod.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b import thing\n"
    )
    (pkg / "b" / "mod.py").write_text("def f():\n    from ..top import g\n")
    (pkg / "c" / "mod.py").write_text("from toy.a.mod import x\n")
    edges = import_edges(pkg)
    assert set(edges["a/"]) == {"b/"} and set(edges["b/"]) == {"top"} and set(edges["top"]) == {"c/"}
    assert cycles(edges) == [["a/", "b/", "c/", "top"]]
    (pkg / "c" / "mod.py").write_text("import numpy\n")
    assert cycles(import_edges(pkg)) == []

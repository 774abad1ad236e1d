"""The .pyi stubs of the compiled kernels say what the built modules export, with their parameters.

mypy reads the stubs instead of the extension modules (pyproject.toml), so a stub that lost a function or a
parameter, or kept one the kernel dropped, would type-check calls that fail at run time: every name each module
exports is in its stub and nothing else, and every function's parameters (names, order, defaults) are the
compiled function's (Cython exposes its signature).
"""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import confrf

KERNELS = Path(confrf.__file__).parent / "_kernels"
MODULES = sorted(p.stem for p in KERNELS.glob("*.pyx"))


def _stub(name: str) -> tuple[dict[str, ast.FunctionDef], set[str]]:
    tree = ast.parse((KERNELS / f"{name}.pyi").read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    constants = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return functions, constants


def _exports(module) -> set[str]:
    return {n for n in vars(module) if not n.startswith("__") and not inspect.ismodule(getattr(module, n))}


def test_every_kernel_has_a_stub():
    assert MODULES == ["_cross", "_forest", "_pvalue", "_quantile"]
    assert sorted(p.stem for p in KERNELS.glob("*.pyi")) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_stub_names_what_the_module_exports(name):
    module = importlib.import_module(f"confrf._kernels.{name}")
    functions, constants = _stub(name)
    assert _exports(module) == set(functions) | constants


@pytest.mark.parametrize("name", MODULES)
def test_stub_parameters_are_the_kernels(name):
    module = importlib.import_module(f"confrf._kernels.{name}")
    functions, _ = _stub(name)
    for fname, node in functions.items():
        compiled = list(inspect.signature(getattr(module, fname)).parameters.values())
        args = node.args.args
        assert [a.arg for a in args] == [p.name for p in compiled], fname
        defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
        for p, default in zip(compiled, defaults):
            if default is None:
                assert p.default is inspect.Parameter.empty, (fname, p.name)
            elif not (isinstance(default, ast.Constant) and default.value is Ellipsis):  # "= ...": any default
                assert ast.literal_eval(default) == p.default, (fname, p.name)

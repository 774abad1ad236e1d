"""Every docstring example in confrf runs and prints what it says (the API pages show them).

One test per module, so a broken example names its module; examples that need an optional
extra that is not installed (LightGBM) are skipped with the reason, never silently passed.
"""

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import confrf

# module -> the optional package its examples need
NEEDS = {"confrf.localizers.lightgbm_forest": "lightgbm"}


def _modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    names = []
    for info in pkgutil.walk_packages(confrf.__path__, "confrf."):
        if "._kernels" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        if any(t.examples for t in finder.find(module)):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name, monkeypatch):
    needed = NEEDS.get(name)
    if needed and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{name}'s examples need {needed} (an optional extra)")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failed = []
    for test in doctest.DocTestFinder().find(module):
        out: list[str] = []
        result = runner.run(test, out=out.append, clear_globs=True)
        if result.failed:
            failed.append("".join(out))
    assert not failed, "\n".join(failed)

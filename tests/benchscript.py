"""Import a script of benchmarks/ by path (benchmarks/ is not a package), for the smoke tests of the scripts."""

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextmanager
def benchmark_script(filename: str) -> Iterator[ModuleType]:
    """The module of ``benchmarks/<filename>``; sys.path and sys.modules are restored afterwards."""
    name = Path(filename).stem
    path_before = list(sys.path)
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / filename)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the file executes
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)
        sys.path[:] = path_before  # the scripts put the repository and benchmarks/ on the path

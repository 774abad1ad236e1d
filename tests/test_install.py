"""A source folder without compiled kernels (a clone's root) says what to do instead of failing deep inside.

The README's first command itself, ``pip install . && confrf demo`` from the root of a fresh
clone in a fresh virtual environment, is run by ``.ci/run``.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import confrf


def test_source_folder_without_kernels_gives_a_clear_import_error(tmp_path):
    # a copy of the package under test without its compiled modules, as in a fresh clone
    shutil.copytree(
        Path(confrf.__file__).parent,
        tmp_path / "confrf",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.csv.gz"),
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", "import confrf"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    last = proc.stderr[proc.stderr.index("ImportError: ") :]
    assert f"confrf's compiled kernels are not built in {tmp_path / 'confrf' / '_kernels'}" in last
    for remedy in (
        "confrf demo",
        "run Python from any other folder",
        "pip install -e .",
        "python setup.py build_ext --inplace",
    ):
        assert remedy in last
    assert "ModuleNotFoundError" not in proc.stderr


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(confrf.__file__).resolve().parents[1])}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_import_is_lazy_and_every_public_name_loads(tmp_path):
    # `import confrf` (and so `confrf fit --help`) loads no numerical library; a name loads what it needs
    code = (
        "import sys, confrf\n"
        "heavy = {'numpy', 'pandas', 'scipy', 'sklearn', 'statsmodels', 'formulaic'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        "assert set(confrf.__all__) <= set(dir(confrf))\n"
        "from confrf import *\n"
        "print(callable(confrf.lcp_rf), confrf.datasets.__name__, confrf.dask.__name__)\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "True confrf.datasets confrf.dask"]
    assert "has no attribute 'nope'" in _python("import confrf; confrf.nope", tmp_path).stderr


def test_a_subpackage_imports_first_on_its_own(tmp_path):
    # no import cycle hidden by the order of confrf/__init__.py: localizers once imported calibrators back
    proc = _python("import confrf.localizers.kernel, confrf.localizers, confrf.calibrators", tmp_path)
    assert proc.returncode == 0, proc.stderr

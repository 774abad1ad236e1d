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

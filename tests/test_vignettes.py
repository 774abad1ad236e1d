"""Execute every vignette in a real Jupyter kernel (nbclient + ipykernel) at a small size.

The notebooks are stored without outputs and read their sizes from environment variables
(``CONFRF_VIGNETTE_N`` rows, ``CONFRF_VIGNETTE_REPS`` Monte Carlo repetitions) with full-size
defaults; here they get the small values of ``SIZES``. The kernel is started by
``vignettes/run_all.py`` (the full-size runner): this Python, a temporary working directory,
and the same ``confrf`` as this test session (the checkout goes on the kernel's PYTHONPATH only
when this session imports the in-place build from it).
"""

import importlib.util
import json
from pathlib import Path

import pytest

import confrf

ROOT = Path(__file__).resolve().parent.parent
VIGNETTES = sorted((ROOT / "vignettes").glob("*.ipynb"))

#: test sizes of every notebook (each runs in about 10-30 s of CPU on one core)
SIZES = {
    "01-getting-started": {"CONFRF_VIGNETTE_N": "3000"},
    # 2000 rows give 800 calibration rows: QRF-TC gets n2 = 267 (binomial target 247/267)
    "02-reproducing-the-paper": {"CONFRF_VIGNETTE_N": "2000"},
    "03-guarantees-in-practice": {"CONFRF_VIGNETTE_N": "3000", "CONFRF_VIGNETTE_REPS": "3"},
    "04-sklearn-estimator": {"CONFRF_VIGNETTE_N": "2000"},
    "05-classification": {"CONFRF_VIGNETTE_N": "3000", "CONFRF_VIGNETTE_REPS": "2"},
}
# one OpenMP thread in the kernel, as in this session (conftest.py): busy-waiting OpenMP threads
# make HistGradientBoosting many times slower on shared cores
KERNEL_ENV = {"OMP_NUM_THREADS": "1"}


def _runner():
    spec = importlib.util.spec_from_file_location("confrf_vignette_runner", ROOT / "vignettes" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.long  # 5-40 s each
@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_executes(path, tmp_path):
    nb, kernel_confrf = _runner().execute(path, {**KERNEL_ENV, **SIZES[path.stem]}, cwd=tmp_path, timeout=600)
    assert Path(kernel_confrf).resolve() == Path(confrf.__file__).resolve()
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
    # the notebooks leave nothing behind in their working directory
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_is_stored_without_outputs_and_reads_its_sizes(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), "clear the outputs"
    source = "".join("".join(c["source"]) for c in code)
    assert path.stem in SIZES, "give the new notebook a test size in SIZES"
    for name in SIZES[path.stem]:
        assert f'os.environ.get("{name}"' in source


def test_there_are_vignettes():
    assert {p.stem for p in VIGNETTES} >= set(SIZES)

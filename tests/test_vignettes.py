"""Execute every vignette in a real Jupyter kernel (nbclient + ipykernel) at a small size.

The notebooks are stored without outputs and read their sizes from environment variables
(``CONFRF_VIGNETTE_N`` rows, ``CONFRF_VIGNETTE_REPS`` Monte Carlo repetitions) with full-size
defaults; here they get the test sizes of ``vignettes/run_all.py`` (``TEST_SIZES``). The kernel
is started by that runner: this Python, a temporary working directory, and the same ``confrf``
as this test session (the checkout goes on the kernel's PYTHONPATH only when this session
imports the in-place build from it). Each notebook runs once per session (the ``vignette_runs``
fixture of conftest.py): the documentation build of tests/test_docs.py shows the same runs.
"""

import importlib.util
import json
from pathlib import Path

import pytest

import confrf

# the notebooks run once per session for these tests and the docs build (tests/test_docs.py): one xdist worker
pytestmark = pytest.mark.xdist_group("notebooks")

ROOT = Path(__file__).resolve().parent.parent
VIGNETTES = sorted((ROOT / "vignettes").glob("*.ipynb"))


def _runner():
    spec = importlib.util.spec_from_file_location("confrf_vignette_runner", ROOT / "vignettes" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIZES = _runner().TEST_SIZES
DOCS_SIZES = _runner().DOCS_SIZES


@pytest.mark.long  # 5-40 s each
@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_executes(path, vignette_runs):
    run = vignette_runs.run(path)
    assert Path(run["confrf_file"]).resolve() == Path(confrf.__file__).resolve()
    assert any(cell.get("outputs") for cell in run["nb"].cells if cell.cell_type == "code")
    # the notebooks leave nothing behind in their working directory
    assert run["left"] == []


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_is_stored_without_outputs_and_reads_its_sizes(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), "clear the outputs"
    source = "".join("".join(c["source"]) for c in code)
    for table, sizes in [("test", SIZES), ("docs", DOCS_SIZES)]:
        assert path.stem in sizes, f"give the new notebook its {table} sizes in SIZES of vignettes/run_all.py"
        for name in sizes[path.stem]:
            assert f'os.environ.get("{name}"' in source


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_documentation_sizes_are_set_before_the_notebook_reads_them(path, monkeypatch):
    import os

    import nbformat

    sizes = DOCS_SIZES[path.stem]
    text = _runner().with_sizes(path, sizes)
    assert text == _runner().with_sizes(path, sizes)  # the same text every build
    nb = nbformat.reads(text, as_version=4)
    stored = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    # a hidden cell sets the sizes first, a visible note says so, and the notebook follows unchanged
    assert code[0].metadata.get("tags") == ["remove-cell"], "the sizes are set before the first code cell"
    assert [c.source for c in code[1:]] == [c.source for c in stored.cells if c.cell_type == "code"]
    note = nb.cells[nb.cells.index(code[0]) - 1]
    assert note.cell_type == "markdown" and all(f"`{k}={v}`" in note.source for k, v in sizes.items())
    monkeypatch.setattr(os, "environ", {})
    exec(code[0].source, {})
    assert os.environ == sizes


def test_there_are_vignettes():
    assert {p.stem for p in VIGNETTES} >= set(SIZES)

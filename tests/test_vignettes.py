"""Run the code cells of every vignette at a small size (outputs are not stored)."""

import json
from pathlib import Path

import pytest

VIGNETTES = sorted((Path(__file__).parent.parent / "vignettes").glob("*.ipynb"))


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs(path, monkeypatch):
    monkeypatch.setenv("CONFRF_VIGNETTE_N", "3000")
    nb = json.loads(path.read_text())
    ns: dict = {"__name__": "__vignette__"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}", "exec"), ns)


def test_there_are_vignettes():
    assert VIGNETTES

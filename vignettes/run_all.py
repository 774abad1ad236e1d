#!/usr/bin/env python
"""Execute the vignettes in a real Jupyter kernel and write executed copies.

Usage (from anywhere)::

    python vignettes/run_all.py                      # every notebook at full size -> vignettes/_executed/
    python vignettes/run_all.py --out /tmp/executed  # another output folder
    python vignettes/run_all.py 02 03                # only the notebooks whose name contains "02" or "03"
    python vignettes/run_all.py --set CONFRF_VIGNETTE_N=3000 --set CONFRF_VIGNETTE_REPS=3   # small sizes
    python vignettes/run_all.py --sizes docs         # each notebook at its documentation size (SIZES)

The notebooks read their sizes from environment variables (``CONFRF_VIGNETTE_N``,
``CONFRF_VIGNETTE_REPS``) and default to full size; :data:`SIZES` holds the reduced sizes of
the documentation build and of the tests. The kernel runs this very Python
interpreter, in a temporary working directory, and imports the same ``confrf`` as this script:
the installed package, or the in-place build of this checkout when that is what this script
imports (then the checkout goes on the kernel's ``PYTHONPATH``). ``tests/test_vignettes.py``
uses :func:`execute` with small sizes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

VIGNETTES = Path(__file__).resolve().parent
REPO = VIGNETTES.parent

#: reduced sizes (environment of the kernel) of every notebook. "test": each runs in about 10-40 s of
#: CPU on one core (tests/test_vignettes.py; the numbers are noisy). "docs": large enough for the
#: tables and figures to say what the full-size run says, small enough for a documentation build
#: (docs/conf.py executes a notebook at these sizes when no executed copy is given).
SIZES: dict[str, dict[str, dict[str, str]]] = {
    "test": {
        "01-getting-started": {"CONFRF_VIGNETTE_N": "3000"},
        # 2000 rows give 800 calibration rows: QRF-TC gets n2 = 267 (binomial target 247/267)
        "02-reproducing-the-paper": {"CONFRF_VIGNETTE_N": "2000"},
        "03-guarantees-in-practice": {"CONFRF_VIGNETTE_N": "3000", "CONFRF_VIGNETTE_REPS": "3"},
        "04-sklearn-estimator": {"CONFRF_VIGNETTE_N": "2000"},
        "05-classification": {"CONFRF_VIGNETTE_N": "3000", "CONFRF_VIGNETTE_REPS": "2"},
    },
    "docs": {
        "01-getting-started": {"CONFRF_VIGNETTE_N": "10000"},
        "02-reproducing-the-paper": {"CONFRF_VIGNETTE_N": "6000"},
        "03-guarantees-in-practice": {"CONFRF_VIGNETTE_N": "5000", "CONFRF_VIGNETTE_REPS": "20"},
        "04-sklearn-estimator": {"CONFRF_VIGNETTE_N": "5000"},
        "05-classification": {"CONFRF_VIGNETTE_N": "6000", "CONFRF_VIGNETTE_REPS": "3"},
    },
}
TEST_SIZES = SIZES["test"]
DOCS_SIZES = SIZES["docs"]

#: the probe cell run before the notebook's own cells (removed from the executed copy)
_PROBE = "import confrf\nprint(confrf.__file__)"


def notebooks(patterns: Sequence[str] = ()) -> list[Path]:
    """The vignettes in name order, restricted to names containing one of ``patterns`` if any."""
    paths = sorted(VIGNETTES.glob("*.ipynb"))
    return [p for p in paths if not patterns or any(s in p.name for s in patterns)]


def _import_confrf():
    try:
        import confrf
    except ImportError:  # a checkout with the in-place build but nothing installed
        sys.path.insert(0, str(REPO))
        import confrf
    return confrf


def kernel_env(sizes: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment of the kernel: this process's, the ``sizes``, and the checkout on
    ``PYTHONPATH`` only when the ``confrf`` imported here comes from it (the in-place build).

    The kernel starts in a temporary directory, so an installed ``confrf`` is never shadowed by
    an uncompiled source tree in the working directory.
    """
    confrf = _import_confrf()
    env = dict(os.environ)
    env.update({k: str(v) for k, v in (sizes or {}).items()})
    root = Path(confrf.__file__).resolve().parent.parent
    if root == REPO:
        env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def with_sizes(path: Path, sizes: Mapping[str, str]) -> str:
    """The notebook at ``path``, as text, with ``sizes`` set before its first code cell.

    A hidden cell (tag ``remove-cell``) sets the environment variables the notebook reads its
    sizes from, and a visible note says which sizes the page was run at; the documentation
    build executes this text when it has no executed copy of the notebook. The two cells have
    fixed ids, so the same notebook and sizes always give the same text (an incremental build
    sees an unchanged notebook). Without ``sizes`` the notebook is returned as it is stored.
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if sizes:
        first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
        shown = ", ".join(f"`{k}={v}`" for k, v in sorted(sizes.items()))
        note = nbformat.v4.new_markdown_cell(
            f"*The documentation build ran this notebook at a reduced size ({shown}); "
            "`python vignettes/run_all.py` runs it at full size, and the next build shows that run.*"
        )
        setting = nbformat.v4.new_code_cell(
            f"import os\n\nos.environ.update({dict(sorted(sizes.items()))!r})", metadata={"tags": ["remove-cell"]}
        )
        note["id"], setting["id"] = "confrf-docs-sizes-note", "confrf-docs-sizes"
        nb.cells[first_code:first_code] = [note, setting]
    return nbformat.writes(nb)


def execute(path: Path, sizes: Mapping[str, str] | None = None, *, cwd: Path | None = None, timeout: int | None = None):
    """Run every cell of the notebook at ``path`` in a new kernel.

    Parameters
    ----------
    path : Path
        The notebook (stored without outputs).
    sizes : mapping, optional
        Extra environment variables for the kernel, e.g. ``{"CONFRF_VIGNETTE_N": "2000"}``.
    cwd : Path, optional
        Working directory of the kernel; a fresh temporary directory by default.
    timeout : int, optional
        Seconds allowed per cell (None: no limit).

    Returns
    -------
    nb : NotebookNode
        The executed notebook, with outputs.
    confrf_file : str
        ``confrf.__file__`` as imported by the kernel.

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        When a cell raises; the message holds the cell and the traceback.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_PROBE))
    with tempfile.TemporaryDirectory(prefix="confrf-vignette-") as tmp:
        client = NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd or tmp)}}
        )
        # the kernel runs this interpreter, whatever the "python3" kernelspec found on the machine says
        client.create_kernel_manager().kernel_spec.argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ]
        client.execute(env=kernel_env(sizes))
    probe = nb.cells.pop(0)
    confrf_file = "".join(o.get("text", "") for o in probe.outputs if o.get("name") == "stdout").strip()
    for cell in nb.cells:  # number the notebook's own cells from 1
        if cell.cell_type == "code" and cell.get("execution_count"):
            cell.execution_count -= 1
            for out in cell.outputs:
                if out.get("execution_count"):
                    out.execution_count -= 1
    return nb, confrf_file


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Execute the confrf vignettes (full size by default).")
    ap.add_argument("patterns", nargs="*", help="run only notebooks whose file name contains one of these")
    ap.add_argument(
        "--out",
        type=Path,
        default=VIGNETTES / "_executed",
        help="folder of the executed copies (default: vignettes/_executed, not committed)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the notebooks, e.g. CONFRF_VIGNETTE_N=3000 (repeatable)",
    )
    ap.add_argument(
        "--sizes",
        choices=["full", *SIZES],
        default="full",
        help="full (default), or the reduced sizes of the documentation build (docs) or of the tests (test); "
        "--set overrides them",
    )
    ap.add_argument("--timeout", type=int, default=None, help="seconds allowed per cell (default: no limit)")
    args = ap.parse_args(argv)
    bad = [item for item in args.set if "=" not in item]
    if bad:
        ap.error(f"--set takes NAME=VALUE, got {bad}")
    given = dict(item.split("=", 1) for item in args.set)
    paths = notebooks(args.patterns)
    if not paths:
        ap.error(f"no notebook in {VIGNETTES} matches {args.patterns}")
    import nbformat

    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for path in paths:
        t0 = time.perf_counter()
        print(f"running {path.name}", flush=True)  # on its own line: the kernel may log to stderr meanwhile
        try:
            sizes = {**SIZES.get(args.sizes, {}).get(path.stem, {}), **given}
            nb, confrf_file = execute(path, sizes, timeout=args.timeout)
        except Exception as exc:  # report every notebook, then fail
            print(f"{path.name}: FAILED after {time.perf_counter() - t0:.0f} s\n{exc}", flush=True)
            failed.append(path.name)
            continue
        nbformat.write(nb, args.out / path.name)
        print(
            f"{path.name}: {time.perf_counter() - t0:.0f} s (confrf from {confrf_file}) -> {args.out / path.name}",
            flush=True,
        )
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Sphinx configuration of the confrf documentation.

Build (from the repository root)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference imports ``confrf`` and needs its compiled kernels. The
package that gets imported is, in this order: the one Python finds by itself
when its kernels are compiled (an installed package, or the source tree with
an in-place build when the build runs from the repository root); otherwise the
source tree with an in-place build. A source tree *without* compiled kernels
is never imported (CI installs the package and builds the docs from the
repository root, where the bare source tree would shadow the installed one).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
#: build-time files (gitignored): notebook copies (Sphinx reads sources only below docs/) and API stubs
GENERATED = DOCS / "_generated"
KERNEL_MODULES = ("_forest", "_quantile")


# -- which confrf autodoc imports ----------------------------------------------
def _compiled(pkg_dir: Path) -> bool:
    """Whether ``pkg_dir`` (a confrf package folder) holds every compiled kernel."""
    kernels = pkg_dir / "_kernels"
    return all(
        any(kernels.glob(f"{m}.*.so"))
        or any(kernels.glob(f"{m}.*.pyd"))
        or any(kernels.glob(f"{m}.so"))
        or any(kernels.glob(f"{m}.pyd"))
        for m in KERNEL_MODULES
    )


def _found_confrf() -> Path | None:
    """Folder of the confrf that ``import confrf`` would load now (nothing is imported)."""
    importlib.invalidate_caches()
    spec = importlib.util.find_spec("confrf")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _is_root(entry: str) -> bool:
    try:
        return Path(entry or os.getcwd()).resolve() == ROOT
    except OSError:
        return False


def _select_confrf() -> Path:
    found = _found_confrf()
    if found is not None and _compiled(found):
        return found
    if found == ROOT / "confrf":
        # the uncompiled source tree shadows an installed package: look past it
        saved = list(sys.path)
        sys.path[:] = [p for p in sys.path if not _is_root(p)]
        other = _found_confrf()
        if other is not None and _compiled(other):
            return other
        sys.path[:] = saved
    elif _compiled(ROOT / "confrf"):
        sys.path.insert(0, str(ROOT))  # not installed: the in-place build of this checkout
        return ROOT / "confrf"
    raise RuntimeError(
        "the documentation imports confrf with its compiled kernels, and none was found: run "
        "`pip install .` or `python setup.py build_ext --inplace` first."
    )


CONFRF_DIR = _select_confrf()
import confrf  # after choosing the package above


# -- notebooks: copied from vignettes/ at build time ---------------------------
def _sync_vignettes() -> None:
    """Mirror ``vignettes/*.ipynb`` into ``docs/_generated/vignettes/`` (stale copies removed).

    A full-size executed copy from ``python vignettes/run_all.py``
    (``vignettes/_executed/``) is shown instead of the stored notebook when it is
    newer, so the site then shows every table and figure. ``copy2`` keeps
    modification times, so unchanged notebooks are not re-read by an
    incremental build.
    """
    src = ROOT / "vignettes"
    dst = GENERATED / "vignettes"
    dst.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in sorted(src.glob("*.ipynb"))}
    for name, path in list(wanted.items()):
        done = src / "_executed" / name
        if done.exists() and done.stat().st_mtime >= path.stat().st_mtime:
            wanted[name] = done
    for old in dst.glob("*.ipynb"):
        if old.name not in wanted:
            old.unlink()
    for name, path in wanted.items():
        target = dst / name
        if (
            not target.exists()
            or target.stat().st_mtime != path.stat().st_mtime
            or target.stat().st_size != path.stat().st_size
        ):
            shutil.copy2(path, target)


_sync_vignettes()


def _prune_api_stubs() -> None:
    """Delete the API stubs of names no longer listed in ``api.rst``.

    autosummary rewrites the stubs of listed names on every build; a stub left from a removed
    name would be an orphan page (a warning). Only stale files are removed, so a build running
    at the same time never loses a page it is reading.
    """
    out = GENERATED / "api"
    if not out.is_dir():
        return
    keep = set()
    for name in re.findall(r"^   ([A-Za-z_][\w.]*)\s*$", (DOCS / "api.rst").read_text(), flags=re.MULTILINE):
        full = f"confrf.{name}"
        keep.add(full)
        try:  # a module listed in api.rst gets one stub per name of its __all__
            module = importlib.import_module(full)
        except ImportError:
            continue
        keep.update(f"{full}.{member}" for member in getattr(module, "__all__", ()))
    for stub in out.glob("*.rst"):
        if stub.stem not in keep:
            stub.unlink()


_prune_api_stubs()


# -- project -------------------------------------------------------------------
project = "confrf"
author = "confrf developers"
copyright = "confrf developers"
release = confrf.__version__
version = release

extensions = [
    "myst_nb",  # markdown pages (MyST) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
    # included into benchmarks/index.md, not pages of their own
    "benchmarks/peers.md",
    "benchmarks/scale.md",
    "benchmarks/tuning_levers.md",
    "benchmarks/classification.md",
    "benchmarks/pac.md",
]
templates_path = ["_templates"]

# -- MyST and notebooks ----------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# notebooks are stored without outputs and are run by the test suite, not by the docs build
nb_execution_mode = "off"

# -- API reference -----------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False  # a module's __all__ says what is public
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections give the types
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML ------------------------------------------------------------------------
html_theme = "furo"
html_title = f"confrf {release}"
html_static_path: list[str] = []

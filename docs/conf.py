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
import json
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


# -- the kernel that executes the pages: this Python, this confrf --------------
def _kernel_pythonpath() -> str:
    """``PYTHONPATH`` of the kernel: the checkout first when the in-place build is the one chosen,
    and never the checkout otherwise (its uncompiled source folder would shadow the package)."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and not _is_root(p)]
    if CONFRF_DIR == ROOT / "confrf":
        entries.insert(0, str(ROOT))
    return os.pathsep.join(entries)


def _install_kernel() -> None:
    """Write the ``python3`` kernelspec the pages run in, and put it first on ``JUPYTER_PATH``.

    The pages and notebooks name the kernel ``python3``. Whatever kernelspec of that name the
    machine has may start another interpreter (the usual one starts ``python`` from ``PATH``), so
    the build uses its own: this interpreter, with the ``PYTHONPATH`` that makes ``import confrf``
    load :data:`CONFRF_DIR`. The kernel runs in a temporary folder (``nb_execution_in_temp``), so
    the folder it starts in shadows nothing.
    """
    spec_dir = GENERATED / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (confrf documentation)",
        "language": "python",
        "env": {"PYTHONPATH": _kernel_pythonpath()},
    }
    text = json.dumps(spec, indent=1) + "\n"
    target = spec_dir / "kernel.json"
    if not target.exists() or target.read_text() != text:
        tmp = target.with_suffix(f".{os.getpid()}.tmp")  # atomic: a build running at the same time reads a whole file
        tmp.write_text(text)
        tmp.replace(target)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(GENERATED / "jupyter")] + [p for p in [os.environ.get("JUPYTER_PATH")] if p]
    )


_install_kernel()


# -- notebooks: copied from vignettes/ at build time ---------------------------
def _vignette_runner():
    spec = importlib.util.spec_from_file_location("confrf_vignette_runner", ROOT / "vignettes" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sync_vignettes() -> list[str]:
    """Mirror ``vignettes/*.ipynb`` into ``docs/_generated/vignettes/`` (stale copies removed).

    Each notebook is shown, in this order of preference:

    1. an executed copy from the folder named by the environment variable
       ``CONFRF_DOCS_VIGNETTES`` (the test suite executes the notebooks once and builds the
       documentation from those copies);
    2. a full-size executed copy from ``python vignettes/run_all.py`` (``vignettes/_executed/``)
       newer than the stored notebook;
    3. otherwise the stored notebook, with the documentation sizes of ``vignettes/run_all.py``
       set in a first hidden cell; the build executes it (and caches the outputs).

    Returns the paths (relative to ``docs/``) of the copies that were executed already, which
    the build must not execute again. Unchanged files are not rewritten, so an incremental build
    does not re-read them.
    """
    src = ROOT / "vignettes"
    dst = GENERATED / "vignettes"
    dst.mkdir(parents=True, exist_ok=True)
    given = os.environ.get("CONFRF_DOCS_VIGNETTES")
    runner = _vignette_runner()
    wanted: dict[str, Path | str] = {}
    executed = []
    for path in sorted(src.glob("*.ipynb")):
        done = src / "_executed" / path.name
        if given:
            done = Path(given) / path.name
            if not done.is_file():
                raise RuntimeError(f"CONFRF_DOCS_VIGNETTES={given} has no executed copy of {path.name}")
        if done.is_file() and (given or done.stat().st_mtime >= path.stat().st_mtime):
            wanted[path.name] = done
            executed.append(f"_generated/vignettes/{path.name}")
        else:
            wanted[path.name] = runner.with_sizes(path, runner.DOCS_SIZES.get(path.stem, {}))
    for old in dst.glob("*.ipynb"):
        if old.name not in wanted:
            old.unlink()
    for name, source in wanted.items():
        target = dst / name
        if isinstance(source, str):
            if not target.exists() or target.read_text() != source:
                target.write_text(source)
        elif (
            not target.exists()
            or target.stat().st_mtime != source.stat().st_mtime
            or target.stat().st_size != source.stat().st_size
        ):
            shutil.copy2(source, target)  # keeps the modification time: unchanged copies are not re-read
    return executed


PREEXECUTED = _sync_vignettes()


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
    # the sections of benchmarks/index.md, each written by its script and included there (not
    # pages of their own; tests/test_docs.py checks that every one is included)
    *sorted(f"benchmarks/{p.name}" for p in (DOCS / "benchmarks").glob("*.md") if p.name != "index.md"),
]
templates_path = ["_templates"]

# -- MyST and notebooks ----------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The build executes the pages written as MyST-NB text notebooks (front matter
# `file_format: mystnb`) and the vignettes, each in a fresh kernel (see _install_kernel) started in
# a temporary folder. Outputs are cached by the notebook's code (jupyter-cache, in
# <outdir>/../.jupyter_cache): a rebuild executes only what changed. An error in any cell fails
# the build. `-D nb_execution_mode=off` builds without executing anything.
nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = True
nb_execution_timeout = 600  # seconds per cell: the vignettes at their documentation sizes
nb_execution_excludepatterns = PREEXECUTED  # executed copies of the vignettes are shown as they are
nb_merge_streams = True  # one output block per cell for what it prints

# -- API reference -----------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False  # a module's __all__ says what is public
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections give the types
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


def _skip_sklearn_request_setters(app, what, name, obj, skip, options):
    """Leave out scikit-learn's metadata-routing setters (``set_fit_request``, ...).

    scikit-learn generates them on estimators whose ``fit`` takes more than ``X`` and ``y``; their
    docstrings point into scikit-learn's own glossary and user guide, which this site does not have.
    """
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_request_setters)


# -- HTML ------------------------------------------------------------------------
html_theme = "furo"
html_title = f"confrf {release}"
html_static_path = ["_static"]
html_css_files = ["confrf.css"]

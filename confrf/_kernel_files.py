"""Whether the compiled kernels are there, from file names alone (no import: ``import confrf`` stays fast)."""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

#: the folder of the compiled kernels
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels")


def kernels_built() -> bool:
    """True when the compiled ``_forest`` kernel is in ``confrf/_kernels`` (under any extension suffix)."""
    return any(os.path.exists(os.path.join(KERNELS, "_forest" + s)) for s in EXTENSION_SUFFIXES)


def not_built_error() -> ImportError:
    """The error of a source folder without compiled kernels, with the three ways out."""
    # a clone's source folder shadows the installed package when Python runs from the clone's root
    return ImportError(
        f"confrf's compiled kernels are not built in {KERNELS}.\n"
        "This is a source folder without compiled kernels, and it comes first on the import path (Python was "
        "started from the root of a confrf clone, where ./confrf hides an installed confrf). Either:\n"
        "  * use the installed command instead of 'python -m confrf': confrf demo\n"
        "  * or run Python from any other folder (the installed package is then imported)\n"
        "  * or build the kernels in this folder: pip install -e .   (or: python setup.py build_ext --inplace)"
    )

"""Compiled kernels (Cython, ``nogil``). Tested from Python against slow references."""

import os
from importlib.machinery import EXTENSION_SUFFIXES

try:
    from ._cross import cross_bounds_folds, cross_bounds_rows
    from ._forest import (
        build_leaf_index,
        calibration_p2,
        forest_weight_rows,
        forest_weight_sumsq,
        lcp_rf_thresholds,
        lcp_rf_thresholds_ranked,
        score_ranks,
    )
    from ._quantile import csr_row_quantiles, weighted_quantile
except ModuleNotFoundError as exc:
    here = os.path.dirname(os.path.abspath(__file__))
    if (
        exc.name is None
        or not exc.name.startswith(__name__)
        or any(os.path.exists(os.path.join(here, "_forest" + s)) for s in EXTENSION_SUFFIXES)
    ):
        raise  # a real missing dependency, or a built kernel that fails to load: the original message says why
    # a clone's source folder shadows the installed package when Python runs from the clone's root
    raise ImportError(
        f"confrf's compiled kernels are not built in {here}.\n"
        "This is a source folder without compiled kernels, and it comes first on the import path (Python was "
        "started from the root of a confrf clone, where ./confrf hides an installed confrf). Either:\n"
        "  * use the installed command instead of 'python -m confrf': confrf demo\n"
        "  * or run Python from any other folder (the installed package is then imported)\n"
        "  * or build the kernels in this folder: pip install -e .   (or: python setup.py build_ext --inplace)"
    ) from None

__all__ = [
    "cross_bounds_folds",
    "cross_bounds_rows",
    "build_leaf_index",
    "calibration_p2",
    "forest_weight_rows",
    "forest_weight_sumsq",
    "lcp_rf_thresholds",
    "lcp_rf_thresholds_ranked",
    "score_ranks",
    "csr_row_quantiles",
    "weighted_quantile",
]

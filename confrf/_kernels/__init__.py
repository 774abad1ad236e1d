"""Compiled kernels (Cython, ``nogil``). Tested from Python against slow references."""

try:
    from ._cross import cross_bounds_folds, cross_bounds_rows
    from ._forest import (
        build_leaf_index,
        calibration_p2,
        forest_weight_rows,
        forest_weight_sumsq,
        lcp_rf_thresholds,
        lcp_rf_thresholds_ranked,
        lcp_rf_thresholds_weighted,
        score_ranks,
    )
    from ._pvalue import lcp_rf_counts, lcp_rf_levels, lcp_rf_mass_at, lcp_rf_profiles
    from ._quantile import csr_row_quantiles, weighted_quantile
except ModuleNotFoundError as exc:
    from .._kernel_files import kernels_built, not_built_error

    if exc.name is None or not exc.name.startswith(__name__) or kernels_built():
        raise  # a real missing dependency, or a built kernel that fails to load: the original message says why
    raise not_built_error() from None

__all__ = [
    "cross_bounds_folds",
    "cross_bounds_rows",
    "build_leaf_index",
    "calibration_p2",
    "forest_weight_rows",
    "forest_weight_sumsq",
    "lcp_rf_thresholds",
    "lcp_rf_thresholds_ranked",
    "lcp_rf_thresholds_weighted",
    "score_ranks",
    "lcp_rf_counts",
    "lcp_rf_levels",
    "lcp_rf_mass_at",
    "lcp_rf_profiles",
    "csr_row_quantiles",
    "weighted_quantile",
]

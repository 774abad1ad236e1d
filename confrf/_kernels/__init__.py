"""Compiled kernels (Cython, ``nogil``). Tested from Python against slow references."""

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

__all__ = [
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

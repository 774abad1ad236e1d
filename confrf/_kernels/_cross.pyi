"""Typed signatures of the compiled module ``_cross.pyx``: interval ends of the cross-conformal methods."""

import numpy as np
from numpy.typing import NDArray

def cross_bounds_rows(
    a_lo: NDArray[np.float64],
    a_hi: NDArray[np.float64],
    scale: NDArray[np.float64],
    group: NDArray[np.int64],
    R: NDArray[np.float64],
    j_lo: int,
    j_hi: int,
    n_threads: int = 1,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """(lower, upper, count) of m rows: (m, G) centres and scales, (n,) groups and scores."""

def cross_bounds_folds(
    a_lo: NDArray[np.float64],
    a_hi: NDArray[np.float64],
    scale: NDArray[np.float64],
    R_sorted: NDArray[np.float64],
    fold_ptr: NDArray[np.int64],
    j_lo: int,
    j_hi: int,
    n_threads: int = 1,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """The bounds of :func:`cross_bounds_rows` for K folds, by bisection."""

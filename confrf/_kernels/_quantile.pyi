"""Typed signatures of the compiled module ``_quantile.pyx``: weighted quantiles."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

def weighted_quantile(values: NDArray[np.float64], weights: NDArray[np.float64], a: float, tol: float = 1e-12) -> float:
    """Q(a; F) for F = sum_j weights_j delta_{values_j}; -inf for a <= 0, +inf above the total mass."""

def csr_row_quantiles(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int32],
    data: NDArray[np.float64],
    values: NDArray[np.float64],
    qs: ArrayLike,
    tol: float = 1e-12,
) -> NDArray[np.float64]:
    """(n_rows, n_levels) weighted quantiles of ``values`` under each CSR row of weights."""

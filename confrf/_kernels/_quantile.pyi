"""Typed signatures of the compiled module ``_quantile.pyx``: weighted quantiles."""

from numpy.typing import ArrayLike

from ._arrays import F64, I32, I64

def weighted_quantile(values: F64, weights: F64, a: float, tol: float = 1e-12) -> float:
    """Q(a; F) for F = sum_j weights_j delta_{values_j}; -inf for a <= 0, +inf above the total mass."""

def csr_row_quantiles(indptr: I64, indices: I32, data: F64, values: F64, qs: ArrayLike, tol: float = 1e-12) -> F64:
    """(n_rows, n_levels) weighted quantiles of ``values`` under each CSR row of weights."""

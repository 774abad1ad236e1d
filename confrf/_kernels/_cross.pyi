"""Typed signatures of the compiled module ``_cross.pyx``: interval ends of the cross-conformal methods."""

from ._arrays import F64, I64

def cross_bounds_rows(
    a_lo: F64, a_hi: F64, scale: F64, group: I64, R: F64, j_lo: int, j_hi: int, n_threads: int = 1
) -> tuple[F64, F64, I64]:
    """(lower, upper, count) of m rows: (m, G) centres and scales, (n,) groups and scores."""

def cross_bounds_folds(
    a_lo: F64, a_hi: F64, scale: F64, R_sorted: F64, fold_ptr: I64, j_lo: int, j_hi: int, n_threads: int = 1
) -> tuple[F64, F64, I64]:
    """The bounds of :func:`cross_bounds_rows` for K folds, by bisection."""

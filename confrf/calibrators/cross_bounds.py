"""Interval ends of the cross-conformal methods (CV+, jackknife+, J+aB) from out-of-fold scores.

Row i of the training data has a score R_i computed with a predictor that
did not see it (its fold's model, its leave-one-out model, or the aggregate of
the bootstrap models whose bag misses it). At a new point x that predictor
gives the set {y : V <= R_i} = [lo_i(x), hi_i(x)] (the score's ``interval``).
With n scores and exact rational ranks

    j_hi = ceil((1 - alpha)(n + 1)),   j_lo = n + 1 - j_hi = floor(alpha (n + 1)),

the interval is [j_lo-th smallest lo_i (-inf when j_lo = 0), j_hi-th smallest
hi_i (+inf when j_hi > n)] (Barber, Candes, Ramdas & Tibshirani 2021; Kim, Xu
& Barber 2020). A row without a predictor (a J+aB row in every bag) has
R_i = +inf: its set is the whole line, so lo_i = -inf and hi_i = +inf.

Scores with ``interval_parts`` (absolute, quantile, scaled) go to the compiled
kernels of :mod:`confrf._kernels._cross`; any other score gets every
(training row, new row) end from its ``interval``, in blocks of at most
``BLOCK_ENTRIES`` pairs, and numpy's selection. Both give the ends exactly as
``interval`` computes them, so the bounds equal a reference built from the
definitions bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _kernels
from .._validation import required_count

#: most (training row, new row) pairs held at once by the generic path (and the predictions of many models)
BLOCK_ENTRIES = 1 << 21
#: CV+ uses the fold bisection kernel from this many scores per fold on (below, selecting among all n ends is faster)
BISECT_FOLD_SIZE = 128


def rank_bounds(alpha: float, n: int) -> tuple[int, int]:
    """(j_lo, j_hi): ranks of the lower and upper ends among n, in exact rational arithmetic.

    Examples
    --------
    >>> from confrf.calibrators.cross_bounds import rank_bounds
    >>> rank_bounds(0.1, 19), rank_bounds(0.1, 8)
    ((2, 18), (0, 9))
    """
    j_hi = required_count(alpha, n)
    return n + 1 - j_hi, j_hi


def interval_bounds(
    score: Any,
    preds: np.ndarray,
    group: np.ndarray,
    R: np.ndarray,
    alpha: float,
    *,
    folds: tuple[np.ndarray, np.ndarray] | None = None,
    n_threads: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bounds, and the level of the upper end, at m new rows.

    Parameters
    ----------
    score : Score
    preds : array, shape (G, m) or (G, m, c)
        The predictions (``pred`` of the score) of G predictors at the m rows.
    group : (n,) int array
        The predictor of each score, in [0, G).
    R : (n,) float array
        The scores; +inf for a row without a predictor.
    alpha : float
    folds : (sorted scores, fold pointers) or None
        For CV+: the finite scores sorted within each fold, fold k being
        ``sorted[ptr[k]:ptr[k+1]]`` (group k); enables the bisection kernel.
    n_threads : int

    Returns
    -------
    lower, upper : (m,) arrays
    level : (m,) array
        Share of the n + 1 points (the n scores and the new one) whose upper
        end is at or below ``upper``; 1 where ``upper`` is infinite.
    """
    preds = np.asarray(preds, dtype=np.float64)
    m = preds.shape[1]
    n = R.shape[0]
    j_lo, j_hi = rank_bounds(alpha, n)
    finite = np.isfinite(R)
    n_inf = n - int(np.count_nonzero(finite))
    if n_inf:  # their lower ends are -inf (the smallest), their upper ends +inf (the largest)
        j_lo = max(j_lo - n_inf, 0)
        group, R = group[finite], R[finite]
        folds = None
    lower = np.full(m, -np.inf)
    upper = np.full(m, np.inf)
    count = np.full(m, n, dtype=np.int64)
    if R.shape[0] > 0 and m > 0:
        parts = getattr(score, "interval_parts", None)
        if parts is not None:
            lower, upper, count = _kernel_bounds(parts, preds, group, R, j_lo, j_hi, folds, n_threads)
        else:
            lower, upper, count = _generic_bounds(score, preds, group, R, j_lo, j_hi)
    level = np.where(np.isinf(upper), 1.0, count / (n + 1.0))
    return lower, upper, level


def _kernel_bounds(
    parts: Any,
    preds: np.ndarray,
    group: np.ndarray,
    R: np.ndarray,
    j_lo: int,
    j_hi: int,
    folds: tuple[np.ndarray, np.ndarray] | None,
    n_threads: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    G, m = preds.shape[0], preds.shape[1]
    flat = preds.reshape((G * m,) + preds.shape[2:])
    a_lo, a_hi, s = parts(flat)

    def by_row(a: np.ndarray) -> np.ndarray:  # (G * m,) -> (m, G): one row of centres per new point
        return np.ascontiguousarray(np.asarray(a, dtype=np.float64).reshape(G, m).T)

    scale = np.empty((0, 0)) if s is None else by_row(s)
    if folds is not None and R.shape[0] >= BISECT_FOLD_SIZE * G:
        sorted_R, ptr = folds
        return _kernels.cross_bounds_folds(
            by_row(a_lo), by_row(a_hi), scale, sorted_R, ptr, j_lo, j_hi, n_threads=n_threads
        )
    return _kernels.cross_bounds_rows(
        by_row(a_lo), by_row(a_hi), scale, np.ascontiguousarray(group, dtype=np.int64), R, j_lo, j_hi, n_threads
    )


def _generic_bounds(
    score: Any, preds: np.ndarray, group: np.ndarray, R: np.ndarray, j_lo: int, j_hi: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, m = R.shape[0], preds.shape[1]
    lower, upper = np.full(m, -np.inf), np.full(m, np.inf)
    count = np.full(m, n, dtype=np.int64)
    step = max(1, BLOCK_ENTRIES // n)
    for a in range(0, m, step):
        b = min(a + step, m)
        # every (training row, new row) pair: the predictor of row i at the new rows a..b, and R_i
        pair_pred = preds[group, a:b].reshape((n * (b - a),) + preds.shape[2:])
        lo, hi = score.interval(pair_pred, np.repeat(R, b - a))
        lo = np.asarray(lo, dtype=np.float64).reshape(n, b - a)
        hi = np.asarray(hi, dtype=np.float64).reshape(n, b - a)
        if j_lo >= 1:
            lower[a:b] = np.partition(lo, j_lo - 1, axis=0)[j_lo - 1]
        if j_hi <= n:
            upper[a:b] = np.partition(hi, j_hi - 1, axis=0)[j_hi - 1]
            count[a:b] = np.count_nonzero(hi <= upper[a:b], axis=0)
    return lower, upper, count


def fold_sorted_scores(group: np.ndarray, R: np.ndarray, n_folds: int) -> tuple[np.ndarray, np.ndarray]:
    """The scores sorted within each fold, one fold after the other, and the fold pointers."""
    order = np.lexsort((R, group))
    ptr = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=n_folds))]).astype(np.int64)
    return np.ascontiguousarray(R[order]), ptr

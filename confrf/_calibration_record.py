"""What a fitted regressor keeps of its calibration for the summary's diagnostics, bounded in n.

The diagnostics treat calibration rows as test points: at most
:data:`DIAGNOSTIC_ROWS` design rows and scores are kept (a random subsample
above, drawn from a seed and n only, so rows in memory and in Dask partitions
keep the same ones), with the exact tie counts of every score.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: most calibration design rows kept for the summary's diagnostics (a random subsample above)
DIAGNOSTIC_ROWS = 20_000

#: training rows that a cross-conformal fit keeps for the summary's diagnostics (a random subset above): each costs
#: an order statistic over all n out-of-fold scores (n model predictions for the jackknife+)
CROSS_DIAGNOSTIC_ROWS = 5000


def diagnostic_rows(n: int, seed: int | None) -> np.ndarray:
    """Sorted positions of the DIAGNOSTIC_ROWS calibration rows the summary treats as test points (of n > that).

    Drawn from ``seed`` and ``n`` only, so rows in memory and in Dask partitions keep the same ones.
    """
    return np.sort(np.random.default_rng(seed).permutation(n)[:DIAGNOSTIC_ROWS])


def score_ties(V: np.ndarray) -> tuple[int, int, int]:
    """(n, scores sharing their value with another, distinct values): the summary's tie check, over every score."""
    _, inverse, counts = np.unique(V, return_inverse=True, return_counts=True)
    return int(V.shape[0]), int(np.sum(counts[inverse] > 1)), int(counts.shape[0])


def keep_calibration_rows(
    est: Any,
    X: np.ndarray,
    V: np.ndarray,
    groups: Any,
    seed: int | None,
    n: int | None = None,
    ratio: Any = None,
) -> None:
    """Set ``est``'s ``calib_*`` attributes: the kept rows' design, scores, groups and ratios, and every score's ties.

    ``calib_rows_`` holds the kept positions (None: all rows). ``n`` given: X
    holds those rows already (taken from Dask partitions). ``ratio``: the rows'
    :class:`confrf.shift.ShiftRatio` (None: unweighted); typed Any because this
    module sits below ``shift/`` in the import layering.
    """
    taken = n is not None
    n = V.shape[0] if n is None else n
    keep = None if n <= DIAGNOSTIC_ROWS else diagnostic_rows(n, seed)
    est.calib_rows_, est.n_calib_ = keep, n
    est.calib_X_ = X if keep is None or taken else X[keep]
    est.calib_groups_ = groups if keep is None or groups is None else np.asarray(groups)[keep]
    est.calib_ratio_ = ratio if keep is None or ratio is None else ratio[keep]  # aligned with calib_X_
    # the tie check's counts over every score; the scores themselves only for the rows kept
    est.calib_score_ties_ = score_ties(V)
    est.calib_scores_ = V if keep is None else V[keep]


def keep_cross_rows(est: Any, X: np.ndarray, oof: np.ndarray, seed: int | None) -> None:
    """The same for a cross-conformal fit: training rows treated as new points, and every finite out-of-fold score."""
    n = X.shape[0]
    keep = (
        np.sort(np.random.default_rng(seed).permutation(n)[:CROSS_DIAGNOSTIC_ROWS])
        if n > CROSS_DIAGNOSTIC_ROWS
        else None
    )
    scores = oof[np.isfinite(oof)]
    est.calib_rows_, est.n_calib_ = keep, n
    est.calib_X_ = X if keep is None else X[keep]
    est.calib_groups_ = est.calib_ratio_ = est.ratio_model_ = None
    est.calib_score_ties_, est.calib_scores_ = score_ties(scores), scores

"""Covariate-shift weights of the indexed conformal points, laid out for the weighted LCP-RF kernel.

The weighted rule (docs/theory.md, "Covariate shift") splits like the unweighted
count: the weight of the points whose p2 lies below theta is a prefix sum of the
weights taken in ascending p2 order (one binary search), and only the test
point's m leaf-mates need a correction, so a test point still costs
O(m log m + log n log m).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .. import _kernels
from .leaf_index import LeafIndex

if TYPE_CHECKING:  # pragma: no cover - tuning.py imports this module, and forest.py imports tuning.py
    from .forest import ForestLocalizer

#: relative tolerance of the weighted comparison: accept while the computed mass < (1 - alpha + tol) * total.
#: Only ever enlarges a set; at least 4 (n + 2) eps, which bounds the rounding error of a sum of n weights.
SHIFT_TOL = 1e-9


def weighted_requirement(alpha: float, total: float, n: int, w_test: np.ndarray) -> np.ndarray:
    """(1 - alpha + tol)(total + w(x)) per test row: a score is rejected once its weighted count reaches it.

    ``total``: the sum of the n conformal points' ratios; tol = max(SHIFT_TOL,
    4 (n + 2) eps), docs/theory.md ("Tolerance"). +inf where no point carries
    weight (a group of zero ratios and w(x) = 0): no evidence, nothing is rejected.

    Examples
    --------
    >>> import numpy as np
    >>> float(weighted_requirement(0.5, 3.0, 3, np.array([1.0]))[0]) > 2.0
    True
    """
    tot = float(total) + np.asarray(w_test, dtype=np.float64)
    tol = max(SHIFT_TOL, 4.0 * (int(n) + 2) * np.finfo(np.float64).eps)
    return np.where(tot > 0, (1.0 - float(alpha) + tol) * tot, np.inf)


@dataclass(frozen=True)
class ForestShiftIndex:
    """Calibration weights by score rank, and their prefix sums in ascending p2 order."""

    w_r: np.ndarray
    cumw_p2: np.ndarray

    @classmethod
    def build(cls, index: LeafIndex, w: np.ndarray) -> ForestShiftIndex:
        """``w``: one weight per indexed point, in the order the points were indexed."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        order = np.argsort(_kernels.score_ranks(index.scores))  # rank -> point, as LeafIndex lays scores_r out
        by_p2 = np.argsort(index.p2, kind="stable")  # index.p2[by_p2] is index.sorted_p2
        return cls(np.ascontiguousarray(w[order]), np.concatenate([[0.0], np.cumsum(w[by_p2])]))


def weighted_forest_thresholds(
    localizer: ForestLocalizer, shift: ForestShiftIndex, X: np.ndarray, req: np.ndarray, n_threads: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted exact LCP-RF thresholds (t, closed, level) for rows of X, in score units.

    ``req``: per row, the weighted count at which a score is rejected
    (:func:`weighted_requirement`).
    """
    idx = localizer.index_
    if idx is None:
        localizer.leaves(X)  # raises the localizer's own not-fitted error
    assert idx is not None  # leaves() raised above otherwise
    leaves = localizer.leaves(X)
    t, closed, level = idx.weighted_thresholds(leaves, shift.cumw_p2, shift.w_r, req, n_threads)
    if localizer.scaled:
        t = t * localizer._scale_of(leaves)
    return t, closed, level

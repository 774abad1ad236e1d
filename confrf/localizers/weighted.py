"""Covariate-shift weights of the indexed conformal points, laid out for the weighted LCP-RF kernel.

The weighted rule (docs/theory.md, "Covariate shift") splits like the unweighted
count: the weight of the points whose p2 lies below theta is a prefix sum of the
weights taken in ascending p2 order (one binary search), and only the test
point's m leaf-mates need a correction, so a test point still costs
O(m log m + log n log m).

The rule itself (the requirement and its tolerance) lives in
:mod:`confrf.shift.weighted`; this module stays with the localizers because it
lays the weights out in a :class:`LeafIndex`'s order and reads the forest's
leaves, and ``shift/`` sits below ``localizers/`` in the import layering
(tests/test_import_graph.py): the localizers' tuning imports the rule from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .. import _kernels
from .leaf_index import LeafIndex

if TYPE_CHECKING:  # pragma: no cover - tuning.py imports this module, and forest.py imports tuning.py
    from .forest import ForestLocalizer


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
    (:func:`confrf.shift.weighted.weighted_requirement`).
    """
    idx = localizer.index_
    if idx is None:
        localizer.leaves(X)  # raises the localizer's own not-fitted error
    assert idx is not None  # leaves() raised above otherwise
    leaves = localizer.leaves(X)
    t, closed, level = idx.weighted_thresholds(leaves, shift.cumw_p2, shift.w_r, req, n_threads)
    if localizer.scaled:
        t = t * localizer.score_scale(X, leaves)
    return t, closed, level

"""LCP-RF thresholds of many rows at once, in batches of rows that share leaves.

A test row's threshold depends on its leaves alone. Over many rows, :func:`batched_thresholds` first orders them by
their leaf in the first tree (scikit-learn numbers a tree's nodes depth first, so rows with nearby ids lie in
nearby cells) and computes the thresholds batch by batch in that order: each batch then holds rows that share most
of their leaves, whose index entries stay in the caches from one row to the next, and rows with the same leaf in
every tree, computed once (:meth:`LeafIndex.thresholds`). The results are those of one call on all rows, bit for
bit; only the order of the work changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .forest import ForestLocalizer


def batched_thresholds(
    loc: ForestLocalizer, X: np.ndarray, m_req: int, n_threads: int, batch: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``loc.thresholds(X, m_req, n_threads)``, computed ``batch`` rows at a time in the order of the rows' leaves in
    the first tree (module docstring): bounded memory, identical results."""
    m = X.shape[0]
    if loc.pooled or m <= batch:
        return loc.thresholds(X, m_req, n_threads)
    loc.leaves(X[:1])  # the checks of a lookup (the number of columns) before any work
    first_tree = loc.forest_.estimators_[0].tree_  # type: ignore[union-attr]  # not pooled: grown
    first = np.empty(m, dtype=np.int64)
    for s in range(0, m, batch):
        first[s : s + batch] = first_tree.apply(loc.float32_input(X[s : s + batch]))
    order = np.argsort(first, kind="stable")
    t, closed, level = np.empty(m), np.empty(m, dtype=bool), np.empty(m)
    for s in range(0, m, batch):
        rows = order[s : s + batch]
        t[rows], closed[rows], level[rows] = loc.thresholds(X[rows], m_req, n_threads)
    return t, closed, level

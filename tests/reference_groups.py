"""Slow references for groupwise calibration, written from the definitions (exact rationals).

Nothing here shares code with the package.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np


class LeafTableForest:
    """Stands in for a grown forest: column l of X *is* the point's leaf in tree l.

    Set it as ``ForestLocalizer.forest_`` to index hand-built leaf assignments.
    """

    def __init__(self, n_trees: int, n_leaves: int) -> None:
        self.n_features_in_ = n_trees
        self.estimators_ = [
            SimpleNamespace(tree_=SimpleNamespace(node_count=n_leaves, apply=self._column(tree)))
            for tree in range(n_trees)
        ]

    @staticmethod
    def _column(tree: int):
        return lambda X: np.rint(np.asarray(X)[:, tree]).astype(np.int64)

    def apply(self, X):
        return np.rint(np.asarray(X)).astype(np.int64)


def qrf_weight(leaves_ref: np.ndarray, mult: np.ndarray, x_leaves: np.ndarray, j: int) -> Fraction:
    """w(x, X_j): (1/k_eff) sum over trees whose leaf of x holds mass of mult_j 1{same leaf} / leaf mass."""
    k = leaves_ref.shape[1]
    total, used = Fraction(0), 0
    for tree in range(k):
        same = [i for i in range(leaves_ref.shape[0]) if leaves_ref[i, tree] == x_leaves[tree]]
        mass = sum(int(mult[i, tree]) for i in same)
        if mass == 0:
            continue
        used += 1
        if j in same:
            total += Fraction(int(mult[j, tree]), mass)
    return total / used if used else Fraction(0)


def weight_graph_reference(leaves_ref: np.ndarray, mult: np.ndarray | None = None) -> list[list[Fraction]]:
    """G_ij = (w(X_i, X_j) + w(X_j, X_i)) / 2 for i != j, 0 on the diagonal."""
    n = leaves_ref.shape[0]
    mult = np.ones_like(leaves_ref) if mult is None else mult
    W = [[qrf_weight(leaves_ref, mult, leaves_ref[i], j) for j in range(n)] for i in range(n)]
    return [[(W[i][j] + W[j][i]) / 2 if i != j else Fraction(0) for j in range(n)] for i in range(n)]


def region_reference(
    leaves_ref: np.ndarray, clusters: np.ndarray, x_leaves: np.ndarray, mult: np.ndarray | None = None
) -> tuple[int, list[Fraction]]:
    """The paper's rule: the cluster with the largest mass sum_{j in C} w(x, X_j); -1 on an exact tie or no mass."""
    mult = np.ones_like(leaves_ref) if mult is None else mult
    C = int(clusters.max()) + 1
    masses = [
        sum((qrf_weight(leaves_ref, mult, x_leaves, j) for j in np.flatnonzero(clusters == c)), Fraction(0))
        for c in range(C)
    ]
    top = max(masses)
    winners = [c for c in range(C) if masses[c] == top]
    return (winners[0] if len(winners) == 1 and top > 0 else -1), masses


def split_threshold_reference(scores: list[float], alpha: str) -> float:
    """The ceil((1 - alpha)(n + 1))-th smallest score, +inf when there are too few."""
    import math

    n = len(scores)
    m = math.ceil((1 - Fraction(alpha)) * (n + 1))
    return float("inf") if m > n else sorted(scores)[m - 1]

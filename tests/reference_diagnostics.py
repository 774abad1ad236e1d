"""Slow references for the diagnostics, written from the definitions.

Forest quantities are recomputed tree by tree from scikit-learn's ``apply``
on the raw rows (never from the leaf index), with dense matrices; the
worst-slab coverage by enumerating every slab with exact fractions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def forest_weight_matrix(forest, X_conf: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Dense W[i, j] = (1/k) sum_l m_jl 1{leaf_l(X_j) = leaf_l(X_i)} / N_l(X_i), per-tree loop."""
    n, k = X_conf.shape[0], len(forest.estimators_)
    W = np.zeros((n, n))
    for tree, est in enumerate(forest.estimators_):
        leaf = est.apply(X_conf.astype(np.float32))
        for i in range(n):
            same = leaf == leaf[i]
            mass = mult[same, tree].sum()
            W[i, same] += mult[same, tree] / mass / k
    return W


def ess_reference(forest, X_conf: np.ndarray, mult: np.ndarray) -> np.ndarray:
    W = forest_weight_matrix(forest, X_conf, mult)
    return 1.0 / (W**2).sum(axis=1)


def leaf_masses_reference(forest, X_conf: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Mass of every leaf of every tree (empty leaves give 0), tree by tree."""
    out = []
    for tree, est in enumerate(forest.estimators_):
        leaf = est.apply(X_conf.astype(np.float32))
        for node in np.flatnonzero(est.tree_.children_left == -1):
            out.append(int(mult[leaf == node, tree].sum()))
    return np.array(out)


def within_leaf_ratio_reference(forest, X_conf: np.ndarray, V: np.ndarray, mult: np.ndarray) -> float:
    within = total = 0.0
    for tree, est in enumerate(forest.estimators_):
        leaf = est.apply(X_conf.astype(np.float32))
        m = mult[:, tree].astype(float)
        total += np.sum(m * (V - np.sum(m * V) / m.sum()) ** 2)
        for node in np.unique(leaf):
            s = leaf == node
            if m[s].sum() > 0:
                within += np.sum(m[s] * (V[s] - np.sum(m[s] * V[s]) / m[s].sum()) ** 2)
    return within / total


def worst_slab_reference(X: np.ndarray, covered: np.ndarray, directions: np.ndarray, delta: float) -> Fraction:
    """min over directions v and values a <= b of the covered share in {a <= v.x <= b}, >= ceil(delta n) rows."""
    n = X.shape[0]
    need = int(np.ceil(Fraction(repr(delta)) * n))
    best = Fraction(int(covered.sum()), n)
    for v in directions:
        z = X @ (v / np.linalg.norm(v))
        values = np.unique(z)
        for a in values:
            for b in values[values >= a]:
                inside = (z >= a) & (z <= b)
                if inside.sum() >= need:
                    best = min(best, Fraction(int(covered[inside].sum()), int(inside.sum())))
    return best

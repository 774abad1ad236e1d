"""Diagnostics of fitted localizers: effective sample sizes, leaf masses, within-leaf spread.

Everything is read from the forest's leaf index (or the kernel localizer's
indexed points); no n x n matrix is formed for the forest. The slow
references these functions are tested against live in
``tests/reference_diagnostics.py``.
"""

from __future__ import annotations

import numpy as np

from .. import _kernels
from .bandwidth import kernel_matrix
from .forest import ForestLocalizer
from .kernel import KernelLocalizer

#: entries of one (rows x n) block of kernel weights
_ROW_BLOCK_ENTRIES = 1 << 22


def indexed_leaves(loc: ForestLocalizer) -> np.ndarray:
    """(n, k) global leaf id of every indexed (conformal) point in every tree, read back from the leaf index."""
    return loc._index().leaves()


def forest_ess(loc: ForestLocalizer, n_threads: int = 1, rows: np.ndarray | None = None) -> np.ndarray:
    """Effective sample size 1 / sum_j w_ij^2 of each indexed point's localizing weights.

    Row i is the QRF weight row of X_i on the indexed points, X_i itself
    included: w_ij = (1/k) sum_l m_jl 1{X_j in L_l(X_i)} / N_l(X_i), with
    m_jl the weight multiplicity (1 when honest) and N_l the leaf's mass. It
    is the LCP row of X_i without the test point. A nogil kernel sums the
    squares row by row without storing the rows (``n_threads`` OpenMP threads).
    ``rows``: only these indexed points (positions in the index), in that order.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers import ForestLocalizer
    >>> from confrf.localizers.diagnostics import forest_ess
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); V = np.abs(rng.normal(size=400))
    >>> loc = ForestLocalizer(n_estimators=10, min_samples_leaf=20, random_state=0).grow(X[:200], V[:200])
    >>> ess = forest_ess(loc.index(X[200:], V[200:]))
    >>> ess.shape, bool((ess >= 1).all() and (ess <= 200).all())
    ((200,), True)
    """
    idx = loc._index()
    if loc.pooled:  # one leaf: uniform weights 1/n, so every ESS is n (the kernel would take O(n^2))
        return np.full(idx.n if rows is None else len(rows), float(idx.leaf_pop.sum()))
    sumsq = _kernels.forest_weight_sumsq(
        idx.leaves(rows),
        idx.leaf_ptr,
        idx.members,
        idx.member_mult,
        idx.leaf_pop,
        idx.n,
        n_threads=max(1, int(n_threads)),
    )
    return 1.0 / sumsq


def kernel_ess(loc: KernelLocalizer) -> np.ndarray:
    """1 / sum_j w_ij^2 of the kernel weights w_ij = H(X_i, X_j) / sum_j' H(X_i, X_j') on the indexed points.

    X_i itself included, the test point left out, as for :func:`forest_ess`.
    """
    Z = loc._indexed()
    assert loc.bandwidth_ is not None  # set before any point is indexed
    n = Z.shape[0]
    out = np.empty(n)
    step = max(1, _ROW_BLOCK_ENTRIES // max(n, 1))
    for s in range(0, n, step):
        K = kernel_matrix(Z[s : s + step], Z, loc.kernel, loc.bandwidth_)  # K(X_i, X_i) = 1: rows sum to >= 1
        W = K / K.sum(axis=1, keepdims=True)
        out[s : s + step] = 1.0 / (W * W).sum(axis=1)
    return out


def leaf_masses(loc: ForestLocalizer) -> np.ndarray:
    """Indexed mass N of every leaf of every tree, empty leaves included (N = 0).

    The mass counts weight multiplicities: the number of conformal points in
    the leaf for the honest forest, bootstrap draws for ``honest=False``.
    """
    idx = loc._index()
    if loc.pooled:  # a single leaf
        return idx.leaf_pop.astype(np.int64)
    forest = loc._forest()
    ids = [off + np.flatnonzero(est.tree_.children_left == -1) for off, est in zip(idx.node_offset, forest.estimators_)]
    return idx.leaf_pop[np.concatenate(ids)].astype(np.int64)


def within_leaf_variance_ratio(loc: ForestLocalizer) -> float:
    """Within-leaf variance of the indexed scores over their total variance, pooled over trees.

    sum_l sum_leaves sum_j m_j (V_j - mean_leaf)^2 / sum_l sum_j m_j (V_j - mean_tree)^2,
    with the weight multiplicities m_j of each tree. 1 - ratio is the share of
    the score variance that lies between leaves. NaN when every score is equal.
    """
    idx = loc._index()
    scores = loc.indexed_scores()  # in score units, also when the index holds V / sigma(x)
    within = total = 0.0
    for lo, hi, e0, e1 in idx._tree_blocks():  # one tree at a time: O(n) memory
        m = idx.member_mult[e0:e1].astype(np.float64)
        v = scores[idx.members[e0:e1]]
        leaf = np.repeat(np.arange(hi - lo, dtype=np.int64), np.diff(idx.leaf_ptr[lo : hi + 1]))
        mass = np.bincount(leaf, weights=m, minlength=hi - lo)
        sums = np.bincount(leaf, weights=m * v, minlength=hi - lo)
        mean = np.divide(sums, mass, out=np.zeros(hi - lo), where=mass > 0)
        within += float(np.sum(m * (v - mean[leaf]) ** 2))
        total += float(np.sum(m * (v - np.sum(m * v) / np.sum(m)) ** 2))
    return float("nan") if total == 0.0 else within / total

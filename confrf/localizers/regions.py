"""Region rule: the group of any point x is the cluster that receives most of x's weight.

The paper's R_c = {x : sum_{j in C_c} w(x, X_j) > sum_{j in C_k} w(x, X_j) for all
k != c}, with exact ties sent to a separate "undecidable" set. The masses are
the QRF weights of x on the clustered points, summed per cluster; they are
computed from per-leaf cluster shares, so one point costs O(k x clusters in
its leaves) and no weight row is formed. The same function serves
calibration points and new points, which is what makes groupwise
calibration exact (see docs/theory.md).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._tolerance import TIE_TOL  # masses closer than this count as a tie (undecidable)
from .._validation import as_float_matrix
from ..exceptions import InputError
from .forest import ForestLocalizer

#: region code of undecidable points
UNDECIDABLE = -1
_CHUNK = 8192


class WeightRegions:
    """Region rule learned from clustered points indexed in a forest.

    Parameters
    ----------
    localizer : ForestLocalizer
        Grown, and indexed on the clustered points (its weights define the masses).
    clusters : array of int, shape (n_indexed,)
        Cluster 0..C-1 of every indexed point.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers import ForestLocalizer
    >>> from confrf.localizers.regions import WeightRegions
    >>> X = np.r_[np.zeros((10, 1)), np.ones((10, 1))]; V = X[:, 0]
    >>> loc = ForestLocalizer(n_estimators=5, min_samples_leaf=2, random_state=0).grow(X, V).index(X, V)
    >>> rule = WeightRegions(loc, np.repeat([0, 1], 10))
    >>> rule.assign(np.array([[0.0], [1.0]])).tolist()
    [0, 1]
    """

    def __init__(self, localizer: ForestLocalizer, clusters: np.ndarray) -> None:
        idx = localizer._index()
        clusters = np.asarray(clusters, dtype=np.int64)
        if clusters.shape != (idx.n,) or (clusters.size and clusters.min() < 0):
            raise InputError(f"clusters must give a group >= 0 for each of the {idx.n} indexed points.")
        self.localizer = localizer
        self.n_clusters = int(clusters.max()) + 1 if clusters.size else 0
        # share of each leaf's multiplicity mass in each cluster: a sparse (n_leaves, C) table
        n_leaves = idx.leaf_pop.shape[0]
        leaf_of = np.repeat(np.arange(n_leaves), np.diff(idx.leaf_ptr))
        pop = idx.leaf_pop[leaf_of].astype(np.float64)
        share = np.divide(idx.member_mult, pop, out=np.zeros_like(pop), where=pop > 0)
        self.leaf_share_ = sp.csr_matrix(
            (share, (leaf_of, clusters[idx.members])), shape=(n_leaves, max(self.n_clusters, 1))
        )

    def masses(self, X: np.ndarray) -> np.ndarray:
        """(m, C) weight mass of every row of X on every cluster (QRF weights; rows sum to 1).

        A row is 0 when none of its leaves holds an indexed point.
        """
        leaves = self.localizer.leaves(as_float_matrix(X, "X"))
        pop = self.localizer._index().leaf_pop
        out = np.zeros((leaves.shape[0], max(self.n_clusters, 1)))
        for lo in range(0, leaves.shape[0], _CHUNK):
            lv = leaves[lo : lo + _CHUNK]
            used = pop[lv] > 0  # Meinshausen: average over the trees whose leaf holds mass
            k_eff = used.sum(axis=1)
            w = np.divide(used, k_eff[:, None], out=np.zeros(used.shape), where=k_eff[:, None] > 0)
            rows = np.repeat(np.arange(lv.shape[0]), lv.shape[1])
            A = sp.csr_matrix((w.ravel(), (rows, lv.ravel())), shape=(lv.shape[0], self.leaf_share_.shape[0]))
            out[lo : lo + lv.shape[0]] = (A @ self.leaf_share_).toarray()
        return out[:, : self.n_clusters]

    def assign(self, X: np.ndarray) -> np.ndarray:
        """Region of every row of X: its argmax cluster, or ``UNDECIDABLE`` (-1) on a tie or no mass."""
        return argmax_region(self.masses(X))


def argmax_region(masses: np.ndarray) -> np.ndarray:
    """Argmax of each row; ``UNDECIDABLE`` when two masses tie within ``TIE_TOL`` or all are 0."""
    m = np.asarray(masses, dtype=np.float64)
    if m.shape[1] == 0:
        return np.full(m.shape[0], UNDECIDABLE, dtype=np.int64)
    best = m.argmax(axis=1)
    top = m[np.arange(m.shape[0]), best]
    near = (m >= top[:, None] - TIE_TOL).sum(axis=1)
    return np.where((near > 1) | (top <= TIE_TOL), UNDECIDABLE, best).astype(np.int64)

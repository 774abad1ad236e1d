"""Random-forest localizer: a Quantile Regression Forest of the scores.

The forest is grown by scikit-learn on a *localizer* part of the calibration
data (honest, the default) and only its partition is kept: the weights are
computed from the *conformal* calibration points and the test point, so the
n + 1 points are exchangeable and LCP's marginal guarantee is exact. With
``honest=False`` the forest is grown on the conformal points themselves and the
weights use their bootstrap multiplicities, as in the paper; the guarantee is
then not certified.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor

from .. import _kernels
from .._validation import as_float_matrix, as_float_vector, check_max_features, check_min_samples_leaf
from ..exceptions import InputError, NotFittedError
from ._float32 import RankColumns
from .tuning import TUNE, ForestTuning, feature_candidates, leaf_candidates, tune_forest


def auto_min_samples_leaf(n_grow: int) -> int:
    """Default leaf size: ceil(sqrt(n)), at least 5.

    Assumption 3 of the paper asks for leaves of order sqrt(n) (log n)^beta for
    conditional validity; sqrt(n) keeps leaves informative at moderate n. The
    marginal guarantee holds for any leaf size.
    """
    return max(5, math.ceil(math.sqrt(max(n_grow, 1))))


@dataclass
class LeafIndex:
    """Calibration points grouped by (tree, leaf), sorted by score in each leaf.

    Only memberships are stored (one entry per point and tree, never per pair).
    The arrays after ``p2`` are derived: the threshold kernel's copy of the
    index with points renumbered by score rank. Pickles keep just the
    memberships and the scores and rebuild the rest on load.
    """

    node_offset: np.ndarray  # (k,) first global leaf id of each tree
    leaf_ptr: np.ndarray
    members: np.ndarray
    member_mult: np.ndarray
    below: np.ndarray
    leaf_pop: np.ndarray
    scores: np.ndarray
    p2: np.ndarray
    sorted_p2: np.ndarray
    member_rank: np.ndarray  # members renumbered by ascending (score, index)
    scores_r: np.ndarray  # scores by rank (ascending)
    p2_r: np.ndarray  # p2 by rank
    unit_mult: bool  # every multiplicity is 1 (the honest forest)

    @classmethod
    def build(cls, leaves: np.ndarray, scores: np.ndarray, multiplicity: np.ndarray,
              node_offset: np.ndarray, n_leaves: int) -> "LeafIndex":
        """Index points with global leaf ids ``leaves`` (n, k); O(n k) after one sort."""
        mult = np.ascontiguousarray(multiplicity, dtype=np.int32)
        leaf_ptr, members, member_mult, below, pop = _kernels.build_leaf_index(leaves, scores, mult, n_leaves)
        p2 = _kernels.calibration_p2(leaves, leaf_ptr, members, below, pop, scores.shape[0])
        rank = _kernels.score_ranks(scores)
        order = np.argsort(rank)
        return cls(node_offset, leaf_ptr, members, member_mult, below, pop, scores, p2, np.sort(p2),
                   rank[members], scores[order], p2[order], bool(np.all(mult == 1)))

    @property
    def n(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.node_offset.shape[0])

    def __getstate__(self) -> dict[str, Any]:
        return {"node_offset": self.node_offset, "leaf_ptr": self.leaf_ptr, "members": self.members,
                "member_mult": None if self.unit_mult else self.member_mult, "scores": self.scores}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # the build is deterministic, so the rebuilt arrays equal the pickled object's
        ptr, members, offset = state["leaf_ptr"], state["members"], state["node_offset"]
        n, k = state["scores"].shape[0], offset.shape[0]
        leaf_of_entry = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
        tree_of_entry = np.searchsorted(offset, leaf_of_entry, side="right") - 1
        leaves = np.empty((n, k), dtype=np.int64)
        leaves[members, tree_of_entry] = leaf_of_entry
        mult = np.ones((n, k), dtype=np.int32)
        if state["member_mult"] is not None:
            mult[members, tree_of_entry] = state["member_mult"]
        self.__dict__.update(
            LeafIndex.build(leaves, state["scores"], mult, offset, ptr.shape[0] - 1).__dict__
        )


@dataclass
class ForestLocalizer:
    """Random-forest localizer (the weights w(x, X_j) of a QRF on the scores).

    Parameters
    ----------
    n_estimators : int
        Number of trees k.
    min_samples_leaf : int, "tune" or "auto"
        Minimum leaf size when growing. "tune" (default) chooses it among a
        geometric grid by simulated LCP-RF calibrations on the growing data
        only (:mod:`confrf.localizers.tuning`); "auto" is
        :func:`auto_min_samples_leaf`, the paper's Assumption 3 rule.
    max_features : float, int, str or None
        Features tried at each split (scikit-learn's meaning); "tune" (default)
        chooses between all features and a third of them, with the leaf
        size, by the same simulated calibrations.
    max_depth : int or None
        Maximum tree depth.
    bootstrap : bool
        Whether each tree is grown on a bootstrap sample.
    honest : bool
        Weights from points disjoint from the growing sample (True, default) or
        the paper's in-sample bootstrap weights (False).
    random_state : int or None
        Seed of the forest.
    n_jobs : int or None
        Threads for growing the forest and for the kernels.
    alpha : float
        Miscoverage level the "tune" rule scores candidates at.
    conformal_ratio : float
        Conformal points the forest will index per growing point (set by
        the calibrator from the part sizes); the "tune" rule simulates leaves
        of the conformal mass they will have.
    """

    n_estimators: int = 100
    min_samples_leaf: int | str = TUNE
    max_features: float | int | str | None = TUNE
    max_depth: int | None = None
    bootstrap: bool = True
    honest: bool = True
    random_state: int | None = None
    n_jobs: int | None = None
    alpha: float = 0.1
    conformal_ratio: float = 1.0
    forest_: RandomForestRegressor | None = field(default=None, repr=False)
    rank_columns_: RankColumns | None = field(default=None, repr=False)  # columns float32 would blur
    index_: LeafIndex | None = field(default=None, repr=False)
    min_samples_leaf_: int | None = field(default=None, repr=False)
    max_features_: float | int | str | None = field(default=None, repr=False)
    tuning_: ForestTuning | None = field(default=None, repr=False)  # the "tune" rule's candidates and scores
    n_grow_: int | None = field(default=None, repr=False)
    grow_seconds_: float | None = field(default=None, repr=False)  # growing the scikit-learn forest
    tune_seconds_: float | None = field(default=None, repr=False)  # the "tune" rule's simulated calibrations
    index_seconds_: float | None = field(default=None, repr=False)  # the O(n k) leaf-index precomputation

    # -- lifecycle ---------------------------------------------------------
    def grow(self, X: np.ndarray, scores: np.ndarray) -> "ForestLocalizer":
        """Grow the forest of the scores on (X, scores)."""
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        msl, mf = self.min_samples_leaf, self.max_features
        self.tuning_ = None
        t0 = time.perf_counter()
        check_min_samples_leaf(msl)
        check_max_features(mf)
        if isinstance(msl, str):  # "auto", or the start of the "tune" grid
            msl = auto_min_samples_leaf(X.shape[0])
        self.rank_columns_ = RankColumns.learn(X)
        if self.min_samples_leaf == TUNE or mf == TUNE:
            # choose on the growing data only: the points indexed later never influence the forest
            self.tuning_ = tune_forest(
                self._tree_input(X), V, alpha=self.alpha, random_state=self.random_state, n_jobs=self.n_jobs,
                leaves=leaf_candidates(X.shape[0], msl) if self.min_samples_leaf == TUNE else [msl],
                max_features=feature_candidates(X.shape[1]) if mf == TUNE else [mf],
                forest_kwargs={"max_depth": self.max_depth, "bootstrap": self.bootstrap},
                conformal_ratio=self.conformal_ratio,
            )
            msl, mf = self.tuning_.chosen
        self.tune_seconds_ = time.perf_counter() - t0 if self.tuning_ is not None else None
        self.min_samples_leaf_, self.max_features_ = int(msl), mf
        self.n_grow_ = int(X.shape[0])
        t0 = time.perf_counter()
        self.forest_ = RandomForestRegressor(
            n_estimators=self.n_estimators,
            min_samples_leaf=self.min_samples_leaf_,
            max_features=self.max_features_,
            max_depth=self.max_depth,
            bootstrap=self.bootstrap,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        ).fit(self._tree_input(X), V)
        self.grow_seconds_ = time.perf_counter() - t0
        return self

    def index(self, X: np.ndarray, scores: np.ndarray, multiplicity: np.ndarray | None = None) -> "ForestLocalizer":
        """Index the conformal calibration points (X, scores) in the grown forest.

        ``multiplicity`` (n, k) gives each point's weight multiplicity per tree;
        by default 1 (honest), or the bootstrap counts for ``honest=False``.
        """
        forest = self._forest()
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        if multiplicity is None:
            multiplicity = np.ones((X.shape[0], self.n_estimators), dtype=np.int32)
        t0 = time.perf_counter()
        offsets = self._node_offsets()
        n_leaves = int(offsets[-1] + forest.estimators_[-1].tree_.node_count)
        self.index_ = LeafIndex.build(self._global_leaves(X, offsets), V, multiplicity, offsets, n_leaves)
        self.index_seconds_ = time.perf_counter() - t0
        return self

    def fit(self, X: np.ndarray, scores: np.ndarray) -> "ForestLocalizer":
        """Non-honest fit (the paper's variant): grow and index on the same points."""
        self.grow(X, scores)
        return self.index(X, scores, multiplicity=self.growing_multiplicity())

    def growing_multiplicity(self) -> np.ndarray:
        """(n_grow, k) times each growing point was drawn by each tree (1 without bootstrap)."""
        forest = self._forest()
        n = int(self.n_grow_)
        if self.bootstrap:
            return np.stack([np.bincount(s, minlength=n) for s in forest.estimators_samples_], axis=1)
        return np.ones((n, self.n_estimators), dtype=np.int32)

    # -- queries -----------------------------------------------------------
    def leaves(self, X: np.ndarray) -> np.ndarray:
        """Global leaf ids (m, k) of rows of X."""
        return self._global_leaves(as_float_matrix(X, "X"), self._index().node_offset)

    def thresholds(self, X: np.ndarray, m_req: int, n_threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact LCP-RF thresholds (t, closed, level) for rows of X."""
        idx = self._index()
        return _kernels.lcp_rf_thresholds_ranked(
            self.leaves(X), idx.leaf_ptr, idx.member_rank, idx.member_mult, idx.below,
            idx.leaf_pop, idx.scores_r, idx.p2_r, idx.sorted_p2, int(m_req),
            n_threads=max(1, int(n_threads)), unit_mult=idx.unit_mult,
        )

    def weights(self, X: np.ndarray, include_self: bool = False) -> sp.csr_matrix:
        """Sparse (m, n) weights of rows of X on the indexed calibration points.

        ``include_self=False``: Meinshausen's QRF weights (rows sum to 1).
        ``include_self=True``: the LCP test row, with the test point counted in
        its leaves; an extra last column holds the test point's own mass.
        """
        if not include_self:
            return self._weight_rows(X, False)[0]
        W, own = self._weight_rows(X, True)
        return sp.hstack([W, sp.csr_matrix(own.reshape(-1, 1))], format="csr")

    def lcp_rows(self, X: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """The LCP test rows (test point counted in its leaves) on the calibration points, and each row's own mass."""
        return self._weight_rows(X, True)

    def _weight_rows(self, X: np.ndarray, include_self: bool) -> tuple[sp.csr_matrix, np.ndarray]:
        idx = self._index()
        indptr, indices, data, self_w = _kernels.forest_weight_rows(
            self.leaves(X), idx.leaf_ptr, idx.members, idx.member_mult, idx.leaf_pop, idx.n, include_self
        )
        return sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, idx.n)), self_w

    def conditional_quantiles(self, X: np.ndarray, q: np.ndarray) -> np.ndarray:
        """QRF quantiles Q(q; F(.|x)) of the calibration scores, shape (m, len(q))."""
        W = self.weights(X)
        qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
        if not np.all((qs >= 0) & (qs <= 1)):  # NaN fails too
            raise InputError("quantile levels must lie in [0, 1].")
        return _kernels.csr_row_quantiles(
            W.indptr.astype(np.int64), W.indices.astype(np.int32), W.data, self._index().scores, qs
        )

    def leaf_sizes(self) -> np.ndarray:
        """Calibration mass of every non-empty leaf (for the assumption checks)."""
        pop = self._index().leaf_pop
        return pop[pop > 0]

    # -- helpers -----------------------------------------------------------
    def _forest(self) -> RandomForestRegressor:
        if self.forest_ is None:
            raise NotFittedError("the localizer forest is not grown yet; call grow() or fit() first.")
        return self.forest_

    def _index(self) -> LeafIndex:
        if self.index_ is None:
            raise NotFittedError("no calibration points are indexed yet; call index() or fit() first.")
        return self.index_

    def _node_offsets(self) -> np.ndarray:
        counts = [est.tree_.node_count for est in self._forest().estimators_]
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    def _tree_input(self, X: np.ndarray) -> np.ndarray:
        ranks = getattr(self, "rank_columns_", None)  # absent from objects pickled before it existed
        return X if ranks is None else ranks.apply(X)

    def _global_leaves(self, X: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        forest = self._forest()
        if X.shape[1] != forest.n_features_in_:
            raise InputError(f"X has {X.shape[1]} columns; the localizer was grown on {forest.n_features_in_}.")
        # a plain loop over the trees: forest.apply's joblib dispatch costs more than the lookups
        X32 = np.ascontiguousarray(self._tree_input(X), dtype=np.float32)
        leaves = np.empty((X.shape[0], len(forest.estimators_)), dtype=np.int64)
        for l, est in enumerate(forest.estimators_):
            leaves[:, l] = est.tree_.apply(X32)
        return leaves + offsets[None, :]

    def _leaf_rule(self) -> str:
        tuned = [k for k in ("min_samples_leaf", "max_features") if getattr(self, k) == TUNE]
        if tuned:
            return (f"{' and '.join(tuned)} tuned on the localizer part only (the conformal points are not "
                    "used, so the guarantee stays exact)")
        if self.min_samples_leaf == "auto":
            return "auto: ceil(sqrt(n_localizer))"
        return "given"

    def describe(self) -> dict[str, Any]:
        """Forest settings and leaf-size facts for summaries."""
        out: dict[str, Any] = {
            "n_estimators": self.n_estimators,
            "min_samples_leaf": self.min_samples_leaf_,
            "settings_rule": self._leaf_rule(),
            "max_features": self.max_features_,
            "max_depth": self.max_depth,
            "bootstrap": self.bootstrap,
            "honest": self.honest,
        }
        if self.index_ is not None:
            sizes = self.leaf_sizes()
            out["leaf_size_min"] = int(sizes.min()) if sizes.size else 0
            out["leaf_size_median"] = float(np.median(sizes)) if sizes.size else 0.0
        # growing is scikit-learn's work; the O(n k) index of the conformal points is ours
        if self.tuning_ is not None:
            out["tuning_(leaf/max_features: mean half interval score; *: chosen)"] = self.tuning_.text()
        if self.tune_seconds_ is not None:
            out["time_tuning"] = f"{self.tune_seconds_:.2f} s"
        if self.grow_seconds_ is not None:
            out["time_growing"] = f"{self.grow_seconds_:.2f} s"
        if self.index_seconds_ is not None:
            out["time_indexing_O(nk)"] = f"{self.index_seconds_:.2f} s"
        return out

"""Random-forest localizer: a Quantile Regression Forest of the scores.

The forest is grown by scikit-learn on a *localizer* part of the calibration
data (honest, the default) and only its partition is kept: the weights are
computed from the *conformal* calibration points and the test point, so the
n + 1 points are exchangeable and LCP's marginal guarantee is exact. With
``honest=False`` the forest is grown on the conformal points themselves and the
weights use their bootstrap multiplicities, as in the paper; the guarantee is
then not certified.

A leaf size of at least the growing points' number (the "tune" rule's
no-localization candidate, or a user's choice) puts every point in one leaf:
the weights are uniform and the thresholds are split conformal's on the
indexed points, so no forest is grown and thresholds take O(1) per row.

With ``scale="forest"`` the scores are first divided by the forest's own
prediction sigma(x), the mean of the growing scores in x's leaves (a
random-forest estimate of E[V | x]); the conformal points are indexed by
V / sigma(x) and a threshold t' of those is returned as t' sigma(x). sigma is
a fixed function of the growing data, so V / sigma(x) is a fixed score
function and LCP's guarantee is unchanged; the localizing weights then only
have to correct what sigma misses, which they do with fewer points per leaf
(:mod:`confrf.localizers.tuning` chooses the scale with the leaves).

A *normalized* localizer keeps the forest for sigma(x) only and puts every
conformal point in one leaf: uniform weights on V / sigma(x), so the
thresholds are sigma(x) times split conformal's quantile of the V_i / sigma(X_i)
(normalized split conformal, with a random-forest scale). The calibrator asks
for it when the localized leaves would hold too few conformal points to
estimate their own quantiles (:func:`confrf.localizers.sources.normalizes`).
Everything that reads the index treats it as one leaf (``pooled``), and
everything that reads sigma(x) takes it from the forest (``scaled``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor

from .. import _kernels
from .._validation import (
    as_float_matrix,
    as_float_vector,
    check_max_features,
    check_min_samples_leaf,
    check_n_estimators,
    seed_entropy,
)
from ..exceptions import InputError, NotFittedError
from ._compact_trees import pack_forest, unpack_forest
from ._float32 import RankColumns
from .forest_settings import (
    SCALES,
    auto_min_samples_leaf,
    auto_n_estimators,
    check_forest_backend,
    check_max_samples,
    check_scale,
)
from .forest_summary import describe_forest, localization_note
from .leaf_index import LeafIndex, leaf_dtype, stack_lookups  # LeafIndex: also where old pickles look it up
from .lightgbm_forest import grow_lightgbm_forest
from .screening import SCREENED, screen_features
from .tuning import TUNE, ForestTuning, feature_candidates, leaf_candidates, tune_forest

#: sigma(x) is floored at this share of the mean growing score (a leaf of zero scores must not divide by 0)
SCALE_FLOOR = 1e-3
#: rows per leaf lookup when indexing: bounds the float32 copies of X to a chunk
LOOKUP_CHUNK = 50_000


@dataclass
class ForestLocalizer:
    """Random-forest localizer (the weights w(x, X_j) of a QRF on the scores).

    Parameters
    ----------
    n_estimators : int or "auto"
        Number of trees k. "auto" (default) is :func:`auto_n_estimators` of
        the growing points and the leaf size: 100 trees, more (up to 500)
        when the leaves are small and the data few.
    min_samples_leaf : int, "tune" or "auto"
        Minimum leaf size when growing. "tune" (default) chooses it among a
        geometric grid by simulated LCP-RF calibrations on the growing data
        only (:mod:`confrf.localizers.tuning`); "auto" is
        :func:`auto_min_samples_leaf`, the paper's Assumption 3 rule.
    max_features : float, int, str or None
        Features tried at each split (scikit-learn's meaning), or "screened":
        the trees see only the columns a first forest of the growing scores
        finds relevant (:func:`confrf.localizers.screening.screen_features`)
        and try all of them. "tune" (default) chooses among all features, a
        third of them and "screened" (from 3 columns and 300 points on), with
        the leaf size, by the same simulated calibrations.
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
    scale : {"none", "forest", "tune"}
        "none": the weights localize the raw scores (the paper's LCP-RF).
        "forest": they localize V / sigma(x), sigma(x) the forest's own
        prediction of the score (floored at ``SCALE_FLOOR`` times the mean
        growing score), and thresholds are returned in score units.
        "tune": chosen with the leaf size by the simulated calibrations.
    forest_backend : {"sklearn", "lightgbm"}
        What grows the trees: scikit-learn's random forest, or LightGBM's
        random-forest mode (histogram splits, much faster on many rows and
        features; :mod:`confrf.localizers.lightgbm_forest`). Lookups and
        prediction use scikit-learn trees either way.
    max_samples : float or None
        Share of the growing rows each tree draws (scikit-learn's meaning,
        with ``bootstrap=True``); None: as many as there are rows.

    Examples
    --------
    An honest forest grown on one part of the scores, indexing the other;
    each tree draws half of the growing rows:

    >>> import numpy as np
    >>> from confrf.localizers import ForestLocalizer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 3)); V = np.abs(rng.normal(size=2000)) * (0.2 + X[:, 0])
    >>> loc = ForestLocalizer(n_estimators=50, min_samples_leaf=20, max_features=1.0, max_samples=0.5,
    ...                       random_state=0).grow(X[:1000], V[:1000]).index(X[1000:], V[1000:])
    >>> t, closed, level = loc.thresholds(np.array([[0.1, 0.5, 0.5], [0.9, 0.5, 0.5]]), m_req=901)
    >>> bool(t[0] < t[1])  # wider where the noise is larger
    True
    """

    n_estimators: int | str = "auto"
    min_samples_leaf: int | str = TUNE
    max_features: float | int | str | None = TUNE
    max_depth: int | None = None
    bootstrap: bool = True
    honest: bool = True
    random_state: int | None = None
    n_jobs: int | None = None
    alpha: float = 0.1
    conformal_ratio: float = 1.0
    scale: str = "none"
    forest_backend: str = "sklearn"
    max_samples: float | None = None
    forest_: RandomForestRegressor | None = field(default=None, repr=False)
    rank_columns_: RankColumns | None = field(default=None, repr=False)  # columns float32 would blur
    index_: LeafIndex | None = field(default=None, repr=False)
    min_samples_leaf_: int | None = field(default=None, repr=False)
    max_features_: float | int | str | None = field(default=None, repr=False)
    tuning_: ForestTuning | None = field(default=None, repr=False)  # the "tune" rule's candidates and scores
    scale_: str | None = field(default=None, repr=False)  # "none" or "forest", after grow()
    columns_: np.ndarray | None = field(default=None, repr=False)  # the screened columns (max_features="screened")
    n_columns_: int | None = field(default=None, repr=False)  # columns of X before screening
    scale_floor_: float | None = field(default=None, repr=False)
    leaf_values_: np.ndarray | None = field(default=None, repr=False)  # each node's mean growing score, all trees
    index_scale_: np.ndarray | None = field(default=None, repr=False)  # sigma at the indexed points (scaled only)
    n_grow_: int | None = field(default=None, repr=False)
    grow_seconds_: float | None = field(default=None, repr=False)  # growing the scikit-learn forest
    tune_seconds_: float | None = field(default=None, repr=False)  # the "tune" rule's simulated calibrations
    index_seconds_: float | None = field(default=None, repr=False)  # the O(n k) leaf-index precomputation
    pooled_: bool | None = field(default=None, repr=False)  # every point in one leaf: no forest, no localization
    normalized_: str | None = field(default=None, repr=False)  # why the forest gives sigma(x) only (uniform weights)
    sigma_leaf_: Any = field(default=None, repr=False)  # a normalized forest's leaf choice (sigma_leaf.SigmaLeafChoice)
    skipped_: str | None = field(default=None, repr=False)  # why no localizer part was used at all (skip())
    source_choice_: Any = field(default=None, repr=False)  # what the forest grew on and why (sources.SourceChoice)

    # -- pickling ----------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        # the trees in compact arrays (28 bytes a node instead of scikit-learn's 72): see _compact_trees
        state = dict(self.__dict__)
        if state.get("forest_") is not None:
            state["forest_"] = pack_forest(state["forest_"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("forest_"), dict):
            state = {**state, "forest_": unpack_forest(state["forest_"])}
        self.__dict__.update(state)

    # -- lifecycle ---------------------------------------------------------
    def grow(self, X: np.ndarray, scores: np.ndarray, likelihood_ratio: np.ndarray | None = None) -> ForestLocalizer:
        """Grow the forest of the scores on (X, scores).

        ``likelihood_ratio`` (covariate shift: w(x) of the growing rows) is
        read only by the "tune" rule, which then compares candidates by the
        target population's loss (:mod:`confrf.localizers.tuning`); the trees
        themselves are grown unweighted.
        """
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        msl, mf, scale = self.min_samples_leaf, self.max_features, check_scale(self.scale)
        self.tuning_, self.skipped_, self.source_choice_ = None, None, None
        t0 = time.perf_counter()
        check_n_estimators(self.n_estimators)
        check_min_samples_leaf(msl)
        check_max_features(mf)
        backend = check_forest_backend(self.forest_backend)
        check_max_samples(self.max_samples, self.bootstrap)
        if backend == "lightgbm" and not self.honest:
            raise InputError(
                "forest_backend='lightgbm' needs honest=True: the paper's in-sample weights use each tree's "
                "bootstrap counts, which LightGBM does not report; use forest_backend='sklearn' with honest=False."
            )
        if isinstance(msl, str):  # "auto", or the start of the "tune" grid
            msl = auto_min_samples_leaf(X.shape[0])
        self.rank_columns_ = RankColumns.learn(X)
        self.columns_, self.n_columns_ = None, int(X.shape[1])
        # None: one seed from numpy's global generator for every draw below (np.random.seed reproduces it)
        seed = seed_entropy(self.random_state)
        if TUNE in (self.min_samples_leaf, mf, scale):
            # choose on the growing data only: the points indexed later never influence the forest
            self.tuning_ = tune_forest(
                self._tree_input(X),
                V,
                alpha=self.alpha,
                random_state=seed,
                n_jobs=self.n_jobs,
                leaves=leaf_candidates(X.shape[0], msl) if self.min_samples_leaf == TUNE else [msl],
                baseline=msl,
                max_features=feature_candidates(X.shape[1]) if mf == TUNE else [mf],
                scales=list(SCALES) if scale == TUNE else [scale],
                forest_kwargs={
                    "max_depth": self.max_depth,
                    "bootstrap": self.bootstrap,
                    "max_samples": self.max_samples,
                    "forest_backend": backend,
                },
                conformal_ratio=self.conformal_ratio,
                ratio=likelihood_ratio,
                pooled=self.min_samples_leaf == TUNE,  # no localization competes when the leaf size is tuned
                make_localizer=ForestLocalizer,
            )
            msl, mf, scale = self.tuning_.chosen
        self.tune_seconds_ = time.perf_counter() - t0 if self.tuning_ is not None else None
        return self.grow_chosen(X, V, int(msl), mf, scale, seed)

    def grow_chosen(
        self, X: np.ndarray, V: np.ndarray, msl: int, mf: Any, scale: str, seed: int, normalized: str | None = None
    ) -> ForestLocalizer:
        """Grow the final forest on (X, V) with settings already chosen (by :meth:`grow`'s tuning, or by
        :func:`confrf.localizers.sources.grow_from_sources`) and the fit's resolved ``seed`` (screening and
        trees); ``rank_columns_`` must be learned. ``normalized`` (why): the forest gives sigma(x) only and
        the weights are uniform (``scale`` must be "forest")."""
        backend = check_forest_backend(self.forest_backend)
        if normalized and scale != "forest":
            raise ValueError("a normalized localizer divides by the forest's sigma(x): scale must be 'forest'")
        self.min_samples_leaf_, self.max_features_, self.scale_ = int(msl), mf, scale
        self.pooled_ = self.min_samples_leaf_ >= X.shape[0]
        self.normalized_ = None if self.pooled_ else normalized
        self.sigma_leaf_ = None  # set by the caller that chose the leaf (sources._grow_choice)
        if self.pooled_:
            # every point in one leaf: uniform weights, split conformal's thresholds; nothing to grow or scale
            self.forest_, self.leaf_values_, self.scale_ = None, None, "none"
            self.scale_floor_, self.n_grow_, self.grow_seconds_ = 1.0, int(X.shape[0]), 0.0
            return self
        t0 = time.perf_counter()  # growing time includes the screening forest
        if mf == SCREENED:  # on the growing points only, as in the tuning's simulations
            self.columns_ = screen_features(self._tree_input(X), V, seed, self.n_jobs)
        mean_v = float(np.mean(V)) if V.size else 0.0
        self.scale_floor_ = SCALE_FLOOR * mean_v if mean_v > 0 else 1.0
        self.n_grow_ = int(X.shape[0])
        trees = (
            auto_n_estimators(self.n_grow_, self.min_samples_leaf_)
            if self.n_estimators == "auto"
            else int(self.n_estimators)
        )
        settings: dict[str, Any] = {
            "n_estimators": trees,
            "min_samples_leaf": self.min_samples_leaf_,
            "max_features": 1.0 if self.max_features_ == SCREENED else self.max_features_,
            "max_depth": self.max_depth,
            "bootstrap": self.bootstrap,
            "max_samples": self.max_samples,
            "random_state": seed,
            "n_jobs": self.n_jobs,
        }
        if backend == "lightgbm":
            self.forest_ = grow_lightgbm_forest(self._tree_input(X), V, **settings)
        else:
            self.forest_ = RandomForestRegressor(**settings).fit(self._tree_input(X), V)
        self.leaf_values_ = (
            np.concatenate([est.tree_.value[:, 0, 0] for est in self.forest_.estimators_])
            if self.scale_ == "forest"
            else None
        )
        self.grow_seconds_ = time.perf_counter() - t0
        return self

    def skip(self, n_columns: int, reason: str) -> ForestLocalizer:
        """No localizer part and no forest: every indexed point in one leaf (split conformal), for ``reason``.

        The calibrator calls it when the decision not to localize is made from
        sizes alone, before any score is seen, so that every calibration point
        can be a conformal point without touching the guarantee.
        """
        self.forest_, self.leaf_values_, self.tuning_, self.rank_columns_, self.columns_ = None, None, None, None, None
        self.pooled_, self.skipped_, self.scale_, self.scale_floor_ = True, reason, "none", 1.0
        self.normalized_ = self.sigma_leaf_ = None
        self.n_columns_, self.n_grow_, self.min_samples_leaf_, self.max_features_ = int(n_columns), 0, None, None
        self.tune_seconds_ = self.grow_seconds_ = None
        return self

    def index(self, X: np.ndarray, scores: np.ndarray, multiplicity: np.ndarray | None = None) -> ForestLocalizer:
        """Index the conformal calibration points (X, scores) in the grown forest.

        ``multiplicity`` (n, k) gives each point's weight multiplicity per tree;
        by default 1 (honest), or the bootstrap counts for ``honest=False``.
        """
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        t0 = time.perf_counter()
        k, n = self.n_trees, X.shape[0]
        lookups = (self.lookup(X[s : s + LOOKUP_CHUNK], V[s : s + LOOKUP_CHUNK]) for s in range(0, n, LOOKUP_CHUNK))
        self.index_lookups(*stack_lookups(lookups, n, k), multiplicity=multiplicity)
        self.index_seconds_ = time.perf_counter() - t0  # the lookups included
        return self

    def lookup(self, X: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the index needs of some rows: global leaf ids (m, k), indexed scores and sigma(x).

        Row by row (no row depends on another), so rows can be looked up in
        chunks, or on Dask workers partition by partition, and stacked:
        :meth:`index_lookups` of the stacked parts equals :meth:`index` of
        all rows. The indexed score is V / sigma(x) when scaled, else V (and
        sigma is 1).
        """
        X = as_float_matrix(X, "X")
        V = as_float_vector(scores, "scores")
        offsets = self._node_offsets()
        leaves = self._global_leaves(X, offsets)
        sigma = self.score_scale(X, leaves)
        n_leaves = 1 if self.pooled else int(offsets[-1] + self._forest().estimators_[-1].tree_.node_count)
        return leaves.astype(leaf_dtype(n_leaves), copy=False), (V / sigma if self.scaled else V), sigma

    def index_lookups(
        self, leaves: np.ndarray, scores: np.ndarray, sigma: np.ndarray, multiplicity: np.ndarray | None = None
    ) -> ForestLocalizer:
        """Index points from their :meth:`lookup` (stacked in point order)."""
        offsets = self._node_offsets()
        n_leaves = 1 if self.pooled else int(offsets[-1] + self._forest().estimators_[-1].tree_.node_count)
        self.index_scale_ = sigma if self.scaled else None
        self.index_ = LeafIndex.build(np.ascontiguousarray(leaves), scores, multiplicity, offsets, n_leaves)
        return self

    def fit(self, X: np.ndarray, scores: np.ndarray) -> ForestLocalizer:
        """Non-honest fit (the paper's variant): grow and index on the same points."""
        self.grow(X, scores)
        return self.index(X, scores, multiplicity=self.growing_multiplicity())

    def growing_multiplicity(self) -> np.ndarray:
        """(n_grow, k) times each growing point was drawn by each tree (1 without bootstrap or without a forest)."""
        n = int(self.n_grow_ or 0)
        if self.pooled:
            return np.ones((n, 1), dtype=np.int32)
        forest = self._forest()
        if self.bootstrap:
            return np.stack([np.bincount(s, minlength=n) for s in forest.estimators_samples_], axis=1)
        return np.ones((n, self.n_trees), dtype=np.int32)

    # -- queries -----------------------------------------------------------
    def leaves(self, X: np.ndarray) -> np.ndarray:
        """Global leaf ids (m, k) of rows of X."""
        return self._global_leaves(as_float_matrix(X, "X"), self._index().node_offset)

    @property
    def n_trees(self) -> int:
        """Trees of the index (``n_estimators`` with "auto" resolved); 1 one-leaf tree when pooled."""
        return 1 if self.pooled else len(self._forest().estimators_)

    @property
    def pooled(self) -> bool:
        """Every indexed point in one leaf (uniform weights): split conformal's thresholds, of V / sigma(x) when
        :attr:`normalized`."""
        return bool(self.pooled_) or self.normalized

    @property
    def no_localization(self) -> bool:
        """Every point in one leaf and no sigma(x) (no forest grown): the thresholds are split conformal's."""
        return bool(self.pooled_)

    @property
    def normalized(self) -> bool:
        """The forest gives sigma(x) only and the weights are uniform (normalized split conformal)."""
        return bool(getattr(self, "normalized_", None))  # getattr: pickles from before the state existed

    @property
    def scaled(self) -> bool:
        """Whether the indexed scores are V / sigma(x) (``scale_ == "forest"``)."""
        return self.scale_ == "forest" and not self.pooled_  # without a forest there is no sigma(x) to divide by

    def score_scale(self, X: np.ndarray, leaves: np.ndarray | None = None) -> np.ndarray:
        """sigma(x) for rows of X: the forest's prediction of the score, floored; 1 when unscaled.

        ``leaves``: the rows' :meth:`leaves`, reused when they are the forest's (not when pooled: a
        normalized localizer's index has one leaf, its forest many).
        """
        X = as_float_matrix(X, "X")
        if not self.scaled:
            return np.ones(X.shape[0])
        if leaves is None or self.pooled:
            leaves = self._forest_leaves(X)
        return self._scale_of(leaves)

    def _scale_of(self, leaves: np.ndarray) -> np.ndarray:
        # scikit-learn's forest prediction (mean over trees of the leaf means), from leaves already looked up
        assert self.leaf_values_ is not None and self.scale_floor_ is not None  # grow() sets both when scaled
        return np.maximum(self.leaf_values_[leaves].mean(axis=1), self.scale_floor_)

    def indexed_scores(self) -> np.ndarray:
        """The indexed points' scores in score units (the index holds V / sigma(x) when scaled)."""
        idx = self._index()
        return idx.scores * self.index_scale_ if self.scaled else idx.scores

    def thresholds(self, X: np.ndarray, m_req: int, n_threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact LCP-RF thresholds (t, closed, level) for rows of X, in score units.

        When scaled, the kernel's threshold t' of the indexed V / sigma and
        t = t' sigma(x) are returned: {V <= t} is {V / sigma(x) <= t'} (up to
        the rounding of one product).
        """
        idx = self._index()
        leaves = self.leaves(X)
        if self.pooled:
            t, closed, level = idx.pooled_thresholds(m_req, leaves.shape[0])
        else:
            t, closed, level = idx.thresholds(leaves, m_req, n_threads)
        if self.scaled:
            t = t * self.score_scale(X, leaves)
        return t, closed, level

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

    def _weight_rows(
        self, X: np.ndarray, include_self: bool, leaves: np.ndarray | None = None
    ) -> tuple[sp.csr_matrix, np.ndarray]:
        idx = self._index()
        indptr, indices, data, self_w = idx.weight_rows(self.leaves(X) if leaves is None else leaves, include_self)
        return sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, idx.n)), self_w

    def conditional_quantiles(self, X: np.ndarray, q: np.ndarray) -> np.ndarray:
        """QRF quantiles Q(q; F(.|x)) of the calibration scores, shape (m, len(q)).

        When scaled: sigma(x) times the QRF quantiles of the indexed V / sigma.
        """
        qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
        if not np.all((qs >= 0) & (qs <= 1)):  # NaN fails too
            raise InputError("quantile levels must lie in [0, 1].")
        leaves = self.leaves(X)  # once, for the weights and for sigma
        # pooled: the same uniform weights for every row, so one row's quantiles (of V / sigma when normalized)
        rows = leaves[:1] if self.pooled else leaves
        W = self._weight_rows(X, False, rows)[0]
        out = _kernels.csr_row_quantiles(
            W.indptr.astype(np.int64), W.indices.astype(np.int32), W.data, self._index().scores, qs
        )
        if self.pooled:
            out = np.repeat(out, leaves.shape[0], axis=0)
        return out * self.score_scale(X, leaves)[:, None] if self.scaled else out

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
        # the index's: one tree of one leaf when pooled
        return np.zeros(1, dtype=np.int64) if self.pooled else self._forest_offsets()

    def _forest_offsets(self) -> np.ndarray:
        counts = [est.tree_.node_count for est in self._forest().estimators_]
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    def _tree_input(self, X: np.ndarray) -> np.ndarray:
        ranks = self.rank_columns_
        X = X if ranks is None else ranks.apply(X)
        cols = getattr(self, "columns_", None)
        return X if cols is None else X[:, cols]

    def _global_leaves(self, X: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        if self.pooled:
            if X.shape[1] != self.n_columns_:
                raise InputError(f"X has {X.shape[1]} columns; the localizer was grown on {self.n_columns_}.")
            return np.zeros((X.shape[0], 1), dtype=np.int64)  # one tree, one leaf
        return self._forest_leaves(X, offsets)

    def _forest_leaves(self, X: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
        """The forest's global leaf ids (m, k) of rows of X (also when the index is one leaf: sigma(x))."""
        forest = self._forest()
        offsets = self._forest_offsets() if offsets is None else offsets
        p = getattr(self, "n_columns_", None) or forest.n_features_in_  # before screening
        if X.shape[1] != p:
            raise InputError(f"X has {X.shape[1]} columns; the localizer was grown on {p}.")
        # a plain loop over the trees: forest.apply's joblib dispatch costs more than the lookups (and threads
        # sharing the trees measured no faster: scikit-learn 1.9's lookups did not run in parallel, issue 40)
        X32 = self.float32_input(X)
        leaves = np.empty((X.shape[0], len(forest.estimators_)), dtype=np.int64)
        for tree, est in enumerate(forest.estimators_):
            leaves[:, tree] = est.tree_.apply(X32)
        return leaves + offsets[None, :]

    def float32_input(self, X: np.ndarray) -> np.ndarray:
        """The trees' input: the screened, rank-transformed columns of X as C-ordered float32."""
        with np.errstate(over="ignore"):  # beyond float32's range is +-inf: past every split, as the value itself
            return np.ascontiguousarray(self._tree_input(X), dtype=np.float32)

    def localization_note(self) -> str | None:
        """The summary's plain words when no localization was chosen, else None."""
        return localization_note(self)

    def describe(self) -> dict[str, Any]:
        """Forest settings and leaf-size facts for summaries."""
        return describe_forest(self)

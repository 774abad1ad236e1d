"""The jackknife+-after-bootstrap (Kim, Xu & Barber 2020): bagged models, out-of-bag scores."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, seed_entropy
from ..exceptions import InputError
from .base import Guarantee
from .cross import IN_PRACTICE, KIND_2ALPHA, CrossCalibrator, row_step, stacked_predictions
from .cross_bounds import interval_bounds
from .registry import MethodSpec, register

#: how the bootstrap models that miss a row are combined
AGGREGATIONS = ("mean", "median")


class JackknifeABCalibrator(CrossCalibrator):
    """J+aB: B models on bootstrap bags; row i is scored by the aggregate of the models whose bag misses it.

    Kim, Xu & Barber's guarantee (coverage >= 1 - 2 alpha) needs the number of
    models to be random: B ~ Binomial(B_tilde, p), p = (1 - 1/(n+1))^m for
    bags of m rows drawn with replacement (1 - m/(n+1) without). That is the
    number of bags, out of B_tilde drawn from the n + 1 points (the test point
    included), that miss the test point. ``n_bootstrap`` is the expected B;
    B_tilde = round(n_bootstrap / p).

    A row in every bag has no out-of-bag model, so no score: it counts as an
    infinite score, its set at every new point being the whole line (lo = -inf,
    hi = +inf). This keeps the guarantee (the proof's comparisons involving it
    are never "strange") and can only widen intervals; with bags of n rows a
    row is in all B bags with probability about 0.632^B (1e-6 at B = 30).

    Parameters
    ----------
    n_bootstrap : int
        Expected number of bootstrap models (30, as MAPIE's default resampling).
    aggregation : {"mean", "median"}
        How the out-of-bag models' predictions are combined (each column of a
        score's prediction, e.g. CQR's two quantiles, on its own).
    bag_size : int or None
        Rows per bag, m; None is n.
    replace : bool
        Bootstrap bags (True) or subsamples without replacement (False; then m < n).
    n_jobs, seed
        As for :class:`confrf.calibrators.cv_plus.CVPlusCalibrator`; ``seed``
        draws B and the bags.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.jackknife_ab import JackknifeABCalibrator
    >>> from confrf.scores import get_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = X[:, 0] + rng.normal(size=80)
    >>> cal = JackknifeABCalibrator(n_bootstrap=20, seed=0).fit(
    ...     X, y, score=get_score("absolute"), model="ols", alpha=0.1, random_state=0, fit_intercept=True)
    >>> lower, upper, level = cal.intervals(X[:2], 0.1)
    >>> bool(np.all(lower < upper)), cal.n_models
    (True, 21)
    """

    name = "jackknife+ab"

    def __init__(
        self,
        n_bootstrap: int = 30,
        aggregation: str = "mean",
        bag_size: int | None = None,
        replace: bool = True,
        n_jobs: int | None = None,
        seed: int | None = None,
    ):
        super().__init__(n_jobs=n_jobs, seed=seed)
        self.n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=1, hint="the expected number of models")
        if aggregation not in AGGREGATIONS:
            raise InputError(f"aggregation must be one of {list(AGGREGATIONS)}, got {aggregation!r}.")
        self.aggregation = aggregation
        self.bag_size = check_int(bag_size, "bag_size", minimum=1, allow_none=True, hint="rows per bootstrap bag")
        if not isinstance(replace, (bool, np.bool_)):
            raise InputError(f"replace must be True (bootstrap bags) or False (subsamples), got {replace!r}.")
        self.replace = bool(replace)

    def fit(self, X, y, *, score, alpha, **fit_args) -> JackknifeABCalibrator:
        n = X.shape[0]
        m = n if self.bag_size is None else int(self.bag_size)
        if not self.replace and m >= n:
            raise InputError(
                f"replace=False draws bags of bag_size={m} distinct rows out of {n}: every bag would hold every row, "
                "leaving no out-of-bag model; give bag_size < n (e.g. n // 2)."
            )
        if m < 2:
            raise InputError(f"bag_size={m}: a model needs at least 2 training rows.")
        self._check_scores(n, alpha, f"{n} rows")
        p = (1.0 - 1.0 / (n + 1)) ** m if self.replace else 1.0 - m / (n + 1)
        rng = np.random.default_rng(seed_entropy(self.seed))
        self.n_tilde_ = max(1, int(round(self.n_bootstrap / p)))
        self.p_keep_ = p
        B = int(rng.binomial(self.n_tilde_, p))
        bags = [rng.integers(0, n, size=m) if self.replace else rng.choice(n, size=m, replace=False) for _ in range(B)]
        self._fit_subsets(X, y, bags, score, alpha=alpha, **fit_args)
        out_of_bag = np.ones((n, B), dtype=bool)
        for b, bag in enumerate(bags):
            out_of_bag[bag, b] = False
        self.out_of_bag_, self.bags_ = out_of_bag, bags
        self.bag_size_, self.n_train_ = m, n
        R = np.full(n, np.inf)
        has = out_of_bag.any(axis=1)
        if B:
            P = stacked_predictions(self.models_, X)  # (B, n[, c])
            agg = self._aggregate_own(P, out_of_bag[has], np.flatnonzero(has))
            R[has] = score.score(y[has], agg)
        if not np.all(np.isfinite(R[has])):
            raise InputError("the out-of-bag scores have NaN or inf; check the model's predictions.")
        self.scores_ = R
        self.position_ = np.cumsum(has) - 1  # a scored row's place among the rows with an out-of-bag model
        return self

    @property
    def n_models(self) -> int:
        return len(self.models_)

    def _aggregate(self, P: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(r, s, ...) aggregate over b with mask[i, b] of the predictions P[b] (B, s, ...), for each of r rows."""
        if self.aggregation == "median":
            masked = np.where(mask.reshape(mask.shape + (1,) * (P.ndim - 1)), P[None], np.nan)
            return np.nanmedian(masked, axis=1)
        acc = np.zeros((mask.shape[0],) + P.shape[1:])
        term = np.empty_like(acc)
        w = mask.astype(np.float64).reshape(mask.shape + (1,) * (P.ndim - 1))
        for b in range(P.shape[0]):  # the same sum, in the same order, as _aggregate_own's
            np.multiply(w[:, b], P[b][None], out=term)
            acc += term
        acc /= w.sum(axis=1)
        return acc

    def _aggregate_own(self, P: np.ndarray, mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(r, ...) aggregate at each row's own point: over b with mask[i, b] of P[b, rows[i]]."""
        own = P[:, rows]  # (B, r, ...)
        if self.aggregation == "median":
            masked = np.where(mask.T.reshape(mask.T.shape + (1,) * (P.ndim - 2)), own, np.nan)
            return np.nanmedian(masked, axis=0)
        acc = np.zeros(own.shape[1:])
        w = mask.astype(np.float64).reshape(mask.shape + (1,) * (P.ndim - 2))
        for b in range(P.shape[0]):
            acc += w[:, b] * own[b]
        return acc / w.sum(axis=1)

    def _bounds(self, X, alpha, n_threads):
        m = X.shape[0]
        lower, upper, level = np.full(m, -np.inf), np.full(m, np.inf), np.ones(m)
        has = np.isfinite(self.scores_)
        if not has.any() or m == 0:
            return lower, upper, level
        mask = self.out_of_bag_[has]
        group = np.where(has, self.position_, 0)  # rows without a model are left out by their infinite score
        # one block of new rows: the B models' predictions, then their aggregates for every scored row
        per_row = int(has.sum()) * (self.n_models if self.aggregation == "median" else 1)
        step = row_step(per_row)
        for a in range(0, m, step):
            b = min(a + step, m)
            agg = self._aggregate(stacked_predictions(self.models_, X[a:b]), mask)
            lower[a:b], upper[a:b], level[a:b] = interval_bounds(
                self.score, agg, group, self.scores_, alpha, n_threads=n_threads
            )
        return lower, upper, level

    def guarantee(self, alpha) -> Guarantee:
        p = self.p_keep_
        bag = f"{'with' if self.replace else 'without'} replacement"
        prob = f"(1 - 1/(n+1))^m = {p:.4g}" if self.replace else f"1 - m/(n+1) = {p:.4g}"
        return Guarantee(
            KIND_2ALPHA,
            True,
            f"P(Y in interval) >= {1 - 2 * alpha:g} (1 - 2 alpha) in finite samples for any model and aggregation "
            f"(the worst case of Kim, Xu & Barber 2020, Theorem 1: the number of bags is random, B ~ Binomial("
            f"{self.n_tilde_}, {prob}), bags of m = {self.bag_size_} rows drawn {bag}; here B = {self.n_models}), if "
            "the training and test points are exchangeable and the model's fit does not depend on the order of its "
            f"rows. {IN_PRACTICE.format(target=1 - alpha)}",
        )

    def describe(self) -> dict[str, Any]:
        n_every = int(np.count_nonzero(~np.isfinite(self.scores_)))
        oob = self.out_of_bag_.sum(axis=1)
        return {
            "bootstrap models B": f"{self.n_models} (Binomial({self.n_tilde_}, {self.p_keep_:.3g}); expected "
            f"{self.n_bootstrap})",
            "bag size m": f"{self.bag_size_} ({'with' if self.replace else 'without'} replacement)",
            "aggregation": self.aggregation,
            "out-of-bag models per row": f"{int(oob.min())} to {int(oob.max())}, median {float(np.median(oob)):g}",
            "rows in every bag": (
                f"{n_every} (no out-of-bag model: an infinite score, the whole line at every new point)"
                if n_every
                else 0
            ),
            "model fits": f"{self.n_models} bootstrap models, and 1 on all rows for the fit column",
            "time_bootstrap_fits": f"{self.fit_seconds_:.2f} s",
        }


def _make_jab(est: Any, opts: dict[str, Any], seed: int | None) -> JackknifeABCalibrator:
    return JackknifeABCalibrator(
        n_bootstrap=opts["n_bootstrap"],
        aggregation=opts["aggregation"],
        bag_size=opts["bag_size"],
        replace=opts["replace"],
        n_jobs=est.n_jobs,
        seed=seed,
    )


register(
    MethodSpec(
        "jackknife+ab",
        _make_jab,
        options={"n_bootstrap": 30, "aggregation": "mean", "bag_size": None, "replace": True},
        title="Jackknife+-after-bootstrap (J+aB)",
        fits_models=True,
    )
)

"""CV+ and jackknife+ (Barber, Candes, Ramdas & Tibshirani 2021): every row trains and every row calibrates."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, seed_entropy
from ..exceptions import InputError
from .base import Guarantee
from .cross import IN_PRACTICE, KIND_2ALPHA, CrossCalibrator, row_step, stacked_predictions
from .cross_bounds import fold_sorted_scores, interval_bounds
from .registry import MethodSpec, register

#: the kind of CV+'s statement: marginal, at a level below 1 - 2 alpha by epsilon(n, K)
KIND_CV = "marginal (1 - 2 alpha - eps)"


class CVPlusCalibrator(CrossCalibrator):
    """K-fold CV+ (``cv`` folds), or the jackknife+ (``jackknife=True``: n folds of one row).

    The model is fitted K times, each time without one fold; every row is
    scored with the model that did not see it, R_i = V(X_i, Y_i; mu_{-k(i)}),
    and a new point x gets [j_lo-th smallest lo_i(x), j_hi-th smallest hi_i(x)]
    with [lo_i(x), hi_i(x)] = {y : V(x, y; mu_{-k(i)}) <= R_i}, j_hi =
    ceil((1 - alpha)(n + 1)) and j_lo = n + 1 - j_hi (for the absolute score:
    quantiles of mu_{-k(i)}(x) -/+ R_i).

    Parameters
    ----------
    cv : int or scikit-learn splitter
        K. An int makes K folds of exactly floor(n / K) rows at random
        (``seed``); the n mod K rows left over train every fold model but get
        no score, because the CV+ bound is proved for folds of equal size. A
        splitter (e.g. ``KFold(5, shuffle=True, random_state=0)``) gives the
        folds itself: its test folds must hold every row once, and unequal
        folds leave the bound uncertified.
    jackknife : bool
        Leave-one-out: n models, every row scored (``cv`` is ignored).
    n_jobs : int or None
        Model fits run side by side (joblib threads); prediction threads.
    seed : int or None
        Draws the folds.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.cv_plus import CVPlusCalibrator
    >>> from confrf.scores import get_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = X[:, 0] + rng.normal(size=60)
    >>> cal = CVPlusCalibrator(cv=5, seed=0).fit(
    ...     X, y, score=get_score("absolute"), model="ols", alpha=0.1, random_state=0, fit_intercept=True)
    >>> lower, upper, level = cal.intervals(X[:2], 0.1)
    >>> bool(np.all(lower < upper)), cal.sizes()
    (True, {'scored out of fold': 60})
    """

    def __init__(self, cv: Any = 5, jackknife: bool = False, n_jobs: int | None = None, seed: int | None = None):
        super().__init__(n_jobs=n_jobs, seed=seed)
        self.cv = cv
        self.jackknife = jackknife
        self.name = "jackknife+" if jackknife else "cv+"

    def fit(self, X, y, *, score, alpha, **fit_args) -> CVPlusCalibrator:
        n = X.shape[0]
        folds, spare = self._folds(X, y)
        K = len(folds)
        if n - min(f.shape[0] for f in folds) < 2:
            raise InputError(f"{n} rows in {K} folds leave a fold model fewer than 2 training rows; give more rows.")
        self._check_scores(n - spare.shape[0], alpha, f"{n} rows in {K} folds")
        everyone = np.ones(n, dtype=bool)
        subsets = []
        for f in folds:
            keep = everyone.copy()
            keep[f] = False
            subsets.append(np.flatnonzero(keep))
        self._fit_subsets(X, y, subsets, score, alpha=alpha, **fit_args)
        rows = np.concatenate(folds)
        group = np.repeat(np.arange(K), [f.shape[0] for f in folds])
        R = np.empty(rows.shape[0])
        for k, f in enumerate(folds):
            R[group == k] = score.score(y[f], self.models_[k].predict(X[f]))
        if not np.all(np.isfinite(R)):
            raise InputError("the out-of-fold scores have NaN or inf; check the model's predictions.")
        self.rows_, self.group_, self.scores_ = rows, group, R
        self.fold_sizes_ = np.array([f.shape[0] for f in folds])
        self.n_spare_, self.n_train_ = int(spare.shape[0]), int(n)
        self.folds_sorted_ = fold_sorted_scores(group, R, K)
        return self

    def _folds(self, X: np.ndarray, y: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """(test folds, rows without a score)."""
        n = X.shape[0]
        if self.jackknife:
            return [np.array([i]) for i in range(n)], np.empty(0, dtype=np.int64)
        cv = self.cv
        if hasattr(cv, "split") and not isinstance(cv, (str, bytes)):
            folds = [np.sort(np.asarray(te, dtype=np.int64)) for _, te in cv.split(X, y)]
            every = np.sort(np.concatenate(folds)) if folds else np.empty(0, dtype=np.int64)
            if len(folds) < 2 or every.shape[0] != n or not np.array_equal(every, np.arange(n)):
                raise InputError(
                    f"the cv splitter {type(cv).__name__} must give test folds that hold every row exactly once (as "
                    "KFold's do), at least 2 of them; pass an int to let confrf make the folds."
                )
            return folds, np.empty(0, dtype=np.int64)
        K = int(check_int(cv, "cv", minimum=2, hint="the number of folds K, or a scikit-learn splitter such as KFold"))
        if K > n:
            raise InputError(f"cv={K} folds need at least {K} rows, got {n}; give a smaller cv.")
        size, spare = n // K, n % K
        perm = np.random.default_rng(seed_entropy(self.seed)).permutation(n)
        folds = [np.sort(perm[spare + k * size : spare + (k + 1) * size]) for k in range(K)]
        return folds, np.sort(perm[:spare])

    @property
    def n_folds(self) -> int:
        return len(self.models_)

    def _bounds(self, X, alpha, n_threads):
        m = X.shape[0]
        K = self.n_folds
        lower, upper, level = np.empty(m), np.empty(m), np.empty(m)
        step = row_step(K)
        for a in range(0, m, step):
            b = min(a + step, m)
            preds = stacked_predictions(self.models_, X[a:b])
            lower[a:b], upper[a:b], level[a:b] = interval_bounds(
                self.score,
                preds,
                self.group_,
                self.scores_,
                alpha,
                folds=None if self.jackknife else self.folds_sorted_,
                n_threads=n_threads,
            )
        return lower, upper, level

    @property
    def equal_folds(self) -> bool:
        return bool(np.all(self.fold_sizes_ == self.fold_sizes_[0]))

    def slack(self) -> float:
        """epsilon of Barber et al.'s CV+ bound 1 - 2 alpha - epsilon (0 for the jackknife+)."""
        K, n = self.n_folds, int(self.scores_.shape[0])
        if K == n:
            return 0.0
        return min(2.0 * (1.0 - 1.0 / K) / (n / K + 1.0), (1.0 - K / n) / (K + 1.0))

    def guarantee(self, alpha) -> Guarantee:
        practice = IN_PRACTICE.format(target=1 - alpha)
        exch = (
            "if the training and test points are exchangeable and the model's fit does not depend on the order of its "
            "rows."
        )
        if self.jackknife or self.n_folds == self.scores_.shape[0]:
            return Guarantee(
                KIND_2ALPHA,
                True,
                f"P(Y in interval) >= {1 - 2 * alpha:g} (1 - 2 alpha) in finite samples for any model (the "
                f"jackknife+'s worst case, Barber et al. 2021, Theorem 1), {exch} {practice}",
            )
        K, n, eps = self.n_folds, int(self.scores_.shape[0]), self.slack()
        if not self.equal_folds:
            lo, hi = int(self.fold_sizes_.min()), int(self.fold_sizes_.max())
            return Guarantee(
                KIND_CV,
                False,
                f"Not certified: the cv splitter's {K} folds hold {lo} to {hi} rows, and the CV+ bound "
                f"P(Y in interval) >= 1 - 2 alpha - epsilon (Barber et al. 2021, Theorem 4) is proved for folds of "
                f"equal size. Pass cv={K} (an int): confrf then makes {K} equal folds, the n mod K rows left over "
                f"training every fold model without a score. {practice}",
            )
        return Guarantee(
            KIND_CV,
            True,
            f"P(Y in interval) >= {1 - 2 * alpha - eps:.4g} (1 - 2 alpha - epsilon) in finite samples for any model "
            f"(CV+'s worst case, Barber et al. 2021, Theorem 4: K = {K} folds of {n // K} rows, epsilon = "
            f"min(2(1 - 1/K)/(n/K + 1), (1 - K/n)/(K + 1)) = {eps:.4g} with n = {n}), {exch} {practice}",
        )

    def describe(self) -> dict[str, Any]:
        sizes = self.fold_sizes_
        out: dict[str, Any] = {
            "folds": "n (leave one out)" if self.jackknife else int(sizes.shape[0]),
            "fold size": (int(sizes[0]) if self.equal_folds else f"{int(sizes.min())} to {int(sizes.max())} (unequal)"),
            "rows without a score": self.n_spare_,
            "model fits": f"{self.n_folds} fold models, and 1 on all rows for the fit column",
            "interval": "order statistics of the fold models' ends at x (Barber et al. 2021)",
            "time_fold_fits": f"{self.fit_seconds_:.2f} s",
        }
        if self.n_spare_:
            out["rows without a score"] = (
                f"{self.n_spare_} (n mod K: they train every fold model; equal folds keep the bound proved)"
            )
        return out


def _make(jackknife: bool) -> Any:
    def factory(est: Any, opts: dict[str, Any], seed: int | None) -> CVPlusCalibrator:
        return CVPlusCalibrator(cv=opts.get("cv", 5), jackknife=jackknife, n_jobs=est.n_jobs, seed=seed)

    return factory


register(
    MethodSpec(
        "cv+",
        _make(False),
        options={"cv": 5},
        title="CV+ (cross-conformal, K-fold)",
        fits_models=True,
    )
)
register(MethodSpec("jackknife+", _make(True), title="Jackknife+ (leave-one-out)", fits_models=True))

"""Array-level conformal regressor (scikit-learn style) that the formula API wraps.

Lifecycle: ``fit`` (base model) -> ``conformalize`` (calibration) ->
``predict_interval``. Each step checks that the previous one happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._calibration_record import keep_calibration_rows, keep_cross_rows
from ._estimator_base import (
    ConformalEstimator,
    _seeds,  # noqa: F401  (kept importable as confrf.estimator._seeds)
    check_same_rows,
)
from ._parallel import DEFAULT_CHUNK_SIZE, _kernel_threads_set_to, governs_threads, resolve_jobs
from ._validation import (
    as_float_matrix,
    as_float_vector,
    check_response_scale,
    feature_names,
    is_boolean,
)
from .calibrators import Calibrator, get_method, method_options
from .calibrators.base import Thresholds, threshold_rows
from .calibrators.distribution import SignedDistribution, signed_parts, signed_scores
from .calibrators.pvalue import calibrator_pvalues
from .dask import DaskRows, conformalize_rows, is_dask_collection
from .exceptions import InputError, NotFittedError
from .localizers import ForestLocalizer
from .scores import get_score
from .scores.fitting import DeferredScores, fit_score_models, out_of_fold_scores, prefit_score_models
from .shift.value import ShiftRatio, as_ratio, calibration_ratios, prediction_ratios
from .shift.weighted import warn_small_ess


def _numeric_response(y: Any) -> np.ndarray:
    """``y`` as float64; a boolean ``y`` is a class label, refused as the formula API refuses it."""
    if is_boolean(y):
        raise InputError(
            "y is boolean (True/False), which is a class label, not a number: ConformalRegressor builds prediction "
            "intervals for numbers. For prediction sets use cf.ConformalClassifier (the same fit/conformalize "
            "lifecycle, then predict_sets); for prediction intervals of the 0/1 values pass y.astype(float)."
        )
    return check_response_scale(as_float_vector(y, "y"), "y")


class ConformalRegressor(ConformalEstimator):
    """Conformal prediction intervals on numpy arrays.

    Parameters
    ----------
    model : str, estimator or pair
        Base model mu: "gbm", "rf", "ols" or a scikit-learn regressor (cloned),
        or a fitted model with ``prefit=True``. With ``score="quantile"``:
        "qr" (QuantReg), "qgbm" (quantile-loss boosting) or a pair
        ``(est_lo, est_hi)``; with ``score="scaled"`` and ``prefit=True``:
        ``(fitted_mu, fitted_sigma)``.
    method : str
        Calibration method, a name in ``confrf.calibrators.METHODS``: "lcp-rf",
        "split", "lcp" (Guan's kernel LCP), "slcp" (Han et al.), ...; or
        "cv+", "jackknife+", "jackknife+ab", which fit the model on folds
        (or bootstrap bags) of the training rows and calibrate on their
        out-of-fold scores in ``fit`` (no ``conformalize``; options ``cv``,
        and ``n_bootstrap``, ``aggregation``, ``bag_size``, ``replace`` for
        J+aB).
    alpha : float, optional
        Miscoverage level in (0, 1); intervals aim at 1 - alpha coverage.
        Default 0.1 when ``level`` is not given either.
    score : str or Score
        Nonconformity score: "absolute" ``|y - mu(x)|``, "quantile" (CQR's
        max(q_lo - y, y - q_hi)), "scaled" ``|y - mu(x)| / sigma(x)``, or a
        :class:`confrf.scores.Score` object.
    prefit : bool
        ``model`` is already fitted: skip ``fit`` and go to ``conformalize``.
    honest : bool
        LCP-RF: grow the forest on a part of the calibration set disjoint from
        the conformal points (exact guarantee). False is the paper's variant.
    localizer_size : float
        LCP-RF, honest: share of the calibration set that grows the forest.
    n_estimators, min_samples_leaf, max_features, max_depth
        Forest settings of the localizer. ``"tune"`` (the default of
        ``min_samples_leaf`` and ``max_features``) chooses them for
        "lcp-rf" by simulated LCP-RF calibrations on the localizer part only,
        so the guarantee stays exact (other forest methods read it as "auto"
        and 1.0); ``min_samples_leaf="auto"`` is ceil(sqrt(n_localizer)) (the
        paper's Assumption 3); ``n_estimators="auto"`` (the default) grows 100
        trees, more (up to 500) where the leaves are small and the data few
        (:func:`confrf.localizers.forest.auto_n_estimators`: a weighted
        quantile over few distinct leaf-mates is coarse);
        ``max_features="screened"`` grows the trees on the columns a first
        forest of the localizer scores finds relevant (also a candidate of
        "tune", :mod:`confrf.localizers.screening`); a number is used
        as given. A method that does not read one of these ("split", "lcp",
        "slcp") leaves it without effect and says so with an
        :class:`~confrf.exceptions.UnusedSettingWarning`.
    fit_intercept : bool
        Passed to "ols".
    random_state : int, Generator, RandomState or None
        Makes every random step reproducible. A non-negative int; a numpy
        ``Generator`` or ``RandomState`` is drawn from once per ``fit`` and
        ``conformalize`` (as in scikit-learn); None draws from numpy's
        global generator, so ``np.random.seed`` makes it reproducible. Floats, strings and negative
        numbers are refused.
    n_jobs : int or None
        Threads for everything the estimator runs: the forest, the kernels,
        prediction, the fold models of the cross-conformal methods (fitted
        side by side, with identical results), and the OpenMP/BLAS pools of
        the base model while it is fitted and predicts (None: 1, -1: all
        cores). One thread by default, so a shared machine is not slowed
        down by busy-waiting OpenMP pools.
    options : dict or None
        Options specific to ``method`` (see ``confrf.calibrators.METHODS[method].options``).
    level : float, optional
        R's coverage level instead of ``alpha`` (``level=0.95`` is
        ``alpha=0.05`` exactly); giving both is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf import ConformalRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(600, 3)); y = X[:, 0] + X[:, 0] * rng.normal(size=600)
    >>> reg = ConformalRegressor(alpha=0.1, random_state=0).fit(X[:200], y[:200])
    >>> reg = reg.conformalize(X[200:], y[200:])
    >>> reg.predict_interval(X[:2]).shape
    (2, 2)

    CV+ fits its fold models in ``fit`` and predicts directly:

    >>> cv = ConformalRegressor(model="ols", method="cv+", options={"cv": 5}, random_state=0).fit(X, y)
    >>> cv.predict_interval(X[:2]).shape
    (2, 2)
    """

    def __getstate__(self) -> dict[str, Any]:
        # the signed-score index is rebuilt on first use (from calib_signed_): a saved fit does not carry it
        state = dict(super().__getstate__())
        state.pop("signed_distribution_", None)
        return state

    # -- lifecycle ---------------------------------------------------------
    @governs_threads
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> ConformalRegressor:
        """Fit the base model on training data (not with ``prefit=True``).

        Methods that learn from the training part ("lcp", "slcp") also get
        its out-of-fold scores here, at the cost of ``cv`` more model fits.
        ``y`` holds numbers: a bool ``y`` is a class label, refused with an
        :class:`~confrf.exceptions.InputError` naming
        :class:`~confrf.classification.ConformalClassifier` (or ``y.astype(float)``).
        ``sample_weight``: case weights of the base model's fit (as R's
        ``lm(weights=)``; "ols" becomes weighted least squares); they do not
        enter the calibration (for covariate shift see ``likelihood_ratio``
        of :meth:`conformalize`).
        The cross-conformal methods ("cv+", "jackknife+", "jackknife+ab") do
        the whole job here: K fold models (n for the jackknife+, bootstrap
        models for J+aB, fitted side by side with ``n_jobs``), every row
        scored out of fold, and one model on all rows for the point
        prediction; ``predict_interval`` follows directly, without
        ``conformalize``.
        """
        self._check_options()
        spec = get_method(self.method)
        if spec.fits_models and self.prefit:
            raise InputError(
                f"method {self.method!r} refits the model on subsets of the training rows, so it cannot use a prefit "
                "model; pass an unfitted model (e.g. 'ols', 'gbm' or a scikit-learn regressor) with prefit=False, or "
                "use method='split' to calibrate a fitted model on calibration data."
            )
        self._refuse_prefit()
        names = feature_names(X)
        X = as_float_matrix(X, "X")
        y = _numeric_response(y)
        check_same_rows(X, y.shape[0])
        if X.shape[0] < 2:
            raise InputError(f"fit needs at least 2 training rows, got {X.shape[0]}.")
        seeds = self._seeds()
        t0 = time.perf_counter()
        score = get_score(self.score)
        kw: dict[str, Any] = dict(alpha=self._alpha(), random_state=seeds[0], fit_intercept=self.fit_intercept)
        if sample_weight is not None:
            kw["sample_weight"] = as_ratio(sample_weight, X.shape[0], "the training rows", name="sample_weight").values
        # a refit voids the calibration
        stale_names = ("calibrator_", "calib_X_", "calib_scores_", "calib_groups_", "calib_rows_", "calib_ratio_")
        for stale in stale_names + ("ratio_model_", "calib_score_ties_"):
            self.__dict__.pop(stale, None)
        self.model_ = fit_score_models(score, X, y, self.model, **kw)
        self.score_ = score  # predict() works between fit and conformalize, as the docstring promises
        self.train_X_ = None
        # the training part's out-of-fold scores: an array, or DeferredScores (computed when conformalize needs them)
        self.train_scores_: np.ndarray | DeferredScores | None = None
        opts = method_options(self.method, self.options)
        if spec.fits_models:
            self._cross_fit(X, y, score, kw, seeds)
        elif spec.uses_training(opts):
            # the method learns from the training part: keep it, with out-of-fold (not in-sample) scores
            cv = opts["cv"]
            if opts.get("localizer_data") == "auto":
                # "auto" decides from the calibration set's size whether the training rows teach the forest: the
                # cv out-of-fold fits wait for that decision (conformalize), so a large calibration never pays them
                self.train_X_, self.train_scores_ = X, DeferredScores(score, X, y, self.model, cv=cv, **kw)
            else:
                self.train_X_, self.train_scores_ = X, out_of_fold_scores(score, X, y, self.model, cv=cv, **kw)
            self.train_cv_ = cv
        self.fit_time_ = time.perf_counter() - t0
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        self.n_train_ = X.shape[0]
        return self

    def _cross_fit(self, X: np.ndarray, y: np.ndarray, score: Any, kw: dict[str, Any], seeds: list) -> None:
        """The cross-conformal methods: fold (or bootstrap) models and out-of-fold scores, as the calibrator."""
        cal = self._make_calibrator(seeds[2])
        t0 = time.perf_counter()
        oof = cal.cross_fit(X, y, score=score, model=self.model, **kw)
        self.calibrator_: Calibrator = cal
        self.conformalize_time_ = time.perf_counter() - t0
        keep_cross_rows(self, X, oof, seeds[3])  # the summary's diagnostics treat these training rows as new points

    @governs_threads
    def conformalize(self, X: Any, y: Any, groups: Any = None, likelihood_ratio: Any = None) -> ConformalRegressor:
        """Calibrate on data disjoint from the training data.

        ``groups``: one group label per row, for methods "split-g" and
        "lcp-rf-g" with ``options={"groups": "labels"}`` (then also pass the
        labels of new rows when predicting). Not for the cross-conformal
        methods, which calibrate in ``fit``.

        ``likelihood_ratio``: covariate shift (docs/theory.md). The rows to
        predict come from a target population with dP_target(x) =
        w(x) dP_calibration(x); give w at every calibration row (an array),
        or a function ``w(X)`` of design rows (e.g. a fitted
        :class:`confrf.shift.RatioEstimator`), which then also gives the new
        rows' ratios. The calibration is weighted (Tibshirani et al., 2019,
        carried over to LCP) and covers target rows with probability >=
        1 - alpha exactly when w is the true ratio. With an array, pass the
        new rows' ratios to the predict methods too.

        ``X`` and ``y`` may be Dask collections with the same partitions (a
        DataFrame or Array, and a Series or Array), for ``method="lcp-rf"``:
        the scores and the conformal rows' leaf lookups run on the workers,
        the forest grows on the client from the localizer rows (at most the
        method option ``max_localizer_size``), and the fit equals the one on
        the same rows in memory (:class:`confrf.dask.DaskRows`). The summary
        keeps at most ``DIAGNOSTIC_ROWS`` (20,000) calibration rows (design
        and scores), a random subsample beyond that.
        """
        self._check_options()
        if get_method(self.method).fits_models:
            raise InputError(
                f"method {self.method!r} calibrates during fit(), on the out-of-fold scores of the training rows "
                "(every row trains some of the models and is scored by the others), so there is no calibration "
                "step: call predict_interval right after fit. To calibrate on separate data, use method='split' "
                "or 'lcp-rf'."
            )
        if is_dask_collection(X) or is_dask_collection(y):
            if likelihood_ratio is not None:
                raise InputError(
                    "likelihood_ratio (covariate shift) is not offered with Dask calibration data; compute them first."
                )
            cols = getattr(X, "columns", None)
            return self._conformalize_rows(
                lambda: DaskRows.from_arrays(X, y, self.model_, self.score_),
                X.shape[1] if cols is None else len(cols),
                None if cols is None else np.asarray(cols, dtype=object),
                groups,
            )
        names = feature_names(X)
        X = as_float_matrix(X, "X")
        y = _numeric_response(y)
        check_same_rows(X, y.shape[0])
        self._ready_for_calibration(X, names)
        seeds = self._seeds()
        t0 = time.perf_counter()
        w_cal, ratio_model = calibration_ratios(likelihood_ratio, X)
        pred = self.model_.predict(X)
        V = self.score_.score(y, pred)
        # the signed score (y - c(x)) / s(x) of every calibration row: the predictive distribution's input
        self.calib_signed_ = signed_scores(self.score_, y, pred) if hasattr(self.score_, "interval_parts") else None
        self.__dict__.pop("signed_distribution_", None)
        calibrator = self._make_calibrator(seeds[2])
        self._hand_reference(calibrator)
        self.calibrator_ = calibrator.conformalize(
            X,
            V,
            alpha=self._alpha(),
            rng=np.random.default_rng(seeds[1]),
            likelihood_ratio=w_cal,
            **calibrator.label_kwargs(groups, X.shape[0]),
        )
        self.conformalize_time_ = time.perf_counter() - t0
        keep_calibration_rows(self, X, V, groups, seeds[3], ratio=w_cal)
        self.ratio_model_ = ratio_model
        warn_small_ess(self.calibrator_.shift_, self._alpha())
        return self

    @governs_threads
    def _conformalize_rows(
        self, make_rows: Callable[[], Any], n_features: int, names: np.ndarray | None, groups: Any
    ) -> ConformalRegressor:
        """Calibrate LCP-RF on rows held elsewhere: :func:`confrf.dask.conformalize_rows`."""
        return conformalize_rows(self, make_rows, n_features, names, groups)

    def _ready_for_calibration(self, X: np.ndarray, names: np.ndarray | None) -> None:
        """The model to calibrate (the prefit one, whose columns must be X's, or fit's) and the score."""
        if self.prefit:
            self.model_ = prefit_score_models(get_score(self.score), self.model, X.shape[1])
            self.train_X_ = self.train_scores_ = None
            self.n_features_in_ = X.shape[1]
            # a model fitted on a DataFrame knows its columns: X's must be the same, in the same order
            self._set_feature_names(getattr(self.model, "feature_names_in_", None))
            self._check_columns(X, names)
            self._set_feature_names(names)
            self.n_train_, self.fit_time_ = 0, 0.0
        else:
            self._require_fit()
            self._check_columns(X, names)
        self.score_ = get_score(self.score)

    @governs_threads
    def predict(self, X: Any) -> np.ndarray:
        """Point predictions of the base model."""
        X = self._check_X(X)
        if X.shape[0] == 0:  # scikit-learn refuses 0 rows; the answer is simply empty
            return np.empty(0, dtype=np.float64)
        return self.score_.center(self._model().predict(X))

    @governs_threads
    def predict_details(
        self,
        X: Any,
        alpha: float | None = None,
        groups: Any = None,
        *,
        level: float | None = None,
        n_jobs: int | None = None,
        chunk_size: int | None = None,
        progress: bool | None = None,
        likelihood_ratio: Any = None,
    ) -> dict[str, np.ndarray]:
        """fit, lwr, upr, and the score thresholds (t, closed, level) per row.

        ``alpha`` (default: the estimator's) or R's ``level`` (1 - alpha,
        exactly: ``level=0.95`` is ``alpha=0.05``), not both.

        Groupwise methods add ``group``, each row's group (``groups``: the rows'
        labels when the method calibrates within given labels).

        Rows are predicted in chunks of ``chunk_size`` (default 10,000), so
        memory stays bounded; ``n_jobs`` chunks run at once (default: the
        estimator's ``n_jobs``). ``progress``: None shows a progress bar on
        stderr only when prediction takes more than about 2 seconds, True
        always, False never. Thresholds do not depend on ``n_jobs`` or
        ``chunk_size``; a linear base model's predictions may change in the
        last bit (BLAS blocks matrix products by row count). The
        cross-conformal methods have no score threshold: ``t`` is NaN (+inf
        where the interval is infinite) and ``level`` is the share of the
        n + 1 upper ends at or below ``upr``. LCP-RF without covariate-shift
        weights first computes every row's thresholds, ``chunk_size`` rows at a
        time with ``n_jobs`` threads, in the order of the rows' leaves (rows
        with the same leaf in every tree once); the progress bar covers only
        the chunks that follow.

        ``likelihood_ratio``: after a calibration weighted for covariate
        shift with an array of ratios, the new rows' ratios (one per row);
        after one with a ratio function, it is applied to X unless given.
        """
        X = self._check_X(X)
        a, n_jobs, chunk_size, progress = self._predict_args(alpha, level, n_jobs, chunk_size, progress, "intervals")
        labels = self.calibrator_.label_kwargs(groups, X.shape[0])
        w = self._test_ratios(X, likelihood_ratio)
        self.calibrator_.prepare(a)  # per-alpha state first: the chunks then only read it
        if X.shape[0] == 0:
            # scikit-learn refuses 0 rows: predict one calibration row for the keys and dtypes, keep none
            one: dict[str, np.ndarray] = {}
            if self.calib_groups_ is not None:
                one = {k: np.asarray(self.calib_groups_)[:1] for k in labels}
            # new rows have ratios only after a weighted calibration: then one calibration row's own
            one_w = None if w is None else self.calib_ratio_[:1]
            return {k: v[:0] for k, v in self._predict_rows(self.calib_X_[:1], a, one, one_w).items()}
        batched = None
        if not labels and w is None:  # the calibrator may compute every row's thresholds at once, in its own order
            with _kernel_threads_set_to(resolve_jobs(self.n_jobs if n_jobs is None else n_jobs)):
                batched = self.calibrator_.thresholds_in_batches(
                    X, a, DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size
                )
        return self._predict_chunks(
            lambda rows: self._predict_rows(
                X[rows],
                a,
                {k: v[rows] for k, v in labels.items()},
                None if w is None else w[rows],
                None if batched is None else Thresholds(batched.t[rows], batched.closed[rows], batched.level[rows]),
            ),
            X.shape[0],
            n_jobs,
            chunk_size,
            progress,
        )

    def _test_ratios(self, X: np.ndarray, likelihood_ratio: Any) -> ShiftRatio | None:
        """The new rows' likelihood ratios after a weighted calibration (None after an unweighted one)."""
        return prediction_ratios(self, X, likelihood_ratio)

    def _predict_rows(
        self,
        X: np.ndarray,
        a: float,
        labels: dict[str, Any],
        ratio: ShiftRatio | None = None,
        thresholds: Thresholds | None = None,
    ) -> dict[str, np.ndarray]:
        pred = self.model_.predict(X)
        if thresholds is not None:  # computed beforehand (Calibrator.thresholds_in_batches)
            return {
                "fit": self.score_.center(pred),
                **threshold_rows(thresholds, lambda t: self.score_.interval(pred, t)),
            }
        rows = self.calibrator_.predict_rows(
            X, a, interval=lambda t: self.score_.interval(pred, t), likelihood_ratio=ratio, **labels
        )
        return {"fit": self.score_.center(pred), **rows}

    def predict_interval(self, X: Any, alpha: float | None = None, groups: Any = None, **kwargs: Any) -> np.ndarray:
        """(n, 2) array of [lwr, upr]; infinite bounds are -inf/+inf.

        ``kwargs``: ``level`` (R's 1 - alpha, instead of ``alpha``), ``n_jobs``,
        ``chunk_size``, ``progress``, ``likelihood_ratio`` of :meth:`predict_details`.
        """
        d = self.predict_details(X, alpha, groups, **kwargs)
        return np.column_stack([d["lwr"], d["upr"]])

    @governs_threads
    def predict_pvalues(self, X: Any, y: Any, groups: Any = None, likelihood_ratio: Any = None) -> np.ndarray:
        """Conformal p-value of every (x, y): the smallest alpha at which y leaves the set at x.

        ``y`` lies in the interval at level alpha iff p > alpha, for every alpha; P(p(X, Y) <= a) <= a for
        every a (docs/theory.md, "Conformal p-values"). ``groups``, ``likelihood_ratio``: as
        :meth:`predict_details`. Methods whose sets are not nested in alpha (CV+, jackknife+, J+aB, PAC,
        SLCP) refuse with the reason.
        """
        X = self._check_X(X)
        y = _numeric_response(y)
        check_same_rows(X, y.shape[0])
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() before computing p-values.")
        labels = self.calibrator_.label_kwargs(groups, X.shape[0])
        w = self._test_ratios(X, likelihood_ratio)
        if X.shape[0] == 0:
            return np.empty(0)
        v = self.score_.score(y, self.model_.predict(X))
        return calibrator_pvalues(self.calibrator_, X, v, likelihood_ratio=w, n_jobs=self.n_jobs, **labels)

    def signed_distribution(self) -> SignedDistribution:
        """The calibration's conformal points indexed by signed score (built once, kept)."""
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() before asking for predictive distributions.")
        dist = self.__dict__.get("signed_distribution_")
        if dist is None:
            SignedDistribution.check(self.calibrator_)
            signed = getattr(self, "calib_signed_", None)
            if signed is None:
                raise InputError(
                    "this fit kept no signed calibration scores (a score without interval_parts, Dask calibration "
                    "data or a cross-conformal method); refit with score='absolute', 'scaled' or 'quantile' in memory."
                )
            dist = self.signed_distribution_ = SignedDistribution.from_calibrator(self.calibrator_, signed)
        return dist

    @governs_threads
    def predict_quantiles(self, X: Any, q: Any) -> np.ndarray:
        """(rows, levels) conformal quantiles Q_tau(x) with P(Y <= Q_tau(X)) >= tau exactly, non-decreasing in tau.

        One pass over each row's neighbours gives every level; +inf where tau exceeds the reachable count.
        """
        X = self._check_X(X)
        dist = self.signed_distribution()
        c, s = signed_parts(self.score_, self.model_.predict(X)) if X.shape[0] else (np.empty(0), np.empty(0))
        t = dist.thresholds(X, q, n_jobs=self.n_jobs)
        return c[:, None] + s[:, None] * t

    @governs_threads
    def predict_profiles(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Every row's predictive step CDF as CSR (indptr, support in y units, cumulative count) and n.

        The CDF at a support point is count / (n + 1); the mass left past the last point sits at +inf.
        """
        X = self._check_X(X)
        dist = self.signed_distribution()
        indptr, u, cnt = dist.profiles(X)
        if X.shape[0]:
            c, s = signed_parts(self.score_, self.model_.predict(X))
            rows = np.repeat(np.arange(X.shape[0]), np.diff(indptr))
            u = c[rows] + s[rows] * u
        return indptr, u, cnt, dist.n

    @governs_threads
    def predict_groups(self, X: Any, groups: Any = None) -> np.ndarray:
        """Group of every row for groupwise methods ("split-g", "lcp-rf-g")."""
        X = self._check_X(X)
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() before asking for groups.")
        cal = self.calibrator_
        if not cal.has_groups:
            from .calibrators.registry import group_methods

            groupwise = " or ".join(map(repr, group_methods()))
            raise InputError(f"method {self.method!r} has no groups; use method {groupwise}.")
        return cal.groups_of(X, **cal.label_kwargs(groups, X.shape[0]))

    # -- helpers -----------------------------------------------------------
    @property
    def localizer_(self) -> ForestLocalizer:
        """The fitted forest localizer (methods that use one)."""
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("no forest localizer: the method does not use one or conformalize() was not called.")
        return self.calibrator_.forest_localizer()

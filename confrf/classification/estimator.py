"""Array-level conformal classifier: ``fit`` -> ``conformalize`` -> ``predict_sets``.

The calibrators are the regression ones, unchanged: calibration scores
s_i = score(x_i, y_i) go in, a threshold t(x) that depends on x and the
calibration scores only comes out, and the set of x is {k : score(x, k) <= t(x)}
(strict where the threshold is open). Class-conditional (Mondrian) calibration
runs the groupwise calibrators with the label as the group: the threshold of
candidate k is calibrated on the calibration points of class k only.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, cast

import numpy as np
import pandas as pd
from sklearn.utils import metadata_routing

from .._docstrings import fill
from .._estimator_base import ConformalEstimator, check_same_rows, family_init
from .._parallel import governs_threads
from .._validation import as_float_matrix, min_calibration_size
from .._warnings import user_stacklevel
from ..calibrators import Calibrator, GroupwiseCalibrator, Guarantee, get_method, method_options
from ..calibrators.registry import METHODS, class_methods
from ..exceptions import InfiniteIntervalWarning, InputError, NotFittedError
from ..formula.labels import response_levels
from ..shift.guarantee import shift_guarantee
from ..shift.ratio import RatioEstimator
from ..shift.value import ShiftRatio, calibration_ratios, prediction_ratios
from ..shift.weighted import warn_small_ess
from .models import ProbaModel, is_statsmodels_results, make_classifier, prefit_classifier
from .scores import CALIBRATION_STREAM, PREDICTION_STREAM, get_class_score, label_sets, uniforms

#: ``groups=`` value of class-conditional (Mondrian) calibration
LABEL = "label"


def class_levels(y: Any) -> list:
    """Class levels of labels ``y``, by the formula layer's rule (:func:`confrf.formula.labels.response_levels`)."""
    col = y if isinstance(y, pd.Series) else pd.Series(y if isinstance(y, pd.Categorical) else np.asarray(y).ravel())
    if col.isna().any():
        raise InputError(f"the labels have {int(col.isna().sum())} missing value(s); drop or fill them first.")
    return response_levels(col)


def encode_labels(y: Any, levels: list, what: str) -> np.ndarray:
    """Codes 0..K-1 of labels in ``levels``; an unseen or missing label is an error naming it."""
    arr = pd.Index(np.asarray(y, dtype=object).ravel(), dtype=object)
    codes = pd.Index(levels, dtype=object).get_indexer(arr)
    if (codes < 0).any():
        bad = arr[codes < 0]
        shown = list(pd.unique(pd.Series(bad, dtype=object)))[:10]
        raise InputError(
            f"{what} has label(s) {shown} in {int((codes < 0).sum())} row(s) that are not class levels "
            f"seen at fit ({levels[:30]}); drop these rows or refit with data that contains them."
        )
    return codes.astype(np.int64)


@fill
class ConformalClassifier(ConformalEstimator):
    """Conformal prediction sets on numpy arrays.

    Parameters
    ----------
    model : str or classifier
        "gbm" (HistGradientBoostingClassifier), "rf" (RandomForestClassifier),
        "logit" (statsmodels Logit, MNLogit for more than two classes), a
        scikit-learn classifier with ``predict_proba`` (cloned), or a fitted one
        with ``prefit=True`` (its ``classes_`` are matched to the levels by value).
    method : str
        "split", "lcp-rf" (exact localized conformal with the forest grown on
        the localizer part's scores), "qrf-tc", or "split-g" / "lcp-rf-g"
        (class-conditional with ``options={"groups": "label"}``, the default;
        groups of x with "leiden" or "components").
    alpha : float, optional
        Miscoverage in (0, 1); default 0.1 when ``level`` is not given either.
    score : str or ClassScore
        "lac" (1 - p_y), "aps", "raps", or a score object
        (``APSScore(randomized=True, random_state=1)``, ``RAPSScore(lam, k_reg)``).
    prefit, honest, localizer_size, n_estimators, min_samples_leaf, max_features, max_depth,
    fit_intercept, random_state, n_jobs, options, level
        As in :class:`confrf.ConformalRegressor` (``level``: R's 1 - alpha, instead of ``alpha``).

    Notes
    -----
    Guarantees (exchangeable calibration and test points): "split" and honest
    "lcp-rf": P(Y in C(X)) >= 1 - alpha; "qrf-tc" and "lcp-rf" with
    ``guarantee="pac"``: training-conditional; class-conditional:
    P(Y in C(X) | Y = k) >= 1 - alpha for every class k. See
    docs/guide/classification.md. Under covariate shift, ``likelihood_ratio``
    of :meth:`conformalize` weights the calibration so that these statements
    hold for the target population (the marginal and class-conditional ones,
    exactly with the true ratio; docs/guide/shift.md).

    Examples
    --------
    {{two_classes}}
    >>> clf = ConformalClassifier(alpha=0.1, random_state=0).fit(X[:300], y[:300])
    >>> clf = clf.conformalize(X[300:], y[300:])
    >>> clf.predict_sets(X[:2]).shape
    (2, 2)
    """

    # ``classes`` in fit() is a setting, not per-sample metadata: no set_fit_request method
    __metadata_request__fit = {"classes": metadata_routing.UNUSED}

    __init__ = family_init(ConformalEstimator.__init__, score="lac", min_samples_leaf="auto", max_features=1.0)

    # -- lifecycle ---------------------------------------------------------
    def fit(self, X: Any, y: Any, classes: Any = None) -> ConformalClassifier:
        """Fit the base classifier on training data; ``classes``: the levels (default: those of ``y``)."""
        self._method_options()
        self._refuse_prefit()
        X = as_float_matrix(X, "X")
        self.classes_ = class_levels(y) if classes is None else list(classes)
        codes = encode_labels(y, self.classes_, "y")
        check_same_rows(X, codes.shape[0])
        present = np.unique(codes)
        if present.shape[0] < 2:
            raise InputError(
                f"the training response has a single class ({self.classes_[present[0]]!r}); "
                "classification needs at least two."
            )
        t0 = time.perf_counter()
        seeds = self._seeds()
        clf = make_classifier(self.model, fit_intercept=self.fit_intercept, random_state=seeds[0])
        self.model_ = ProbaModel(clf.fit(X, codes), self.classes_, classes_are_codes=True)
        self.fit_time_ = time.perf_counter() - t0
        self.n_features_in_ = X.shape[1]
        self.n_train_ = X.shape[0]
        self.train_counts_: np.ndarray | None = np.bincount(codes, minlength=len(self.classes_))
        return self

    @fill
    def conformalize(self, X: Any, y: Any, classes: Any = None, likelihood_ratio: Any = None) -> ConformalClassifier:
        """Calibrate on data disjoint from the training data.

        With ``prefit=True``, ``classes`` gives the levels (default: the
        model's ``classes_``).

        ``likelihood_ratio``: covariate shift (docs/theory.md), as in
        :meth:`confrf.ConformalRegressor.conformalize`: the rows to predict
        come from a target population with dP_target(x) = w(x)
        dP_calibration(x) and the same P(Y | X); give w at every calibration
        row, or a function ``w(X)`` of design rows (then it also gives the new
        rows' ratios). The calibration is weighted, and the sets cover a target
        row's class with probability >= 1 - alpha exactly ("split", "lcp-rf";
        given the class for "split-g" / "lcp-rf-g" with ``groups="label"``).
        "qrf-tc" and ``guarantee="pac"`` refuse it.

        Examples
        --------
        {{two_classes}}
        >>> clf = ConformalClassifier(method="split", alpha=0.1, random_state=0).fit(X[:300], y[:300])
        >>> clf = clf.conformalize(X[300:], y[300:], likelihood_ratio=lambda Z: np.exp(Z[:, 0]))
        >>> clf.predict_sets(X[:2]).shape
        (2, 2)
        """
        opts = self._method_options()
        self._warn_unused_settings(self.method, opts)
        X = as_float_matrix(X, "X")
        if self.prefit:
            if classes is None and is_statsmodels_results(self.model):
                raise InputError(
                    "prefit=True with statsmodels results: give the class levels (classes=...), "
                    "which its classes are matched to."
                )
            self.classes_ = list(classes) if classes is not None else list(getattr(self.model, "classes_", []))
            if len(self.classes_) < 2:
                raise InputError(
                    "prefit=True: give the class levels (classes=...) or a model with classes_ "
                    "holding at least two classes."
                )
            model = prefit_classifier(self.model, X.shape[1], self.classes_)
            self.model_ = ProbaModel(model, self.classes_, classes_are_codes=False)
            self.n_features_in_, self.n_train_, self.fit_time_ = X.shape[1], 0, 0.0
            self.train_counts_ = None
        else:
            self._require_fit()
            self._check_n_columns(X)
        codes = encode_labels(y, self.classes_, "the calibration response")
        check_same_rows(X, codes.shape[0])
        counts = np.bincount(codes, minlength=len(self.classes_))
        if (counts == 0).any():
            absent = [self.classes_[k] for k in np.flatnonzero(counts == 0)]
            raise InputError(
                f"class(es) {absent[:10]} have no row in the calibration set; every class needs "
                "calibration points. Give more calibration data, a larger calib_size, or drop the "
                "class (e.g. remove_unused_categories after filtering its rows)."
            )
        self.score_ = get_class_score(self.score)
        seeds = self._seeds()
        t0 = time.perf_counter()
        w_cal, ratio_model = calibration_ratios(likelihood_ratio, X)
        u = uniforms(self.score_, X.shape[0], CALIBRATION_STREAM, seeds[3])
        S = self.score_.matrix(self.model_.proba(X), u)
        V = S[np.arange(X.shape[0]), codes]
        calibrator = get_method(self.method).factory(self, opts, seeds[2])
        rng = np.random.default_rng(seeds[1])
        if self.mondrian_:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", InfiniteIntervalWarning)
                # class-conditional: a groupwise calibrator, the classes its groups
                self.calibrator_: Calibrator = calibrator.conformalize(
                    X, V, alpha=self._alpha(), rng=rng, labels=codes, likelihood_ratio=w_cal
                )
            self._warn_small_classes(caught)
        else:
            self.calibrator_ = calibrator.conformalize(X, V, alpha=self._alpha(), rng=rng, likelihood_ratio=w_cal)
        self.conformalize_time_ = time.perf_counter() - t0
        self.calib_X_, self.calib_codes_, self.calib_scores_ = X, codes, V
        self.calib_counts_ = counts
        self.calib_ratio_, self.ratio_model_ = w_cal, ratio_model
        warn_small_ess(self.calibrator_.shift_, self._alpha(), sets=True)
        return self

    # -- prediction --------------------------------------------------------
    def predict_proba(self, X: Any) -> np.ndarray:
        """(n, K) class probabilities, columns in the order of ``classes_``."""
        return self.model_.proba(self._check_X(X))

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class of every row (first level on ties)."""
        return np.asarray(self.classes_, dtype=object)[np.argmax(self.predict_proba(X), axis=1)]

    @governs_threads
    def predict_details(
        self,
        X: Any,
        alpha: float | None = None,
        *,
        level: float | None = None,
        n_jobs: int | None = None,
        chunk_size: int | None = None,
        progress: bool | None = None,
        likelihood_ratio: Any = None,
    ) -> dict[str, np.ndarray]:
        """proba, scores (n, K), sets (n, K bool), and the thresholds t, closed, level.

        ``alpha`` (default: the estimator's) or R's ``level`` (1 - alpha), not both.
        ``likelihood_ratio``: after a calibration weighted for covariate shift
        with an array of ratios, the new rows' ratios (one per row); after one
        with a ratio function, it is applied to X unless given.

        t, closed and level are (n,) for one threshold per row and (n, K)
        for class-conditional calibration (column k: calibrated on class k).
        Rows are predicted in chunks as :meth:`confrf.ConformalRegressor.predict_details`
        does (``n_jobs``, ``chunk_size``, ``progress``); the sets do not depend
        on them (a randomized score draws every row's U before chunking).
        """
        X = self._check_X(X)
        a, n_jobs, chunk_size, progress = self._predict_args(alpha, level, n_jobs, chunk_size, progress, "sets")
        w = prediction_ratios(self, X, likelihood_ratio)
        self.calibrator_.prepare(a)  # per-alpha state first: the chunks then only read it
        if X.shape[0] == 0:
            # classifiers refuse 0 rows: predict one calibration row for the keys and dtypes, keep none
            w1 = (
                None if w is None else ShiftRatio(np.ones(1))
            )  # any ratio: the row is only there for the keys and dtypes
            one = self._predict_rows(self.calib_X_[:1], a, uniforms(self.score_, 1, PREDICTION_STREAM, 0), w1)
            return {k: v[:0] for k, v in one.items()}
        u = uniforms(self.score_, X.shape[0], PREDICTION_STREAM, self._seeds()[3])
        return self._predict_chunks(
            lambda rows: self._predict_rows(X[rows], a, None if u is None else u[rows], None if w is None else w[rows]),
            X.shape[0],
            n_jobs,
            chunk_size,
            progress,
        )

    def calibration_details(self, alpha: float | None = None) -> dict[str, np.ndarray]:
        """:meth:`predict_details` of the calibration rows (with their own ratios after a weighted calibration)."""
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() first.")
        ratio = self.calib_ratio_
        return self.predict_details(self.calib_X_, alpha, progress=False, likelihood_ratio=ratio)

    def _predict_rows(
        self, X: np.ndarray, a: float, u: np.ndarray | None, w: ShiftRatio | None = None
    ) -> dict[str, np.ndarray]:
        proba = self.model_.proba(X)
        S = self.score_.matrix(proba, u)
        # a row's ratio w(x) does not depend on the candidate label: one per row, for every class
        if self.mondrian_:
            K, m = len(self.classes_), X.shape[0]
            t, closed, level = np.empty((m, K)), np.empty((m, K), dtype=bool), np.empty((m, K))
            for k in range(K):
                th = self.calibrator_.predict_rows(X, a, labels=np.full(m, k, dtype=np.int64), likelihood_ratio=w)
                t[:, k], closed[:, k], level[:, k] = th["t"], th["closed"], th["level"]
        else:
            th = self.calibrator_.predict_rows(X, a, likelihood_ratio=w)
            t, closed, level = th["t"], th["closed"], th["level"]
        return {"proba": proba, "scores": S, "sets": label_sets(S, t, closed), "t": t, "closed": closed, "level": level}

    @governs_threads
    def predict_pvalues(self, X: Any, likelihood_ratio: Any = None) -> np.ndarray:
        """(n, K) conformal p-values per candidate label (as crepes' and MAPIE's): column k for ``classes_[k]``.

        Label k is in the set at level alpha iff its p-value exceeds alpha, for every alpha (a randomized
        score draws the same U per row as :meth:`predict_sets`), and P(p(X, Y) <= a) <= a for the true label
        (given Y = k for the class-conditional methods).
        """
        from ..calibrators.pvalue import calibrator_pvalues

        X = self._check_X(X)
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() before computing p-values.")
        w = prediction_ratios(self, X, likelihood_ratio)
        K, m = len(self.classes_), X.shape[0]
        if m == 0:
            return np.empty((0, K))
        u = uniforms(self.score_, m, PREDICTION_STREAM, self._seeds()[3])
        S = self.score_.matrix(self.model_.proba(X), u)
        out = np.empty((m, K))
        for k in range(K):
            labels = np.full(m, k, dtype=np.int64) if self.mondrian_ else None
            out[:, k] = calibrator_pvalues(self.calibrator_, X, S[:, k], labels=labels, likelihood_ratio=w)
        return out

    def predict_sets(
        self, X: Any, alpha: float | None = None, *, level: float | None = None, likelihood_ratio: Any = None
    ) -> np.ndarray:
        """(n, K) boolean prediction sets: column k is True when ``classes_[k]`` is in the set.

        ``likelihood_ratio``: the new rows' ratios after a weighted calibration, as in :meth:`predict_details`.
        """
        return self.predict_details(X, alpha, level=level, likelihood_ratio=likelihood_ratio)["sets"]

    def guarantee(self, alpha: float | None = None) -> Guarantee:
        """The coverage statement of this fit, for prediction sets."""
        a = self._alpha() if alpha is None else alpha
        cal = self._calibrator()
        g = mondrian_guarantee(cast(GroupwiseCalibrator, cal), a) if self.mondrian_ else cal.guarantee(a)
        if getattr(self, "calib_ratio_", None) is not None:
            # the estimated ratio of shift= (a RatioEstimator) gives an approximate statement
            g = shift_guarantee(g, a, isinstance(getattr(self, "ratio_model_", None), RatioEstimator))
        return Guarantee(
            g.kind,
            g.certified,
            g.sentence.replace("Y in interval", "Y in C(X)")
            .replace("intervals", "prediction sets")
            .replace("interval", "prediction set"),
        )

    # -- helpers -----------------------------------------------------------
    def _warn_small_classes(self, caught: list) -> None:
        """The groupwise warning about small groups, said in terms of classes."""
        for w in caught:
            if not issubclass(w.category, InfiniteIntervalWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if any(issubclass(w.category, InfiniteIntervalWarning) for w in caught):
            table = cast(GroupwiseCalibrator, self.calibrator_).group_table(self._alpha())
            small = table.index[~table["finite"]]
            shown = ", ".join(f"{self.classes_[int(c)]!r} ({int(table.loc[c, 'conformal'])})" for c in small)
            warnings.warn(
                f"{len(small)} class(es) have too few conformal calibration points for a finite threshold at "
                f"alpha={self._alpha():g}, so they are in every prediction set: {shown}; a finite threshold needs at "
                f"least {min_calibration_size(self._alpha())} per class. Give more calibration data or a larger alpha.",
                InfiniteIntervalWarning,
                stacklevel=user_stacklevel(),
            )

    @property
    def mondrian_(self) -> bool:
        """Class-conditional calibration (groups = the label)."""
        return self._calibrates_per_class() and self._groups() == LABEL

    def _calibrates_per_class(self) -> bool:
        """The method can take the class label as its groups (it has a Mondrian title in the registry)."""
        return self.method in METHODS and bool(METHODS[self.method].mondrian_title)

    def _groups(self) -> Any:
        return (self.options or {}).get("groups", LABEL)

    def _method_options(self) -> dict[str, Any]:
        self._alpha(warn=True)
        # unknown names get the registry's error; the kernel baselines need regression training scores
        if not get_method(self.method).classification:
            raise InputError(
                f"method {self.method!r} is not offered for classification; choose one of {class_methods()}."
            )
        opts = method_options(self.method, self.options)
        if self._calibrates_per_class():
            groups = self._groups()
            if groups == "labels":
                raise InputError(
                    "for classification, groups='label' calibrates within each class (Mondrian); "
                    "groups given per row are not offered."
                )
            if groups == LABEL:
                if opts["min_group_size"] not in ("auto", None, 0):
                    raise InputError(
                        "min_group_size does not apply with groups='label': merging classes would break "
                        "the per-class guarantee."
                    )
                opts.update(groups="labels", min_group_size=None)  # every class keeps its own threshold
        return opts

    def _calibrator(self) -> Calibrator:
        if not hasattr(self, "calibrator_"):
            raise NotFittedError("call conformalize() first.")
        return self.calibrator_


def mondrian_guarantee(cal: GroupwiseCalibrator, alpha: float) -> Guarantee:
    """Class-conditional statement: exact per class when honest."""
    if not cal._honest:
        return Guarantee(
            "none",
            False,
            "Not certified: the forest was grown on the calibration points themselves "
            f"(honest=False), so P(Y in C(X) | Y = k) >= {1 - alpha:g} is not proved.",
        )
    forest = (
        " The forest was grown on the localizer part (all classes, observed labels' scores), disjoint from "
        "the conformal points."
        if cal._uses_forest()
        else ""
    )
    return Guarantee(
        "class-conditional",
        True,
        f"For every class k: P(Y in C(X) | Y = k) >= {1 - alpha:g} exactly in finite samples, hence also "
        "marginally, if calibration and test points are exchangeable (within class k, the calibration points "
        "of class k and a test point of class k are exchangeable; label k enters C(x) iff score(x, k) is within "
        "the threshold calibrated on class k alone)."
        + forest
        + " A class with too few conformal points gets an infinite threshold: it is in every set.",
    )

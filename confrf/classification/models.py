"""Base classifiers: shortcuts, scikit-learn classifiers, statsmodels Logit/MNLogit, prefit models.

Every model ends up behind one interface: ``proba(X) -> (n, K)`` with the
columns in the order of the class levels stored at fit, whatever order the
model itself uses (``classes_``), and zeros for levels the model never saw.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..exceptions import InputError
from ..models import SHORTCUTS, FormulaResultsAdapter, clone_seeded, shortcut_model, wrap_prefit
from ..scores.quantile import QUANTILE_SHORTCUTS

CLASSIFIER_SHORTCUTS = ("gbm", "rf", "logit")
#: tolerance on class probabilities (float32 models round; a row off by more is not a probability vector)
PROBA_TOL = 1e-5
CLASSIFIER_NAMES = {
    "gbm": "HistGradientBoostingClassifier",
    "rf": "RandomForestClassifier",
    "logit": "Logit/MNLogit (statsmodels)",
}


def family_only_models(family: str) -> tuple[str, ...]:
    """The model names that build a model of ``family`` only ("regression": point or quantile regressors).

    A name both families take ("gbm", "rf") is in neither: the response decides what it builds.
    """
    regression = tuple(dict.fromkeys((*SHORTCUTS, *QUANTILE_SHORTCUTS)))
    own, other = (regression, CLASSIFIER_SHORTCUTS) if family == "regression" else (CLASSIFIER_SHORTCUTS, regression)
    return tuple(name for name in own if name not in other)


class StatsmodelsLogit(ClassifierMixin, BaseEstimator):
    """statsmodels ``Logit`` (two classes) or ``MNLogit`` (more) behind the scikit-learn interface.

    Parameters
    ----------
    fit_intercept : bool
        Add a constant column (the formula's intercept).
    fit_kwargs : dict or None
        Passed to ``fit`` (default ``{"disp": 0, "maxiter": 200}``).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification.models import StatsmodelsLogit
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> StatsmodelsLogit().fit(X, y).predict_proba(X[:2]).shape
    (2, 2)
    """

    def __init__(self, fit_intercept: bool = True, fit_kwargs: dict | None = None) -> None:
        self.fit_intercept = fit_intercept
        self.fit_kwargs = fit_kwargs

    def _exog(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([np.ones(X.shape[0]), X]) if self.fit_intercept else X

    def fit(self, X: np.ndarray, y: np.ndarray) -> StatsmodelsLogit:
        import statsmodels.api as sm

        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise InputError("the training part has a single class; Logit needs at least two.")
        cls = sm.Logit if self.classes_.shape[0] == 2 else sm.MNLogit
        kw = {"disp": 0, "maxiter": 200, **(self.fit_kwargs or {})}
        self.results_ = cls(codes.astype(np.float64), self._exog(X)).fit(**kw)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = np.asarray(self.results_.predict(self._exog(X)), dtype=np.float64)
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def make_classifier(model: Any, *, fit_intercept: bool = True, random_state: int | None = None) -> Any:
    """An unfitted classifier: "gbm", "rf", "logit" or a scikit-learn classifier (cloned)."""
    if isinstance(model, str):
        logit = {"logit": lambda: StatsmodelsLogit(fit_intercept=fit_intercept)}
        return shortcut_model(model, "Classifier", random_state, logit, "a scikit-learn classifier with predict_proba")
    if not hasattr(model, "fit"):
        raise InputError(
            f"model must be a name in {list(CLASSIFIER_SHORTCUTS)} or a classifier with fit() and "
            f"predict_proba(), got {type(model).__name__}; for a fitted model pass prefit=True."
        )
    check_has_proba(model)
    return clone_seeded(model, random_state)


def check_has_proba(model: Any) -> None:
    """Refuse a classifier without class probabilities (conformal sets are built from them)."""
    if not hasattr(model, "predict_proba"):
        raise InputError(
            f"{type(model).__name__} has no predict_proba(); conformal prediction sets need class probabilities. "
            "Use a probabilistic classifier, e.g. SVC(probability=True), or wrap it in "
            "sklearn.calibration.CalibratedClassifierCV."
        )


class ProbaModel:
    """A fitted classifier whose ``proba(X)`` columns follow ``levels`` (codes 0..K-1).

    Parameters
    ----------
    model : fitted classifier
        Has ``predict_proba`` and ``classes_``.
    levels : sequence
        The class levels stored at fit.
    classes_are_codes : bool
        The model was fitted on integer codes 0..K-1 (confrf fitted it); else
        its ``classes_`` are level values (a prefit model).
    """

    def __init__(self, model: Any, levels: Any, classes_are_codes: bool) -> None:
        check_has_proba(model)
        classes = getattr(model, "classes_", None)
        if classes is None:
            raise InputError(
                f"the classifier {type(model).__name__} has no classes_ attribute; confrf needs it to "
                "match probability columns to class levels."
            )
        levels = list(levels)
        if classes_are_codes:
            cols = np.asarray(classes, dtype=np.int64)
        else:
            pos = {lv: i for i, lv in enumerate(levels)}
            unknown = [c for c in np.asarray(classes).tolist() if c not in pos]
            if unknown:
                raise InputError(
                    f"the prefit classifier knows class(es) {unknown[:10]} that are not levels of the "
                    f"response {levels[:30]}; fit it on the same labels."
                )
            cols = np.array([pos[c] for c in np.asarray(classes).tolist()], dtype=np.int64)
        self.model = model
        self.columns = cols  # level position of each of the model's probability columns
        self.n_levels = len(levels)

    def proba(self, X: np.ndarray) -> np.ndarray:
        if X.shape[0] == 0:  # scikit-learn refuses 0 rows; the answer is simply empty
            return np.zeros((0, self.n_levels))
        p = np.asarray(self.model.predict_proba(X), dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != self.columns.shape[0]:
            raise InputError(
                f"predict_proba returned shape {p.shape}; expected {self.columns.shape[0]} columns "
                "(one per entry of classes_)."
            )
        if not np.all(np.isfinite(p)):
            raise InputError(
                f"the classifier's predict_proba gave NaN or inf in "
                f"{int((~np.isfinite(p)).any(axis=1).sum())} of {p.shape[0]} row(s); conformal scores "
                "need finite probabilities. Check the model's input (its training may have diverged) "
                "or use another classifier."
            )
        bad = (p < -PROBA_TOL).any(axis=1) | (p > 1 + PROBA_TOL).any(axis=1) | (np.abs(p.sum(axis=1) - 1) > PROBA_TOL)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"the classifier's predict_proba gave {int(bad.sum())} row(s) that are not probabilities "
                f"(each in [0, 1], summing to 1), e.g. row {i}: {np.round(p[i], 6).tolist()}; scores "
                "built on them would be meaningless. Use a classifier with calibrated probabilities, or "
                "normalize them (e.g. softmax) in a wrapper."
            )
        out = np.zeros((p.shape[0], self.n_levels))
        out[:, self.columns] = p  # levels the model never saw keep probability 0
        return out


def is_statsmodels_results(model: Any) -> bool:
    """A fitted statsmodels results object (array or formula API), or confrf's formula adapter of one."""
    return isinstance(model, FormulaResultsAdapter) or (
        hasattr(model, "params") and hasattr(getattr(model, "model", None), "exog")
    )


class StatsmodelsProbaResults:
    """A prefit statsmodels discrete-choice result as a classifier whose ``classes_`` are response levels.

    Binary models (``Logit``, ``Probit``) predict P(endog = 1): their classes
    are 0 and 1, which must be the response's levels (0/1 or False/True),
    since nothing else says which level was coded 1. ``MNLogit`` names its
    classes (``model._ynames_map``, the sorted endog values as text); each is
    matched to exactly one level, by its text or, for numeric levels, by its
    value. As for any prefit classifier, a level the model never saw gets
    probability 0.

    Parameters
    ----------
    results : statsmodels results or FormulaResultsAdapter
        ``smf.logit(...).fit()`` adapted to the design by the formula API, or
        an array-API result (``sm.MNLogit(y, X).fit()``), whose exog is the
        design with or without a leading constant column.
    n_features : int
        Columns of the design.
    levels : list
        The response's class levels.
    """

    def __init__(self, results: Any, n_features: int, levels: list) -> None:
        from statsmodels.discrete.discrete_model import BinaryModel, MultinomialModel

        self.exog = results if isinstance(results, FormulaResultsAdapter) else wrap_prefit(results, n_features)
        self.results = self.exog.results
        sm_model = self.results.model
        name = type(sm_model).__name__
        if isinstance(sm_model, MultinomialModel):  # first: statsmodels derives it from BinaryModel
            names = [str(sm_model._ynames_map[j]) for j in range(len(sm_model._ynames_map))]
            self.binary = False
        elif isinstance(sm_model, BinaryModel):
            names = ["0", "1"]
            self.binary = True
        else:
            raise InputError(
                f"the prefit statsmodels {name} model gives no class probabilities; use a "
                "discrete-choice model (sm.Logit, sm.Probit, sm.MNLogit or smf.logit / smf.mnlogit) "
                "fitted on the same response, or a scikit-learn classifier."
            )
        self.classes_ = _match_levels(names, levels, name, self.binary)
        self.n_features_in_ = n_features

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = np.asarray(self.exog.predict(X), dtype=np.float64)
        return np.column_stack([1.0 - p, p]) if self.binary else p


def _match_levels(names: list[str], levels: list, model_name: str, binary: bool) -> list:
    """The level of each class name of a statsmodels model; an error unless each matches its own level."""

    def same(name: str, level: Any) -> bool:
        if str(level) == name:
            return True
        if isinstance(level, (bool, np.bool_)):
            return name == str(int(level))  # Logit's 0/1 for False/True
        try:
            return isinstance(level, (int, float, np.number)) and float(name) == float(level)
        except ValueError:
            return False

    matched = [[i for i, lv in enumerate(levels) if same(n, lv)] for n in names]
    if any(len(m) != 1 for m in matched) or len({m[0] for m in matched}) != len(names):
        raise InputError(
            f"the prefit statsmodels {model_name} model has classes {names}"
            + (" (it predicts P(endog = 1))" if binary else "")
            + f", which do not each match a distinct level of the response {levels[:30]}"
            + (
                "; a binary model cannot say which level was coded 1: code the response 0/1 (or False/True) in "
                "both, or fit smf.mnlogit / sm.MNLogit, which names its classes."
                if binary
                else "; fit it on the same response."
            )
        )
    return [levels[m[0]] for m in matched]


def prefit_classifier(model: Any, n_features: int, levels: list) -> Any:
    """A prefit model with ``predict_proba`` and ``classes_``: statsmodels results adapted, others as given."""
    if is_statsmodels_results(model):
        return StatsmodelsProbaResults(model, n_features, levels)
    check_has_proba(model)
    return model


def base_classifier(model: Any) -> Any:
    """The fitted classifier as the user knows it: statsmodels results unwrapped."""
    if isinstance(model, StatsmodelsProbaResults):
        return model.results
    if isinstance(model, StatsmodelsLogit):
        return model.results_
    return model


def classifier_name(model: Any) -> str:
    """Short human-readable name of a classifier or shortcut."""
    if isinstance(model, str):
        return CLASSIFIER_NAMES.get(model, model)
    if isinstance(model, ProbaModel):
        model = model.model
    if isinstance(model, StatsmodelsLogit):
        return CLASSIFIER_NAMES["logit"]
    if isinstance(model, StatsmodelsProbaResults) or is_statsmodels_results(model):
        results = model.results if isinstance(model, (StatsmodelsProbaResults, FormulaResultsAdapter)) else model
        return type(results.model).__name__ + " (statsmodels, prefit)"
    return type(model).__name__

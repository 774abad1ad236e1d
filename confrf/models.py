"""Base models mu(x): string shortcuts, scikit-learn estimators, statsmodels.

Everything is wrapped into the scikit-learn interface (``fit``/``predict``)
so that the conformal layer never needs to know where a model comes from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import NotFittedError as SkNotFittedError
from sklearn.utils.validation import check_is_fitted

from .exceptions import InputError

SHORTCUTS = ("gbm", "rf", "ols")


class StatsmodelsRegressor(RegressorMixin, BaseEstimator):
    """A statsmodels model class behind the scikit-learn interface.

    Parameters
    ----------
    model_class : type, default statsmodels OLS
        A statsmodels model taking ``(endog, exog, **model_kwargs)``, e.g.
        ``sm.OLS``, ``sm.WLS``, ``sm.GLM``, ``sm.RLM``.
    fit_intercept : bool
        Add a constant column (the formula's intercept) before fitting.
    model_kwargs, fit_kwargs : dict or None
        Passed to the model constructor and to ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.models import StatsmodelsRegressor
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> m = StatsmodelsRegressor().fit(X, 2 * X[:, 0] + 1)
    >>> np.round(m.predict(np.array([[20.0]])), 6)
    array([41.])
    """

    def __init__(self, model_class: Any = None, fit_intercept: bool = True,
                 model_kwargs: dict | None = None, fit_kwargs: dict | None = None) -> None:
        self.model_class = model_class
        self.fit_intercept = fit_intercept
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    def _exog(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([np.ones(X.shape[0]), X]) if self.fit_intercept else X

    def fit(self, X: np.ndarray, y: np.ndarray) -> "StatsmodelsRegressor":
        import statsmodels.api as sm

        cls = self.model_class if self.model_class is not None else sm.OLS
        self.results_ = cls(np.asarray(y, dtype=np.float64), self._exog(X), **(self.model_kwargs or {})).fit(
            **(self.fit_kwargs or {})
        )
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.results_.predict(self._exog(X)), dtype=np.float64)


class _PrefitStatsmodelsResults:
    """Adapter for an already fitted statsmodels results object."""

    def __init__(self, results: Any, n_features: int) -> None:
        k = np.asarray(results.model.exog).shape[1]
        if k == n_features + 1:
            self.add_constant = True
        elif k == n_features:
            self.add_constant = False
        else:
            raise InputError(
                f"the prefit statsmodels model has {k} regressors but the design has {n_features} columns "
                "(plus an optional intercept); fit it on the same formula."
            )
        self.results = results

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        exog = np.column_stack([np.ones(X.shape[0]), X]) if self.add_constant else X
        return np.asarray(self.results.predict(exog), dtype=np.float64)


def make_model(model: Any, *, fit_intercept: bool = True, random_state: int | None = None) -> Any:
    """An unfitted scikit-learn-style regressor for ``model``.

    ``model`` is "gbm" (HistGradientBoostingRegressor), "rf"
    (RandomForestRegressor), "ols" (statsmodels OLS) or any scikit-learn
    regressor, which is cloned.
    """
    if isinstance(model, str):
        if model == "gbm":
            from sklearn.ensemble import HistGradientBoostingRegressor

            return HistGradientBoostingRegressor(random_state=random_state)
        if model == "rf":
            from sklearn.ensemble import RandomForestRegressor

            return RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=random_state, n_jobs=1)
        if model == "ols":
            return StatsmodelsRegressor(fit_intercept=fit_intercept)
        raise InputError(f"unknown model {model!r}; use one of {list(SHORTCUTS)} or a scikit-learn regressor "
                         "('qr' and 'qgbm' are quantile models, for score='quantile').")
    if isinstance(model, type):
        fix = (f"model='ols' or StatsmodelsRegressor(model_class={model.__name__})"
               if model.__module__.startswith("statsmodels") else f"model={model.__name__}()")
        raise InputError(f"model must be an estimator instance, not the class {model.__name__}; use {fix}.")
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise InputError(
            f"model must be a name in {list(SHORTCUTS)} or an object with fit() and predict(), got {type(model).__name__}; "
            "for an already fitted model pass prefit=True."
        )
    return clone_seeded(model, random_state)


def clone_seeded(model: Any, random_state: int | None) -> Any:
    """An unfitted clone of a scikit-learn estimator, given ``random_state`` when it has none of its own."""
    est = clone(model)
    if random_state is not None and "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=random_state)
    return est


def wrap_prefit(model: Any, n_features: int) -> Any:
    """Use an already fitted model as is (statsmodels results are adapted)."""
    if hasattr(model, "model") and hasattr(model, "params") and hasattr(getattr(model, "model"), "exog"):
        return _PrefitStatsmodelsResults(model, n_features)
    if not hasattr(model, "predict") or isinstance(model, type):
        raise InputError(f"prefit=True needs a fitted model with a predict() method, got {model!r}.")
    if isinstance(model, BaseEstimator):
        try:
            check_is_fitted(model)
        except SkNotFittedError:
            raise InputError(f"prefit=True but the {type(model).__name__} is not fitted; fit it on the design "
                             "(result.design) first, or pass prefit=False to let confrf fit it.") from None
    n_in = getattr(model, "n_features_in_", None)
    if n_in is not None and n_in != n_features:
        raise InputError(
            f"the prefit model expects {n_in} features but the design has {n_features}; "
            "fit it on the design built from the same formula."
        )
    return model


def model_name(model: Any) -> str:
    """Short human-readable name of a model or shortcut."""
    if isinstance(model, str):
        return {"gbm": "HistGradientBoostingRegressor", "rf": "RandomForestRegressor", "ols": "OLS (statsmodels)",
                "qr": "QuantReg (statsmodels)", "qgbm": "HistGradientBoostingRegressor (quantile loss)"}.get(model, model)
    parts = model if isinstance(model, (tuple, list)) else getattr(model, "component_models", None)
    if parts is not None:  # a score's models side by side, e.g. CQR's (q_lo, q_hi)
        return "(" + ", ".join(model_name(m) for m in parts) + ")"
    if isinstance(model, (_PrefitStatsmodelsResults, FormulaResultsAdapter)):
        return type(model.results.model).__name__ + " (statsmodels, prefit)"
    if isinstance(model, StatsmodelsRegressor):
        cls = model.model_class
        return (cls.__name__ if cls is not None else "OLS") + " (statsmodels)"
    return type(model).__name__


class FormulaResultsAdapter:
    """A statsmodels formula-API result (``smf.ols("y ~ x", data).fit()``) predicting from the design.

    statsmodels would re-apply its own (patsy) formula to a DataFrame; here
    its columns are matched by name to confrf's design columns, so the same
    coefficients are applied to the same columns (``transform=False``).
    """

    def __init__(self, results: Any, column_names: list[str], has_intercept: bool) -> None:
        exog_names = list(results.model.exog_names)
        ours = {_norm(c): i for i, c in enumerate(column_names)}
        missing = [e for e in exog_names if e != "Intercept" and _norm(e) not in ours]
        unused = sorted(set(ours) - {_norm(e) for e in exog_names})
        if missing or unused or ("Intercept" in exog_names) != has_intercept:
            formula = getattr(results.model, "formula", None)
            raise InputError(
                f"the prefit statsmodels model (formula {formula!r}) has columns {exog_names}, which do not match "
                f"this formula's design columns {column_names} (intercept: {has_intercept})"
                + (f"; not in the design: {missing}" if missing else "")
                + (f"; not in the model: {unused}" if unused else "")
                + "; give confrf the same formula the model was fitted with."
            )
        self.results = results
        self.positions = [-1 if e == "Intercept" else ours[_norm(e)] for e in exog_names]

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        exog = np.column_stack([np.ones(X.shape[0]) if p < 0 else X[:, p] for p in self.positions]) \
            if self.positions else np.empty((X.shape[0], 0))
        return np.asarray(self.results.predict(exog, transform=False), dtype=np.float64)


def _norm(name: str) -> str:
    # patsy and formulaic agree on names up to spaces ("np.log(x)" vs "np.log( x )")
    return "".join(str(name).split())


def adapt_formula_results(model: Any, column_names: list[str], has_intercept: bool) -> Any:
    """Wrap a prefit statsmodels formula-API result; any other model is returned as is."""
    inner = getattr(model, "model", None)
    if hasattr(model, "params") and getattr(inner, "formula", None) is not None and hasattr(inner, "exog_names"):
        return FormulaResultsAdapter(model, column_names, has_intercept)
    return model


def no_predictor_model(model: Any, design: Any, method: str, prefit: bool) -> Any:
    """The base model of a formula without predictors (``y ~ 1``, ``y ~ 0``), as R's ``lm`` fits it.

    The model is the constant mean (0 without intercept). Only split
    conformal applies: every localizing method would localize on nothing,
    and with no predictors it reduces to split conformal anyway.
    """
    if method != "split":
        raise InputError(
            f"formula {design.formula!r} has no predictors, so method {method!r} has nothing to localize on; "
            "use method='split' (what any localized method reduces to without predictors), or add predictors."
        )
    if prefit:
        return model
    if not isinstance(model, str):
        raise InputError(
            f"formula {design.formula!r} has no predictors: a {type(model).__name__} cannot be fitted on zero "
            "columns; use model='ols' (the mean, as R's lm(y ~ 1)) or add predictors."
        )
    from sklearn.dummy import DummyRegressor

    if design.has_intercept:
        return DummyRegressor(strategy="mean")
    return DummyRegressor(strategy="constant", constant=0.0)


def base_model(fitted: Any) -> Any:
    """The fitted base model as the user knows it: statsmodels results unwrapped, pairs as tuples."""
    parts = getattr(fitted, "component_models", None)
    if parts is not None:
        return tuple(base_model(m) for m in parts)
    if isinstance(fitted, (_PrefitStatsmodelsResults, FormulaResultsAdapter)):
        return fitted.results
    if isinstance(fitted, StatsmodelsRegressor):
        return fitted.results_
    return fitted

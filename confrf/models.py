"""Base models mu(x): string shortcuts, scikit-learn estimators, statsmodels.

Everything is wrapped into the scikit-learn interface (``fit``/``predict``)
so that the conformal layer never needs to know where a model comes from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone

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
    if not hasattr(model, "predict"):
        raise InputError("prefit=True needs a fitted model with a predict() method.")
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
    if isinstance(model, _PrefitStatsmodelsResults):
        return type(model.results.model).__name__ + " (statsmodels, prefit)"
    if isinstance(model, StatsmodelsRegressor):
        cls = model.model_class
        return (cls.__name__ if cls is not None else "OLS") + " (statsmodels)"
    return type(model).__name__

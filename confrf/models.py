"""Base models mu(x): string shortcuts, scikit-learn estimators, statsmodels.

Everything is wrapped into the scikit-learn interface (``fit``/``predict``)
so that the conformal layer never needs to know where a model comes from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
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

    def __init__(
        self,
        model_class: Any = None,
        fit_intercept: bool = True,
        model_kwargs: dict | None = None,
        fit_kwargs: dict | None = None,
    ) -> None:
        self.model_class = model_class
        self.fit_intercept = fit_intercept
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    def _exog(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([np.ones(X.shape[0]), X]) if self.fit_intercept else X

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> StatsmodelsRegressor:
        """Fit; ``sample_weight`` (case weights, R's ``lm(weights=)``) turns OLS into WLS."""
        import statsmodels.api as sm

        cls = self.model_class if self.model_class is not None else sm.OLS
        kwargs = dict(self.model_kwargs or {})
        if sample_weight is not None:
            if cls not in (sm.OLS, sm.WLS):
                raise InputError(
                    f"case weights (weights=) are passed to statsmodels OLS as WLS; {cls.__name__} takes no case "
                    "weights here. Use model='ols', or drop weights=."
                )
            cls, kwargs["weights"] = sm.WLS, np.asarray(sample_weight, dtype=np.float64)
        self.results_ = cls(np.asarray(y, dtype=np.float64), self._exog(X), **kwargs).fit(**(self.fit_kwargs or {}))
        rank = getattr(self.results_.model, "rank", None)  # statsmodels' rank (a looser cutoff than its pinv's)
        if (
            getattr(cls, "__name__", "") in _PINV_MODELS
            and rank is not None
            and rank < self.results_.model.exog.shape[1]
        ):
            check_linear_scale(X, self.fit_intercept)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.results_.predict(self._exog(X)), dtype=np.float64)


#: statsmodels models fitted by a pseudo-inverse, which drops singular values below 1e-15 of the largest
_PINV_MODELS = ("OLS", "WLS", "GLS")


def scale_lost_columns(X: np.ndarray, fit_intercept: bool) -> list[int]:
    """Columns a pseudo-inverse least-squares fit ignores only because of their scale.

    statsmodels' OLS drops singular values below 1e-15 of the largest, so a
    column of size 1e-20 next to the intercept is silently left out (and
    1e20 crowds the intercept out): the design is rank-deficient as given
    but not once every column is scaled to a maximum of 1.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return []
    exog = np.column_stack([np.ones(X.shape[0]), X]) if fit_intercept else X
    top = np.abs(exog).max(axis=0)
    top[top == 0] = 1.0

    def rank(a: np.ndarray) -> int:
        sv = np.linalg.svd(a, compute_uv=False)
        return int((sv > 1e-15 * sv[0]).sum()) if sv.size and sv[0] > 0 else 0

    if rank(exog / top) <= rank(exog):
        return []
    size = np.abs(X).max(axis=0)
    off = [j for j in range(X.shape[1]) if not 1e-8 <= size[j] <= 1e8]
    return off or list(range(X.shape[1]))


def check_linear_scale(X: np.ndarray, fit_intercept: bool, names: list[str] | None = None) -> None:
    """An error naming the columns whose scale would make statsmodels' OLS drop them silently."""
    lost = scale_lost_columns(X, fit_intercept)
    if lost:
        which = [names[j] for j in lost] if names is not None else lost
        sizes = ", ".join(f"{np.abs(np.asarray(X)[:, j]).max():.3g}" for j in lost)
        raise InputError(
            f"{'design column(s)' if names is not None else 'X column(s)'} {which} (largest values {sizes}) are on a "
            "scale so far from the intercept's that OLS (a pseudo-inverse) would silently drop them; rescale them, "
            "e.g. I(x * 1e20) in a formula for a column of size 1e-20, or use model='gbm'."
        )


def _constant_position(results: Any) -> int | None:
    """Column of the added constant in a statsmodels model's exog, or None.

    statsmodels detects a constant column (``k_constant``, ``const_idx``); it
    counts as added (not a constant design column) when named as
    ``sm.add_constant`` or a formula names it.
    """
    m = results.model
    idx = getattr(getattr(m, "data", None), "const_idx", None)
    if not getattr(m, "k_constant", 0) or idx is None:
        return None
    return int(idx) if str(m.exog_names[int(idx)]) in ("const", "Intercept") else None


class _PrefitStatsmodelsResults:
    """Adapter for an already fitted statsmodels results object (fitted on arrays)."""

    def __init__(self, results: Any, n_features: int) -> None:
        k = np.asarray(results.model.exog).shape[1]
        self.const = _constant_position(results)
        want = n_features + (self.const is not None)
        if k != want:
            has = "with a constant column" if self.const is not None else "without a constant column"
            raise InputError(
                f"the prefit statsmodels model has {k} regressors ({has}, as statsmodels detects it) but the "
                f"design has {n_features} columns, so it needs {want}; fit it on the design of the same formula "
                "(result.design.transform(data), plus sm.add_constant if the formula has an intercept)."
            )
        self.results = results

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        exog = X if self.const is None else np.insert(X, self.const, 1.0, axis=1)
        return np.asarray(self.results.predict(exog), dtype=np.float64)


#: the shortcuts both families take: scikit-learn's ensembles, as regressors or classifiers
ENSEMBLE_SHORTCUTS = ("gbm", "rf")


def shortcut_model(model: str, task: str, random_state: int | None, own: dict[str, Any], instead: str) -> Any:
    """The unfitted model of shortcut name ``model`` for ``task`` ("Regressor" or "Classifier").

    "gbm" and "rf" are scikit-learn's ensembles, with the same settings in both families: histogram
    gradient boosting's defaults, and a forest of 100 trees with at least 5 rows a leaf. ``own``: the
    family's other names, each with a function that builds its model; ``instead``: what the error for
    an unknown name offers besides the names.
    """
    if model in own:
        return own[model]()
    if model not in ENSEMBLE_SHORTCUTS:
        what = "model" if task == "Regressor" else task.lower()
        raise InputError(f"unknown {what} {model!r}; use one of {[*ENSEMBLE_SHORTCUTS, *own]} or {instead}.")
    from sklearn import ensemble

    if model == "gbm":
        return getattr(ensemble, f"HistGradientBoosting{task}")(random_state=random_state)
    forest = getattr(ensemble, f"RandomForest{task}")
    return forest(n_estimators=100, min_samples_leaf=5, random_state=random_state, n_jobs=1)


def make_model(model: Any, *, fit_intercept: bool = True, random_state: int | None = None) -> Any:
    """An unfitted scikit-learn-style regressor for ``model``.

    ``model`` is "gbm" (HistGradientBoostingRegressor), "rf"
    (RandomForestRegressor), "ols" (statsmodels OLS) or any scikit-learn
    regressor, which is cloned.
    """
    if isinstance(model, str):
        ols = {"ols": lambda: StatsmodelsRegressor(fit_intercept=fit_intercept)}
        quantile = "a scikit-learn regressor ('qr' and 'qgbm' are quantile models, for score='quantile')"
        return shortcut_model(model, "Regressor", random_state, ols, quantile)
    if isinstance(model, type):
        fix = (
            f"model='ols' or StatsmodelsRegressor(model_class={model.__name__})"
            if model.__module__.startswith("statsmodels")
            else f"model={model.__name__}()"
        )
        raise InputError(f"model must be an estimator instance, not the class {model.__name__}; use {fix}.")
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise InputError(
            f"model must be a name in {list(SHORTCUTS)} or an object with fit() and predict(), got "
            f"{type(model).__name__}; "
            "for an already fitted model pass prefit=True."
        )
    _refuse_statsmodels_model(model)
    check_regressor(model)
    try:
        return clone_seeded(model, random_state)
    except (TypeError, RuntimeError) as exc:  # scikit-learn's clone needs get_params()
        raise InputError(
            f"cannot make a fresh copy of the model {type(model).__name__} to fit ({exc}); confrf clones the model "
            "with scikit-learn's clone, which needs get_params()/set_params(): pass a scikit-learn estimator, or fit "
            "the model yourself and pass prefit=True."
        ) from None


def fit_weighted(est: Any, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> Any:
    """Fit ``est`` with case weights, or say that it takes none."""
    from sklearn.utils.validation import has_fit_parameter

    if isinstance(est, StatsmodelsRegressor) or has_fit_parameter(est, "sample_weight"):
        return est.fit(X, y, sample_weight=sample_weight)
    raise InputError(
        f"case weights (weights=) go to the base model's fit as sample_weight, but {type(est).__name__}.fit takes "
        "no sample_weight; use model='gbm', 'rf' or 'ols', or a regressor that accepts sample_weight."
    )


def _refuse_statsmodels_model(model: Any) -> None:
    """An unfitted statsmodels model (sm.OLS(y, X), smf.ols(...)) carries its own data: it is not a recipe to refit."""
    if (
        type(model).__module__.startswith("statsmodels")
        and hasattr(model, "endog")
        and hasattr(model, "exog")
        and not hasattr(model, "params")
    ):
        raise InputError(
            f"model is an unfitted statsmodels {type(model).__name__} (it carries its own data); pass model='ols', "
            f"or StatsmodelsRegressor(model_class=sm.{type(model).__name__}) from confrf.models for confrf to fit it, "
            "or call .fit() on it and pass the results with prefit=True."
        )


def check_regressor(model: Any) -> None:
    """Refuse scikit-learn classifiers, clusterers and transformers: mu(x) must be a regression function."""
    if not isinstance(model, BaseEstimator):
        return  # duck-typed models are taken at their word
    from sklearn.utils import get_tags

    kind = get_tags(model).estimator_type
    if kind not in (None, "regressor") or (kind is None and not hasattr(model, "predict")):
        what = f"a {kind}" if kind else "not a regressor"
        raise InputError(
            f"model {type(model).__name__} is {what}; conformal intervals need a regressor of a numeric "
            "response (e.g. model='gbm' or HistGradientBoostingRegressor()). For class labels, put a "
            "categorical response in the formula (C(y) ~ ...) to get prediction sets."
        )


def clone_seeded(model: Any, random_state: int | None) -> Any:
    """An unfitted clone of a scikit-learn estimator, given ``random_state`` when it has none of its own."""
    est = clone(model)
    if random_state is not None and "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=random_state)
    return est


def wrap_prefit(model: Any, n_features: int) -> Any:
    """Use an already fitted model as is (statsmodels results are adapted)."""
    if hasattr(model, "model") and hasattr(model, "params") and hasattr(model.model, "exog"):
        return _PrefitStatsmodelsResults(model, n_features)
    _refuse_statsmodels_model(model)
    if not hasattr(model, "predict") or isinstance(model, type):
        raise InputError(f"prefit=True needs a fitted model with a predict() method, got {model!r}.")
    if isinstance(model, BaseEstimator):
        check_regressor(model)
        try:
            check_is_fitted(model)
        except SkNotFittedError:
            raise InputError(
                f"prefit=True but the {type(model).__name__} is not fitted; fit it on the design "
                "(result.design) first, or pass prefit=False to let confrf fit it."
            ) from None
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
        return {
            "gbm": "HistGradientBoostingRegressor",
            "rf": "RandomForestRegressor",
            "ols": "OLS (statsmodels)",
            "qr": "QuantReg (statsmodels)",
            "qgbm": "HistGradientBoostingRegressor (quantile loss)",
        }.get(model, model)
    parts = model if isinstance(model, (tuple, list)) else getattr(model, "component_models", None)
    if parts is not None:  # a score's models side by side, e.g. CQR's (q_lo, q_hi)
        return "(" + ", ".join(model_name(m) for m in parts) + ")"
    if isinstance(model, (_PrefitStatsmodelsResults, FormulaResultsAdapter)):
        return type(model.results.model).__name__ + " (statsmodels, prefit)"
    if isinstance(model, NamedFeaturesAdapter):
        return type(model.model).__name__
    if isinstance(model, StatsmodelsRegressor):
        cls = model.model_class
        return (cls.__name__ if cls is not None else "OLS") + " (statsmodels)"
    return type(model).__name__


class FormulaResultsAdapter:
    """Prefit statsmodels results whose columns are named, predicting from the design by name.

    A formula-API result (``smf.ols("y ~ x", data).fit()``) would re-apply its
    own (patsy) formula to a DataFrame, and a model fitted on a named frame
    (``sm.OLS(y, sm.add_constant(df[["x", "z"]]))``) may order its columns
    differently from the design; here its columns are matched by name to
    confrf's design columns, so the same coefficients are applied to the same
    columns (``transform=False``).
    """

    def __init__(
        self, results: Any, column_names: list[str], has_intercept: bool, intercept: str | None = "Intercept"
    ) -> None:
        exog_names = list(results.model.exog_names)
        positions, mismatch = _match_names(exog_names, column_names, intercept)
        if mismatch or (intercept in exog_names) != has_intercept:
            formula = getattr(results.model, "formula", None)
            source = f"formula {formula!r}" if formula is not None else "fitted on a named frame"
            raise InputError(
                f"the prefit statsmodels model ({source}) has columns {exog_names}, which do not match "
                f"this formula's design columns {column_names} (intercept: {has_intercept}){mismatch}; "
                "give confrf the same formula the model was fitted with."
            )
        self.results = results
        self.positions = positions

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        exog = (
            np.column_stack([np.ones(X.shape[0]) if p < 0 else X[:, p] for p in self.positions])
            if self.positions
            else np.empty((X.shape[0], 0))
        )
        return np.asarray(self.results.predict(exog, transform=False), dtype=np.float64)


class NamedFeaturesAdapter:
    """A prefit scikit-learn model fitted on a DataFrame: design columns passed by name, in its order."""

    def __init__(self, model: Any, column_names: list[str]) -> None:
        check_regressor(model)
        names = [str(c) for c in model.feature_names_in_]
        self.positions, mismatch = _match_names(names, column_names)
        if mismatch:
            raise InputError(
                f"the prefit {type(model).__name__} was fitted on columns {names}, which do not match this "
                f"formula's design columns {column_names}{mismatch}; fit it on result.design.transform(data) "
                "(or a frame with the design's column names)."
            )
        self.model = model
        self.names = list(model.feature_names_in_)

    def predict(self, X: np.ndarray) -> np.ndarray:
        frame = pd.DataFrame(np.asarray(X, dtype=np.float64)[:, self.positions], columns=self.names)
        return np.asarray(self.model.predict(frame))


def _match_names(theirs: list[str], column_names: list[str], intercept: str | None = None) -> tuple[list[int], str]:
    """Design position of each of a model's columns (-1: its intercept), and what does not match ("" if all does)."""
    ours = {_norm(c): i for i, c in enumerate(column_names)}
    missing = [c for c in theirs if c != intercept and _norm(c) not in ours]
    unused = sorted(set(ours) - {_norm(c) for c in theirs})
    if missing or unused:
        return [], (
            (f"; not in the design: {missing}" if missing else "") + (f"; not in the model: {unused}" if unused else "")
        )
    return [-1 if c == intercept else ours[_norm(c)] for c in theirs], ""


def _norm(name: str) -> str:
    # patsy and formulaic agree on names up to spaces ("np.log(x)" vs "np.log( x )")
    return "".join(str(name).split())


def adapt_formula_results(model: Any, column_names: list[str], has_intercept: bool) -> Any:
    """Match a prefit model's named columns to the design's by name; unnamed models are returned as is.

    Statsmodels formula-API results, statsmodels results fitted on a named
    frame, and scikit-learn models with ``feature_names_in_`` are wrapped; a
    pair of models (``score="quantile"`` or ``"scaled"``) is adapted member by member.
    """
    if isinstance(model, (tuple, list)):
        return type(model)(adapt_formula_results(m, column_names, has_intercept) for m in model)
    inner: Any = getattr(model, "model", None)
    if hasattr(model, "params") and hasattr(inner, "exog_names"):
        if getattr(inner, "formula", None) is not None:
            return FormulaResultsAdapter(model, column_names, has_intercept)
        if getattr(getattr(inner, "data", None), "param_names", None) is not None and isinstance(
            getattr(inner.data, "orig_exog", None), pd.DataFrame
        ):
            const = _constant_position(model)
            return FormulaResultsAdapter(
                model, column_names, has_intercept, intercept=None if const is None else inner.exog_names[const]
            )
        return model
    if getattr(model, "feature_names_in_", None) is not None and isinstance(model, BaseEstimator):
        return NamedFeaturesAdapter(model, column_names)
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
    if isinstance(fitted, NamedFeaturesAdapter):
        return fitted.model
    if isinstance(fitted, StatsmodelsRegressor):
        return fitted.results_
    return fitted


def name_model_terms(fitted: Any, design: Any) -> None:
    """Give statsmodels models that confrf fitted on arrays the formula's names.

    ``model="ols"`` fits on the design matrix, so statsmodels would call the
    response ``y`` and the columns ``const, x1, ...``; its ``summary()``
    then shows the formula's response and term names instead (``Intercept``
    as formulaic and statsmodels' formula API name it). Pairs of models
    (``score="quantile"`` with ``"qr"``) are named member by member.
    """
    parts = getattr(fitted, "component_models", None)
    if parts is not None:
        for m in parts:
            name_model_terms(m, design)
        return
    if not isinstance(fitted, StatsmodelsRegressor):
        return
    data = getattr(fitted.results_.model, "data", None)
    names = (["Intercept"] if fitted.fit_intercept else []) + list(design.column_names)
    if data is None or len(names) != fitted.results_.model.exog.shape[1]:
        return
    data.xnames = names
    data.ynames = design.response_name

"""What the array-level estimators share (:class:`confrf.ConformalRegressor`, ``ConformalClassifier``).

Their parameters (one explicit ``__init__``, which scikit-learn's
``get_params``/``set_params``/``clone`` read; a family changes only defaults,
:func:`family_init`), seeds, and the option, column and fitted-state checks.
"""

from __future__ import annotations

import inspect
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

import numpy as np
from sklearn.base import BaseEstimator

from ._levels import resolve_alpha, setting_alpha
from ._parallel import concat_chunks, map_row_chunks
from ._validation import (
    as_float_matrix,
    check_alpha,
    check_bool,
    check_fraction,
    check_int,
    check_max_features,
    check_min_samples_leaf,
    check_n_estimators,
    check_n_jobs,
    check_random_state,
    feature_names,
    seed_entropy,
)
from ._warnings import user_stacklevel
from .calibrators import Calibrator, get_method, method_options
from .exceptions import InputError, NotFittedError, UnusedSettingWarning

_Init = TypeVar("_Init", bound=Callable[..., None])


def _seeds(random_state: Any, k: int) -> list[int | None]:
    """Independent sub-seeds so each random step is reproducible on its own.

    A Generator or RandomState is drawn from once per call, and None draws
    from numpy's global generator (scikit-learn's convention: a script
    seeded with ``np.random.seed`` is reproducible).
    """
    entropy = seed_entropy(random_state)
    ss = np.random.SeedSequence(entropy)
    return [int(s) for s in ss.generate_state(k) % (2**31 - 1)]


def check_same_rows(X: np.ndarray, n_y: int) -> None:
    """X and the response have one entry per row."""
    if X.shape[0] != n_y:
        raise InputError(f"X has {X.shape[0]} rows but y has {n_y}.")


def check_predict_args(alpha: Any, n_jobs: Any, chunk_size: Any, progress: Any) -> tuple[float, Any, Any, Any]:
    """The level and the chunking arguments of ``predict_details``, checked."""
    return (
        check_alpha(alpha),
        check_n_jobs(n_jobs),
        check_int(chunk_size, "chunk_size", allow_none=True),
        None if progress is None else check_bool(progress, "progress"),
    )


class EstimatorChecks:
    """Seeds and fitted-state checks.

    The estimator has ``random_state``, ``prefit``, ``model_`` and ``n_features_in_``.
    """

    random_state: Any
    prefit: bool
    n_features_in_: int
    alpha: float | None
    level: float | None

    def _alpha(self, warn: bool = False) -> float:
        """The miscoverage of ``alpha=`` or R's ``level=``: :func:`confrf._levels.setting_alpha`.

        Resolved on each use rather than stored, so that ``set_params`` and
        ``clone`` keep scikit-learn's contract (parameters stay as given).
        ``warn``: a ``level`` below 0.5 warns as in the formula API (once per
        fit: the option checks ask for it; an ``alpha`` is the formula API's
        to warn about, which passes its resolved alpha here).
        """
        return setting_alpha(self.alpha, self.level, warn=warn)

    def _seeds(self) -> list[int | None]:
        return _seeds(self.random_state, 4)

    def _model(self) -> Any:
        if not hasattr(self, "model_"):
            raise NotFittedError("the base model is not fitted; call fit() (or conformalize() with prefit=True).")
        return self.model_

    def _check_n_columns(self, X: np.ndarray) -> None:
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"X has {X.shape[1]} columns; the model was fitted on {self.n_features_in_}.")

    def _warn_unused_settings(self, method: str, options: Mapping[str, Any]) -> None:
        """Warn of forest settings moved from this estimator's defaults that ``method`` does not read.

        A warning, not an error (R's ``lm`` says the same of arguments it
        disregards): comparing methods with shared settings is legitimate.
        """
        from .calibrators.registry import FOREST_SETTINGS, unused_settings_message

        defaults = inspect.signature(type(self).__init__).parameters

        def unset(value: Any, default: Any) -> bool:
            # "tune" is the formula API's default for every estimator; a type check keeps 1 (one feature) apart from 1.0
            return (isinstance(value, str) and value == "tune") or (type(value) is type(default) and value == default)

        changed = {
            k: getattr(self, k) for k in sorted(FOREST_SETTINGS) if not unset(getattr(self, k), defaults[k].default)
        }
        message = unused_settings_message(method, options, changed)
        if message is not None:
            warnings.warn(message, UnusedSettingWarning, stacklevel=user_stacklevel())

    def _refuse_prefit(self) -> None:
        """``fit`` with ``prefit=True``: the model is fitted already."""
        if self.prefit:
            raise InputError("prefit=True: the model is already fitted; call conformalize() directly.")

    def _require_fit(self) -> None:
        """``conformalize`` without ``prefit``: ``fit`` came first."""
        if not hasattr(self, "model_"):
            raise NotFittedError(
                "call fit(X_train, y_train) before conformalize(), or pass prefit=True with a fitted model."
            )


def family_init(init: _Init, **defaults: Any) -> _Init:
    """``init`` with some keyword defaults replaced: a family's ``__init__`` over the shared parameters.

    The parameters (and so ``get_params``, ``set_params``, ``clone`` and the
    repr, which read ``__init__``'s signature) stay those of
    :class:`ConformalEstimator`, written once; only their defaults differ.
    """
    params = [p for p in inspect.signature(init).parameters.values() if p.default is not p.empty]
    unknown = sorted(set(defaults) - {p.name for p in params})
    if unknown:
        raise TypeError(f"{init.__qualname__} has no parameters {unknown}")
    copy = types.FunctionType(
        init.__code__,
        init.__globals__,
        init.__name__,
        tuple(defaults.get(p.name, p.default) for p in params),
        init.__closure__,
    )
    copy.__doc__, copy.__annotations__, copy.__module__ = init.__doc__, dict(init.__annotations__), init.__module__
    return cast(_Init, copy)


class ConformalEstimator(EstimatorChecks, BaseEstimator):
    """What the array-level estimators share: their parameters, option checks, column checks and calibrator.

    The defaults here are the regression family's; the classification family
    sets its own with :func:`family_init`. The parameters are documented on
    :class:`confrf.ConformalRegressor`.
    """

    def __init__(
        self,
        model: Any = "gbm",
        method: str = "lcp-rf",
        alpha: float | None = None,
        score: Any = "absolute",
        prefit: bool = False,
        honest: bool = True,
        localizer_size: float = 0.5,
        n_estimators: int | str = "auto",
        min_samples_leaf: int | str = "tune",
        max_features: Any = "tune",
        max_depth: int | None = None,
        fit_intercept: bool = True,
        random_state: Any = None,
        n_jobs: int | None = None,
        options: dict | None = None,
        level: float | None = None,
    ) -> None:
        self.model = model
        self.method = method
        self.alpha = alpha
        self.score = score
        self.prefit = prefit
        self.honest = honest
        self.localizer_size = localizer_size
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_depth = max_depth
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.options = options
        self.level = level

    def _check_options(self) -> None:
        self._alpha(warn=True)
        for name in ("prefit", "honest", "fit_intercept"):
            check_bool(getattr(self, name), name)
        check_fraction(self.localizer_size, "localizer_size")
        check_n_estimators(self.n_estimators)
        check_int(self.max_depth, "max_depth", allow_none=True)
        check_min_samples_leaf(self.min_samples_leaf)
        check_max_features(self.max_features)
        check_n_jobs(self.n_jobs)
        check_random_state(self.random_state)
        method_options(self.method, self.options)

    def _set_feature_names(self, names: np.ndarray | None) -> None:
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _check_columns(self, X: np.ndarray, names: np.ndarray | None) -> None:
        """Same number of columns as at fit and, for DataFrames, the same names in the same order.

        This is scikit-learn's rule.
        """
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and list(names) != list(fitted):
            same = sorted(map(str, names)) == sorted(map(str, fitted))
            raise InputError(
                f"X has columns {list(names)[:10]} but the model was fitted on {list(fitted)[:10]}"
                + ("; reorder them: X[model.feature_names_in_]" if same else "; give the same columns")
                + " (columns are used by position, so a different order would silently change every prediction)."
            )
        self._check_n_columns(X)

    def _shift_refusal(self) -> str | None:
        """Why this configuration cannot weight for covariate shift (None when it can); nothing is fitted."""
        calibrator = get_method(self.method).factory(self, method_options(self.method, self.options), None)
        return None if calibrator.supports_shift else calibrator.shift_refusal()

    def _check_X(self, X: Any) -> np.ndarray:
        self._model()
        names, ndim = feature_names(X), np.ndim(X)
        X = as_float_matrix(X, "X")
        if ndim == 1 and X.shape[0] == self.n_features_in_ != 1:
            raise InputError(
                f"X is 1-D with {X.shape[0]} values: a single row must be 2-D, "
                "X.reshape(1, -1) (a 1-D X is read as one feature, as a column)."
            )
        self._check_columns(X, names)
        return X

    def _make_calibrator(self, seed: int | None) -> Calibrator:
        opts = method_options(self.method, self.options)
        self._warn_unused_settings(self.method, opts)
        return get_method(self.method).factory(self, opts, seed)

    def _hand_reference(self, calibrator: Calibrator) -> None:
        """The training part that ``fit`` kept (methods that learn from it) goes to the calibrator first."""
        X_ref, V_ref = getattr(self, "train_X_", None), getattr(self, "train_scores_", None)
        if X_ref is not None and V_ref is not None:
            if callable(V_ref) and not calibrator.defers_reference:
                V_ref = V_ref()  # scores deferred by fit (localizer_data="auto"), for a calibrator that needs them now
            calibrator.set_reference(X_ref, V_ref, source=f"training part ({self.train_cv_}-fold out-of-fold scores)")

    def _predict_args(
        self, alpha: float | None, level: float | None, n_jobs: Any, chunk_size: Any, progress: Any, what: str
    ) -> tuple[float, Any, Any, Any]:
        """A prediction's level (``alpha``, R's ``level``, or the fit's) and chunking arguments, checked, after
        ``conformalize`` (``what``: what is predicted, for the error)."""
        resolved = resolve_alpha(alpha, level)
        args = check_predict_args(self._alpha() if resolved is None else resolved, n_jobs, chunk_size, progress)
        if not hasattr(self, "calibrator_"):
            raise NotFittedError(f"call conformalize() before predicting {what}.")
        return args

    def _predict_chunks(
        self, predict: Callable[[Any], dict[str, np.ndarray]], n: int, n_jobs: Any, chunk_size: Any, progress: Any
    ) -> dict[str, np.ndarray]:
        """``predict(rows)`` over chunks of the ``n`` rows (``n_jobs`` at once; None: the estimator's), joined."""
        parts = map_row_chunks(
            predict, n, chunk_size=chunk_size, n_jobs=self.n_jobs if n_jobs is None else n_jobs, progress=progress
        )
        return concat_chunks(parts)

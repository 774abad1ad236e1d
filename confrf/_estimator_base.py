"""Helpers the array-level estimators share (:class:`confrf.ConformalRegressor`, ``ConformalClassifier``).

Only checks and seeds: each estimator keeps its own explicit ``__init__``, which
scikit-learn's ``get_params``/``set_params``/``clone`` read.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._levels import setting_alpha
from ._validation import check_alpha, check_bool, check_int, check_n_jobs, seed_entropy
from ._warnings import user_stacklevel
from .exceptions import InputError, NotFittedError, UnusedSettingWarning


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

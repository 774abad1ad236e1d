"""The covariate-shift options of the formula API, resolved into what the estimator takes.

``likelihood_ratio=`` (a known ratio read from the rows), ``shift=`` (target
rows; the ratio is estimated by ``shift_model`` with ``shift_clip``) and
``weights=`` (case weights of the base model's fit, R's meaning). The
:class:`ShiftSetup` kept with a result gives the new rows' ratios at predict
time and the facts of the summary's "Covariate shift" section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..formula.frame import as_training_frame
from .ratio import RatioEstimator
from .source import RatioSource
from .value import ShiftRatio

#: the options this module takes out of ``conformal(**options)``, and their defaults
SHIFT_OPTIONS = {"likelihood_ratio": None, "shift": None, "shift_model": "logit", "shift_clip": 0.01, "weights": None}


def pop_shift_options(options: dict[str, Any]) -> dict[str, Any]:
    """Remove the shift options from ``options``; return those given (empty when none is)."""
    given = {k: options.pop(k) for k in list(options) if k in SHIFT_OPTIONS}
    given = {k: v for k, v in given.items() if v is not None}  # an explicit None is the default
    if not given:
        return {}
    opts = {**SHIFT_OPTIONS, **given}
    if opts["likelihood_ratio"] is not None and opts["shift"] is not None:
        raise InputError(
            "give either likelihood_ratio= (a known ratio) or shift= (target rows, the ratio is estimated), not both."
        )
    if opts["shift"] is None and ("shift_model" in given or "shift_clip" in given):
        raise InputError("shift_model and shift_clip set how the ratio is estimated from shift= rows; add shift=.")
    return opts


def refuse_case_weights(opts: dict[str, Any]) -> None:
    """Prediction sets (a class-label response) take ``likelihood_ratio`` and ``shift``, not ``weights``."""
    if opts.get("weights") is not None:
        raise InputError(
            "weights= (case weights of the base model's fit, R's lm(weights=)) are offered for prediction "
            "intervals only; the classifiers of prediction sets are fitted unweighted. Drop weights=; for "
            "covariate shift between the calibration rows and the rows to predict use likelihood_ratio= or shift=."
        )


def outside_range(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Rows with a design column outside the calibration rows' range [lo, hi]."""
    if X.shape[0] == 0 or lo.size == 0:
        return np.zeros(X.shape[0], dtype=bool)
    return np.any((X < lo) | (X > hi), axis=1)


@dataclass
class ShiftSetup:
    """Where the ratio comes from, and the facts the summary reports.

    Attributes
    ----------
    source : RatioSource or None
        A known ratio, read from new rows as from the calibration rows.
    estimator : RatioEstimator or None
        The estimated ratio (a function of design rows).
    range_lo, range_hi : ndarray
        The calibration rows' design range (the support check).
    target : dict
        Facts on the ``shift=`` rows (estimated ratio): rows, share outside the range, share at the clip.
    """

    source: RatioSource | None
    estimator: RatioEstimator | None
    range_lo: np.ndarray
    range_hi: np.ndarray
    target: dict[str, Any] = field(default_factory=dict)

    @property
    def estimated(self) -> bool:
        return self.estimator is not None

    def describe(self) -> str:
        if self.estimator is not None:
            return self.estimator.describe()
        assert self.source is not None  # a known ratio when none is estimated
        return f"known: {self.source.describe()}"

    def ratios(self, newdata: pd.DataFrame, X: np.ndarray) -> ShiftRatio:
        """The ratios of new rows (``X``: their design), read and checked here, where they enter."""
        if self.estimator is not None:
            return ShiftRatio.read(self.estimator(X), X.shape[0], "the new rows", allow_all_zero=True)
        assert self.source is not None  # a known ratio when none is estimated
        return self.source.read(newdata, "newdata", allow_all_zero=True)


def refuse_unweighted(refusal: str | None, opts: dict[str, Any]) -> None:
    """Before anything is fitted: the covariate-shift option the user gave, named, when the method cannot weight.

    ``refusal``: the calibrator's reason (None when it weights exactly). ``shift=`` reaches the estimator as a
    ratio function, whose own check could only name ``likelihood_ratio``.
    """
    given = [k for k in ("likelihood_ratio", "shift") if opts.get(k) is not None]  # one: both is refused
    if refusal is not None and given:
        raise InputError(f"{given[0]}= (covariate shift) cannot be used here: {refusal}")


def resolve_shift(
    opts: dict[str, Any],
    *,
    design: Any,
    train_rows: pd.DataFrame | None,
    calib_rows: pd.DataFrame,
    X_tr: np.ndarray,
    X_cal: np.ndarray,
    seed: int | None,
) -> tuple[ShiftRatio | None, Any, ShiftSetup | None]:
    """(case weights of the training rows, ``likelihood_ratio`` for ``conformalize``, the setup for the result).

    The case weights and a known ratio come read and checked (:class:`ShiftRatio`); an estimated ratio comes as
    the fitted :class:`RatioEstimator`, a function of design rows the estimator evaluates (and checks) once.
    """
    weights = None
    if opts.get("weights") is not None:
        if train_rows is None:
            raise InputError(
                "weights= are case weights for fitting the base model, but prefit=True fits nothing; drop weights= "
                "(for covariate shift between calibration and new rows use likelihood_ratio= or shift=)."
            )
        weights = RatioSource(opts["weights"], name="weights").read(train_rows, "the training rows")
    lo, hi = (X_cal.min(axis=0), X_cal.max(axis=0)) if X_cal.shape[0] else (np.empty(0), np.empty(0))
    if opts.get("likelihood_ratio") is not None:
        source = RatioSource(opts["likelihood_ratio"])
        return weights, source.read(calib_rows, "the calibration rows"), ShiftSetup(source, None, lo, hi)
    if opts.get("shift") is not None:
        if train_rows is None:
            raise InputError(
                "shift= estimates the likelihood ratio with a classifier of the shift= rows against the training "
                "part, disjoint from the calibration points; prefit=True leaves no training part. Fit with "
                "prefit=False (data= trains, calib= calibrates), or give a known likelihood_ratio=."
            )
        target = as_training_frame(opts["shift"], "shift")
        try:
            X_target = design.transform(target, what="shift")
        except InputError as exc:  # a missing predictor, NaN, or a level the training data never had
            raise InputError(
                f"the shift= rows cannot be read with the formula: {exc}. The target rows need every predictor of "
                "the formula, with levels the training data has (a level it never saw cannot be predicted)."
            ) from None
        estimator = RatioEstimator(opts["shift_model"], opts["shift_clip"], random_state=seed).fit(X_tr, X_target)
        facts = {
            "rows": int(X_target.shape[0]),
            "outside_range": float(np.mean(outside_range(X_target, lo, hi))),
            "at_clip": estimator.target_share_at_clip_,
        }
        return weights, estimator, ShiftSetup(None, estimator, lo, hi, facts)
    return weights, None, None

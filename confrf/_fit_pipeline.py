"""The formula fit both families run, written once: options, the calibration split, groups, shift, the estimator.

:func:`confrf.conformal` reads the call, then hands it to a family's entry
(:func:`confrf._regression_fit.conformal_intervals` for a numeric response,
:func:`confrf.classification.api.conformal_sets` for a class label). Each
entry runs these steps and keeps only what differs: the design, the
refusals of the other family's models and scores, the estimator and the
result class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._formula_common import OPTIONS, FitRows, split_indices
from ._validation import check_bool, check_fraction
from .calibrators import get_method
from .calibrators.registry import MethodSpec, class_methods
from .exceptions import InputError
from .group_labels import kept_positions
from .shift.setup import SHIFT_OPTIONS, refuse_unweighted, resolve_shift

#: the shared options that are the estimators' parameters of the same name
ESTIMATOR_OPTIONS = (
    "score",
    "honest",
    "localizer_size",
    "n_estimators",
    "min_samples_leaf",
    "max_features",
    "max_depth",
    "n_jobs",
)


@dataclass
class FitOptions:
    """The options of one fit, checked: the shared ones filled with defaults, the method's own as given."""

    method: str
    spec: MethodSpec
    shared: dict[str, Any]
    own: dict[str, Any]
    prefit: bool
    calib_size: float

    @property
    def recorded(self) -> dict[str, Any]:
        """Every option, as the result keeps them."""
        return {**self.shared, **self.own}


def check_options(
    method: str,
    options: dict[str, Any],
    *,
    calib: Any,
    calib_size: float | None,
    classification: bool = False,
    refuse: Any = None,
) -> FitOptions:
    """The method, the options (unknown names refused), ``prefit`` and ``calib_size``, for either family.

    ``classification``: the method must be offered for class labels, and
    ``score`` defaults to "lac". ``refuse(spec, prefit)``: the family's own
    refusals, asked before ``calib_size`` is read.
    """
    spec = get_method(method)
    if classification and not spec.classification:
        raise InputError(
            f"method {method!r} is not offered for a class-label response; choose one of {class_methods()}."
        )
    unknown = sorted(set(options) - set(OPTIONS) - set(spec.options))
    if unknown:
        raise InputError(
            f"unknown option(s) {unknown}; valid options are {sorted({**OPTIONS, **SHIFT_OPTIONS})} and, for method "
            f"{method!r}, {sorted(spec.options) or 'none'}."
        )
    shared = {**OPTIONS, **({"score": "lac"} if classification else {})}
    shared.update({k: v for k, v in options.items() if k in OPTIONS})
    own = {k: v for k, v in options.items() if k in spec.options}
    prefit = check_bool(shared["prefit"], "prefit")
    if refuse is not None:
        refuse(spec, prefit)
    size = check_fraction(0.5 if calib_size is None else calib_size, "calib_size")
    if prefit and calib is not None:  # data would train nothing, yet be counted as training rows
        raise InputError(
            "prefit=True: the model is already fitted, so data= is the calibration set and nothing is "
            "trained; pass the calibration rows as data= and drop calib=."
        )
    return FitOptions(method, spec, shared, own, prefit, size)


@dataclass
class Split:
    """The training and calibration rows of a fit, and where they came from.

    ``tr`` and ``cal`` are positions among the rows of ``data`` the formula
    kept (None: all of them; ``cal`` is None too when ``calib=`` gave the
    calibration rows). ``rows`` is None until a Dask calibration's rows are
    counted.
    """

    X_tr: np.ndarray
    y_tr: np.ndarray
    X_cal: np.ndarray
    y_cal: np.ndarray
    rows: FitRows | None
    tr: np.ndarray | None
    cal: np.ndarray | None
    calib: Any
    prefit: bool

    def train_frame(self, kept_rows: Any) -> Any:
        """The training rows of the frame (None with a prefit model: nothing is trained)."""
        if self.prefit:
            return None
        return kept_rows if self.tr is None else kept_rows.iloc[self.tr]

    def calib_frame(self, kept_rows: Any) -> Any:
        """The calibration rows of the frame: ``calib=``, or those of ``data``."""
        if self.calib is not None:
            return self.calib
        return kept_rows if self.cal is None else kept_rows.iloc[self.cal]


def split_rows(
    n_data: int,
    X: np.ndarray,
    y: np.ndarray,
    kept: np.ndarray,
    *,
    fit: FitOptions,
    calib: Any,
    read_calib: Any,
    seed: int | None,
    every: bool = False,
) -> Split:
    """The calibration split: ``calib=`` (read by ``read_calib(frame) -> (X, y)``), all of ``data`` for a prefit
    model, every row for both jobs (``every``: the cross-conformal methods), or a random split of ``data``.

    ``kept``: positions in ``data`` of the rows the formula kept, whose
    design rows and responses are ``X`` and ``y``.
    """
    if every:
        rows = np.arange(X.shape[0])
        return Split(
            X, y, X[:0], y[:0], FitRows.from_split(n_data, kept, rows, rows, None, None), None, None, None, False
        )
    if calib is not None:
        X_cal, y_cal = read_calib(calib)
        rows_of = FitRows.from_split(n_data, kept, None, None, len(calib), None)
        return Split(X, y, X_cal, y_cal, rows_of, None, None, calib, fit.prefit)
    if fit.prefit:
        rows_of = FitRows.from_split(n_data, kept, np.arange(0), np.arange(X.shape[0]), None, None)
        return Split(X[:0], y[:0], X, y, rows_of, np.arange(0), None, None, True)
    tr, cal = split_indices(X.shape[0], fit.calib_size, seed)
    rows_of = FitRows.from_split(n_data, kept, tr, cal, None, None)
    return Split(X[tr], y[tr], X[cal], y[cal], rows_of, tr, cal, None, False)


def calibration_groups(labeler: Any, data: Any, kept_mask: Any, split: Split) -> Any:
    """The calibration rows' group labels read by ``labeler`` (user groups: a column, a term, a callable), or None."""
    if labeler is None:
        return None
    if split.calib is not None:
        return labeler(split.calib, "calib")
    labels = labeler(data.iloc[kept_positions(data, kept_mask)], "data")
    return labels if split.cal is None else labels[split.cal]


def shift_weights(
    shift_options: dict[str, Any], est: Any, design: Any, data: Any, kept: np.ndarray, split: Split, seed: int | None
) -> tuple[Any, Any, Any]:
    """Covariate shift (docs/theory.md): the model's case weights, the calibration ratios, the ShiftSetup (or Nones)."""
    if not shift_options:
        return None, None, None
    refuse_unweighted(est._shift_refusal(), shift_options)
    kept_rows = data.iloc[kept]
    return resolve_shift(
        shift_options,
        design=design,
        train_rows=split.train_frame(kept_rows),
        calib_rows=split.calib_frame(kept_rows),
        X_tr=split.X_tr,
        X_cal=split.X_cal,
        seed=seed,
    )


def estimator_args(
    fit: FitOptions, *, model: Any, alpha: float, design: Any, seed: int | None, options: Any
) -> dict[str, Any]:
    """The array-level estimator's arguments (either family's: their parameters are the same)."""
    given = {"model": model, "method": fit.method, "alpha": alpha, "prefit": fit.prefit, "random_state": seed}
    shared = {k: fit.shared[k] for k in ESTIMATOR_OPTIONS}
    return {**given, **shared, "fit_intercept": design.has_intercept, "options": options}


def make_result(
    result_class: Any,
    *,
    est: Any,
    design: Any,
    fit: FitOptions,
    split: Split,
    seed: int | None,
    shift: Any,
    **extra: Any,
) -> Any:
    """The family's result of a calibrated estimator, with the observation counts and the shift setup."""
    nobs = {"train": int(split.X_tr.shape[0]), **est.calibrator_.sizes()}
    kw = dict(design=design, estimator=est, options=fit.recorded, nobs=nobs, random_state=seed, rows=split.rows)
    result = result_class(**kw, **extra)
    result.shift = shift
    return result

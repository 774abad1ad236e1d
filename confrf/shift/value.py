"""The likelihood ratio as a value: read and checked once where it enters, then carried as it is.

A ratio enters confrf in one of a few places: a known ratio read from rows
(:class:`confrf.shift.RatioSource`), an estimated one evaluated at design rows
(:class:`confrf.shift.RatioEstimator`), or numbers a user passes to an
estimator's ``conformalize`` / predict methods or to a calibrator. Each entry
reads them into a :class:`ShiftRatio` (:func:`as_ratio`); what receives a
``ShiftRatio`` takes its values as they are, comparing only what depends on
the use: the number of rows, and (for calibration rows) that some row carries
weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InputError


@dataclass(frozen=True, eq=False)
class ShiftRatio:
    """One checked number per row: finite and >= 0 (likelihood ratios w(x), or case weights read by the same rules).

    Build it with :meth:`read` (or :func:`as_ratio`), which runs the checks;
    the constructor takes values already checked (a part of a ``ShiftRatio``).

    Attributes
    ----------
    values : ndarray of float64
        One ratio per row.

    Examples
    --------
    >>> r = ShiftRatio.read([1.0, 2.0, 0.5], 3, "the calibration rows")
    >>> r.values.tolist(), r[1:].values.tolist()
    ([1.0, 2.0, 0.5], [2.0, 0.5])
    >>> ShiftRatio.read([1.0, float("nan")], 2, "the new rows")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confrf.exceptions.InputError: likelihood_ratio of the new rows is missing (NaN) in 1 row(s), ...
    """

    values: np.ndarray

    def __getitem__(self, rows: Any) -> ShiftRatio:
        """The ratios of some of the rows (a slice, an index array or a mask), still checked."""
        return ShiftRatio(np.atleast_1d(self.values[rows]))

    @classmethod
    def read(
        cls, values: object, n: int, what: str, *, name: str = "likelihood_ratio", allow_all_zero: bool = False
    ) -> ShiftRatio:
        """``values`` as n non-negative finite numbers, with an error that names the problem and the fix.

        ``what`` names the rows (``"the calibration rows"``), ``name`` the
        option (``"likelihood_ratio"``, ``"weights"``, ``"sample_weight"``).
        ``allow_all_zero``: new rows may all have ratio 0; calibration rows
        may not (no point would carry weight).
        """
        try:
            w = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{name} of {what} must be numbers ({exc}); give one non-negative number per row."
            ) from None
        _check_rows(w, n, what, name)
        bad = np.flatnonzero(np.isnan(w))
        if bad.size:
            raise InputError(
                f"{name} of {what} is missing (NaN) in {bad.size} row(s), e.g. position {int(bad[0])}; every row "
                "needs a ratio: fill them in or drop those rows."
            )
        bad = np.flatnonzero(np.isinf(w))
        if bad.size:
            raise InputError(
                f"{name} of {what} is infinite in {bad.size} row(s), e.g. position {int(bad[0])}; an infinite "
                "ratio means a point outside the calibration population's support, where no calibration evidence "
                "exists: drop those rows, or cap the ratio."
            )
        bad = np.flatnonzero(w < 0)
        if bad.size:
            raise InputError(
                f"{name} of {what} is negative in {bad.size} row(s), e.g. {w[bad[0]]!r} at position "
                f"{int(bad[0])}; a likelihood ratio (or a case weight) is a ratio of densities, >= 0."
                if name == "likelihood_ratio"
                else f"{name} of {what} is negative in {bad.size} row(s), e.g. {w[bad[0]]!r} at position "
                f"{int(bad[0])}; case weights must be >= 0."
            )
        if not allow_all_zero:
            _check_some_weight(w, what, name)
        return cls(w)


def _check_rows(w: np.ndarray, n: int, what: str, name: str) -> None:
    if w.ndim != 1 or w.shape[0] != n:
        raise InputError(f"{name} of {what} must hold one number per row ({n}), got shape {w.shape}.")


def _check_some_weight(w: np.ndarray, what: str, name: str) -> None:
    if w.shape[0] and not np.any(w > 0):
        raise InputError(
            f"{name} of {what} is 0 in every row, so no point carries any weight; check the column or "
            "expression (a likelihood ratio is positive wherever the target population can be)."
        )


def as_ratio(
    values: object, n: int, what: str, *, name: str = "likelihood_ratio", allow_all_zero: bool = False
) -> ShiftRatio:
    """A :class:`ShiftRatio` of n rows: one given is taken as it is (its rows counted), other values are read.

    Examples
    --------
    >>> r = as_ratio([1.0, 2.0], 2, "the calibration rows")
    >>> as_ratio(r, 2, "the calibration rows") is r
    True
    """
    if not isinstance(values, ShiftRatio):
        return ShiftRatio.read(values, n, what, name=name, allow_all_zero=allow_all_zero)
    _check_rows(values.values, n, what, name)
    if not allow_all_zero:  # read for new rows (where all zero is allowed), now given for calibration rows
        _check_some_weight(values.values, what, name)
    return values


def ratio_values(
    values: object, n: int, what: str, *, name: str = "likelihood_ratio", allow_all_zero: bool = False
) -> np.ndarray:
    """:func:`as_ratio`'s values: what a calibrator computes with."""
    return as_ratio(values, n, what, name=name, allow_all_zero=allow_all_zero).values


def new_row_ratios(likelihood_ratio: object, m: int, weighted: bool) -> np.ndarray | None:
    """The test rows' ratio values for a calibrator fitted with (``weighted``) or without ratios."""
    w = new_rows(likelihood_ratio, m, weighted)
    return None if w is None else w.values


def new_rows(likelihood_ratio: object, m: int, weighted: bool) -> ShiftRatio | None:
    """The test rows' ratios for a calibration with (``weighted``) or without ratios; None after an unweighted one."""
    if not weighted:
        if likelihood_ratio is not None:
            raise InputError(
                "likelihood_ratio was given for new rows, but the calibration used no ratios; calibrate "
                "with likelihood_ratio= (conformalize) to weight for covariate shift, or drop it here."
            )
        return None
    if likelihood_ratio is None:
        raise InputError(
            "the calibration was weighted for covariate shift: give the new rows' likelihood ratios, "
            "likelihood_ratio=<one number per row> (from the same source as the calibration rows')."
        )
    return as_ratio(likelihood_ratio, m, "the new rows", allow_all_zero=True)


def calibration_ratios(likelihood_ratio: Any, X: np.ndarray) -> tuple[ShiftRatio | None, Any]:
    """(the calibration rows' ratios; the ratio function when one was given, else None).

    ``likelihood_ratio`` is None, a :class:`ShiftRatio` or numbers, one per
    row of X, or a function ``w(X)`` of design rows (e.g. a fitted
    :class:`confrf.shift.RatioEstimator`), which the estimators keep to give
    new rows their ratios.

    Examples
    --------
    >>> import numpy as np
    >>> w, model = calibration_ratios(lambda X: np.exp(X[:, 0]), np.zeros((2, 1)))
    >>> w.values.tolist(), callable(model)
    ([1.0, 1.0], True)
    """
    if likelihood_ratio is None:
        return None, None
    model = likelihood_ratio if callable(likelihood_ratio) else None
    values = model(X) if model is not None else likelihood_ratio
    return as_ratio(values, X.shape[0], "the calibration rows"), model


def prediction_ratios(estimator: Any, X: np.ndarray, likelihood_ratio: Any) -> ShiftRatio | None:
    """New rows' ratios for an estimator calibrated with ``calib_ratio_`` / ``ratio_model_`` (or without).

    A ratio function kept at calibration gives them when none is passed.
    """
    weighted = estimator.calib_ratio_ is not None
    model = getattr(estimator, "ratio_model_", None)
    if likelihood_ratio is None and weighted and model is not None:
        likelihood_ratio = model(X)
    return new_rows(likelihood_ratio, X.shape[0], weighted)

"""Checks shared by every entry point: alpha, exact conformal counts, arrays."""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real

import numpy as np

from .exceptions import InputError


def check_alpha(alpha: object) -> float:
    """Return ``alpha`` as a float after checking that it lies in (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (Real, np.floating)):
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}; e.g. alpha=0.1 for 90% intervals.")
    a = float(alpha)
    if not (0.0 < a < 1.0) or math.isnan(a):
        raise InputError(f"alpha must lie strictly between 0 and 1, got {a!r}; e.g. alpha=0.1 for 90% intervals.")
    return a


def alpha_fraction(alpha: float) -> Fraction:
    """``alpha`` as the decimal the user typed: 0.1 is exactly 1/10.

    ``repr`` gives the shortest decimal that round-trips to the same float,
    which is what was typed for any literal with up to 15 significant digits.
    """
    return Fraction(repr(float(alpha)))


def required_count(alpha: float, n: int) -> int:
    """m_req = ceil((1 - alpha)(n + 1)), computed in exact rational arithmetic."""
    a = alpha_fraction(check_alpha(alpha))
    return math.ceil((1 - a) * (n + 1))


def min_calibration_size(alpha: float) -> int:
    """Smallest n for which split conformal can give a finite interval."""
    a = alpha_fraction(check_alpha(alpha))
    n = max(1, math.ceil(1 / a) - 1)
    while math.ceil((1 - a) * (n + 1)) > n:
        n += 1
    return n


def as_float_matrix(X: object, name: str = "X") -> np.ndarray:
    """2-D float64 C-contiguous array with finite entries, or a clear error."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D (rows x features), got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = int(bad.any(axis=1).sum())
        cols = np.flatnonzero(bad.any(axis=0)).tolist()
        raise InputError(
            f"{name} has NaN or inf in {rows} row(s) (columns {cols[:10]}); "
            "drop or impute these rows before fitting or predicting."
        )
    return np.ascontiguousarray(arr)


def as_float_vector(y: object, name: str = "y") -> np.ndarray:
    """1-D float64 array with finite entries, or a clear error."""
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-D, got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(f"{name} has NaN or inf in {int(bad.sum())} row(s); drop or impute them first.")
    return np.ascontiguousarray(arr)

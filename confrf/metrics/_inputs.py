"""Checks of the arrays every metric takes: bounds, response, confidence level."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_float_vector, check_real
from ..exceptions import InputError


def _bounds(lwr: Any, upr: Any) -> tuple[np.ndarray, np.ndarray]:
    lo = np.asarray(lwr, dtype=np.float64).ravel()
    hi = np.asarray(upr, dtype=np.float64).ravel()
    if lo.shape != hi.shape:
        raise InputError(f"lwr and upr must have the same length, got {lo.shape[0]} and {hi.shape[0]}.")
    if np.isnan(lo).any() or np.isnan(hi).any():
        raise InputError("interval bounds contain NaN; infinite intervals must be given as -inf/+inf.")
    return lo, hi


def _y_bounds(y: Any, lwr: Any, upr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    yy = as_float_vector(y, "y")
    lo, hi = _bounds(lwr, upr)
    if yy.shape != lo.shape:
        raise InputError(f"y has {yy.shape[0]} rows but the intervals have {lo.shape[0]}.")
    return yy, lo, hi


def _check_level(level: float) -> float:
    return check_real(level, "level", low=0.0, high=1.0, hint="a confidence level, e.g. 0.95")


def _flags(is_covered: Any) -> np.ndarray:
    """``is_covered`` as booleans; 0/1 accepted, anything else (0.3, NaN, 2) refused rather than cast."""
    c = np.asarray(is_covered).ravel()
    if c.dtype != bool:
        if not np.isin(c, (0, 1)).all():
            raise InputError("is_covered must be booleans (or 0/1), e.g. from confrf.metrics.covered(y, lwr, upr).")
        c = c.astype(bool)
    return c


def _widths(width: Any) -> np.ndarray:
    """Interval widths: +inf allowed (infinite intervals), NaN and negative values refused."""
    w = np.asarray(width, dtype=np.float64).ravel()
    if np.isnan(w).any() or (w < 0).any():
        raise InputError(
            "widths must be >= 0 and not NaN (an infinite interval has width +inf); "
            "compute them with confrf.metrics.interval_width(lwr, upr)."
        )
    return w

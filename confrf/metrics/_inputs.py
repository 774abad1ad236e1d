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

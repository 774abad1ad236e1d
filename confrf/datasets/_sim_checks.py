"""Argument checks shared by the simulators and their oracles."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from .._validation import seed_entropy
from ..exceptions import InputError

RandomState = None | int | np.integer | np.random.Generator | np.random.RandomState | np.random.SeedSequence


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise InputError(f"n must be a positive integer, got {n!r}.")
    if n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}.")
    return int(n)


def _rng(random_state: RandomState) -> np.random.Generator:
    # a Generator is used as is (its stream continues); other seeds are checked as everywhere in confrf
    if isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    return np.random.default_rng(seed_entropy(random_state))


def _first_column(X: object, what: str) -> np.ndarray:
    """Return the values of ``x1`` from a DataFrame or a 2-D array."""
    if isinstance(X, pd.DataFrame):
        if "x1" not in X.columns:
            raise InputError(
                f"{what}: the DataFrame has no column 'x1'; pass the x columns "
                "of a simulated frame (e.g. data.frame or data.X)."
            )
        x1 = X["x1"].to_numpy(dtype=float)
    else:
        arr = np.asarray(X, dtype=float)
        if arr.ndim != 2 or arr.shape[1] < 1:
            raise InputError(
                f"{what}: X must be a 2-D array (rows = points, column 0 = x1) "
                f"or a DataFrame with column 'x1', got shape {arr.shape}."
            )
        x1 = arr[:, 0]
    if not np.all(np.isfinite(x1)):
        raise InputError(f"{what}: x1 contains NaN or infinite values.")
    return x1


def _as_vector(values: Any, n: int, what: str, *, allow_inf: bool = False) -> np.ndarray:
    """Broadcast ``values`` to a float vector of length ``n`` (checked)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim > 1:
        arr = np.squeeze(arr)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(
            f"{what} must be a scalar or a 1-D array of length {n} (one value "
            f"per row of the simulated frame), got shape {np.shape(values)}."
        )
    if np.any(np.isnan(arr)):
        raise InputError(f"{what} contains NaN.")
    if not allow_inf and not np.all(np.isfinite(arr)):
        raise InputError(f"{what} contains infinite values.")
    return arr


def _check_prob(q: object, n: int, what: str) -> np.ndarray:
    arr = _as_vector(q, n, what)
    if np.any((arr <= 0.0) | (arr >= 1.0)):
        raise InputError(f"{what} must lie strictly between 0 and 1.")
    return arr


def _readonly(a: object) -> np.ndarray:
    arr = np.array(a, dtype=float, copy=True)
    arr.setflags(write=False)
    return arr

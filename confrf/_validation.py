"""Checks shared by every entry point: one checker per kind of argument.

Numbers (:func:`check_real`, :func:`check_int`, :func:`check_fraction`),
booleans (:func:`check_bool`), seeds (:func:`check_random_state`,
:func:`seed_entropy`), miscoverage levels (:func:`check_alpha`,
:func:`check_alphas`), exact conformal counts, and arrays
(:func:`as_float_matrix`, :func:`as_float_vector`, :func:`is_boolean`).  Each raises an
:class:`~confrf.exceptions.InputError` (or :class:`ArgumentTypeError`) that
names the argument and the fix.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Literal, SupportsFloat, TypeGuard, overload

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .exceptions import ArgumentTypeError, InputError

_ALPHA_HINT = "e.g. alpha=0.1 for 90% intervals"


def _is_number(value: object) -> TypeGuard[SupportsFloat]:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.dtype.kind in "iuf"
    return isinstance(value, (Real, Decimal, np.number))


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = True,
    high_open: bool = True,
    hint: str = "",
) -> float:
    """``value`` as a float in the given range (never NaN; inf only where the range reaches it).

    Decimal, Fraction, numpy scalars and 0-d arrays are accepted; bools and strings are not.

    Examples
    --------
    >>> check_real(np.float32(0.5), "calib_size", low=0, high=1)
    0.5
    """
    tail = f"; {hint}" if hint else ""
    if not _is_number(value):
        raise InputError(f"{name} must be a number, got {value!r} ({type(value).__name__}){tail}.")
    v = float(value)
    lo_ok = low is None or (v > low if low_open else v >= low)
    hi_ok = high is None or (v < high if high_open else v <= high)
    if math.isnan(v) or not (lo_ok and hi_ok):  # inf passes only where the range reaches it
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        rng = f"{'(' if low_open else '['}{lo}, {hi}{')' if high_open else ']'}"
        raise InputError(f"{name} must lie in {rng}, got {value!r}{tail}.")
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return float(str(value))  # np.float32(0.1) was typed as 0.1, not 0.10000000149
    return v


def check_fraction(value: object, name: str) -> float:
    """A share of the rows, strictly between 0 and 1 (``calib_size``, ``localizer_size``)."""
    return check_real(value, name, low=0.0, high=1.0, hint=f"e.g. {name}=0.5 for half of the rows")


@overload
def check_int(
    value: object, name: str, *, minimum: int = ..., allow_none: Literal[False] = ..., hint: str = ...
) -> int: ...
@overload
def check_int(value: object, name: str, *, minimum: int = ..., allow_none: bool, hint: str = ...) -> int | None: ...
def check_int(value: object, name: str, *, minimum: int = 1, allow_none: bool = False, hint: str = "") -> int | None:
    """``value`` as a Python int >= ``minimum`` (numpy integers accepted; floats and strings are not).

    Examples
    --------
    >>> check_int(np.int64(3), "n_estimators")
    3
    """
    if value is None and allow_none:
        return None
    tail = f"; {hint}" if hint else ""
    none = " or None" if allow_none else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise InputError(f"{name} must be an integer >= {minimum}{none}, got {value!r} ({type(value).__name__}){tail}.")
    if value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}{none}, got {value!r}{tail}.")
    return int(value)


@overload
def check_n_jobs(value: None) -> None: ...
@overload
def check_n_jobs(value: int) -> int: ...
@overload
def check_n_jobs(value: object) -> int | None: ...
def check_n_jobs(value: object) -> int | None:
    """None (one thread), a positive number of threads, or -1 for all cores (joblib's meaning)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)) or value == 0:
        raise InputError(f"n_jobs must be None, a positive integer or -1 (all cores), got {value!r}.")
    return int(value)


#: the forest options' "choose it for me" value (confrf.localizers.tuning.TUNE)
_TUNE = "tune"


def check_max_features(value: object) -> Any:
    """``max_features``: "tune", "screened", or scikit-learn's values: a share in (0, 1], a count >= 1, "sqrt",
    "log2", None."""
    if value is None or (isinstance(value, str) and value in (_TUNE, "screened", "sqrt", "log2")):
        return value
    if isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return check_int(value, "max_features")
    return check_real(
        value,
        "max_features",
        low=0.0,
        high=1.0,
        high_open=False,
        hint='a share of the features, a count, "tune", "screened", "sqrt", "log2" or None',
    )


def check_min_samples_leaf(value: object) -> Any:
    """``min_samples_leaf``: "tune", "auto" or a count >= 1 (a share of the rows is not accepted)."""
    if isinstance(value, str) and value in (_TUNE, "auto"):
        return value
    return check_int(value, "min_samples_leaf", hint='or "tune" (the default) or "auto" (ceil(sqrt(n)))')


def check_n_estimators(value: object) -> Any:
    """``n_estimators``: "auto" or a count of trees >= 1."""
    if isinstance(value, str) and value == "auto":
        return value
    return check_int(value, "n_estimators", hint='or "auto" (more trees where the leaves are small and the data few)')


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is True or False; strings such as "no" are refused rather than read as truthy."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r} ({type(value).__name__}).")


def check_random_state(random_state: object) -> Any:
    """None, a non-negative int, a numpy ``Generator`` or ``RandomState``; anything else is refused.

    Floats (``1.5`` is not a seed), bools, negative numbers and strings get an
    :class:`~confrf.exceptions.InputError`.
    """
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (Integral, np.integer)):
        raise InputError(
            f"random_state must be None, a non-negative integer, a numpy Generator or a RandomState, "
            f"got {random_state!r} ({type(random_state).__name__}); e.g. random_state=0."
        )
    if random_state < 0:
        raise InputError(f"random_state must be a non-negative integer, got {random_state!r}; e.g. random_state=0.")
    return int(random_state)


def seed_entropy(random_state: object) -> int:
    """An int seed for :class:`numpy.random.SeedSequence`.

    A ``Generator`` or ``RandomState`` is drawn from once, as scikit-learn
    does: the same generator state gives the same seed. None draws from
    numpy's global generator, as scikit-learn's ``check_random_state(None)``
    does: after ``np.random.seed(1)`` (R's ``set.seed(1)``) a script gives
    the same results on every run, and without it each call differs.
    """
    rs = check_random_state(random_state)
    if rs is None:
        rs = np.random.mtrand._rand  # the state np.random.seed sets
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(0, 2**63 - 1))
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(0, 2**31 - 1))
    return rs


def check_alpha(alpha: Any) -> float:
    """Return ``alpha`` as a float after checking that it lies in (0, 1).

    Decimal and Fraction are read exactly as written (``Decimal("0.1")`` is 0.1).
    """
    if not isinstance(alpha, (str, bytes)) and np.ndim(alpha) > 0:
        raise InputError(
            f"alpha must be a single number in (0, 1) here, got {alpha!r}; fit at one level: the formula "
            "API's result.predict(newdata, alpha=[0.05, 0.1]) then gives several levels at once."
        )
    return check_real(alpha, "alpha", low=0.0, high=1.0, hint=_ALPHA_HINT)


def check_alphas(alpha: Any) -> tuple[list[float], bool]:
    """One or several levels: (the floats, whether a sequence was given).

    Examples
    --------
    >>> check_alphas([0.05, 0.1])
    ([0.05, 0.1], True)
    >>> check_alphas(0.1)
    ([0.1], False)
    """
    if not isinstance(alpha, (str, bytes)) and np.ndim(alpha) > 0:  # list, tuple, array, Series
        if len(alpha) == 0:
            raise InputError(f"alpha is an empty sequence; give at least one level, {_ALPHA_HINT}.")
        levels = [check_alpha(a) for a in np.asarray(alpha, dtype=object).ravel()]
        if len(set(levels)) != len(levels):
            raise InputError(f"alpha has repeated levels {alpha!r}; give each level once.")
        return levels, True
    return [check_alpha(alpha)], False


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


def as_float_array(X: Any, name: str) -> np.ndarray:
    """``X`` as float64, with the reason when that is not possible (sparse, strings, objects)."""
    if sp.issparse(X):
        raise ArgumentTypeError(
            f"{name} is a scipy sparse matrix; confrf needs a dense array: pass {name}.toarray() "
            "(the forest localizer and the kernels work on dense rows)."
        )
    if np.iscomplexobj(X):
        raise InputError(f"{name} holds complex numbers; confrf needs real numbers (take .real or abs() first).")
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        cols = getattr(X, "columns", None)  # a DataFrame: name its non-numeric columns
        where = "" if cols is None else f" (non-numeric column(s): {[c for c in cols if not _numeric_col(X[c])][:10]})"
        raise InputError(
            f"{name} must hold numbers only{where}; it cannot be read as float64 ({exc}). Encode strings or "
            "categories as numbers first, or use the formula API (cf.conformal), which codes them."
        ) from None


def feature_names(X: object) -> np.ndarray | None:
    """A DataFrame's column names as scikit-learn keeps them (``feature_names_in_``); None for arrays.

    Only all-string names count, as in scikit-learn: integer column labels are positions in disguise.
    """
    cols = getattr(X, "columns", None)
    if cols is None or not all(isinstance(c, str) for c in cols):
        return None
    return np.asarray(cols, dtype=object)


def _numeric_col(col: Any) -> bool:
    try:
        np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def is_boolean(values: object) -> bool:
    """Whether ``values`` are booleans: a bool dtype (numpy, pandas' nullable or Arrow ``bool``), or only bools.

    The dtype decides, never the values: a numeric 0/1 array is not boolean.  An object array (or list) is
    boolean when every non-missing entry is a bool.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> is_boolean(np.array([True, False])), is_boolean(pd.Series([True, None], dtype="boolean"))
    (True, True)
    >>> is_boolean(np.array([1.0, 0.0])), is_boolean([True, 1])
    (False, False)
    """
    if isinstance(values, pd.DataFrame):
        return values.shape[1] > 0 and all(is_boolean(values.iloc[:, j]) for j in range(values.shape[1]))
    dtype = getattr(values, "dtype", None)
    if not isinstance(dtype, (np.dtype, pd.api.extensions.ExtensionDtype)):
        try:  # a list, or a foreign array (polars) whose dtype pandas does not know
            values = np.asarray(values)
        except (TypeError, ValueError):  # ragged: as_float_vector reports it
            return False
        dtype = values.dtype
    if not (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        return pd.api.types.is_bool_dtype(dtype)
    flat = np.ravel(np.asarray(values, dtype=object))
    return flat.size > 0 and pd.api.types.infer_dtype(flat, skipna=True) == "boolean"


def as_float_matrix(X: object, name: str = "X") -> np.ndarray:
    """2-D float64 C-contiguous array with finite entries, or a clear error."""
    arr = as_float_array(X, name)
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
    arr = as_float_array(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-D, got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(f"{name} has NaN or inf in {int(bad.sum())} row(s); drop or impute them first.")
    return np.ascontiguousarray(arr)


#: Beyond these magnitudes squares of responses and residuals overflow or underflow
#: in float64 (1e154 ** 2 ~ 1e308), so models fit constants and scores lose all precision.
_RESPONSE_MAX, _RESPONSE_MIN_SPREAD = 1e150, 1e-150


def check_response_scale(y: np.ndarray, name: str = "y") -> np.ndarray:
    """``y`` unchanged, unless its scale is beyond what float64 models can fit.

    Responses of magnitude above 1e150, or whose spread is below 1e-150 while
    not constant, make squared-error models (gradient boosting, OLS) fit a
    constant silently; rescaling the response is the fix.
    """
    if y.size == 0:
        return y
    top = float(np.max(np.abs(y)))
    spread = float(np.max(y) - np.min(y))
    if top > _RESPONSE_MAX or 0.0 < spread < _RESPONSE_MIN_SPREAD:
        what = f"values up to {top:.3g}" if top > _RESPONSE_MAX else f"a spread of only {spread:.3g}"
        raise InputError(
            f"the response {name} has {what}: at this scale squared errors overflow or underflow in float64, "
            "so the base model and the scores lose all precision; rescale it (e.g. use I(y * 1e-300) or "
            "I(y * 1e300) in the formula, or divide y by a typical value) and rescale the intervals back."
        )
    return y

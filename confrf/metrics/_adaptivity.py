"""How well widths adapt: fidelity error, oracle width error, width/residual rank correlation."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy import stats

from .._validation import as_float_vector
from ..exceptions import InputError
from ._inputs import _widths
from ._widths import _snap


def fidelity_error(y: Any, fit: Any, half_width: Any) -> np.ndarray:
    """The paper's fidelity error ``|q(x) - |y - fit(x)|| / |y - fit(x)|``.

    q(x) is the interval's half-width (the score threshold for the absolute
    score): a perfectly faithful interval has half-width equal to the error
    it will make. 0/0 is 0; a positive numerator over a zero error, or an
    infinite half-width, gives +inf.

    Examples
    --------
    >>> from confrf.metrics import fidelity_error
    >>> fidelity_error([1.0, 3.0], [0.0, 0.0], [2.0, 3.0]).tolist()
    [1.0, 0.0]
    """
    yy = as_float_vector(y, "y")
    f = as_float_vector(fit, "fit")
    h = np.asarray(half_width, dtype=np.float64).ravel()
    if not (yy.shape == f.shape == h.shape):
        raise InputError("y, fit and half_width must have the same length.")
    if np.isnan(h).any():
        raise InputError("half_width contains NaN.")
    r = np.abs(yy - f)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(h - r) / r
    err = np.where(np.isinf(h), np.inf, err)
    return np.where(r == 0, np.where(h == 0, 0.0, np.inf), err)


def oracle_width_error(width: Any, oracle_width: Any) -> np.ndarray:
    """Relative distance ``|w - w*| / w*`` to the oracle width (the paper's err_{n+1}).

    Examples
    --------
    >>> from confrf.metrics import oracle_width_error
    >>> oracle_width_error([2.0, float("inf")], [4.0, 4.0]).tolist()
    [0.5, inf]
    """
    w, ws = _widths(width), _widths(oracle_width)
    if w.shape != ws.shape:
        raise InputError("width and oracle_width must have the same length.")
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(w - ws) / ws
    err = np.where(np.isinf(w), np.inf, err)
    return np.where(ws == 0, np.where(w == 0, 0.0, np.inf), err)


def width_spearman(width: Any, y: Any, fit: Any) -> float:
    """Spearman rank correlation of the widths with the errors ``|y - fit(x)|``.

    Positive when wider intervals go with larger errors (adaptive intervals);
    NaN when the widths (or the errors) are all equal, as for split conformal
    (widths within 1e-10 of the largest one count as equal).

    Examples
    --------
    >>> from confrf.metrics import width_spearman
    >>> width_spearman([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [0.1, -0.5, 2.0])
    1.0
    """
    w = _snap(_widths(width))
    r = np.abs(as_float_vector(y, "y") - as_float_vector(fit, "fit"))
    if w.shape != r.shape:
        raise InputError("width, y and fit must have the same length.")
    if w.size == 0:
        raise InputError("width_spearman needs at least one row.")
    if w.size < 2 or np.all(w == w[0]) or np.all(r == r[0]):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf widths are ranked like any value
        return float(stats.spearmanr(w, r).statistic)

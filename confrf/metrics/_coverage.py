"""Coverage of intervals, and its Clopper-Pearson confidence interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from ..exceptions import InputError
from ._inputs import _check_level, _flags, _y_bounds


def covered(y: Any, lwr: Any, upr: Any) -> np.ndarray:
    """Whether each interval contains its response: ``lwr <= y <= upr``.

    Examples
    --------
    >>> from confrf.metrics import covered
    >>> covered([1.0, 5.0], [0.0, 0.0], [2.0, 4.0]).tolist()
    [True, False]
    """
    yy, lo, hi = _y_bounds(y, lwr, upr)
    return (lo <= yy) & (yy <= hi)


def coverage(y: Any, lwr: Any, upr: Any) -> float:
    """Share of intervals that contain their response.

    Examples
    --------
    >>> from confrf.metrics import coverage
    >>> coverage([1.0, 5.0, 3.0], [0.0, 0.0, 2.0], [2.0, 4.0, float("inf")])
    0.6666666666666666
    """
    c = covered(y, lwr, upr)
    if c.size == 0:
        raise InputError("coverage of an empty set of intervals is undefined; give at least one row.")
    return float(c.mean())


def clopper_pearson(k: Any, n: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Exact (Clopper-Pearson) confidence interval of a binomial proportion k/n.

    The interval [lower, upper] holds the true proportion with probability at
    least ``level`` for every true proportion (it is conservative). Computed
    by statsmodels' ``proportion_confint(method="beta")``; arrays broadcast.

    Parameters
    ----------
    k : int or array of int
        Number of successes (covered rows), ``0 <= k <= n``.
    n : int or array of int
        Number of trials (rows), ``n >= 1``.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    lower, upper : float or ndarray

    Examples
    --------
    >>> from confrf.metrics import clopper_pearson
    >>> lo, hi = clopper_pearson(90, 100)
    >>> round(lo, 4), round(hi, 4)
    (0.8238, 0.951)
    """
    level = _check_level(level)
    kk = np.asarray(k)
    nn = np.asarray(n)
    try:
        np.broadcast_shapes(kk.shape, nn.shape)
    except ValueError:
        raise InputError(
            f"k and n must have the same length (or one be a single number), got shapes {kk.shape} and {nn.shape}."
        ) from None
    if not (np.issubdtype(kk.dtype, np.integer) or np.all(np.mod(kk, 1) == 0)) or not (
        np.issubdtype(nn.dtype, np.integer) or np.all(np.mod(nn, 1) == 0)
    ):
        raise InputError("k and n must be whole numbers (counts).")
    if np.any(nn < 1) or np.any(kk < 0) or np.any(kk > nn):
        raise InputError("clopper_pearson needs n >= 1 and 0 <= k <= n.")
    lo, hi = proportion_confint(kk, nn, alpha=1.0 - level, method="beta")
    # the exact interval reaches 0 at k = 0 and 1 at k = n (statsmodels returns nan from beta.ppf there in old versions)
    lo = np.where(kk == 0, 0.0, lo)
    hi = np.where(kk == nn, 1.0, hi)
    if np.ndim(lo) == 0:
        return float(lo), float(hi)
    return lo, hi


def coverage_table(is_covered: Any, by: Any, level: float = 0.95) -> pd.DataFrame:
    """Coverage with its Clopper-Pearson interval within each value of ``by``.

    Returns
    -------
    DataFrame
        Indexed by the values of ``by`` (sorted when they can be), columns
        ``n``, ``covered``, ``coverage``, ``ci_lower``, ``ci_upper``.

    Examples
    --------
    >>> from confrf.metrics import coverage_table
    >>> coverage_table([True, False, True, True], ["a", "a", "b", "b"])["coverage"].tolist()
    [0.5, 1.0]
    """
    c = _flags(is_covered)
    labels = pd.Series(np.asarray(by, dtype=object).ravel())
    if labels.shape[0] != c.shape[0]:
        raise InputError(f"by has {labels.shape[0]} labels for {c.shape[0]} rows.")
    if labels.isna().any():
        raise InputError("by has missing labels; give every row a label.")
    g = pd.DataFrame({"by": labels, "c": c}).groupby("by", sort=True, observed=True)["c"]
    out = pd.DataFrame({"n": g.size(), "covered": g.sum().astype(int)})
    out["coverage"] = out["covered"] / out["n"]
    out["ci_lower"], out["ci_upper"] = clopper_pearson(out["covered"].to_numpy(), out["n"].to_numpy(), level)
    out.index.name = None
    return out

"""Interval widths: share infinite, quantiles, width bins and coverage by width bin."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int
from ..exceptions import InputError
from ._coverage import coverage_table
from ._inputs import _bounds, _widths


def interval_width(lwr: Any, upr: Any) -> np.ndarray:
    """``upr - lwr``; +inf for an infinite interval, 0 for an empty set (``lwr > upr``).

    CQR's exact inversion reports an empty set by ``lwr > upr``; its length is
    0, not negative, so mean widths are not pulled down by it.

    Examples
    --------
    >>> from confrf.metrics import interval_width
    >>> interval_width([0.0, -float("inf")], [2.0, float("inf")]).tolist()
    [2.0, inf]
    """
    lo, hi = _bounds(lwr, upr)
    with np.errstate(invalid="ignore"):
        w = hi - lo
    return np.where(np.isfinite(lo) & np.isfinite(hi), np.maximum(w, 0.0), np.inf)


def share_infinite(lwr: Any, upr: Any) -> float:
    """Share of intervals with an infinite bound.

    Examples
    --------
    >>> from confrf.metrics import share_infinite
    >>> share_infinite([0.0, -float("inf")], [1.0, float("inf")])
    0.5
    """
    w = interval_width(lwr, upr)
    if w.size == 0:
        raise InputError("the share of infinite intervals among no intervals is undefined; give at least one row.")
    return float(np.isinf(w).mean())


def quantiles(x: Any, q: Any) -> np.ndarray:
    """numpy's linear-interpolation quantiles, also defined when x holds +inf.

    ``np.quantile`` returns NaN as soon as it interpolates towards +inf; here
    a quantile that reaches an infinite value is +inf.

    Examples
    --------
    >>> from confrf.metrics import quantiles
    >>> quantiles([1.0, 2.0, float("inf")], [0.0, 0.25, 0.5, 1.0]).tolist()
    [1.0, 1.5, 2.0, inf]
    """
    s = np.sort(np.asarray(x, dtype=np.float64).ravel())
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if s.size == 0 or np.isnan(s).any():
        raise InputError("quantiles need at least one value and no NaN.")
    if np.isnan(qs).any() or (qs < 0).any() or (qs > 1).any():
        raise InputError(f"q must lie in [0, 1] (probabilities, not percents), got {q!r}.")
    h = (s.size - 1) * qs
    lo = np.floor(h).astype(np.int64)
    hi = np.ceil(h).astype(np.int64)
    frac = h - lo
    a, b = s[lo], s[hi]
    with np.errstate(invalid="ignore"):
        out = a + (b - a) * frac
    out = np.where(frac == 0, a, out)
    return np.where(np.isinf(b) & (frac > 0), b, out)


def _snap(width: np.ndarray) -> np.ndarray:
    """Widths equal up to 1e-10 of the largest finite width made equal (upr - lwr carries rounding noise)."""
    fin = np.isfinite(width)
    if not fin.any():
        return width
    scale = float(np.max(np.abs(width[fin]))) or 1.0
    return np.where(fin, np.round(width / scale, 10) * scale, width)


def width_bins(width: Any, n_bins: int = 10) -> np.ndarray:
    """Bin number (1 = narrowest) of each finite width by its quantile; 0 for infinite widths.

    Equal widths always share a bin, so there can be fewer than ``n_bins``
    bins (one for split conformal, whose widths are all equal); widths that
    differ by less than 1e-10 of the largest one count as equal. With at
    most ``n_bins`` distinct widths (SPLIT-G: one per group) each width is
    its own bin. The bins are numbered 1, 2, ... without gaps: a quantile
    bin that repeated widths leave empty gets no number.

    Examples
    --------
    >>> from confrf.metrics import width_bins
    >>> width_bins([1.0, 2.0, 3.0, 4.0, float("inf")], n_bins=2).tolist()
    [1, 1, 2, 2, 0]
    >>> width_bins([1.0] * 30 + [2.0] * 40 + [3.0] * 30).max()  # three widths: three bins, 1 to 3
    np.int64(3)
    """
    w = _snap(_widths(width))
    check_int(n_bins, "n_bins")
    out = np.zeros(w.shape[0], dtype=np.int64)
    fin = np.isfinite(w)
    if fin.any():
        vals = w[fin]
        distinct = np.unique(vals)
        edges = np.unique(quantiles(vals, np.linspace(0.0, 1.0, n_bins + 1)))
        if distinct.size <= n_bins:
            # few distinct widths (split conformal: one; SPLIT-G: one per group): one bin each, as quantile
            # bins could put two of them in one bin
            out[fin] = np.searchsorted(distinct, vals) + 1
        else:
            # right-closed bins as in pandas.qcut, the first one closed on the left too
            bins = np.clip(np.searchsorted(edges, vals, side="left"), 1, edges.size - 1)
            # repeated widths can leave a quantile bin empty (edges 1, 1.7, 2, 2.3, 3 on widths 1, 2, 3): number
            # the bins that hold widths 1, 2, 3, ..., so that a table by bin has no gap in its labels
            out[fin] = np.unique(bins, return_inverse=True)[1] + 1
    return out


def coverage_by_width(is_covered: Any, width: Any, n_bins: int = 10, level: float = 0.95) -> pd.DataFrame:
    """Coverage within width bins (deciles by default), narrowest first; infinite widths last.

    Returns
    -------
    DataFrame
        Index: bin number (``"inf"`` for infinite intervals); columns
        ``width_min``, ``width_max``, ``n``, ``covered``, ``coverage``,
        ``ci_lower``, ``ci_upper``.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.metrics import coverage_by_width
    >>> t = coverage_by_width(np.arange(20) % 2 == 0, np.arange(20.0), n_bins=4)
    >>> t["n"].tolist()
    [5, 5, 5, 5]
    """
    w = _widths(width)
    bins = width_bins(w, n_bins)
    table = coverage_table(is_covered, bins, level)
    wf = pd.Series(w).groupby(bins)
    table.insert(0, "width_max", wf.max())
    table.insert(0, "width_min", wf.min())
    order = [b for b in table.index if b != 0] + [b for b in table.index if b == 0]
    table = table.loc[order]
    table.index = pd.Index(["inf" if b == 0 else str(b) for b in table.index], name="width_bin", dtype=object)
    return table

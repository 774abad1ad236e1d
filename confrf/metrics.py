"""Held-out metrics of prediction intervals, on plain arrays.

Every function takes the response ``y`` and the bounds ``lwr``/``upr`` (or
what it needs of them) and follows the package's conventions: bounds may be
-inf/+inf, never NaN; an interval covers y when ``lwr <= y <= upr``.
:meth:`confrf.ConformalResult.evaluate` and :func:`confrf.compare` are built
on these functions.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from ._validation import as_float_matrix, as_float_vector
from .exceptions import InputError

__all__ = [
    "covered",
    "coverage",
    "clopper_pearson",
    "interval_width",
    "share_infinite",
    "quantiles",
    "coverage_table",
    "coverage_by_width",
    "width_bins",
    "fidelity_error",
    "oracle_width_error",
    "width_spearman",
    "worst_slab_coverage",
    "SlabCoverage",
]


# -- inputs ---------------------------------------------------------------------
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
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not (0.0 < float(level) < 1.0):
        raise InputError(f"level must be a confidence level in (0, 1), e.g. 0.95, got {level!r}.")
    return float(level)


# -- coverage -------------------------------------------------------------------
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
    if not (np.issubdtype(kk.dtype, np.integer) or np.all(np.mod(kk, 1) == 0)) or \
            not (np.issubdtype(nn.dtype, np.integer) or np.all(np.mod(nn, 1) == 0)):
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
    c = np.asarray(is_covered, dtype=bool).ravel()
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


# -- widths ---------------------------------------------------------------------
def interval_width(lwr: Any, upr: Any) -> np.ndarray:
    """``upr - lwr``; +inf for an infinite interval.

    Examples
    --------
    >>> from confrf.metrics import interval_width
    >>> interval_width([0.0, -float("inf")], [2.0, float("inf")]).tolist()
    [2.0, inf]
    """
    lo, hi = _bounds(lwr, upr)
    with np.errstate(invalid="ignore"):
        w = hi - lo
    return np.where(np.isfinite(lo) & np.isfinite(hi), w, np.inf)


def share_infinite(lwr: Any, upr: Any) -> float:
    """Share of intervals with an infinite bound.

    Examples
    --------
    >>> from confrf.metrics import share_infinite
    >>> share_infinite([0.0, -float("inf")], [1.0, float("inf")])
    0.5
    """
    return float(np.isinf(interval_width(lwr, upr)).mean())


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
    differ by less than 1e-10 of the largest one count as equal.

    Examples
    --------
    >>> from confrf.metrics import width_bins
    >>> width_bins([1.0, 2.0, 3.0, 4.0, float("inf")], n_bins=2).tolist()
    [1, 1, 2, 2, 0]
    """
    w = _snap(np.asarray(width, dtype=np.float64).ravel())
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}.")
    out = np.zeros(w.shape[0], dtype=np.int64)
    fin = np.isfinite(w)
    if fin.any():
        vals = w[fin]
        edges = np.unique(quantiles(vals, np.linspace(0.0, 1.0, n_bins + 1)))
        if edges.size < 2:
            out[fin] = 1
        else:
            # right-closed bins as in pandas.qcut, the first one closed on the left too
            out[fin] = np.clip(np.searchsorted(edges, vals, side="left"), 1, edges.size - 1)
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
    w = np.asarray(width, dtype=np.float64).ravel()
    bins = width_bins(w, n_bins)
    table = coverage_table(is_covered, bins, level)
    wf = pd.Series(w).groupby(bins)
    table.insert(0, "width_max", wf.max())
    table.insert(0, "width_min", wf.min())
    order = [b for b in table.index if b != 0] + [b for b in table.index if b == 0]
    table = table.loc[order]
    table.index = pd.Index(["inf" if b == 0 else str(b) for b in table.index], name="width_bin", dtype=object)
    return table


# -- adaptivity -----------------------------------------------------------------
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
    w = np.asarray(width, dtype=np.float64).ravel()
    ws = np.asarray(oracle_width, dtype=np.float64).ravel()
    if w.shape != ws.shape:
        raise InputError("width and oracle_width must have the same length.")
    if np.isnan(w).any() or np.isnan(ws).any() or (ws < 0).any():
        raise InputError("widths must be >= 0 and not NaN.")
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
    w = _snap(np.asarray(width, dtype=np.float64).ravel())
    r = np.abs(as_float_vector(y, "y") - as_float_vector(fit, "fit"))
    if w.shape != r.shape:
        raise InputError("width, y and fit must have the same length.")
    if w.size < 2 or np.all(w == w[0]) or np.all(r == r[0]):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf widths are ranked like any value
        return float(stats.spearmanr(w, r).statistic)


# -- worst-slab coverage --------------------------------------------------------
@dataclass(frozen=True)
class SlabCoverage:
    """The worst slab found: {x : lower <= direction . x <= upper}.

    Attributes
    ----------
    coverage : float
        Coverage of the rows in the slab (exact n_covered / n_in_slab).
    n_in_slab, n_covered : int
    direction : ndarray
        Unit vector in the units of the columns of X.
    lower, upper : float
        Slab limits on direction . x.
    delta : float
        Smallest share of the rows a slab must hold.
    n_directions : int
        Number of directions searched.
    """

    coverage: float
    n_in_slab: int
    n_covered: int
    direction: np.ndarray
    lower: float
    upper: float
    delta: float
    n_directions: int


#: entries of one (directions x rows) block of the slab search
_SLAB_BLOCK = 1 << 21


def worst_slab_coverage(X: Any, is_covered: Any, *, delta: float = 0.1, n_directions: int = 1000,
                        random_state: int | None = 0, directions: Any = None) -> SlabCoverage:
    """Worst-slab coverage (Cauchois, Gupta and Duchi 2021), as in MAPIE's ``WSC``.

    For a direction v and limits a <= b, the slab S = {x : a <= v.x <= b}
    holds the rows whose projection lies in [a, b]. The worst-slab coverage
    is the smallest coverage among the rows of a slab, over all slabs that
    hold at least ceil(delta * n) rows:

        WSC = min over (v, a, b) with #S >= ceil(delta n) of #(S, covered) / #S.

    The directions are ``n_directions`` random directions, uniform on the
    sphere after each column is scaled to unit standard deviation (the slab
    family itself does not depend on the scaling), drawn from
    ``random_state``; or the rows of ``directions``, used as given. For each
    direction the minimum over (a, b) is exact: slab limits are projected
    values, so rows with equal projections are always in or out together,
    and the search (a bisection over rational densities on integer counts)
    returns the exact minimal fraction.

    The minimum over many slabs is biased downwards on a small test set:
    read it against the Clopper-Pearson interval of a set of
    ceil(delta * n) rows, not against 1 - alpha alone.

    Parameters
    ----------
    X : array (n, p)
        Features of the test rows (the model's design columns).
    is_covered : array of bool (n,)
        Whether each interval contains its response.
    delta : float
        Smallest share of the rows in a slab, in (0, 1].
    n_directions : int
        Number of random directions (ignored with ``directions``).
    random_state : int or None
        Seed of the directions.
    directions : array (m, p), optional
        Directions to search instead of random ones.

    Returns
    -------
    SlabCoverage

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.metrics import worst_slab_coverage
    >>> x = np.arange(10.0).reshape(-1, 1)
    >>> cov = np.array([1, 1, 1, 1, 1, 0, 0, 1, 1, 1], dtype=bool)
    >>> worst_slab_coverage(x, cov, delta=0.2).coverage
    0.0
    """
    Xm = as_float_matrix(X, "X")
    c = np.asarray(is_covered).ravel()
    if c.dtype != bool:
        if not np.isin(c, (0, 1)).all():
            raise InputError("is_covered must be booleans (or 0/1).")
        c = c.astype(bool)
    n, p = Xm.shape
    if c.shape[0] != n:
        raise InputError(f"X has {n} rows but is_covered has {c.shape[0]}.")
    if n == 0:
        raise InputError("worst_slab_coverage needs at least one row.")
    if n > 1_000_000:
        raise InputError(f"worst_slab_coverage takes at most 1e6 rows (exact integer search), got {n}; subsample.")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not (0.0 < float(delta) <= 1.0):
        raise InputError(f"delta must lie in (0, 1], got {delta!r}.")
    m = max(1, math.ceil(Fraction(repr(float(delta))) * n))
    if directions is None:
        if isinstance(n_directions, bool) or not isinstance(n_directions, (int, np.integer)) or n_directions < 1:
            raise InputError(f"n_directions must be a positive integer, got {n_directions!r}.")
        # Gaussian rows point uniformly on the sphere; their length does not change a slab
        U = np.random.default_rng(random_state).standard_normal((int(n_directions), p))
        sd = Xm.std(axis=0)
        V = U * np.divide(1.0, sd, out=np.zeros(p), where=sd > 0)[None, :]
    else:
        V = as_float_matrix(directions, "directions")
        if V.shape[1] != p:
            raise InputError(f"directions have {V.shape[1]} columns; X has {p}.")
    norms = np.linalg.norm(V, axis=1)
    V = np.divide(V, norms[:, None], out=np.zeros_like(V), where=norms[:, None] > 0)

    best = (int(c.sum()), n, None)  # the whole sample is a slab: (covered, size, (direction, i, j))
    step = max(1, _SLAB_BLOCK // (n + 1))
    for s in range(0, V.shape[0], step):
        found = _worst_slab_block(Xm @ V[s:s + step].T, c, m, best[0], best[1])
        if found is not None:
            k, size, d, i, j, z = found
            best = (k, size, (s + d, z[i], z[j - 1]))
    k, size, where = best
    if where is None:  # no slab beats the whole sample: report it along the first direction
        z = Xm @ V[0]
        where = (0, float(z.min()), float(z.max()))
    d, a, b = where
    return SlabCoverage(coverage=k / size, n_in_slab=size, n_covered=k, direction=V[d].copy(),
                        lower=float(a), upper=float(b), delta=float(delta), n_directions=int(V.shape[0]))


def _worst_slab_block(Z: np.ndarray, c: np.ndarray, m: int, best_k: int, best_n: int):
    """Exact minimal coverage k/size over slabs with >= m rows along the columns of Z, if below best_k/best_n.

    Rows sorted by projection; a slab is a run of positions i..j-1 whose ends
    fall between distinct projected values. Coverage <= p/q on some slab iff
    max over valid i <= j - m of (q S_i - p i) >= q S_j - p j, S the prefix
    counts: one vectorised pass per candidate p/q, in int64. Fractions with
    denominators <= n are >= 1/n^2 apart, so bisection on the grid p/(2 n^2)
    stops at the exact minimum.
    """
    n = Z.shape[0]
    Zt = np.ascontiguousarray(Z.T)  # (directions, n); ties are handled by ``valid``, so any sort will do
    order = np.argsort(Zt, axis=1)
    zs = np.take_along_axis(Zt, order, axis=1)
    S = np.zeros((order.shape[0], n + 1), dtype=np.int64)
    np.cumsum(c[order], axis=1, out=S[:, 1:])
    valid = np.ones_like(S, dtype=bool)
    valid[:, 1:n] = zs[:, :-1] < zs[:, 1:]
    pos = np.arange(n + 1, dtype=np.int64)
    q = 2 * n * n
    low = np.iinfo(np.int64).min

    def witness(p: int, rows: np.ndarray):
        """Directions (among ``rows``) with a slab of coverage <= p/q, and (direction, j, Q) of the first."""
        Q = q * S[rows] - p * pos
        R = np.maximum.accumulate(np.where(valid[rows], Q, low), axis=1)
        ok = valid[rows, m:] & (Q[:, m:] <= R[:, : n + 1 - m])
        hit = np.flatnonzero(ok.any(axis=1))
        if hit.size == 0:
            return None
        first = int(hit[0])
        return rows[hit], (int(rows[first]), int(np.argmax(ok[first])) + m, Q[first])

    # only a strictly smaller coverage than the best so far matters: <= best - 1/n^2
    hi = -(-(best_k * q - 2 * best_n) // best_n)  # ceil(q (best - 1/n^2)), and hi/q < best
    if hi < 0:
        return None
    found = witness(hi, np.arange(S.shape[0]))
    if found is None:
        return None
    rows, w = found
    lo = -1  # coverage >= 0 > -1/q: infeasible
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = witness(mid, rows)
        if found is None:
            lo = mid
        else:
            hi, (rows, w) = mid, found  # the minimum lies in a direction feasible at every hi
    d, j, Qd = w
    i = int(np.argmax(np.where(valid[d, : j - m + 1], Qd[: j - m + 1], low)))
    return int(S[d, j] - S[d, i]), j - i, d, i, j, zs[d]

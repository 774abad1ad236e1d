"""Worst-slab coverage: the lowest coverage over slabs {x : a <= v.x <= b}."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import as_float_matrix, check_int, check_real, seed_entropy
from ..exceptions import InputError
from ._inputs import _flags


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


def worst_slab_coverage(
    X: Any,
    is_covered: Any,
    *,
    delta: float = 0.1,
    n_directions: int = 1000,
    random_state: int | None = 0,
    directions: Any = None,
) -> SlabCoverage:
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
    c = _flags(is_covered)
    n, p = Xm.shape
    if c.shape[0] != n:
        raise InputError(f"X has {n} rows but is_covered has {c.shape[0]}.")
    if n == 0:
        raise InputError("worst_slab_coverage needs at least one row.")
    if n > 1_000_000:
        raise InputError(f"worst_slab_coverage takes at most 1e6 rows (exact integer search), got {n}; subsample.")
    delta = check_real(delta, "delta", low=0.0, high=1.0, high_open=False, hint="the smallest share of rows in a slab")
    m = max(1, math.ceil(Fraction(repr(delta)) * n))
    if directions is None:
        n_directions = check_int(n_directions, "n_directions")
        # Gaussian rows point uniformly on the sphere; their length does not change a slab
        U = np.random.default_rng(seed_entropy(random_state)).standard_normal((int(n_directions), p))
        sd = Xm.std(axis=0)
        V = U * np.divide(1.0, sd, out=np.zeros(p), where=sd > 0)[None, :]
    else:
        V = as_float_matrix(directions, "directions")
        if V.shape[1] != p:
            raise InputError(f"directions have {V.shape[1]} columns; X has {p}.")
    norms = np.linalg.norm(V, axis=1)
    V = np.divide(V, norms[:, None], out=np.zeros_like(V), where=norms[:, None] > 0)

    # the whole sample is a slab: (covered, size, (direction, i, j))
    best: tuple[int, int, tuple[int, float, float] | None] = (int(c.sum()), n, None)
    step = max(1, _SLAB_BLOCK // (n + 1))
    for s in range(0, V.shape[0], step):
        found = _worst_slab_block(Xm @ V[s : s + step].T, c, m, best[0], best[1])
        if found is not None:
            k, size, d, i, j, z = found
            best = (k, size, (s + d, z[i], z[j - 1]))
    k, size, where = best
    if where is None:  # no slab beats the whole sample: report it along the first direction
        z = Xm @ V[0]
        where = (0, float(z.min()), float(z.max()))
    d, a, b = where
    return SlabCoverage(
        coverage=k / size,
        n_in_slab=size,
        n_covered=k,
        direction=V[d].copy(),
        lower=float(a),
        upper=float(b),
        delta=float(delta),
        n_directions=int(V.shape[0]),
    )


def _worst_slab_block(
    Z: np.ndarray, c: np.ndarray, m: int, best_k: int, best_n: int
) -> tuple[int, int, int, int, int, np.ndarray] | None:
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

    def witness(p: int, rows: np.ndarray) -> tuple[np.ndarray, tuple[int, int, np.ndarray]] | None:
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

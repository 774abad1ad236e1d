"""Exact LCP thresholds for dense kernel weights, many test points at once.

For a kernel K (K(x, x) = 1), calibration row i of the (n+1) x (n+1) LCP
matrix is K(X_i, .) / (D_i + k_i), with D_i = sum_j K(X_i, X_j) over the
calibration points and k_i = K(X_i, x) for the test point x. So the mass of
row i strictly below its own score, once v is the test score, is

    pi_i(v) = (c_i + k_i 1{v < V_i}) / (D_i + k_i),   c_i = sum_{V_j < V_i} K(X_i, X_j),

and the test row's mass strictly below v is theta(v) = sum_{V_j < v} k_j / (S + 1),
S = sum_j k_j. c and D are computed once; a test point only brings k. The
search is the one of :func:`confrf.calibrators.lcp.lcp_threshold` (bisection
over the pieces between distinct calibration scores of the non-decreasing
count(v) = #{i : pi_i(v) < theta(v)}), run for a block of test points with
numpy: O(n) per step, O(n log n) per test point, no (n+1) x (n+1) matrix.
"""

from __future__ import annotations

import numpy as np

from .._tolerance import TIE_TOL  # shared with calibrators.lcp, which imports this package


def dense_lcp_thresholds(
    base: np.ndarray,
    total: np.ndarray,
    k: np.ndarray,
    scores: np.ndarray,
    m_req: int,
    active: np.ndarray | None = None,
    self_weight: float = 1.0,
    tol: float = TIE_TOL,
    shift_w: np.ndarray | None = None,
    req: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact LCP thresholds (t, closed, level) of a block of test points.

    Parameters
    ----------
    base : (n,) or (B, n)
        c_i, the unnormalised mass of calibration row i strictly below V_i.
    total : (n,) or (B, n)
        D_i, the unnormalised mass of calibration row i on the calibration points (itself included).
    k : (B, n)
        Unnormalised kernel between every calibration point and each test point.
    scores : (n,)
        Calibration scores (any finite reals).
    m_req : int
        ceil((1 - alpha)(n_active + 1)), computed exactly by the caller.
    active : (B, n) bool, optional
        Calibration points that exist for each test row (leave-one-out uses);
        inactive points must already be left out of ``base`` and ``total``.
    self_weight : float
        Unnormalised kernel of the test point with itself.
    tol : float
        Weight sums closer than ``tol`` are ties (never narrows the set).
    shift_w, req : (n,) and (B,), optional
        Covariate shift: the calibration points' likelihood ratios, and per
        test row the weighted count at which a score is rejected
        (:meth:`confrf.shift.weighted.ShiftWeights.requirement`); the
        count of points with pi_i < theta is then their summed ratio.

    Returns
    -------
    t, closed, level : (B,) arrays, as :func:`lcp_threshold` returns for each row.
    """
    k = np.asarray(k, dtype=np.float64)
    B, n = k.shape
    t = np.full(B, np.inf)
    closed = np.ones(B, dtype=bool)
    level = np.ones(B)
    if B == 0 or (shift_w is None and m_req > n):
        return t, closed, level
    V = np.asarray(scores, dtype=np.float64)
    if active is not None:
        k = np.where(active, k, 0.0)
    order = np.argsort(V, kind="stable")
    u, first = np.unique(V[order], return_index=True)
    r = u.shape[0]
    last = np.append(first[1:], n) - 1
    # theta[:, j]: the test row's mass at or below u_j
    theta = np.cumsum(k[:, order], axis=1)[:, last] / (k.sum(axis=1) + self_weight)[:, None]
    base2 = np.broadcast_to(base, (B, n))
    denom = np.broadcast_to(total, (B, n)) + k
    # pieces after (-inf, u_1]: q even -> open (u_j, u_{j+1}); q odd -> the point u_{j+1}; q = 2r-1: none rejected
    lo = np.zeros(B, dtype=np.int64)
    hi = np.full(B, 2 * r - 1, dtype=np.int64)
    rows = np.flatnonzero(lo < hi)
    while rows.size:
        mid = (lo[rows] + hi[rows]) // 2
        j = mid // 2
        odd = (mid % 2).astype(bool)
        cut = np.where(odd, u[np.minimum(j + 1, r - 1)], u[j])
        pi = (base2[rows] + k[rows] * (V[None, :] > cut[:, None])) / denom[rows]
        below = pi < (theta[rows, j] - tol)[:, None]
        if active is not None:
            below &= active[rows]
        if shift_w is None:
            rejected = np.count_nonzero(below, axis=1) >= m_req
        else:
            assert req is not None  # given with shift_w
            rejected = below @ shift_w >= req[rows]
        hi[rows[rejected]] = mid[rejected]
        lo[rows[~rejected]] = mid[~rejected] + 1
        rows = rows[lo[rows] < hi[rows]]
    found = lo < 2 * r - 1
    j = lo[found] // 2
    odd = (lo[found] % 2).astype(bool)
    t[found] = np.where(odd, u[np.minimum(j + 1, r - 1)], u[j])
    closed[found] = ~odd
    level[found] = theta[np.flatnonzero(found), j]
    return t, closed, level

"""Exact Localized Conformal Prediction (Guan) for an arbitrary weight matrix.

Conventions (see ``docs/theory.md``): Q(a; F) = inf{t : F(t) >= a}; the LCP set
of the test score is {v : v <= Q(alpha_tilde(v); F_{n+1}^v)}, with alpha_tilde(v)
the smallest prefix sum a of any row (in score order) such that at least
m_req = ceil((1 - alpha)(n + 1)) of the n + 1 points satisfy S_i <= Q(a; F_i^v).

By s <= Q(a; F) <=> F((-inf, s)) < a, v is accepted iff
count(v) = #{i <= n : pi_i(v) < theta(v)} < m_req, where theta(v) is the test
row's mass strictly below v and pi_i(v) = p2_i + W[i, n+1] 1{v < V_i}.
count is non-decreasing in v and changes only at calibration scores, so the set
is (-inf, t] or (-inf, t) with t a calibration score or +inf.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from .._tolerance import TIE_TOL
from .._validation import as_float_array, required_count
from ..exceptions import InputError
from ..shift.value import ratio_values
from ..shift.weighted import ShiftWeights


class LCPThreshold(NamedTuple):
    """Result of :func:`lcp_threshold`.

    Attributes
    ----------
    t : float
        Supremum of the accepted scores (``inf`` when every score is accepted).
    closed : bool
        ``True`` when the set is (-inf, t], ``False`` when it is (-inf, t).
    level : float
        The test row's mass on calibration scores at or below ``t`` (below ``t``
        when open): the alpha-tilde at which the localizer's quantile is ``t``.
        1 when ``t`` is infinite.
    """

    t: float
    closed: bool
    level: float


def _check_weights(weights: Any, n: int) -> sp.csr_matrix:
    if not sp.issparse(weights):
        arr = as_float_array(weights, "weights")
        if arr.ndim != 2:
            raise InputError(f"weights must be a 2-D (n+1) x (n+1) matrix, got an array of shape {arr.shape}.")
        weights = arr
    W = sp.csr_matrix(weights, dtype=np.float64) if not sp.issparse(weights) else weights.tocsr().astype(np.float64)
    if W.shape != (n + 1, n + 1):
        raise InputError(
            f"weights must be (n+1) x (n+1) = {(n + 1, n + 1)} for n = {n} scores "
            f"(the last row and column are the test point), got {W.shape}."
        )
    if W.nnz and (not np.all(np.isfinite(W.data)) or W.data.min() < 0):
        raise InputError("weights must be finite and non-negative.")
    sums = np.asarray(W.sum(axis=1)).ravel()
    if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
        bad = int(np.sum(~np.isclose(sums, 1.0, rtol=0, atol=1e-9)))
        raise InputError(f"weights must be row-stochastic (rows sum to 1); {bad} row(s) do not.")
    W.sum_duplicates()
    return W


def lcp_threshold(weights: object, scores: object, alpha: float, likelihood_ratio: object = None) -> LCPThreshold:
    """Exact LCP threshold of one test point for any row-stochastic weight matrix.

    Parameters
    ----------
    weights : array_like or scipy.sparse matrix, shape (n + 1, n + 1)
        Row ``i`` holds the weights point ``i`` puts on every point, itself
        included; the last row and column are the test point. Dense or sparse,
        symmetric or not.
    scores : array_like, shape (n,)
        Finite calibration scores.
    alpha : float
        Miscoverage level in (0, 1), read as the decimal typed (0.1 is 1/10).
    likelihood_ratio : array_like, shape (n + 1,), optional
        Covariate shift: w(X_1), ..., w(X_n), then the test point's w(x)
        (docs/theory.md, "Covariate shift"). v is then accepted while the
        calibration points with pi_i(v) < theta(v) weigh less than
        (1 - alpha) times the total weight, test point included. Equal
        ratios give the unweighted result exactly.

    Returns
    -------
    LCPThreshold
        ``(t, closed, level)``: the LCP set of the test score is (-inf, t] when
        ``closed`` else (-inf, t).

    Notes
    -----
    Cost O(nnz + n log n). Weight sums closer than ``1e-10`` count as ties,
    which can only make the set larger than the exact one; with
    ``likelihood_ratio`` a score is rejected only once the weighted count
    reaches (1 - alpha + 1e-9) times the total (``confrf.shift.weighted.SHIFT_TOL``).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf import lcp_threshold
    >>> n = 19
    >>> W = np.full((n + 1, n + 1), 1 / (n + 1))
    >>> res = lcp_threshold(W, np.arange(1.0, n + 1), alpha=0.1)
    >>> res.t, res.closed, round(res.level, 12)
    (18.0, True, 0.9)
    """
    V = as_float_array(scores, "scores")
    if V.ndim != 1:  # never flatten: a 2-D array is a mistake, not n * k scores
        raise InputError(f"scores must be 1-D (one score per calibration point), got shape {V.shape}.")
    if not np.all(np.isfinite(V)):
        raise InputError("scores must be finite.")
    n = V.shape[0]
    W = _check_weights(weights, n)
    m_req = required_count(alpha, n)
    shift, req = None, float(m_req)
    if likelihood_ratio is not None:
        w = ratio_values(likelihood_ratio, n + 1, "the n calibration points and the test point")
        shift = ShiftWeights(w[:n])
        if shift.constant is not None and w[n] == shift.constant:
            shift = None  # every p_i is 1/(n+1): the exact integer rule
        else:
            req = float(shift.requirement(alpha, w[n:])[0])
    if (m_req > n) if shift is None else (shift.total < req):
        return LCPThreshold(np.inf, True, 1.0)

    u, inv = np.unique(V, return_inverse=True)  # distinct scores and each point's rank
    r = u.shape[0]
    # p2_i: row i's mass on calibration scores strictly below V_i
    rows = np.repeat(np.arange(n + 1), np.diff(W.indptr))
    cols = W.indices
    keep = (rows < n) & (cols < n)
    rr, cc, ww = rows[keep], cols[keep], W.data[keep]
    below = inv[cc] < inv[rr]
    p2 = np.bincount(rr[below], weights=ww[below], minlength=n)
    win = W[:n, n].toarray().ravel()  # W[i, n+1]
    test_row = W[n, :n].toarray().ravel()
    # theta at or below each distinct score u_s
    theta = np.cumsum(np.bincount(inv, weights=test_row, minlength=r))

    def count(th: float, cut: float) -> float:
        below = p2 + win * (V > cut) < th - TIE_TOL
        return float(np.count_nonzero(below)) if shift is None else float(np.sum(shift.w[below]))

    # pieces after (-inf, u_1]: q even -> open (u_j, u_{j+1}); q odd -> point u_{j+1}
    lo, hi = 0, 2 * r - 1
    while lo < hi:
        mid = (lo + hi) // 2
        j = mid // 2
        cut = u[j + 1] if mid % 2 else u[j]
        if count(theta[j], cut) >= req:
            hi = mid
        else:
            lo = mid + 1
    if lo == 2 * r - 1:
        return LCPThreshold(np.inf, True, 1.0)
    j = lo // 2
    if lo % 2:
        return LCPThreshold(float(u[j + 1]), False, float(theta[j]))
    return LCPThreshold(float(u[j]), True, float(theta[j]))

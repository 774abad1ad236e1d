"""Kernels on standardized features and the bandwidth rules of Guan and of Han et al.

Both rules see only *reference* data (the training part with out-of-fold
scores, or a held-out share of the calibration set), never the conformal
calibration points, so the localizer stays a fixed function of the points it
weighs and the conformal guarantee is unaffected.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import cdist, pdist

from .._validation import check_real, required_count
from ..exceptions import InputError
from ._dense_lcp import dense_lcp_thresholds

KERNELS = ("gaussian", "exponential")
#: Guan's grid: 20 bandwidths, log-spaced from the 1% quantile of pairwise distances to twice the largest
GRID_SIZE = 20
#: reference points used by the rules (a random subsample beyond this)
MAX_TUNE_POINTS = 1000


def check_kernel(kernel: object) -> str:
    if kernel not in KERNELS:
        raise InputError(f"unknown kernel {kernel!r}; choose one of {list(KERNELS)}.")
    return str(kernel)


def check_bandwidth(bandwidth: object) -> float | str:
    if bandwidth == "auto":
        return "auto"
    # h^2 must stay a normal float64: below 1e-150 it underflows to 0 (0/0 on identical rows)
    return check_real(
        bandwidth,
        "bandwidth",
        low=1e-150,
        high=1e150,
        hint="'auto' or a positive number in standardized units (the features' sd is 1)",
    )


def kernel_matrix(A: np.ndarray, B: np.ndarray, kernel: str, h: float, relative: bool = False) -> np.ndarray:
    """K(a, b): gaussian exp(-|a-b|^2 / (2 h^2)) or exponential exp(-|a-b| / h); K(a, a) = 1.

    ``relative=True`` divides each row by its largest entry (its nearest
    point gets 1), which leaves normalised weights unchanged and keeps them
    defined far from every point.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers.bandwidth import kernel_matrix
    >>> kernel_matrix(np.zeros((1, 1)), np.array([[0.0], [1.0]]), "exponential", 1.0).round(4)
    array([[1.    , 0.3679]])
    """
    sq = cdist(A, B, "sqeuclidean")  # sum of squared differences: exactly 0 on identical rows, symmetric
    z = sq / (2.0 * h * h) if kernel == "gaussian" else np.sqrt(sq) / h
    if relative and z.shape[1]:
        z -= z.min(axis=1, keepdims=True)
    return np.exp(-z)


def _subsample(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.arange(n) if n <= size else np.sort(rng.choice(n, size=size, replace=False))


def bandwidth_grid(Z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Guan's grid: 20 log-spaced values from the 1% quantile of pairwise distances to twice the largest."""
    d = pdist(Z[_subsample(Z.shape[0], MAX_TUNE_POINTS, rng)])
    d = d[d > 0]
    if d.size == 0:
        return np.array([1.0])
    return np.exp(np.linspace(np.log(np.quantile(d, 0.01)), np.log(2.0 * d.max()), GRID_SIZE))


def guan_bandwidth(
    Z: np.ndarray,
    V: np.ndarray,
    *,
    kernel: str,
    alpha: float,
    n_calibration: int,
    max_infinite: float,
    rng: np.random.Generator,
) -> tuple[float, dict[str, Any]]:
    """Guan's rule: the bandwidth with the smallest mean finite threshold among those
    whose share of infinite thresholds is at most ``max_infinite``.

    Every reference point in turn is the test point of an exact LCP on the
    others; n1 = min(n_ref, n_calibration + 1, 1000) points mimic the
    calibration set (a random subsample, repeated 3 times when it leaves out
    more than a third of the reference points). Guan's optional stability
    penalty (his lambda > 0) is not used. When no bandwidth keeps infinite
    thresholds rare enough, the one with the fewest is taken (the largest on ties).

    Returns
    -------
    h : float
    table : dict
        The grid with each bandwidth's share of infinite and mean finite thresholds.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers.bandwidth import guan_bandwidth
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.uniform(size=(100, 1)); V = np.abs(rng.normal(size=100)) * Z[:, 0]
    >>> h, table = guan_bandwidth(Z, V, kernel="gaussian", alpha=0.1, n_calibration=99, max_infinite=0.05, rng=rng)
    >>> bool(table["share_infinite"][list(table["grid"]).index(h)] <= 0.05)
    True
    """
    n_ref = Z.shape[0]
    n1 = min(n_ref, n_calibration + 1, MAX_TUNE_POINTS)
    if n1 < 2:
        raise InputError(f"the bandwidth rule needs at least 2 reference points, got {n1}.")
    grid = bandwidth_grid(Z, rng)
    repeats = 1 if n1 >= 2 * n_ref / 3 else 3
    m_req = required_count(alpha, n1 - 1)
    share_inf = np.zeros(grid.shape[0])
    mean_t = np.zeros(grid.shape[0])
    for _ in range(repeats):
        idx = _subsample(n_ref, n1, rng)
        Zs, Vs = Z[idx], V[idx]
        for g, h in enumerate(grid):
            t = leave_one_out_thresholds(kernel_matrix(Zs, Zs, kernel, h), Vs, m_req)
            finite = np.isfinite(t)
            share_inf[g] += np.mean(~finite) / repeats
            mean_t[g] += (t[finite].mean() if finite.any() else np.inf) / repeats
    ok = share_inf <= max_infinite
    if ok.any():
        best = int(np.flatnonzero(ok)[np.argmin(mean_t[ok])])
    else:
        best = int(np.flatnonzero(share_inf == share_inf.min())[-1])
    table = {"grid": grid, "share_infinite": share_inf, "mean_threshold": mean_t, "n_points": n1, "repeats": repeats}
    return float(grid[best]), table


def leave_one_out_thresholds(K: np.ndarray, V: np.ndarray, m_req: int, block: int = 256) -> np.ndarray:
    """Exact LCP threshold of each point as the test point, the others calibrating (K symmetric)."""
    n = K.shape[0]
    below = V[None, :] < V[:, None]  # below[i, j]: V_j < V_i
    total = K.sum(axis=1)
    base = (K * below).sum(axis=1)
    out = np.empty(n)
    for s in range(0, n, block):
        q = np.arange(s, min(n, s + block))
        kq = K[q]  # K[q, j] = K(X_j, X_q)
        active = np.ones_like(kq, dtype=bool)
        active[np.arange(q.size), q] = False
        # drop the test point q from every calibration row: its mass, and its share below V_j
        loo_total = total[None, :] - kq
        loo_total[np.arange(q.size), q] = 1.0  # the absent row is never counted; keep its division finite
        loo_base = base[None, :] - kq * below[:, q].T
        out[q] = dense_lcp_thresholds(loo_base, loo_total, kq, V, m_req, active=active)[0]
    return out


def han_bandwidth(Z: np.ndarray, kernel: str, rng: np.random.Generator) -> float:
    """Han et al.'s median heuristic: exp(-d^2 / h) with h = median(d^2) / log(n_ref).

    In this module's parametrisation that is a gaussian bandwidth
    sqrt(median(d^2) / (2 log n_ref)); the exponential kernel gets
    median(d) / log(n_ref). Distances are among (up to 1000) reference points.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers.bandwidth import han_bandwidth
    >>> Z = np.array([[0.0], [1.0], [2.0]])   # squared distances 1, 4, 1: median 1
    >>> h = han_bandwidth(Z, "gaussian", np.random.default_rng(0))
    >>> round(h, 6) == round(float(np.sqrt(1 / (2 * np.log(3)))), 6)
    True
    """
    n_ref = Z.shape[0]
    if n_ref < 2:
        raise InputError(f"the bandwidth rule needs at least 2 reference points, got {n_ref}.")
    sq = pdist(Z[_subsample(n_ref, MAX_TUNE_POINTS, rng)], "sqeuclidean")
    med = float(np.median(sq)) if kernel == "gaussian" else float(np.median(np.sqrt(sq)))
    if med <= 0:
        return 1.0
    return float(np.sqrt(med / (2.0 * np.log(n_ref)))) if kernel == "gaussian" else med / float(np.log(n_ref))

"""Slow references for the kernel baselines, written from the definitions with loops.

Nothing here shares code with the package.
"""

from __future__ import annotations

import math

import numpy as np


def standardize(X_ref: np.ndarray, X: np.ndarray) -> np.ndarray:
    """(X - mean) / sd with the reference data's mean and population sd (sd 0 -> 1)."""
    mean = X_ref.mean(axis=0)
    sd = X_ref.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - mean) / sd


def kernel(a: np.ndarray, b: np.ndarray, kind: str, h: float) -> float:
    d2 = sum((float(x) - float(y)) ** 2 for x, y in zip(a, b))
    if kind == "gaussian":
        return math.exp(-d2 / (2 * h * h))
    return math.exp(-math.sqrt(d2) / h)


def kernel_lcp_matrix(Z_cal: np.ndarray, z_test: np.ndarray, kind: str, h: float) -> np.ndarray:
    """Guan's (n+1) x (n+1) localizer matrix: W[i, j] = H(Z_i, Z_j) / sum_l H(Z_i, Z_l), the test point last."""
    pts = list(Z_cal) + [z_test]
    n1 = len(pts)
    W = np.zeros((n1, n1))
    for i in range(n1):
        row = [kernel(pts[i], pts[j], kind, h) for j in range(n1)]
        s = sum(row)
        W[i] = [w / s for w in row]
    return W


def nw_quantile(Z_ref: np.ndarray, V_ref: np.ndarray, z: np.ndarray, kind: str, h: float, level: float) -> float:
    """inf{r : sum_j w_j 1{V_j <= r} >= level}, w the normalised kernel weights of z on the reference points."""
    w = [kernel(z, zr, kind, h) for zr in Z_ref]
    s = sum(w)
    for r in sorted(set(float(v) for v in V_ref)):
        if sum(wj for wj, v in zip(w, V_ref) if v <= r) / s >= level - 1e-12:
            return r
    return math.inf


def split_order_statistic(scores: np.ndarray, alpha: str) -> float:
    """The ceil((1 - alpha)(n + 1))-th smallest score, inf when that exceeds n (alpha as a decimal string)."""
    from fractions import Fraction

    n = len(scores)
    m = math.ceil((1 - Fraction(alpha)) * (n + 1))
    return math.inf if m > n else float(sorted(scores)[m - 1])

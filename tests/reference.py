"""Slow references written straight from the definitions (exact rationals).

Nothing here shares code with the package: these functions are what the fast
kernels are checked against.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

INF = float("inf")


def exact_m_req(alpha: str | Fraction, n: int) -> int:
    return math.ceil((1 - Fraction(alpha)) * (n + 1))


def quantile(a: Fraction, atoms: list[tuple[float, Fraction]]) -> float:
    """Q(a; F) = inf{t : F(t) >= a} for F = sum of weighted atoms (value, weight)."""
    if a <= 0:
        return -INF
    cum = Fraction(0)
    for v in sorted({v for v, _ in atoms}):
        cum += sum((w for u, w in atoms if u == v), Fraction(0))
        if cum >= a:
            return v
    return INF


def candidate_levels(W, S) -> set:
    """Guan's candidate levels Gamma: every row's prefix sums of W in increasing order of the scores S."""
    order = sorted(range(len(S)), key=lambda j: S[j])
    gamma = set()
    for row in W:
        acc = Fraction(0)
        for j in order:
            acc += row[j]
            gamma.add(acc)
    return gamma


def lcp_accepts(W: list[list[Fraction]], V: list[float], v: float, m_req: int) -> bool:
    """Is the test score v in the LCP set? (Guan's definition, enumerated.)"""
    n = len(V)
    S = list(V) + [v]
    gamma = candidate_levels(W, S)
    rows = [[(S[j], W[i][j]) for j in range(n + 1)] for i in range(n + 1)]
    alpha_tilde = None
    for a in sorted(gamma):
        covered = sum(1 for i in range(n + 1) if S[i] <= quantile(a, rows[i]))
        if covered >= m_req:
            alpha_tilde = a
            break
    if alpha_tilde is None:  # no level reaches the count: Q is +inf, v accepted
        return True
    return v <= quantile(alpha_tilde, rows[n])


def lcp_threshold_reference(W: list[list[Fraction]], V: list[float], alpha: str) -> tuple[float, bool]:
    """(t, closed) of the LCP set, by testing v at every score, between scores and beyond.

    Also asserts that the accepted set is downward closed.
    """
    n = len(V)
    m_req = exact_m_req(alpha, n)
    u = sorted(set(V))
    cands: list[tuple[float, str, int]] = [(u[0] - 1.0, "below", -1)]
    for s, val in enumerate(u):
        cands.append((val, "at", s))
        nxt = u[s + 1] if s + 1 < len(u) else val + 1.0
        cands.append(((val + nxt) / 2, "after", s))
    acc = [lcp_accepts(W, V, c[0], m_req) for c in cands]
    first_rej = next((k for k, a in enumerate(acc) if not a), None)
    if first_rej is None:
        return INF, True
    assert not any(acc[first_rej:]), "accepted set is not downward closed"
    assert first_rej > 0
    val, kind, s = cands[first_rej]
    if kind == "at":
        return u[s], False
    assert kind == "after"
    return u[s], True


def forest_lcp_matrix(
    leaves_cal: np.ndarray, leaves_test: np.ndarray, mult: np.ndarray | None = None
) -> list[list[Fraction]]:
    """(n+1)x(n+1) LCP weight matrix of honest (or multiplicity-weighted) forest weights.

    W[i, j] = (1/k) sum_l mult_l(j) 1{j in leaf_l(i)} / N_l(i), where N_l(i) counts
    the multiplicity mass of calibration points in leaf_l(i) plus the test point.
    """
    n, k = leaves_cal.shape
    if mult is None:
        mult = np.ones((n, k), dtype=int)
    L = np.vstack([leaves_cal, leaves_test[None, :]])
    M = np.vstack([mult, np.ones((1, k), dtype=int)])
    W = [[Fraction(0)] * (n + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for tree in range(k):
            same = [j for j in range(n + 1) if L[j, tree] == L[i, tree]]
            N = sum(int(M[j, tree]) for j in same)
            for j in same:
                W[i][j] += Fraction(int(M[j, tree]), N * k)
    return W


def qrf_weights(leaves_cal: np.ndarray, leaves_test: np.ndarray, mult: np.ndarray | None = None) -> np.ndarray:
    """Meinshausen's QRF weights of each test row, by a loop over trees."""
    n, k = leaves_cal.shape
    if mult is None:
        mult = np.ones((n, k), dtype=int)
    out = np.zeros((leaves_test.shape[0], n))
    for q in range(leaves_test.shape[0]):
        used = 0
        row = np.zeros(n)
        for tree in range(k):
            same = leaves_cal[:, tree] == leaves_test[q, tree]
            tot = mult[same, tree].sum()
            if tot == 0:
                continue
            used += 1
            row[same] += mult[same, tree] / tot
        out[q] = row / used if used else row
    return out

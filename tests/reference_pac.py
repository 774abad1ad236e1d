"""Slow references for the training-conditional (PAC) calibration, from the definitions.

Exact rationals throughout; the only package function used is the general exact
``lcp_threshold`` (itself checked against ``reference.lcp_threshold_reference``)
to get t(x) on small forests.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from reference import INF, forest_lcp_matrix, quantile

from confrf import lcp_threshold


def grid(alpha: str, K: int) -> list[Fraction]:
    """T = {0, alpha/(K-1), ..., alpha}, exactly."""
    a = Fraction(alpha)
    return [a * k / (K - 1) for k in range(K)]


def pac_row(
    leaves_d1: np.ndarray, leaves_x: np.ndarray, V1: np.ndarray, alpha: str, base: str, a_values: list[Fraction]
) -> list[float]:
    """Q(min(1, b(x) + a); F_x) for each a, F_x the exact LCP test row with x's own mass at +inf."""
    W = forest_lcp_matrix(leaves_d1, leaves_x)
    n = len(V1)
    test_row = W[n]
    atoms = [(float(V1[j]), test_row[j]) for j in range(n) if test_row[j]] + [(INF, test_row[n])]
    if base == "qrf":
        b = 1 - Fraction(alpha)
    else:
        t = lcp_threshold(np.array(W, dtype=float), V1, float(alpha)).t
        b = _mass(W, V1, t)  # alpha-tilde(x)
    return [quantile(min(Fraction(1), b + a), atoms) for a in a_values]


def a_hat_index(Q: np.ndarray, V2: np.ndarray, alpha: str, epsilon: float) -> tuple[list[int], int, int | None]:
    """Counts per grid value, the required count, and the first grid index reaching it (direct loop)."""
    n2 = len(V2)
    target = 1 - Fraction(alpha) + Fraction(epsilon)
    counts = [sum(1 for i in range(n2) if V2[i] <= Q[i, k]) for k in range(Q.shape[1])]
    required = math.ceil(n2 * target)
    for k, c in enumerate(counts):
        if Fraction(c, n2) >= target:
            return counts, required, k
    return counts, required, None


def mass_at_or_below(leaves_d1: np.ndarray, leaves_x: np.ndarray, V1: np.ndarray, t: float) -> Fraction:
    """F_x((-inf, t]) of the exact LCP test row (1 when t is +inf: the own mass sits there)."""
    return _mass(forest_lcp_matrix(leaves_d1, leaves_x), V1, t)


def _mass(W: list[list[Fraction]], V1: np.ndarray, t: float) -> Fraction:
    n = len(V1)
    return Fraction(1) if t == INF else sum((W[n][j] for j in range(n) if V1[j] <= t), Fraction(0))


# ------------------------------------------------------------- binomial ---
def binomial_tail_exact(n2: int, alpha: str, k: int) -> Fraction:
    """P(Binomial(n2, 1 - alpha) >= k), summed term by term in rationals."""
    p = 1 - Fraction(alpha)
    return sum((math.comb(n2, i) * p**i * (1 - p) ** (n2 - i) for i in range(max(k, 0), n2 + 1)), Fraction(0))


def binomial_k_reference(n2: int, alpha: str, delta: str) -> int:
    """The smallest k in 0..n2+1 with P(Binomial(n2, 1 - alpha) >= k) <= delta.

    Every tail P(X >= k) is built exactly from the point masses, from k = n2 + 1 (tail 0) down,
    and the smallest k whose tail is still <= delta is kept (tails grow as k decreases).
    """
    p = 1 - Fraction(alpha)
    tail, k = Fraction(0), n2 + 1
    while k > 0:
        tail += math.comb(n2, k - 1) * p ** (k - 1) * (1 - p) ** (n2 - k + 1)  # now P(X >= k - 1)
        if tail > Fraction(delta):
            break
        k -= 1
    return k


def smallest_correction(
    leaves_d1: np.ndarray, leaves_x: np.ndarray, V1: np.ndarray, v: float, alpha: str, base: str
) -> tuple[Fraction, bool]:
    """The correction that just covers (x, v), searched in [-1, 1]: (value, above), ordered lexicographically.

    By the key identity v <= Q(u; F) iff F((-inf, v)) < u (u > 0), the point is covered at a
    iff F_x((-inf, v)) < b(x) + a. With no D1 score of the row below v it is covered at every
    level, so from the bottom of the range: (-1, False). Otherwise (F_x((-inf, v)) - b(x), True):
    covered for every a strictly above that value, which is the infimum but not attained.
    """
    W = forest_lcp_matrix(leaves_d1, leaves_x)
    n = len(V1)
    below = [W[n][j] for j in range(n) if V1[j] < v and W[n][j]]
    if not below:
        return Fraction(-1), False
    if base == "qrf":
        b = 1 - Fraction(alpha)
    else:
        b = _mass(W, V1, lcp_threshold(np.array(W, dtype=float), V1, float(alpha)).t)
    return sum(below, Fraction(0)) - b, True


def upper_quantile(a: Fraction, atoms: list[tuple[float, Fraction]]) -> float:
    """Q+(a; F) = inf{t : F(t) > a}: the limit of Q(u; F) as u decreases to a."""
    cum = Fraction(0)
    for v in sorted({v for v, _ in atoms}):
        cum += sum((w for u, w in atoms if u == v), Fraction(0))
        if cum > a:
            return v
    return INF


def pac_row_levels(
    leaves_d1: np.ndarray, leaves_x: np.ndarray, V1: np.ndarray, alpha: str, base: str
) -> tuple[Fraction, list[tuple[float, Fraction]]]:
    """(b(x), atoms of F_x with the own mass at +inf), exactly."""
    W = forest_lcp_matrix(leaves_d1, leaves_x)
    n = len(V1)
    atoms = [(float(V1[j]), W[n][j]) for j in range(n) if W[n][j]] + [(INF, W[n][n])]
    if base == "qrf":
        return 1 - Fraction(alpha), atoms
    return _mass(W, V1, lcp_threshold(np.array(W, dtype=float), V1, float(alpha)).t), atoms

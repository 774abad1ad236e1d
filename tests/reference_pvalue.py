"""Slow references of conformal p-values and of the predictive distribution, from the definitions.

p(x, v) = inf{alpha : v is not in the set at alpha}. The unweighted LCP set depends on alpha only through
m_req(alpha) = ceil((1 - alpha)(n + 1)), which is constant on [j/(n+1), (j+1)/(n+1)): scanning those left ends
in order, with Guan's rule enumerated (reference.lcp_accepts), finds the infimum exactly. Nothing here shares
code with the package.
"""

from __future__ import annotations

from fractions import Fraction

from reference import candidate_levels, exact_m_req, lcp_accepts, quantile
from reference_shift import weighted_lcp_accepts


def lcp_pvalue_reference(W: list[list[Fraction]], V: list[float], v: float) -> Fraction:
    """The smallest alpha = j/(n+1) at which v leaves Guan's LCP set (1 if it never does below alpha = 1)."""
    n = len(V)
    for j in range(n + 1):
        if not lcp_accepts(W, V, v, exact_m_req(Fraction(j, n + 1), n)):
            return Fraction(j, n + 1)
    return Fraction(1)


def weighted_lcp_pvalue_reference(W: list[list[Fraction]], V: list[float], v: float, w: list[Fraction]) -> Fraction:
    """inf{alpha : v leaves the weighted LCP set}, exact (no slack).

    Acceptance at alpha compares covered p-masses with 1 - alpha, so it can only change where 1 - alpha equals
    one of the covered masses met in the scan: the candidates are 1 - (covered mass).
    """
    n = len(V)
    S = list(V) + [v]
    total = sum(w, Fraction(0))
    p = [wi / total for wi in w]
    gamma = candidate_levels(W, S)
    rows = [[(S[j], W[i][j]) for j in range(n + 1)] for i in range(n + 1)]
    masses = {sum((p[i] for i in range(n + 1) if S[i] <= quantile(a, rows[i])), Fraction(0)) for a in gamma}
    for cand in sorted({1 - c for c in masses if 0 <= 1 - c < 1}):
        if not weighted_lcp_accepts(W, V, v, w, cand):
            return cand
    return Fraction(1)


def quantile_reference(W: list[list[Fraction]], V: list[float], tau: Fraction, threshold) -> tuple[float, bool]:
    """Q_tau: the LCP threshold at alpha = 1 - tau (``threshold`` is reference.lcp_threshold_reference)."""
    return threshold(W, V, 1 - tau)

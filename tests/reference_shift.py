"""Slow references of the covariate-shift (weighted) rules, from the definitions, in exact rationals.

Nothing here shares code with the package. ``slack`` adds to 1 - alpha the
tolerance the package states (a score is rejected only once the covered
p-mass reaches 1 - alpha + slack); slack = 0 is the exact definition.
"""

from __future__ import annotations

from fractions import Fraction

from reference import INF, candidate_levels, quantile


def weighted_lcp_accepts(
    W: list[list[Fraction]], V: list[float], v: float, w: list[Fraction], alpha: str, slack: Fraction = Fraction(0)
) -> bool:
    """Is v in the weighted LCP set? alpha-tilde(v) is the smallest a in Gamma whose covered p-mass reaches 1 - alpha.

    p_i = w_i / sum_j w_j over the n + 1 points (the test point's w(x) last).
    """
    n = len(V)
    S = list(V) + [v]
    total = sum(w, Fraction(0))
    p = [wi / total for wi in w]
    gamma = candidate_levels(W, S)
    rows = [[(S[j], W[i][j]) for j in range(n + 1)] for i in range(n + 1)]
    target = 1 - Fraction(alpha) + slack
    for a in sorted(gamma):
        covered = sum((p[i] for i in range(n + 1) if S[i] <= quantile(a, rows[i])), Fraction(0))
        if covered >= target:
            return v <= quantile(a, rows[n])
    return True  # no level reaches the mass: Q is +inf, v accepted


def weighted_lcp_threshold_reference(
    W: list[list[Fraction]], V: list[float], w: list[Fraction], alpha: str, slack: Fraction = Fraction(0)
) -> tuple[float, bool]:
    """(t, closed) of the weighted LCP set, testing v at every score, between scores and beyond.

    Also asserts that the accepted set is downward closed.
    """
    u = sorted(set(V))
    cands: list[tuple[float, str, int]] = [(u[0] - 1.0, "below", -1)]
    for s, val in enumerate(u):
        cands.append((val, "at", s))
        nxt = u[s + 1] if s + 1 < len(u) else val + 1.0
        cands.append(((val + nxt) / 2, "after", s))
    acc = [weighted_lcp_accepts(W, V, c[0], w, alpha, slack) for c in cands]
    first_rej = next((k for k, a in enumerate(acc) if not a), None)
    if first_rej is None:
        return INF, True
    assert not any(acc[first_rej:]), "accepted set is not downward closed"
    assert first_rej > 0
    _, kind, s = cands[first_rej]
    return (u[s], False) if kind == "at" else (u[s], True)


def weighted_split_reference(V: list[float], w: list[Fraction], alpha: str, slack: Fraction = Fraction(0)) -> float:
    """Tibshirani et al.'s weighted split threshold: Q(1 - alpha) of sum_i p_i delta_{V_i} + p_{n+1} delta_{+inf}."""
    n = len(V)
    total = sum(w, Fraction(0))
    atoms = [(V[i], w[i] / total) for i in range(n)] + [(INF, w[n] / total)]
    return quantile(1 - Fraction(alpha) + slack, atoms)

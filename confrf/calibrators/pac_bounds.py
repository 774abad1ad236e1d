"""Sample-size arithmetic of the training-conditional (PAC) calibration step.

Two bounds (``bound=``):

* ``"binomial"`` (exact order statistic): the correction is the k-th smallest of
  the n2 per-point corrections of D2, k the smallest integer with
  P(Binomial(n2, 1 - alpha) >= k) <= delta (:func:`binomial_k`). The D2 coverage
  it asks for is k / n2 = 1 - alpha + epsilon, which defines epsilon here; no
  grid, no union bound.
* ``"hoeffding"`` (the paper's): the correction is picked from a grid of K
  values. One-sided Hoeffding per grid value and a union bound over the K values
  give: with probability at least 1 - delta, every grid value's true coverage
  exceeds its empirical D2 coverage minus epsilon, where
  delta = K exp(-2 n2 epsilon^2)  <=>  epsilon = sqrt(ln(K / delta) / (2 n2)).

:func:`pac_epsilon`, :func:`pac_delta` and :func:`pac_n2` move between n2, delta
and epsilon for either bound; :func:`d2_required_count` is the exact number of
covered D2 points the Hoeffding correction must reach.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.stats import binom

from .._validation import alpha_fraction, check_alpha, check_int, check_real
from ..exceptions import InputError

__all__ = ["pac_epsilon", "pac_delta", "pac_n2", "binomial_k", "binomial_tail", "d2_required_count", "min_d2_size"]

BOUNDS = ("binomial", "hoeffding")


def _count(value: object, name: str, what: str) -> int:
    return check_int(value, name, hint=what)


def _n2(value: object) -> int:
    """The size ``n2`` of the correction part D2, checked as every bound here needs it."""
    return _count(value, "n2", "size of the correction part D2")


def open_unit(value: object, name: str) -> float:
    """``value`` as a float strictly between 0 and 1 (the shared checker, with a hint)."""
    return check_real(value, name, low=0.0, high=1.0, hint=f"e.g. {name}=0.1")


def _positive(value: object, name: str) -> float:
    return check_real(value, name, low=0.0, high=math.inf, hint="a finite number > 0")


def _hoeffding_epsilon(n2: int, K: int | None, delta: float) -> float:
    """Hoeffding margin epsilon = sqrt(ln(K / delta) / (2 n2)).

    Parameters
    ----------
    n2 : int
        Number of points in the correction part D2 (>= 1).
    K : int
        Number of values in the correction grid (>= 1); the union bound runs
        over all of them.
    delta : float
        Allowed failure probability, in (0, 1).

    Returns
    -------
    float
        epsilon, rounded up to the next float so that K exp(-2 n2 epsilon^2)
        never exceeds ``delta`` through rounding.

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import _hoeffding_epsilon
    >>> round(_hoeffding_epsilon(1000, 20, 0.1), 4)
    0.0515
    """
    n2 = _n2(n2)
    K = _count(K, "K", "number of grid values")
    delta = open_unit(delta, "delta")
    return float(np.nextafter(math.sqrt(math.log(K / delta) / (2.0 * n2)), math.inf))


def _hoeffding_delta(n2: int, K: int | None, epsilon: float) -> float:
    """Failure probability delta = K exp(-2 n2 epsilon^2), the inverse of the Hoeffding epsilon.

    Values of 1 or more mean that the bound says nothing.

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import _hoeffding_delta, _hoeffding_epsilon
    >>> round(_hoeffding_delta(1000, 20, _hoeffding_epsilon(1000, 20, 0.1)), 6)
    0.1
    """
    n2 = _n2(n2)
    K = _count(K, "K", "number of grid values")
    epsilon = _positive(epsilon, "epsilon")
    return K * math.exp(-2.0 * n2 * epsilon * epsilon)


def _hoeffding_n2(K: int | None, delta: float, epsilon: float) -> int:
    """Smallest D2 size n2 with ``pac_epsilon(n2, K, delta) <= epsilon`` (Hoeffding).

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import _hoeffding_n2
    >>> _hoeffding_n2(20, 0.1, 0.05)
    1060
    """
    K = _count(K, "K", "number of grid values")
    delta = open_unit(delta, "delta")
    epsilon = _positive(epsilon, "epsilon")
    n = max(1, math.ceil(math.log(K / delta) / (2.0 * epsilon * epsilon)))
    # settle rounding at the boundary with the very function users will call
    while n > 1 and _hoeffding_epsilon(n - 1, K, delta) <= epsilon:
        n -= 1
    while _hoeffding_epsilon(n, K, delta) > epsilon:
        n += 1
    return n


def min_d2_size(alpha: float, K: int | None, delta: float, bound: str = "hoeffding") -> int:
    """Smallest n2 below which the PAC correction can only give infinite intervals.

    Hoeffding: epsilon < alpha. Binomial: k <= n2, i.e. (1 - alpha)^n2 <= delta.
    """
    alpha = check_alpha(alpha)
    if bound == "binomial":
        return pac_n2(alpha=alpha, delta=delta, bound="binomial")
    n = _hoeffding_n2(K, delta, alpha)
    while _hoeffding_epsilon(n, K, delta) >= alpha:
        n += 1
    return n


def d2_required_count(n2: int, alpha: float, epsilon: float) -> int:
    """Covered D2 points needed: the least c with c / n2 >= 1 - alpha + epsilon, exactly.

    ``alpha`` is read as the decimal typed (0.1 is 1/10) and ``epsilon`` exactly
    as the float given (0 for the paper's form), so no rounding can lower the
    target.

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import d2_required_count
    >>> d2_required_count(100, 0.1, 0.0)    # float 100 * (1 - 0.1) is 90.00000000000001
    90
    """
    n2 = _n2(n2)
    a = alpha_fraction(check_alpha(alpha))
    return math.ceil(n2 * (1 - a + Fraction(float(epsilon))))


# ------------------------------------------------------------- binomial ---
#: above this n2 the boundary check of binomial_k is done in floats with a relative margin
_EXACT_MAX_N2 = 4000
_MARGIN = 1e-9
#: the binomial tail is evaluated at every k <= n2 (8 bytes each): beyond this no data set has such a D2
_MAX_N2 = 10**7


def _check_planned_n2(n2: int, alpha: float, delta: float, why: str = "") -> None:
    if n2 > _MAX_N2:
        raise InputError(
            f"a correction part D2 of {n2:.3g} points {why or ''}is beyond the {_MAX_N2:.0e} points the exact binomial "
            f"tail is computed for (and beyond any data set) at alpha={alpha!r}, delta={delta!r}; choose a larger "
            "alpha, delta or epsilon."
        )


def _exact_tail_le(n2: int, alpha: float, k: int, delta: float) -> bool:
    """P(Binomial(n2, 1 - alpha) >= k) <= delta in exact rationals (alpha and delta read as typed)."""
    p = 1 - alpha_fraction(alpha)
    P, Q, D = p.numerator, p.denominator - p.numerator, p.denominator
    total = sum(math.comb(n2, i) * P**i * Q ** (n2 - i) for i in range(max(k, 0), n2 + 1))
    return Fraction(total, D**n2) <= Fraction(repr(float(delta)))


def binomial_tail(n2: int, alpha: float, k: int) -> float:
    """P(Binomial(n2, 1 - alpha) >= k): the failure probability of the k-th order statistic.

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import binomial_tail
    >>> round(binomial_tail(266, 0.1, 247), 4)
    0.0685
    """
    n2 = _n2(n2)
    alpha = check_alpha(alpha)
    return float(binom.sf(int(k) - 1, n2, 1.0 - alpha))


def binomial_k(n2: int, alpha: float, delta: float) -> int:
    """Smallest k with P(Binomial(n2, 1 - alpha) >= k) <= delta; n2 + 1 when no k <= n2 qualifies.

    The correction is then the k-th smallest per-point correction of D2, and
    P(coverage >= 1 - alpha) >= 1 - delta for i.i.d. data. k = n2 + 1 means
    every interval is infinite (it happens when (1 - alpha)^n2 > delta).
    ``alpha`` and ``delta`` are read as the decimals typed; the tail is checked
    exactly in rationals at the boundary for n2 <= 4000 and with a relative
    margin of 1e-9 (towards a larger k) above.

    Examples
    --------
    >>> from confrf.calibrators.pac_bounds import binomial_k
    >>> binomial_k(266, 0.1, 0.1), binomial_k(667, 0.1, 0.1), binomial_k(21, 0.1, 0.1)
    (247, 611, 22)
    """
    n2 = _n2(n2)
    alpha = check_alpha(alpha)
    delta = open_unit(delta, "delta")
    _check_planned_n2(n2, alpha, delta)
    tails = binom.sf(np.arange(-1, n2 + 1), n2, 1.0 - alpha)  # tails[k] = P(X >= k), k = 0..n2+1
    ok = tails <= delta
    k = int(np.argmax(ok)) if ok.any() else n2 + 1  # the tail is non-increasing in k
    if n2 <= _EXACT_MAX_N2:
        if k <= n2 and abs(tails[k] - delta) <= 1e-6 * delta:
            while k <= n2 and not _exact_tail_le(n2, alpha, k, delta):
                k += 1
        if 1 < k and abs(tails[k - 1] - delta) <= 1e-6 * delta:
            while k > 1 and _exact_tail_le(n2, alpha, k - 1, delta):
                k -= 1
    else:
        while k <= n2 and tails[k] > delta * (1 - _MARGIN):
            k += 1
    return k


def _binomial_epsilon(n2: int, alpha: float, delta: float) -> float:
    k = binomial_k(n2, alpha, delta)
    return math.inf if k > n2 else k / n2 - (1.0 - alpha)


def _binomial_delta(n2: int, alpha: float, epsilon: float) -> float:
    # a count within 1e-9 of an integer is that integer: pac_epsilon's k/n2 - (1 - alpha) round-trips
    k = math.ceil(n2 * (1 - alpha_fraction(alpha) + Fraction(float(epsilon))) - Fraction(1, 10**9))
    return 0.0 if k > n2 else binomial_tail(n2, alpha, max(k, 0))


def _binomial_n2(alpha: float, delta: float, epsilon: float | None) -> int:
    # finite intervals need k <= n2, i.e. (1 - alpha)^n2 <= delta
    n = max(1, math.ceil(math.log(delta) / math.log1p(-alpha)) - 2)
    _check_planned_n2(n, alpha, delta, why="(the fewest that give finite intervals) ")
    while binomial_k(n, alpha, delta) > n:
        n += 1
    if epsilon is None:
        return n
    # the excess k/n2 - (1 - alpha) is a saw-tooth (teeth of height ~1/n2) under a decreasing envelope:
    # bracket by doubling, bisect as if monotone, then scan the stretch below for an earlier tooth
    hi = n
    while _binomial_epsilon(hi, alpha, delta) > epsilon:
        hi *= 2
    lo = max(n, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if _binomial_epsilon(mid, alpha, delta) <= epsilon:
            hi = mid
        else:
            lo = mid + 1
    for m in range(max(n, hi - max(50, hi // 10)), hi):
        if _binomial_epsilon(m, alpha, delta) <= epsilon:
            return m
    return hi


# ------------------------------------------------------ public planning ---
def _resolve(bound: str | None, K: object, alpha: object) -> str:
    if bound is None:
        bound = "hoeffding" if K is not None else "binomial"
    if bound not in BOUNDS:
        raise InputError(f"bound must be one of {list(BOUNDS)}, got {bound!r}.")
    if bound == "hoeffding" and K is None:
        raise InputError("bound='hoeffding' needs K, the number of grid values (e.g. K=20).")
    if bound == "binomial":
        if K is not None:
            raise InputError("K (grid values) applies only to bound='hoeffding'; the binomial bound has no grid.")
        if alpha is None:
            raise InputError("bound='binomial' needs alpha (the miscoverage level), e.g. alpha=0.1.")
    return bound


def pac_epsilon(
    n2: int, K: int | None = None, delta: float = 0.1, *, alpha: float | None = None, bound: str | None = None
) -> float:
    """The D2 coverage excess epsilon of a PAC correction on n2 points.

    Hoeffding (``K`` given, the default then): epsilon = sqrt(ln(K / delta) / (2 n2)),
    rounded up to the next float so that K exp(-2 n2 epsilon^2) never exceeds
    ``delta`` through rounding; the D2 target is 1 - alpha + epsilon.
    Binomial (``bound="binomial"``, needs ``alpha``): epsilon = k / n2 - (1 - alpha),
    k = :func:`binomial_k`; ``inf`` when k > n2 (only infinite intervals).

    Parameters
    ----------
    n2 : int
        Number of points in the correction part D2 (>= 1).
    K : int, optional
        Number of values in the correction grid (Hoeffding; the union bound runs
        over all of them).
    delta : float
        Allowed failure probability, in (0, 1).
    alpha : float, optional
        Miscoverage level (binomial).
    bound : {"hoeffding", "binomial"}, optional
        Default: "hoeffding" when ``K`` is given, else "binomial".

    Returns
    -------
    float

    Examples
    --------
    >>> from confrf import pac_epsilon
    >>> round(pac_epsilon(1000, 20, 0.1), 4)
    0.0515
    >>> round(pac_epsilon(1000, alpha=0.1, delta=0.1), 4)   # binomial: k = 913
    0.013
    """
    if _resolve(bound, K, alpha) == "hoeffding":
        return _hoeffding_epsilon(n2, K, delta)
    return _binomial_epsilon(_n2(n2), check_alpha(alpha), open_unit(delta, "delta"))


def pac_delta(
    n2: int, K: int | None = None, epsilon: float | None = None, *, alpha: float | None = None, bound: str | None = None
) -> float:
    """Failure probability delta of a D2 target 1 - alpha + epsilon, the inverse of :func:`pac_epsilon`.

    Hoeffding: K exp(-2 n2 epsilon^2) (values of 1 or more say nothing).
    Binomial: P(Binomial(n2, 1 - alpha) >= ceil(n2 (1 - alpha + epsilon))), a count within 1e-9
    of an integer read as that integer.

    Examples
    --------
    >>> from confrf import pac_delta, pac_epsilon
    >>> round(pac_delta(1000, 20, pac_epsilon(1000, 20, 0.1)), 6)
    0.1
    >>> round(pac_delta(1000, epsilon=0.016, alpha=0.1), 4)   # P(Binomial(1000, 0.9) >= 916)
    0.0485
    """
    if epsilon is None:
        raise InputError("epsilon (the D2 coverage excess) is required, e.g. epsilon=0.05.")
    if _resolve(bound, K, alpha) == "hoeffding":
        return _hoeffding_delta(n2, K, epsilon)
    return _binomial_delta(_n2(n2), check_alpha(alpha), _positive(epsilon, "epsilon"))


def pac_n2(
    K: int | None = None,
    delta: float = 0.1,
    epsilon: float | None = None,
    *,
    alpha: float | None = None,
    bound: str | None = None,
) -> int:
    """D2 size to plan for: the smallest n2 with ``pac_epsilon(n2, ...) <= epsilon``.

    Binomial without ``epsilon``: the smallest n2 that can give finite intervals
    at all (k <= n2, i.e. (1 - alpha)^n2 <= delta). Binomial with ``epsilon``:
    the smallest n2 whose D2 target k / n2 is at most 1 - alpha + epsilon (the
    excess is a saw-tooth in n2; a few larger n2 may exceed epsilon again by less
    than 1 / n2).

    Examples
    --------
    >>> from confrf import pac_n2
    >>> pac_n2(20, 0.1, 0.05)                                # Hoeffding, 20 grid values
    1060
    >>> pac_n2(alpha=0.1, delta=0.1)                         # binomial: smallest n2 for finite intervals
    22
    >>> pac_n2(alpha=0.1, delta=0.1, epsilon=0.05)           # binomial: D2 target <= 0.95
    78
    """
    b = _resolve(bound, K, alpha)
    delta = open_unit(delta, "delta")
    if b == "hoeffding":
        if epsilon is None:
            raise InputError("bound='hoeffding' needs epsilon, the D2 coverage excess, e.g. epsilon=0.05.")
        return _hoeffding_n2(K, delta, epsilon)
    return _binomial_n2(check_alpha(alpha), delta, None if epsilon is None else _positive(epsilon, "epsilon"))

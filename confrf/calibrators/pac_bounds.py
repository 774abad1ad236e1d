"""Sample-size arithmetic of the training-conditional (PAC) calibration step.

The correction is picked on a held-out part D2 of n2 i.i.d. points from a grid
of K values. One-sided Hoeffding per grid value and a union bound over the K
values give: with probability at least 1 - delta, every grid value's true
coverage exceeds its empirical D2 coverage minus epsilon, where

    delta = K exp(-2 n2 epsilon^2)   <=>   epsilon = sqrt(ln(K / delta) / (2 n2)).

:func:`pac_epsilon`, :func:`pac_delta` and :func:`pac_n2` move between the three
quantities; :func:`d2_required_count` is the exact number of covered D2 points
the correction must reach.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validation import alpha_fraction, check_alpha, check_int, check_real
from ..exceptions import InputError

__all__ = ["pac_epsilon", "pac_delta", "pac_n2", "d2_required_count", "min_d2_size"]


def _count(value: object, name: str, what: str) -> int:
    return check_int(value, name, hint=what)


def _open_unit(value: object, name: str) -> float:
    return check_real(value, name, low=0.0, high=1.0, hint=f"e.g. {name}=0.1")


def _positive(value: object, name: str) -> float:
    return check_real(value, name, low=0.0, high=math.inf, hint="a finite number > 0")


def pac_epsilon(n2: int, K: int, delta: float) -> float:
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
    >>> from confrf import pac_epsilon
    >>> round(pac_epsilon(1000, 20, 0.1), 4)
    0.0515
    """
    n2 = _count(n2, "n2", "size of the correction part D2")
    K = _count(K, "K", "number of grid values")
    delta = _open_unit(delta, "delta")
    return float(np.nextafter(math.sqrt(math.log(K / delta) / (2.0 * n2)), math.inf))


def pac_delta(n2: int, K: int, epsilon: float) -> float:
    """Failure probability delta = K exp(-2 n2 epsilon^2), the inverse of :func:`pac_epsilon`.

    Values of 1 or more mean that the bound says nothing.

    Examples
    --------
    >>> from confrf import pac_delta, pac_epsilon
    >>> round(pac_delta(1000, 20, pac_epsilon(1000, 20, 0.1)), 6)
    0.1
    """
    n2 = _count(n2, "n2", "size of the correction part D2")
    K = _count(K, "K", "number of grid values")
    epsilon = _positive(epsilon, "epsilon")
    return K * math.exp(-2.0 * n2 * epsilon * epsilon)


def pac_n2(K: int, delta: float, epsilon: float) -> int:
    """Smallest D2 size n2 with ``pac_epsilon(n2, K, delta) <= epsilon``.

    Examples
    --------
    >>> from confrf import pac_n2
    >>> pac_n2(20, 0.1, 0.05)
    1060
    """
    K = _count(K, "K", "number of grid values")
    delta = _open_unit(delta, "delta")
    epsilon = _positive(epsilon, "epsilon")
    n = max(1, math.ceil(math.log(K / delta) / (2.0 * epsilon * epsilon)))
    # settle rounding at the boundary with the very function users will call
    while n > 1 and pac_epsilon(n - 1, K, delta) <= epsilon:
        n -= 1
    while pac_epsilon(n, K, delta) > epsilon:
        n += 1
    return n


def min_d2_size(alpha: float, K: int, delta: float) -> int:
    """Smallest n2 with epsilon < alpha, below which the PAC target cannot be met."""
    alpha = check_alpha(alpha)
    n = pac_n2(K, delta, alpha)
    while pac_epsilon(n, K, delta) >= alpha:
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
    n2 = _count(n2, "n2", "size of the correction part D2")
    a = alpha_fraction(check_alpha(alpha))
    return math.ceil(n2 * (1 - a + Fraction(float(epsilon))))

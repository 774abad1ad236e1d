"""The weighted conformal rule every calibrator that takes likelihood ratios shares.

With w(x) = dP_target(x) / dP_calibration(x), the calibration points and a
target test point are *weighted exchangeable* (Tibshirani, Barber, Candès and
Ramdas, 2019): given the multiset of the n + 1 points, the test point is point
i with probability p_i = w(X_i) / (sum_j w(X_j) + w(x)). The weighted rule of
docs/theory.md ("Covariate shift") replaces the count of the unweighted rule
by the p-mass: v is accepted iff

    sum_{i <= n} w_i 1{pi_i(v) < theta(v)} < (1 - alpha) (sum_{j <= n} w_j + w(x)),

which for split conformal is Tibshirani et al.'s weighted quantile. This module
holds the conformal points' weights (:class:`ShiftWeights`), the requirement
with its stated tolerance, weighted split conformal, the effective-sample-size
warning and the refusal of the training-conditional (PAC) calibrators. It
imports no calibrator and no localizer: both import it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import min_calibration_size
from .._warnings import user_stacklevel
from ..exceptions import InfiniteIntervalWarning

#: relative tolerance of the weighted comparison: accept while the computed mass < (1 - alpha + tol) * total.
#: Only ever enlarges a set; at least 4 (n + 2) eps, which bounds the rounding error of a sum of n weights.
SHIFT_TOL = 1e-9


def shift_tolerance(n: int) -> float:
    """tol = max(SHIFT_TOL, 4 (n + 2) eps) of a weighted rule over n conformal points (docs/theory.md, "Tolerance")."""
    return max(SHIFT_TOL, 4.0 * (int(n) + 2) * np.finfo(np.float64).eps)


def weighted_requirement(alpha: float, total: float, n: int, w_test: np.ndarray) -> np.ndarray:
    """(1 - alpha + tol)(total + w(x)) per test row: a score is rejected once its weighted count reaches it.

    ``total``: the sum of the n conformal points' ratios; tol is
    :func:`shift_tolerance`. +inf where no point carries weight (a group of
    zero ratios and w(x) = 0): no evidence, nothing is rejected.

    Examples
    --------
    >>> import numpy as np
    >>> float(weighted_requirement(0.5, 3.0, 3, np.array([1.0]))[0]) > 2.0
    True
    """
    tot = float(total) + np.asarray(w_test, dtype=np.float64)
    return np.where(tot > 0, (1.0 - float(alpha) + shift_tolerance(n)) * tot, np.inf)


@dataclass(frozen=True)
class ShiftWeights:
    """The ratios w(X_i) of the conformal points, in the calibrator's order.

    Attributes
    ----------
    w : ndarray
        One ratio per conformal point.
    """

    w: np.ndarray

    @property
    def n(self) -> int:
        return int(self.w.shape[0])

    @property
    def total(self) -> float:
        return float(np.sum(self.w))

    @property
    def constant(self) -> float | None:
        """The common value when every ratio is equal (then the exact integer rule applies), else None."""
        return float(self.w[0]) if self.n and bool(np.all(self.w == self.w[0])) else None

    @property
    def ess(self) -> float:
        """Kish's effective sample size (sum w)^2 / sum w^2."""
        s2 = float(np.sum(self.w**2))
        return self.total**2 / s2 if s2 > 0 else 0.0

    @property
    def max_share(self) -> float:
        """The largest weight's share of the total."""
        return float(np.max(self.w)) / self.total if self.n else float("nan")

    def unweighted_rows(self, w_test: np.ndarray) -> np.ndarray:
        """Test rows whose p_i are all 1/(n+1): every ratio, the test row's included, is one value."""
        c = self.constant
        return np.zeros(w_test.shape[0], dtype=bool) if c is None else w_test == c

    def requirement(self, alpha: float, w_test: np.ndarray) -> np.ndarray:
        """(1 - alpha)(sum_j w_j + w(x)) plus the tolerance, per test row: v is rejected once its mass reaches it."""
        return weighted_requirement(alpha, self.total, self.n, w_test)


def distinct_cumulative(sorted_scores: np.ndarray, w_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct scores u_1 < ... < u_r and the weight at or below each, from scores sorted ascending."""
    if sorted_scores.size == 0:
        return sorted_scores.copy(), sorted_scores.copy()
    last = np.flatnonzero(np.append(sorted_scores[1:] != sorted_scores[:-1], True))
    return sorted_scores[last], np.cumsum(w_sorted)[last]


def weighted_split_thresholds(
    u: np.ndarray, cum: np.ndarray, shift: ShiftWeights, w_test: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """(t, level) of weighted split conformal for every test row.

    t is the smallest distinct score u_j whose weight at or below it reaches
    (1 - alpha)(sum w + w(x)) (the weighted quantile with mass w(x) at +inf), +inf
    when none does; level is p-mass at or below t.
    """
    req = shift.requirement(alpha, w_test)
    j = np.searchsorted(cum, req, side="left")
    found = j < u.shape[0]
    t = np.full(w_test.shape[0], np.inf)
    level = np.ones(w_test.shape[0])
    t[found] = u[j[found]]
    level[found] = cum[j[found]] / (shift.total + w_test[found])
    return t, level


#: why a calibrator refuses likelihood ratios (the others weight them exactly)
PAC_REFUSAL = (
    "the training-conditional (PAC) guarantee needs i.i.d. draws of the population the coverage is about, and "
    "under covariate shift the calibration points come from the other population; its binomial (or Hoeffding) "
    "argument does not carry over to weights. Use guarantee='marginal' (lcp-rf, split-g, lcp-rf-g) or "
    "method='split' / 'lcp-rf', whose weighted versions are exact."
)


def too_small_ess_message(ess: float, alpha: float, *, sets: bool = False) -> str | None:
    """A warning when the calibration weights' effective sample size is too small for finite intervals.

    ``sets``: said for prediction sets (an infinite threshold puts every class in the set).
    """
    need = min_calibration_size(alpha)
    if ess >= need:
        return None
    finite, infinite = ("finite thresholds", "full sets") if sets else ("finite intervals", "infinite intervals")
    return (
        f"the likelihood ratios leave an effective sample size of {ess:.1f} calibration points, fewer than the "
        f"{need} needed for {finite} at alpha={alpha:g}: expect many {infinite}. Give more "
        "calibration data from where the target population lies, or a larger alpha."
    )


def warn_small_ess(shift: ShiftWeights | None, alpha: float, *, sets: bool = False) -> None:
    """After a calibration: :func:`too_small_ess_message` of its weights (None: unweighted) as a warning."""
    message = None if shift is None else too_small_ess_message(shift.ess, alpha, sets=sets)
    if message:
        warnings.warn(message, InfiniteIntervalWarning, stacklevel=user_stacklevel())

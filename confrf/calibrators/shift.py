"""Covariate shift: the weighted conformal rule of every calibrator that takes likelihood ratios.

With w(x) = dP_target(x) / dP_calibration(x), the calibration points and a
target test point are *weighted exchangeable* (Tibshirani, Barber, Candès and
Ramdas, 2019): given the multiset of the n + 1 points, the test point is point
i with probability p_i = w(X_i) / (sum_j w(X_j) + w(x)). The weighted rule of
docs/theory.md ("Covariate shift") replaces the count of the unweighted rule
by the p-mass: v is accepted iff

    sum_{i <= n} w_i 1{pi_i(v) < theta(v)} < (1 - alpha) (sum_{j <= n} w_j + w(x)),

which for split conformal is Tibshirani et al.'s weighted quantile. This module
holds what every weighted calibrator shares: the checks of the ratios, the
requirement with its stated tolerance, weighted split conformal, and the exact
integer path taken when every weight is equal (then the result is the
unweighted one bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import min_calibration_size
from ..exceptions import InputError
from ..localizers.weighted import SHIFT_TOL as SHIFT_TOL  # the tolerance's home is the kernels' layer
from ..localizers.weighted import weighted_requirement
from .base import Guarantee


def check_ratio(values: object, n: int, what: str, *, name: str = "likelihood_ratio", allow_all_zero: bool = False):
    """``values`` as a float array of n non-negative finite ratios, with an error that names the problem and the fix.

    Examples
    --------
    >>> check_ratio([1.0, 2.0], 2, "the calibration rows").tolist()
    [1.0, 2.0]
    """
    try:
        w = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} of {what} must be numbers ({exc}); give one non-negative number per row.") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise InputError(f"{name} of {what} must hold one number per row ({n}), got shape {w.shape}.")
    bad = np.flatnonzero(np.isnan(w))
    if bad.size:
        raise InputError(
            f"{name} of {what} is missing (NaN) in {bad.size} row(s), e.g. position {int(bad[0])}; every row needs "
            "a ratio: fill them in or drop those rows."
        )
    bad = np.flatnonzero(np.isinf(w))
    if bad.size:
        raise InputError(
            f"{name} of {what} is infinite in {bad.size} row(s), e.g. position {int(bad[0])}; an infinite "
            "ratio means a point outside the calibration population's support, where no calibration evidence "
            "exists: drop those rows, or cap the ratio."
        )
    bad = np.flatnonzero(w < 0)
    if bad.size:
        raise InputError(
            f"{name} of {what} is negative in {bad.size} row(s), e.g. {w[bad[0]]!r} at position {int(bad[0])}; "
            "a likelihood ratio (or a case weight) is a ratio of densities, >= 0."
            if name == "likelihood_ratio"
            else f"{name} of {what} is negative in {bad.size} row(s), e.g. {w[bad[0]]!r} at position "
            f"{int(bad[0])}; case weights must be >= 0."
        )
    if n and not allow_all_zero and not np.any(w > 0):
        raise InputError(
            f"{name} of {what} is 0 in every row, so no point carries any weight; check the column or "
            "expression (a likelihood ratio is positive wherever the target population can be)."
        )
    return w


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


def new_row_ratios(likelihood_ratio: object, m: int, weighted: bool) -> np.ndarray | None:
    """The test rows' ratios for a calibrator fitted with (``weighted``) or without ratios, checked."""
    if not weighted:
        if likelihood_ratio is not None:
            raise InputError(
                "likelihood_ratio was given for new rows, but the calibration used no ratios; calibrate "
                "with likelihood_ratio= (conformalize) to weight for covariate shift, or drop it here."
            )
        return None
    if likelihood_ratio is None:
        raise InputError(
            "the calibration was weighted for covariate shift: give the new rows' likelihood ratios, "
            "likelihood_ratio=<one number per row> (from the same source as the calibration rows')."
        )
    return check_ratio(likelihood_ratio, m, "the new rows", allow_all_zero=True)


def calibration_ratios(likelihood_ratio: Any, X: np.ndarray) -> tuple[np.ndarray | None, Any]:
    """(the calibration rows' ratios, checked; the ratio function when one was given, else None).

    ``likelihood_ratio`` is None, one number per row of X, or a function
    ``w(X)`` of design rows (e.g. a fitted :class:`confrf.shift.RatioEstimator`),
    which the estimators keep to give new rows their ratios.

    Examples
    --------
    >>> import numpy as np
    >>> w, model = calibration_ratios(lambda X: np.exp(X[:, 0]), np.zeros((2, 1)))
    >>> w.tolist(), callable(model)
    ([1.0, 1.0], True)
    """
    if likelihood_ratio is None:
        return None, None
    model = likelihood_ratio if callable(likelihood_ratio) else None
    values = model(X) if model is not None else likelihood_ratio
    return check_ratio(values, X.shape[0], "the calibration rows"), model


def prediction_ratios(estimator: Any, X: np.ndarray, likelihood_ratio: Any) -> np.ndarray | None:
    """New rows' ratios for an estimator calibrated with ``calib_ratio_`` / ``ratio_model_`` (or without), checked.

    A ratio function kept at calibration gives them when none is passed.
    """
    weighted = estimator.calib_ratio_ is not None
    model = getattr(estimator, "ratio_model_", None)
    if likelihood_ratio is None and weighted and model is not None:
        likelihood_ratio = model(X)
    return new_row_ratios(likelihood_ratio, X.shape[0], weighted)


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


def shift_guarantee(base: Guarantee, alpha: float, estimated: bool) -> Guarantee:
    """The statement of a weighted calibration: for the target population, exact with a known ratio."""
    if not base.certified:
        return Guarantee(
            base.kind,
            False,
            base.sentence + " The calibration is weighted for covariate shift (likelihood ratios), but the "
            "statement above is not certified in the first place.",
        )
    a = f"{1 - alpha:g}"
    if base.kind == "class-conditional":
        # within class k the target's law of x is w(x) times the calibration's, up to a constant (docs/theory.md)
        stmt, error, after = "P(Y in interval | Y = k) >= ", "E_k|w_hat - w| / 2", " for every class k"
        norm = "within class k"
    else:
        within = " within every group of the table" if base.kind == "groupwise" else ""
        stmt, error, after = f"P(Y in interval){within} >= ", "E|w_hat - w| / 2", ""
        norm = "on the calibration population"
    also = " (hence also marginally)" if base.kind in ("groupwise", "class-conditional") else ""
    if estimated:
        return Guarantee(
            f"{base.kind} (target, estimated ratio)",
            False,
            f"Approximate: for a target-population row, {stmt}{a} - {error}{after}{also} (Lei and Candes, 2021), "
            f"w_hat the estimated likelihood ratio (normalized to mean 1 {norm}) and w the true one; exact only if "
            "w_hat = w. Needs covariate shift (P(Y | X) the same in both populations) and i.i.d. calibration points.",
        )
    return Guarantee(
        f"{base.kind} (target)",
        True,
        f"For a target-population row, {stmt}{a}{after}{also} exactly in finite samples "
        "(weighted exchangeability, Tibshirani et al. 2019), if the likelihood ratio given is "
        "dP_target(x) / dP_calibration(x) up to a constant, P(Y | X) is the same in both populations "
        "(covariate shift) and the calibration points are i.i.d.",
    )


def too_small_ess_message(ess: float, alpha: float) -> str | None:
    """A warning when the calibration weights' effective sample size is too small for finite intervals."""
    need = min_calibration_size(alpha)
    if ess >= need:
        return None
    return (
        f"the likelihood ratios leave an effective sample size of {ess:.1f} calibration points, fewer than the "
        f"{need} needed for finite intervals at alpha={alpha:g}: expect many infinite intervals. Give more "
        "calibration data from where the target population lies, or a larger alpha."
    )

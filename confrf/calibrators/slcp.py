"""SLCP: split localized conformal prediction (Han, Tang, Ghosh & Liu, 2022).

A kernel (Nadaraya-Watson) estimate of the scores' conditional distribution is
learned on reference data; its (1 - alpha)-quantile q(x) is a fixed function
when the calibration set is used. Split conformal on the shifted calibration
scores V_i - q(X_i) gives the correction Q, and the test score set is
{v : v - q(x) <= Q} = (-inf, q(x) + Q]: split conformal for the score
V - q(X), hence exact marginal coverage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docstrings import fill
from .._validation import as_float_matrix, check_fraction
from ..localizers.kernel import NadarayaWatsonLocalizer
from ..shift.value import new_row_ratios
from ..shift.weighted import distinct_cumulative, weighted_split_thresholds
from ._reference import ReferenceData
from .base import Calibrator, Thresholds
from .registry import MethodSpec, register
from .split import split_threshold


@fill
class SLCPCalibrator(ReferenceData, Calibrator):
    """Split localized conformal prediction with a kernel conditional distribution.

    {{kernel_option}}
    bandwidth : float or "auto"
        In standardized units; "auto" is Han et al.'s median heuristic.
    reference_size : float
        With no training part (``prefit=True``), the share of the calibration
        set held out as the reference set.

    Notes
    -----
    Han et al. learn the conditional distribution on the *training* residuals.
    Here these are *out-of-fold* training scores (K-fold cross-fitting of the
    base model(s)): their reference code scores the training points with the
    model fitted on them, and in-sample residuals of a flexible model are much
    smaller than residuals of new points, so the local quantile is biased
    towards 0 and the split correction ends up doing all the work (SLCP then
    behaves like SPLIT, as the LCP-RF paper observes). The local quantile is
    at level 1 - alpha (the paper's C^S(x) = mu(x) +- (Q(1 - alpha; F^S(.|x)) + Q)),
    recomputed for every alpha asked at prediction time.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators import SLCPCalibrator
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); V = X[:, 0] * rng.exponential(size=400)
    >>> cal = SLCPCalibrator().calibrate(X, V, alpha=0.1, rng=rng)
    >>> cal.sizes()
    {'reference': 200, 'conformal': 200}
    >>> th = cal.thresholds(np.array([[0.1, 0.5], [0.9, 0.5]]), 0.1)
    >>> bool(th.t[0] < th.t[1])
    True
    """

    name = "slcp"
    localizer_title = "Kernel localizer"
    learned_on_reference = "the local quantile was"
    supports_shift = True

    def __init__(self, kernel: str = "gaussian", bandwidth: float | str = "auto", reference_size: float = 0.5) -> None:
        self.localizer = NadarayaWatsonLocalizer(kernel=kernel, bandwidth=bandwidth)
        self.reference_size = check_fraction(reference_size, "reference_size")

    def calibrate(self, X, scores, *, alpha, rng, likelihood_ratio=None) -> SLCPCalibrator:
        Xc, Vc, (Xr, Vr), rng, shift = self._split_reference(X, scores, alpha, rng, likelihood_ratio)
        self.localizer.fit(Xr, Vr, rng=rng)
        self.X_, self.scores_ = Xc, Vc
        self.shift_ = shift
        self._shifted_sorted: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        return self

    def _shifted_scores(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """The shifted calibration scores V_i - q(X_i), sorted, and the order that sorts them."""
        a = float(alpha)
        cache = self._shifted_sorted
        if a not in cache:
            q_cal, _ = self.localizer.quantiles(self.X_, 1.0 - a)
            shifted = self.scores_ - q_cal
            order = np.argsort(shifted, kind="stable")
            cache[a] = (shifted[order], order)
        return cache[a]

    def correction(self, alpha: float) -> float:
        """Q: the split-conformal quantile of the shifted calibration scores V_i - q(X_i)."""
        return split_threshold(self._shifted_scores(alpha)[0], float(alpha))[0]

    def prepare(self, alpha: float) -> None:
        self._shifted_scores(alpha)

    def thresholds(self, X, alpha, likelihood_ratio=None) -> Thresholds:
        shift = self.shift_
        X = as_float_matrix(X, "X")
        w_test = new_row_ratios(likelihood_ratio, X.shape[0], shift is not None)
        Q = np.full(X.shape[0], self.correction(alpha))
        if shift is not None:  # weighted split conformal of V - q(X): the correction depends on w(x)
            assert w_test is not None  # new_row_ratios gives the new rows' ratios whenever the calibration was weighted
            weighted = ~shift.unweighted_rows(w_test)
            sorted_shifted, order = self._shifted_scores(alpha)
            distinct = distinct_cumulative(sorted_shifted, shift.w[order])
            Q[weighted] = weighted_split_thresholds(*distinct, shift, w_test[weighted], alpha)[0]
        q, level = self.localizer.quantiles(X, 1.0 - alpha, offset=Q)
        t = q + Q  # q is finite: Q = inf gives inf
        return Thresholds(t, np.ones(t.shape[0], dtype=bool), np.where(np.isfinite(t), level, 1.0))

    def sizes(self) -> dict[str, int]:
        return self._reference_sizes(int(self.scores_.shape[0]))

    def describe(self) -> dict[str, Any]:
        return {**self.localizer.describe(), "learned_on": self.reference_source_}


register(
    MethodSpec(
        "slcp",
        lambda est, opts, seed: SLCPCalibrator(opts["kernel"], opts["bandwidth"], opts["reference_size"]),
        options={"kernel": "gaussian", "bandwidth": "auto", "reference_size": 0.5, "cv": 5},
        title="SLCP (split localized conformal, kernel conditional distribution; Han et al.)",
        needs_training=True,
        shift=True,
    )
)

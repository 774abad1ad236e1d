"""Split conformal calibration: one threshold for every row."""

from __future__ import annotations

import numpy as np

from .._validation import as_float_vector, required_count
from ..shift.value import new_row_ratios, ratio_values
from ..shift.weighted import ShiftWeights, distinct_cumulative, weighted_split_thresholds
from .base import Calibrator, Guarantee, Thresholds, check_conformal_size
from .registry import MethodSpec, register


class SplitCalibrator(Calibrator):
    """Split conformal: t = the ceil((1-alpha)(n+1))-th smallest calibration score.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators import SplitCalibrator
    >>> cal = SplitCalibrator().calibrate(None, np.arange(1.0, 20.0), alpha=0.1, rng=None)
    >>> float(cal.thresholds(np.zeros((1, 1)), 0.1).t[0])
    18.0
    """

    name = "split"
    supports_shift = True

    def calibrate(self, X, scores, *, alpha, rng, likelihood_ratio=None) -> SplitCalibrator:
        V = as_float_vector(scores, "scores")
        check_conformal_size(V.shape[0], alpha, "calibration set")
        order = np.argsort(V, kind="stable")
        self.sorted_scores_ = V[order]
        self.shift_ = None
        if likelihood_ratio is not None:  # weighted split conformal (Tibshirani et al., 2019)
            w = ratio_values(likelihood_ratio, V.shape[0], "the calibration rows")[order]
            self.shift_ = ShiftWeights(w)
            self._distinct = distinct_cumulative(self.sorted_scores_, w)
        return self

    def thresholds(self, X, alpha, likelihood_ratio=None) -> Thresholds:
        shift = self.shift_
        rows = np.asarray(X).shape[0]
        w_test = new_row_ratios(likelihood_ratio, rows, shift is not None)
        t, level = split_threshold(self.sorted_scores_, alpha)
        out = Thresholds(np.full(rows, t), np.ones(rows, dtype=bool), np.full(rows, level))
        if shift is not None:
            assert w_test is not None  # new_row_ratios gives the new rows' ratios whenever the calibration was weighted
            weighted = ~shift.unweighted_rows(w_test)  # equal ratios: the exact integer rule above
            out.t[weighted], out.level[weighted] = weighted_split_thresholds(
                *self._distinct, shift, w_test[weighted], alpha
            )
        return out

    def guarantee(self, alpha) -> Guarantee:
        return Guarantee(
            "marginal",
            True,
            f"P(Y in interval) >= {1 - alpha:g} exactly in finite samples, if calibration and test points are "
            "exchangeable.",
        )

    def sizes(self) -> dict[str, int]:
        return {"calibration": int(self.sorted_scores_.shape[0])}


def split_threshold(sorted_scores: np.ndarray, alpha: float) -> tuple[float, float]:
    """(t, level) of split conformal on ascending scores; (inf, 1) when there are too few.

    t is the ceil((1-alpha)(n+1))-th smallest score and level the share of the
    n + 1 points at or below it.
    """
    n = sorted_scores.shape[0]
    m = required_count(alpha, n)
    if m > n:
        return np.inf, 1.0
    t = float(sorted_scores[m - 1])
    return t, float(np.searchsorted(sorted_scores, t, side="right") / (n + 1))


register(
    MethodSpec(
        "split",
        lambda est, opts, seed: SplitCalibrator(),
        title="Split conformal (SPLIT)",
        classification=True,
        shift=True,
    )
)

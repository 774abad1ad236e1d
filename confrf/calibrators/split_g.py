"""SPLIT-G: split conformal within each group (groups learned on the localizer part, or given labels)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..shift.weighted import distinct_cumulative, weighted_split_thresholds
from .groupwise import _GROUPWISE, GroupwiseCalibrator, _make, _split_g_settings
from .registry import MethodSpec, register
from .split import split_threshold


class SplitGroupCalibrator(GroupwiseCalibrator):
    """SPLIT-G: split conformal within each group.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.calibrators.split_g import SplitGroupCalibrator
    >>> cal = SplitGroupCalibrator(None, groups="labels").calibrate(
    ...     np.zeros((40, 1)), np.arange(40.0), alpha=0.1, rng=None, labels=np.repeat(["a", "b"], 20))
    >>> cal.thresholds(np.zeros((2, 1)), 0.1, labels=["a", "b"]).t.tolist()
    [18.0, 38.0]
    """

    name = "split-g"

    def _fit_groups(self, X, V, codes, mult) -> None:
        self.sorted_scores_ = [np.sort(V[codes == c]) for c in range(len(self.grouping_.names))]

    def _group_thresholds(self, code, X, alpha):
        t, level = split_threshold(self.sorted_scores_[code], alpha)
        return t, True, level

    def _fit_group_shift(self, V, codes, w) -> None:
        self._group_distinct: list[tuple[np.ndarray, np.ndarray]] = []
        for c, sorted_scores in enumerate(self.sorted_scores_):
            in_c = codes == c
            order = np.argsort(V[in_c], kind="stable")  # V[in_c][order] is sorted_scores
            self._group_distinct.append(distinct_cumulative(sorted_scores, w[in_c][order]))

    def _group_thresholds_weighted(
        self, code: int, X: np.ndarray, alpha: float, w_test: np.ndarray
    ) -> tuple[np.ndarray, Any, np.ndarray]:
        shift = None if self.group_shift_ is None else self.group_shift_[code]
        assert shift is not None  # set when the calibration was weighted, as here
        t, level = weighted_split_thresholds(*self._group_distinct[code], shift, w_test, alpha)
        return t, True, level


register(
    MethodSpec(
        "split-g",
        _make(SplitGroupCalibrator),
        title="Groupwise split conformal (SPLIT-G)",
        settings=_split_g_settings,
        mondrian_title="Class-conditional split conformal (Mondrian)",
        **_GROUPWISE,
    )
)

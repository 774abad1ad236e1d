"""LCP-RF-G: exact LCP-RF within each group (groups learned on the localizer part, or given labels)."""

from __future__ import annotations

import copy

import numpy as np

from .._parallel import kernel_threads
from .._validation import required_count
from ..localizers.forest import ForestLocalizer
from ..localizers.weighted import ForestShiftIndex, weighted_forest_thresholds
from .forest_source import forest_settings
from .groupwise import _GROUPWISE, GroupwiseCalibrator, _make
from .registry import MethodSpec, register


class LCPForestGroupCalibrator(GroupwiseCalibrator):
    """LCP-RF-G: exact LCP-RF within each group.

    Each group's conformal points are indexed in the forest on their own, so
    the weights of a test point count only its group's points (plus itself)
    and the k* search runs over them alone: O(|R(x)| log |R(x)|).
    """

    name = "lcp-rf-g"

    def _uses_forest(self) -> bool:
        return True

    def _fit_groups(self, X, V, codes, mult) -> None:
        self.group_localizers_: list[ForestLocalizer | None] = []
        for c in range(len(self.grouping_.names)):
            rows = np.flatnonzero(codes == c)
            loc = None
            if rows.size:
                loc = copy.copy(self.localizer).index(X[rows], V[rows], None if mult is None else mult[rows])
            self.group_localizers_.append(loc)

    def _group_thresholds(self, code, X, alpha):
        loc = self.group_localizers_[code]
        n_c = 0 if loc is None else loc.index_.n
        m_req = required_count(alpha, n_c)
        if m_req > n_c:
            return np.inf, True, 1.0
        return loc.thresholds(X, m_req, n_threads=kernel_threads(self.n_jobs))

    def _fit_group_shift(self, V, codes, w) -> None:
        self._group_shift_index = [
            None if loc is None else ForestShiftIndex.build(loc._index(), w[codes == c])
            for c, loc in enumerate(self.group_localizers_)
        ]

    def _group_thresholds_weighted(self, code, X, alpha, w_test):
        assert self.group_shift_ is not None  # set when the calibration was weighted, as here
        loc, shift = self.group_localizers_[code], self.group_shift_[code]
        req = shift.requirement(alpha, w_test)
        return weighted_forest_thresholds(
            loc, self._group_shift_index[code], X, req, n_threads=kernel_threads(self.n_jobs)
        )


register(
    MethodSpec(
        "lcp-rf-g",
        _make(LCPForestGroupCalibrator),
        title="Groupwise LCP-RF (LCP-RF-G)",
        settings=forest_settings,
        mondrian_title="Class-conditional LCP-RF (Mondrian, forest on the localizer part)",
        **_GROUPWISE,
    )
)

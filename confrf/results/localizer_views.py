"""Rows of new data as the design's matrix, and what the localizer says about them (a mixin of ConformalResult).

Their groups (split-g, lcp-rf-g), the forest's weights on the conformal points and the QRF conditional quantiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import check_bool, check_real
from ..formula import as_frame


class LocalizerMethods:
    """groups, forest_weights and conditional_quantiles of :class:`confrf.ConformalResult` (a mixin)."""

    estimator: Any
    design: Any
    group_labeler: Any

    def _X(self, newdata: Any) -> tuple[np.ndarray, pd.Index]:
        newdata = as_frame(newdata, "newdata")
        return self.design.transform(newdata), newdata.index

    def _group_labels(self, newdata: Any) -> np.ndarray | None:
        return None if self.group_labeler is None else self.group_labeler(newdata, "newdata")

    def groups(self, newdata: Any) -> pd.Series:
        """Group (region) of every row of ``newdata``, for methods "split-g" and "lcp-rf-g".

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(800, random_state=0)
        >>> df = sim.frame.assign(half=(sim.frame.x1 > 0.5).map({True: "high", False: "low"}))
        >>> res = cf.conformal(sim.formula, data=df, method="split-g", groups="half", random_state=0)
        >>> res.groups(df.head(3)).tolist() == df.half.head(3).tolist()
        True
        """
        X, index = self._X(newdata)
        return pd.Series(
            self.estimator.predict_groups(X, groups=self._group_labels(newdata)),
            index=index,
            name="group",
            dtype=object,
        )

    def forest_weights(self, newdata: Any, include_self: bool = False) -> sp.csr_matrix:
        """Sparse localizer weights of each new row on the conformal calibration points.

        ``include_self=False`` gives the QRF weights (rows sum to 1);
        ``include_self=True`` the LCP row with the test point counted in its
        leaves, its own mass in an extra last column.
        """
        X, _ = self._X(newdata)
        return self.estimator.localizer_.weights(X, include_self=check_bool(include_self, "include_self"))

    def conditional_quantiles(self, newdata: Any, q: Any = (0.1, 0.5, 0.9)) -> pd.DataFrame:
        """QRF estimate of the score's conditional quantiles at levels ``q``, in score units.

        With a scaled forest (``scale="forest"``, or chosen by ``"tune"``):
        sigma(x) times the QRF quantiles of the conformal points' V / sigma.
        """
        X, index = self._X(newdata)
        qs = np.array(
            [
                check_real(
                    v,
                    "q",
                    low=0.0,
                    high=1.0,
                    low_open=False,
                    high_open=False,
                    hint="quantile levels, e.g. q=(0.1, 0.5, 0.9)",
                )
                for v in np.atleast_1d(np.asarray(q, dtype=object))
            ]
        )
        out = self.estimator.localizer_.conditional_quantiles(X, qs)
        return pd.DataFrame(out, index=index, columns=[f"q{v:g}" for v in qs])

"""Calibration rows wherever they live: in memory, or in Dask partitions (:mod:`confrf.dask`).

LCP-RF needs three things of its calibration rows: their number and scores
(to split them and to choose the parts), the rows of the localizer part (to
grow the forest, on one machine) and, for every conformal point, its leaves in
the grown forest (:meth:`confrf.localizers.forest.ForestLocalizer.lookup`,
row by row). :class:`ArrayRows` serves them from arrays; the Dask rows serve
them from the workers. The calibration code is the same for both, so the same
data and seed give the same fit.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..localizers.forest import LOOKUP_CHUNK, stack_lookups


class CalibrationRows(Protocol):
    """Calibration rows in a fixed order (row positions 0 .. n - 1)."""

    scores: np.ndarray  # every row's score, in row order

    @property
    def n(self) -> int: ...

    @property
    def n_features(self) -> int: ...

    def take(self, positions: np.ndarray) -> np.ndarray:
        """Design rows at ascending ``positions``, (len(positions), p)."""

    def lookup(self, localizer: Any, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``localizer.lookup`` of the rows at ascending ``positions``, stacked in that order."""


class ArrayRows:
    """Calibration rows held as arrays (X, scores)."""

    def __init__(self, X: np.ndarray, scores: np.ndarray) -> None:
        self.X, self.scores = X, scores

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def take(self, positions: np.ndarray) -> np.ndarray:
        return self.X[positions]

    def lookup(self, localizer: Any, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # chunks: the float32 copies of X and the per-chunk leaf matrices stay small
        chunks = (positions[s : s + LOOKUP_CHUNK] for s in range(0, positions.shape[0], LOOKUP_CHUNK))
        parts = (localizer.lookup(self.X[c], self.scores[c]) for c in chunks)
        return stack_lookups(parts, positions.shape[0], localizer.n_trees)

"""The record of a forest tuning: the candidates :func:`confrf.localizers.tuning.tune_forest` compared, its choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class ForestTuning:
    """The candidates compared by :func:`tune_forest` and the one chosen.

    Attributes
    ----------
    candidates : tuple of (int, float or int or str or None, str)
        (min_samples_leaf on the whole localizer part, max_features, scale) triples.
    scores : tuple of float
        Mean half interval score of each candidate (lower is better), in score units.
    infinite : tuple of float
        Share of infinite intervals of each candidate in the simulated calibration.
    chosen : (int, max_features, scale)
        The selected triple.
    n_points : int
        Localizer points the tuning used (a subsample at large n).
    reason : str
        Why tuning fell back to the first candidate without simulation, or "" when it ran.
    n_splits : int
        Splits into folds the scores average over: 1, or TUNE_FOLDS (3) when a departure from the sqrt rule was
        rechecked.
    weighted : bool
        Whether the simulations were weighted by likelihood ratios (the scores are the target population's).
    pooled : (int, float, str) or None
        The no-localization candidate (every localizer point in one leaf: min_samples_leaf is the localizer
        part's size) when it took part.
    source : str
        What the simulated forests grew on: "calibration" (a fold of the localizer part), "training" (the
        training part's out-of-fold scores) or "pooled" (both); the conformal and test folds are always
        the localizer part's (:mod:`confrf.localizers.sources`).
    losses : dict or None
        Each candidate's loss at each tuning point (NaN where it was never a test point), to compare
        simulations of the same localizer part that grew on other rows; dropped once used.
    """

    candidates: tuple[tuple[int, Any, str], ...]
    scores: tuple[float, ...]
    infinite: tuple[float, ...]
    chosen: tuple[int, Any, str]
    n_points: int
    reason: str = ""
    n_splits: int = 1
    weighted: bool = False
    pooled: tuple[int, Any, str] | None = None
    source: str = "calibration"
    losses: dict[tuple[int, Any, str], np.ndarray] | None = field(default=None, repr=False, compare=False)

    @property
    def localizes(self) -> bool:
        """False when the no-localization candidate was chosen (the intervals are split conformal's)."""
        return self.pooled is None or self.chosen != self.pooled

    def table(self) -> pd.DataFrame:
        """One row per candidate: min_samples_leaf, max_features, scale, score, share_infinite, chosen."""
        return pd.DataFrame(
            {
                "min_samples_leaf": [c[0] for c in self.candidates],
                "max_features": [c[1] for c in self.candidates],
                "scale": [c[2] for c in self.candidates],
                "score": self.scores,
                "share_infinite": self.infinite,
                "chosen": [c == self.chosen for c in self.candidates],
                "localizes": [c != self.pooled for c in self.candidates],
            }
        )

    def _label(self, c: tuple[int, Any, str]) -> str:
        return "no localization" if c == self.pooled else _label(c)

    def text(self) -> str:
        """``"leaf/features/scale: score, ..."`` with the choice starred, for the summary."""
        if self.reason:
            return f"not run ({self.reason}); kept {self._label(self.chosen)}"
        parts = [
            f"{self._label(c)}{'*' if c == self.chosen else ''}: {s:.4g}" + (f" ({i:.0%} inf)" if i > 0 else "")
            for c, s, i in zip(self.candidates, self.scores, self.infinite)
        ]
        notes = [f"means over {self.n_splits} splits into folds"] if self.n_splits > 1 else []
        if self.weighted:
            notes.append("weighted by the likelihood ratio: the target population's loss")
        return ", ".join(parts) + (f" ({'; '.join(notes)})" if notes else "")


def _label(c: tuple[int, Any, str]) -> str:
    mf = f"{c[1]:.2g}" if isinstance(c[1], float) else f"{c[1]}"
    return f"{c[0]}/{mf}/{'scaled' if c[2] == 'forest' else 'raw'}"

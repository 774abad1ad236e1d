"""The nonconformity-score protocol.

A score turns the base model's prediction and a response into a number, and
inverts a threshold t into the exact interval {y : score(pred, y) <= t}.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Score(Protocol):
    """What every nonconformity score provides.

    Attributes
    ----------
    name : str
        Short name shown in summaries.
    """

    name: str

    def score(self, y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Scores of responses ``y`` given the base model's predictions ``pred``."""
        ...

    def interval(self, pred: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds (lwr, upr) of {y : score(y, pred) <= t}; infinite t gives +-inf."""
        ...

    def center(self, pred: np.ndarray) -> np.ndarray:
        """Point prediction reported as ``fit``."""
        ...

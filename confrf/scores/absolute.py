"""Absolute residual score |y - mu(x)|."""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from .base import prediction_vector
from .registry import ScoreSpec, register_score


class AbsoluteScore:
    """V(x, y) = |y - mu(x)|; its inversion is mu(x) -/+ t.

        Examples
        --------
        >>> import numpy as np

    from ..exceptions import InputError
    from .base import prediction_vector
        >>> from confrf.scores import AbsoluteScore
        >>> s = AbsoluteScore()
        >>> s.score(np.array([1.0, 3.0]), np.array([2.0, 2.0]))
        array([1., 1.])
        >>> s.interval(np.array([2.0]), np.array([np.inf]))
        (array([-inf]), array([inf]))
    """

    name = "absolute"

    def score(self, y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        pred = prediction_vector(pred, self.name)
        y = np.asarray(y, dtype=np.float64)
        if pred.shape != y.shape:
            raise InputError(f"the model gave {pred.shape[0]} predictions for {y.shape[0]} rows.")
        return np.abs(y - pred)

    def interval(self, pred: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pred = prediction_vector(pred, self.name)
        t = np.asarray(t, dtype=np.float64)
        # inf - inf never occurs: pred is finite, so +-inf stays +-inf (no NaN)
        return pred - t, pred + t

    def center(self, pred: np.ndarray) -> np.ndarray:
        return prediction_vector(pred, self.name)

    def interval_parts(self, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray, None]:
        """``interval(pred, t)`` is exactly (pred - t, pred + t): centres pred, pred; scale 1 (None)."""
        p = prediction_vector(pred, self.name)
        return p, p, None

    def __repr__(self) -> str:
        return "AbsoluteScore()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


register_score(ScoreSpec("absolute", AbsoluteScore, family="regression"))

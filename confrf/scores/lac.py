"""LAC, least ambiguous set-valued classifier: the classification score 1 - p_y(x)."""

from __future__ import annotations

import numpy as np

from .registry import ScoreSpec, register_score


class LACScore:
    """Least ambiguous set-valued classifier (Sadinle, Lei & Wasserman, 2019): s(x, y) = 1 - p_y(x).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification import LACScore
    >>> LACScore().matrix(np.array([[0.7, 0.2, 0.1]])).round(3).tolist()
    [[0.3, 0.8, 0.9]]
    """

    name = "lac"
    randomized = False

    def matrix(self, proba: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        return 1.0 - np.asarray(proba, dtype=np.float64)

    def __repr__(self) -> str:
        return "LACScore()"


register_score(ScoreSpec("lac", LACScore, family="classification"))

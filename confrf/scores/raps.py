"""RAPS, regularized adaptive prediction sets: APS plus a penalty on the rank of the label."""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from .aps import APSScore, _greater_mass
from .registry import ScoreSpec, register_score


class RAPSScore(APSScore):
    """Regularized APS (Angelopoulos, Bates, Malik & Jordan, 2021).

    s(x, y) = APS score + ``lam`` * max(0, o(x, y) - ``k_reg``), with
    o(x, y) = 1 + #{j : p_j(x) > p_y(x)} the rank of y (ties share the best rank).

    Parameters
    ----------
    lam : float
        Penalty per rank beyond ``k_reg`` (>= 0).
    k_reg : int
        Ranks 1..k_reg are not penalized (>= 0).
    randomized, random_state
        As in :class:`APSScore`.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification import RAPSScore
    >>> RAPSScore(lam=0.1, k_reg=1).matrix(np.array([[0.5, 0.3, 0.2]])).round(3).tolist()
    [[0.5, 0.9, 1.2]]
    """

    name = "raps"

    def __init__(
        self, lam: float = 0.01, k_reg: int = 1, randomized: bool = False, random_state: int | None = None
    ) -> None:
        super().__init__(randomized=randomized, random_state=random_state)
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not (lam >= 0 and np.isfinite(lam)):
            raise InputError(f"lam must be a finite number >= 0, got {lam!r}.")
        if isinstance(k_reg, bool) or not isinstance(k_reg, (int, np.integer)) or k_reg < 0:
            raise InputError(f"k_reg must be an integer >= 0, got {k_reg!r}.")
        self.lam = float(lam)
        self.k_reg = int(k_reg)
        self.name = "raps (randomized)" if randomized else "raps"

    def matrix(self, proba: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        P = np.asarray(proba, dtype=np.float64)
        mass, count = _greater_mass(P)
        return mass + self._u(P.shape[0], u) * P + self.lam * np.maximum(0, count + 1 - self.k_reg)

    def __repr__(self) -> str:
        return (
            f"RAPSScore(lam={self.lam}, k_reg={self.k_reg}, randomized={self.randomized}, "
            f"random_state={self.random_state!r})"
        )


register_score(ScoreSpec("raps", RAPSScore, family="classification"))

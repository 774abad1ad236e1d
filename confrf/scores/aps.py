"""APS, adaptive prediction sets: the classification score of the mass of the more probable labels."""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from .registry import ScoreSpec, register_score


def _greater_mass(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every (i, k): the mass sum_{j: p_ij > p_ik} p_ij and the count #{j: p_ij > p_ik}.

    Labels with equal probability do not count each other (strict ">"), so tied
    labels get equal scores and the score is a fixed function of (x, y).
    O(n K log K), never K x K per row.
    """
    n, K = P.shape
    order = np.argsort(-P, axis=1, kind="stable")
    Ps = np.take_along_axis(P, order, axis=1)
    csum = np.cumsum(Ps, axis=1)
    pos = np.broadcast_to(np.arange(K), (n, K))
    new_group = np.ones((n, K), dtype=bool)
    new_group[:, 1:] = Ps[:, 1:] != Ps[:, :-1]
    start = np.maximum.accumulate(np.where(new_group, pos, 0), axis=1)  # first position of each tie group
    mass_sorted = np.where(start > 0, np.take_along_axis(csum, np.maximum(start - 1, 0), axis=1), 0.0)
    mass = np.empty_like(P)
    count = np.empty((n, K), dtype=np.int64)
    np.put_along_axis(mass, order, mass_sorted, axis=1)
    np.put_along_axis(count, order, start, axis=1)
    return mass, count


class APSScore:
    """Adaptive prediction sets (Romano, Sesia & Candes, 2020).

    s(x, y) = sum_{j : p_j(x) > p_y(x)} p_j(x) + U p_y(x), with U = 1 (plain,
    ``randomized=False``) or U ~ Uniform(0, 1) (randomized).

    Parameters
    ----------
    randomized : bool
        Draw U per row (smaller sets, exact coverage in expectation over U).
    random_state : int or None
        Seed of U (its own stream, independent of the data splits); None takes
        a seed derived from the estimator's ``random_state``. When both are
        None, every call draws its seed from numpy's global generator (sets
        of the same rows may then differ between calls; ``np.random.seed``
        makes them reproducible).

    Notes
    -----
    *Ties.* Labels with the same probability do not count each other: each
    gets the mass of the strictly more probable labels plus U times its own.

    *U at prediction.* A point carries one U, shared by all its candidate
    labels, so the randomized score of every candidate is defined. U of the
    calibration rows comes from stream 0 of the seed, U of the rows of a
    prediction call from stream 1: the i-th row of every call gets the same
    U_i, so predicting the same rows twice gives the same sets. Each test
    point's U is uniform and independent of the data, which is all the
    coverage proof needs.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification import APSScore
    >>> APSScore().matrix(np.array([[0.5, 0.3, 0.2]])).round(3).tolist()
    [[0.5, 0.8, 1.0]]
    >>> APSScore(randomized=True).matrix(np.array([[0.5, 0.3, 0.2]]), u=np.array([0.5])).round(3).tolist()
    [[0.25, 0.65, 0.9]]
    """

    name = "aps"

    def __init__(self, randomized: bool = False, random_state: int | None = None) -> None:
        if not isinstance(randomized, (bool, np.bool_)):
            raise InputError(f"randomized must be True or False, got {randomized!r}.")
        self.randomized = bool(randomized)
        self.random_state = random_state
        if randomized:
            self.name = "aps (randomized)"

    def _u(self, n: int, u: np.ndarray | None) -> np.ndarray | float:
        if not self.randomized:
            return 1.0
        if u is None:
            raise InputError(f"{self.name}: the randomized score needs one uniform per row (u=...).")
        u = np.asarray(u, dtype=np.float64).reshape(-1, 1)
        if u.shape[0] != n:
            raise InputError(f"{self.name}: got {u.shape[0]} uniforms for {n} rows.")
        return u

    def matrix(self, proba: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        P = np.asarray(proba, dtype=np.float64)
        mass, _ = _greater_mass(P)
        return mass + self._u(P.shape[0], u) * P

    def __repr__(self) -> str:
        return f"APSScore(randomized={self.randomized}, random_state={self.random_state!r})"


register_score(ScoreSpec("aps", APSScore, family="classification"))

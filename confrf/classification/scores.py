"""Nonconformity scores for classification: LAC, APS (plain and randomized), RAPS.

A classification score maps the base model's class probabilities p(x) (one
row per point, one column per class level) to a score for *every* candidate
label at once: an (n, K) matrix S with S[i, k] = score(x_i, k). Calibration
uses the scores of the observed labels, s_i = S[i, y_i]; the prediction set
of a new x is {k : S[k] <= t(x)} (``< t(x)`` when the threshold is open), the
exact inversion, with t(x) from any calibrator (it depends on x and the
calibration scores only, never on the candidate label).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .._validation import seed_entropy
from ..exceptions import InputError

#: random streams of the randomized scores' uniforms (``SeedSequence`` spawn keys)
CALIBRATION_STREAM, PREDICTION_STREAM = 0, 1


@runtime_checkable
class ClassScore(Protocol):
    """What every classification score provides.

    Attributes
    ----------
    name : str
        Short name shown in summaries.
    randomized : bool
        Whether the score uses one uniform U per row (then ``matrix`` gets ``u``).

    Examples
    --------
    A user score, the negative log-probability:

    >>> import numpy as np
    >>> from confrf.classification import ClassScore
    >>> class NegLog:
    ...     name = "neglog"
    ...     randomized = False
    ...     def matrix(self, proba, u=None):
    ...         return -np.log(np.clip(proba, 1e-12, None))
    >>> isinstance(NegLog(), ClassScore)
    True
    """

    name: str
    randomized: bool

    def matrix(self, proba: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """(n, K) scores of every candidate label; ``u``: (n,) uniforms of a randomized score."""
        ...


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


_REGISTRY = {"lac": LACScore, "aps": APSScore, "raps": RAPSScore}


def get_class_score(score: str | ClassScore) -> ClassScore:
    """Resolve a score name ("lac", "aps", "raps") or check a user :class:`ClassScore`."""
    if isinstance(score, str):
        try:
            return _REGISTRY[score]()
        except KeyError:
            raise InputError(
                f"unknown classification score {score!r}; choose one of {sorted(_REGISTRY)} "
                "(e.g. APSScore(randomized=True), RAPSScore(lam=0.01, k_reg=2)) or pass a ClassScore "
                "object."
            ) from None
    if isinstance(score, ClassScore):
        return score
    raise InputError(
        f"a classification score must be a name in {sorted(_REGISTRY)} or an object with matrix(proba, "
        f"u), name and randomized; got {score!r}."
    )


def uniforms(score: ClassScore, n: int, stream: int, fallback_seed: int | None) -> np.ndarray | None:
    """The U of ``n`` rows for a randomized score (None otherwise); see :class:`APSScore`, Notes."""
    if not score.randomized:
        return None
    seed = getattr(score, "random_state", None)
    seed = fallback_seed if seed is None else seed
    if seed is None:
        seed = seed_entropy(None)
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(stream,))).random(n)


def label_sets(S: np.ndarray, t: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """Boolean (n, K) sets {k : S[:, k] <= t} (``<`` where ``closed`` is False).

    ``t`` and ``closed`` are (n,) (one threshold per row) or (n, K) (one per
    row and class, class-conditional calibration). t = +inf keeps every label.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification.scores import label_sets
    >>> label_sets(np.array([[0.1, 0.5, 0.9]]), np.array([0.5]), np.array([False])).tolist()
    [[True, False, False]]
    """
    S = np.asarray(S, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    closed = np.asarray(closed, dtype=bool)
    if t.ndim == 1:
        t, closed = t[:, None], closed[:, None]
    return np.where(closed, S <= t, S < t)

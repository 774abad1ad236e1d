"""Classification scores by name, the uniforms of randomized scores, and the prediction sets they give.

The scores themselves (LAC, APS plain and randomized, RAPS) are in :mod:`confrf.scores`, one per file,
registered with the regression scores (:mod:`confrf.scores.registry`).

A classification score maps the base model's class probabilities p(x) (one
row per point, one column per class level) to a score for *every* candidate
label at once: an (n, K) matrix S with S[i, k] = score(x_i, k). Calibration
uses the scores of the observed labels, s_i = S[i, y_i]; the prediction set
of a new x is {k : S[k] <= t(x)} (``< t(x)`` when the threshold is open), the
exact inversion, with t(x) from any calibrator (it depends on x and the
calibration scores only, never on the candidate label).
"""

from __future__ import annotations

import numpy as np

from .._validation import seed_entropy
from ..scores.aps import APSScore
from ..scores.base import ClassScore
from ..scores.lac import LACScore
from ..scores.raps import RAPSScore
from ..scores.registry import resolve_score

#: random streams of the randomized scores' uniforms (``SeedSequence`` spawn keys)
CALIBRATION_STREAM, PREDICTION_STREAM = 0, 1

__all__ = ["ClassScore", "LACScore", "APSScore", "RAPSScore", "get_class_score", "uniforms", "label_sets"]


def get_class_score(score: str | ClassScore) -> ClassScore:
    """Resolve a score name ("lac", "aps", "raps") or check a user :class:`ClassScore`."""
    return resolve_score(score, "classification", ClassScore)


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

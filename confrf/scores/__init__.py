"""Nonconformity scores of both families, one per file, and their exact inversion.

Regression scores (:class:`Score`: "absolute", "quantile", "scaled") give prediction intervals; classification
scores (:class:`ClassScore`: "lac", "aps", "raps") give prediction sets. Every score registers its name in
:mod:`confrf.scores.registry` at the bottom of its file.
"""

from __future__ import annotations

from .absolute import AbsoluteScore
from .aps import APSScore
from .base import ClassScore, Score
from .lac import LACScore
from .quantile import QuantileScore
from .raps import RAPSScore
from .registry import SCORES, ScoreSpec, register_score, resolve_score, score_names
from .scaled import ScaledScore


def get_score(score: str | Score) -> Score:
    """Resolve a regression score name (e.g. ``"absolute"``) or check a user object."""
    return resolve_score(score, "regression", Score)


__all__ = [
    "Score",
    "ClassScore",
    "AbsoluteScore",
    "QuantileScore",
    "ScaledScore",
    "LACScore",
    "APSScore",
    "RAPSScore",
    "SCORES",
    "ScoreSpec",
    "register_score",
    "score_names",
    "get_score",
]

"""Nonconformity scores and their exact interval inversion."""

from __future__ import annotations

from ..exceptions import InputError
from .absolute import AbsoluteScore
from .base import Score
from .quantile import QuantileScore
from .scaled import ScaledScore

_REGISTRY = {"absolute": AbsoluteScore, "quantile": QuantileScore, "scaled": ScaledScore}


def get_score(score: str | Score) -> Score:
    """Resolve a score name (e.g. ``"absolute"``) or check a user object."""
    if isinstance(score, str):
        try:
            return _REGISTRY[score]()
        except KeyError:
            raise InputError(
                f"unknown score {score!r}; choose one of {sorted(_REGISTRY)} or pass a Score object."
            ) from None
    if isinstance(score, Score):
        return score
    raise InputError(f"score must be a name or an object with score(), interval(), center() and name; got {score!r}.")


__all__ = ["Score", "AbsoluteScore", "QuantileScore", "ScaledScore", "get_score"]

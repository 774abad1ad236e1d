"""Registry of nonconformity scores, both families: name -> class and family.

A score module registers itself once, at its bottom::

    register_score(ScoreSpec("absolute", AbsoluteScore, family="regression"))

The estimators (``get_score``, ``get_class_score``), the formula API and the
command line's ``--score`` read the names here, so adding a score is one file
and that one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..exceptions import InputError

#: the two families of responses: numeric (prediction intervals) and class labels (prediction sets)
FAMILIES = ("regression", "classification")


@dataclass(frozen=True)
class ScoreSpec:
    """How to build a score from its name.

    Attributes
    ----------
    name : str
        The name passed as ``score=`` (and ``--score`` on the command line).
    factory : callable
        Called with no arguments, it returns the score with its default settings
        (usually the score's class).
    family : str
        "regression": a :class:`confrf.scores.Score` (``score``, ``interval``,
        ``center``) for a numeric response; "classification": a
        :class:`confrf.scores.ClassScore` (``matrix``, ``randomized``) for a
        class-label response.
    """

    name: str
    factory: Callable[[], Any]
    family: str = "regression"

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {list(FAMILIES)}, got {self.family!r}")


SCORES: dict[str, ScoreSpec] = {}


def register_score(spec: ScoreSpec) -> ScoreSpec:
    """Add a score (its name must be new, across both families)."""
    if spec.name in SCORES:
        raise ValueError(f"score {spec.name!r} is already registered")
    SCORES[spec.name] = spec
    return spec


def score_names(family: str | None = None) -> list[str]:
    """The registered names of one family ("regression" or "classification"), or of both (None), sorted."""
    return sorted(name for name, spec in SCORES.items() if family is None or spec.family == family)


def score_family(name: Any) -> str | None:
    """The family of a registered score name; None for anything else (an unknown name, a score object)."""
    spec = SCORES.get(name) if isinstance(name, str) else None
    return None if spec is None else spec.family


def make_score(name: str, family: str) -> Any:
    """A new score of ``family`` by its name, or KeyError when no score of that family has the name."""
    spec = SCORES.get(name)
    if spec is None or spec.family != family:
        raise KeyError(name)
    return spec.factory()


#: per family: the refusal of an unknown name and of an object that is not a score ({score}: what was given,
#: {names}: the family's registered names)
_REFUSALS = {
    "regression": (
        "unknown score {score!r}; choose one of {names} or pass a Score object.",
        "score must be a name or an object with score(), interval(), center() and name; got {score!r}.",
    ),
    "classification": (
        "unknown classification score {score!r}; choose one of {names} (e.g. APSScore(randomized=True), "
        "RAPSScore(lam=0.01, k_reg=2)) or pass a ClassScore object.",
        "a classification score must be a name in {names} or an object with matrix(proba, u), name and "
        "randomized; got {score!r}.",
    ),
}


def resolve_score(score: Any, family: str, kind: type) -> Any:
    """A new score of ``family`` by name, or ``score`` itself when it is a ``kind``; an InputError otherwise."""
    unknown, not_a_score = _REFUSALS[family]
    if isinstance(score, str):
        try:
            return make_score(score, family)
        except KeyError:
            raise InputError(unknown.format(score=score, names=score_names(family))) from None
    if isinstance(score, kind):
        return score
    raise InputError(not_a_score.format(score=score, names=score_names(family)))

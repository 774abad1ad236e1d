"""What a calibrator is: conformal calibration data in, per-row thresholds out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import min_calibration_size
from ..exceptions import InputError


@dataclass(frozen=True)
class Thresholds:
    """Per-row score thresholds: the set of scores is (-inf, t] or (-inf, t).

    ``level`` is the localizer mass at or below t (the alpha-tilde diagnostic);
    1 where t is infinite.
    """

    t: np.ndarray
    closed: np.ndarray
    level: np.ndarray


@dataclass(frozen=True)
class Guarantee:
    """The coverage statement that holds, in words and as facts.

    Attributes
    ----------
    kind : str
        "marginal", "pac", "groupwise" or "none"; the cross-conformal methods'
        marginal statements are "marginal (1 - 2 alpha)" (jackknife+, J+aB)
        and "marginal (1 - 2 alpha - eps)" (CV+).
    certified : bool
        Whether the statement is proved for this configuration.
    sentence : str
        One sentence for the summary.
    """

    kind: str
    certified: bool
    sentence: str


class Calibrator(ABC):
    """Base class: ``calibrate`` on (X, scores), then ``thresholds`` for new X."""

    #: method name as used by :func:`confrf.conformal`
    name: str = ""
    #: ``calibrate`` and ``thresholds`` take ``likelihood_ratio=`` (covariate shift, docs/theory.md)
    supports_shift: bool = False

    def shift_refusal(self) -> str:
        """Why this configuration does not weight for covariate shift (asked only when ``supports_shift`` is False)."""
        from .registry import shift_methods  # the registry imports this module

        *others, last = (repr(m) for m in shift_methods())
        return (
            f"method {self.name!r} has no covariate-shift weighting; use method {', '.join(others)} or {last}, whose "
            "weighted versions are exact."
        )

    @abstractmethod
    def calibrate(self, X: np.ndarray, scores: np.ndarray, *, alpha: float, rng: np.random.Generator) -> Calibrator:
        """Learn from calibration rows; ``alpha`` is only used to check sizes."""

    @abstractmethod
    def thresholds(self, X: np.ndarray, alpha: float) -> Thresholds:
        """Thresholds for rows of X at miscoverage ``alpha``."""

    @abstractmethod
    def guarantee(self, alpha: float) -> Guarantee:
        """The coverage statement for ``alpha``."""

    @abstractmethod
    def sizes(self) -> dict[str, int]:
        """Number of points in every calibration part."""

    def describe(self) -> dict[str, Any]:
        """Settings worth printing (e.g. forest settings)."""
        return {}

    def prepare(self, alpha: float) -> None:  # noqa: B027 - an optional hook: most calibrators need nothing here
        """Work done once per ``alpha`` (e.g. a correction learned on held-out points).

        Called before rows are predicted, possibly in parallel chunks, so that
        ``thresholds`` only reads state.
        """


def check_conformal_size(n: int, alpha: float, part: str) -> None:
    """Refuse a calibration part so small that every interval would be infinite."""
    need = min_calibration_size(alpha)
    if n < need:
        raise InputError(
            f"the {part} has {n} point(s); at alpha={alpha} at least {need} are needed for a finite interval "
            "(ceil((1-alpha)(n+1)) <= n). Give more calibration data (calib= or a larger calib_size) or a "
            "larger alpha."
        )


def random_split(
    n: int, share: float, rng: np.random.Generator, part: str, option: str, max_first: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of a random ``share`` of ``n`` points (at most ``max_first``) and of the rest.

    ``part`` names the first part and ``option`` the setting that sizes it, for
    the error raised when the first part would hold fewer than 2 points. The
    split reads only ``n`` and ``rng`` (one permutation of ``n``), so rows
    held in memory or in Dask partitions split alike.
    """
    perm = rng.permutation(n)
    n_first = int(round(share * n))
    if max_first is not None:
        n_first = min(n_first, int(max_first))
    if n_first < 2:
        raise InputError(f"the {part} has {n_first} point(s); give more calibration data or a larger {option}.")
    return np.sort(perm[:n_first]), np.sort(perm[n_first:])

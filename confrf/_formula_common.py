"""What the two formula entries share (regression: confrf.api; class labels: confrf.classification.api).

Both import from here, so neither imports the other at module level: the
options every method accepts, the random train/calibration split, and the
record of a fit's call that ``result.update(...)`` replays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import seed_entropy
from .exceptions import InputError

#: options accepted by :func:`confrf.conformal` besides its named arguments
OPTIONS = {
    "score": "absolute",
    "prefit": False,
    "honest": True,
    "localizer_size": 0.5,
    "n_estimators": "auto",
    "min_samples_leaf": "tune",
    "max_features": "tune",
    "max_depth": None,
    "na_action": "raise",
    "n_jobs": None,
}


def _split_rng(seed: int | None) -> np.random.Generator:
    # a stream of its own, so the train/calibration split does not share draws with the model
    return np.random.default_rng(np.random.SeedSequence(entropy=seed_entropy(seed), spawn_key=(1,)))


def split_indices(n: int, calib_size: float, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (training, calibration) row positions of a random split of ``n`` rows."""
    n_cal = int(round(calib_size * n))
    if n_cal < 1 or n - n_cal < 2:
        raise InputError(
            f"{n} rows cannot be split into training and calibration parts with calib_size={calib_size} "
            "(the training part needs at least 2 rows, the calibration part at least 1); give more "
            "rows, or pass separate calibration data as calib=."
        )
    perm = _split_rng(seed).permutation(n)
    return np.sort(perm[n_cal:]), np.sort(perm[:n_cal])


@dataclass
class FitRows:
    """Where the rows of each part came from: ``(source, positions)``, source ``"data"`` or ``"calib"``.

    Positions are row positions (``iloc``) in the frame as given, after rows
    dropped by ``na_action="drop"``; they let ``fitted()``, ``residuals()``
    and ``augment()`` find the training and calibration rows again.
    """

    n_data: int
    train: tuple[str, np.ndarray]
    calibration: tuple[str, np.ndarray]

    @classmethod
    def from_split(
        cls, n_data: int, kept: np.ndarray, tr: Any, cal: Any, n_calib: int | None, kept_calib: np.ndarray | None
    ) -> FitRows:
        """``kept``: positions of the rows the formula kept; ``tr``/``cal`` index into them (None: all)."""
        if n_calib is not None:  # calib=: all of data trains
            return cls(n_data, ("data", kept), ("calib", kept_calib if kept_calib is not None else np.arange(n_calib)))
        return cls(n_data, ("data", kept[tr]), ("data", kept[cal]))


@dataclass
class FitCall:
    """A fit's call, as ``result.update(...)`` replays it (R's ``update`` re-evaluates the call).

    ``entry`` is :func:`confrf.conformal` itself, passed in by it, so the
    results never import the formula API (which imports them).
    """

    entry: Callable[..., Any]
    formula: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def replay(self, formula: str, changes: dict[str, Any]) -> Any:
        kwargs = dict(self.kwargs)
        if "level" in changes or "alpha" in changes:  # one of them replaces the other
            kwargs.pop("alpha", None)
            kwargs.pop("level", None)
        kwargs.update(changes)
        return self.entry(formula, **kwargs)

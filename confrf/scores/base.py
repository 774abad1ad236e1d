"""The nonconformity-score protocol.

A score turns the base model's prediction and a response into a number, and
inverts a threshold t into the exact interval {y : score(pred, y) <= t}.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..exceptions import InputError


@runtime_checkable
class Score(Protocol):
    """What every nonconformity score provides.

    ``pred`` is whatever the fitted base model's ``predict(X)`` returns: an
    (n,) array for a single regressor, or an (n, k) array when the score needs
    several models (CQR's (q_lo, q_hi) pair, a mean and a scale).

    Attributes
    ----------
    name : str
        Short name shown in summaries.

    Notes
    -----
    Two optional methods let a score say which models it needs; a score
    without them gets one regressor mu(x) built from ``model``:

    ``fit_models(X, y, model, *, alpha, random_state, fit_intercept)``
        Fit the model(s) on the training part; return an object whose
        ``predict(X)`` gives ``pred``. ``alpha`` is the miscoverage level
        (CQR fits its quantiles at alpha/2 and 1 - alpha/2).
    ``prefit_models(model, n_features)``
        The same for already fitted model(s) (``prefit=True``).

    ``interval_parts(pred)``
        Optional: centres and scale (lo_c, hi_c, s) with ``interval(pred, t)``
        equal to (lo_c - t * s, hi_c + t * s) as computed in floating point
        (s None: lo_c - t, hi_c + t). The cross-conformal methods ("cv+",
        "jackknife+", "jackknife+ab") then select interval ends in compiled
        kernels without forming them all; without it they call ``interval``
        on every (training row, new row) pair, in bounded blocks.

    Scores may be negative; thresholds are calibration scores or +inf, and
    ``interval`` must return the exact inversion (+-inf for t = +inf, never NaN).

    Examples
    --------
    A user score, ``|y - mu(x)|`` in log units:

    >>> import numpy as np
    >>> from confrf.scores import Score
    >>> class LogAbs:
    ...     name = "log-absolute"
    ...     def score(self, y, pred):
    ...         return np.abs(np.log(y) - np.log(pred))
    ...     def interval(self, pred, t):
    ...         return pred * np.exp(-t), pred * np.exp(t)
    ...     def center(self, pred):
    ...         return pred
    >>> isinstance(LogAbs(), Score)
    True
    """

    name: str

    def score(self, y: np.ndarray, pred: Any) -> np.ndarray:
        """Scores of responses ``y`` given the base model's predictions ``pred``."""
        ...

    def interval(self, pred: Any, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds (lwr, upr) of {y : score(y, pred) <= t}; infinite t gives +-inf."""
        ...

    def center(self, pred: Any) -> np.ndarray:
        """Point prediction reported as ``fit``."""
        ...


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


def prediction_vector(pred: Any, score_name: str) -> np.ndarray:
    """One finite prediction per row, (n,) or (n, 1), or a clear error (e.g. a model returning (n, 2))."""
    try:
        arr = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the model's predictions cannot be read as numbers ({exc}).") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(
            f"score={score_name!r} needs one prediction per row, but the model's predict() returned an array "
            f"of shape {arr.shape}; use a single-output regressor (for a pair of quantile models use "
            "score='quantile' with model=(lo, hi))."
        )
    if not np.all(np.isfinite(arr)):
        raise InputError(
            f"the model's predictions have NaN or inf in {int((~np.isfinite(arr)).sum())} row(s); "
            "check the model (e.g. a log link on extreme inputs)."
        )
    return arr


def prediction_pair(pred: Any, score_name: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The two columns of an (n, 2) prediction, finite, or a clear error."""
    arr = np.asarray(pred, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InputError(
            f"score={score_name!r} needs two predictions per row ({what}), got an array of shape {arr.shape}; "
            "fit the model through confrf with this score, or pass the fitted pair as model=(first, second) "
            "with prefit=True."
        )
    if not np.all(np.isfinite(arr)):
        raise InputError(
            f"the model's predictions ({what}) have NaN or inf in {int((~np.isfinite(arr)).any(axis=1).sum())} row(s)."
        )
    return arr[:, 0], arr[:, 1]

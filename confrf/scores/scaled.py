"""Scaled residual score |y - mu(x)| / sigma(x) (locally weighted conformal, Lei et al. 2018)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.model_selection import KFold, cross_val_predict

from .._validation import check_int
from ..exceptions import InputError
from ..models import make_model, wrap_prefit
from .base import prediction_pair
from .registry import ScoreSpec, register_score

#: default floor of sigma, as a share of the mean out-of-fold absolute residual
RELATIVE_FLOOR = 0.01


class ScaledPredictor:
    """mu(x) and the floored scale sigma(x) side by side: ``predict(X)`` is (n, 2)."""

    def __init__(self, mu: Any, sigma: Any, floor: float) -> None:
        self.mu = mu
        self.sigma = sigma
        self.floor = float(floor)

    @property
    def component_models(self) -> tuple:
        return (self.mu, self.sigma)

    def predict(self, X: np.ndarray) -> np.ndarray:
        mu = np.asarray(self.mu.predict(X), dtype=np.float64).ravel()
        sigma = np.asarray(self.sigma.predict(X), dtype=np.float64).ravel()
        return np.column_stack([mu, np.maximum(sigma, self.floor)])


class ScaledScore:
    """V = |y - mu(x)| / sigma(x), with sigma a model of the absolute residuals.

    Parameters
    ----------
    sigma_model : str, estimator or None
        Model of |y - mu(x)|; ``None`` uses the same kind as ``model``.
    cv : int
        Folds of the cross-fitting that gives sigma its training targets.
    floor : float or None
        Smallest sigma used. ``None``: 1% of the mean out-of-fold absolute
        residual (and at least 1e-12 (1 + mean |y|), which only matters when
        the model predicts held-out points exactly).

    Notes
    -----
    mu is fitted on the whole training part. sigma is fitted on the training
    part too, but on *out-of-fold* absolute residuals |y_i - mu_{-k(i)}(x_i)|
    (``cv``-fold cross-fitting): in-sample residuals of a flexible model are
    optimistic (a random forest nearly interpolates), which would make sigma
    too small exactly where mu overfits. sigma is floored so that scores stay
    finite; the floor is fixed at fit time, so the score is a fixed function
    of (x, y) and every guarantee holds. With ``prefit=True`` pass
    ``model=(fitted_mu, fitted_sigma)``; then only an explicit ``floor`` is
    applied and any sigma(x) <= 0 is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.scores import ScaledScore
    >>> s = ScaledScore()
    >>> pred = np.array([[1.0, 2.0]])           # mu = 1, sigma = 2
    >>> s.score(np.array([5.0]), pred)
    array([2.])
    >>> s.interval(pred, np.array([2.0]))
    (array([-3.]), array([5.]))
    """

    name = "scaled"

    def __init__(self, sigma_model: Any = None, cv: int = 5, floor: float | None = None) -> None:
        check_int(cv, "cv", minimum=2, hint="folds of the out-of-fold training scores")
        if floor is not None and not (np.isfinite(floor) and floor > 0):
            raise InputError(f"floor must be a positive number (the smallest sigma used), got {floor!r}.")
        self.sigma_model = sigma_model
        self.cv = int(cv)
        self.floor = floor

    def fit_models(
        self,
        X: np.ndarray,
        y: np.ndarray,
        model: Any,
        *,
        alpha: float,
        random_state: int | None = None,
        fit_intercept: bool = True,
    ) -> ScaledPredictor:
        if X.shape[0] < self.cv:
            raise InputError(f"the training part has {X.shape[0]} row(s), fewer than cv={self.cv} folds.")
        mu = make_model(model, fit_intercept=fit_intercept, random_state=random_state).fit(X, y)
        folds = KFold(self.cv, shuffle=True, random_state=random_state)
        oof = cross_val_predict(
            make_model(model, fit_intercept=fit_intercept, random_state=random_state), X, y, cv=folds
        )
        resid = np.abs(y - oof)
        spec = model if self.sigma_model is None else self.sigma_model
        sigma = make_model(spec, fit_intercept=fit_intercept, random_state=random_state).fit(X, resid)
        floor = self.floor
        if floor is None:
            floor = max(RELATIVE_FLOOR * float(resid.mean()), 1e-12 * (1.0 + float(np.abs(y).mean())))
        return ScaledPredictor(mu, sigma, floor)

    def prefit_models(self, model: Any, n_features: int) -> ScaledPredictor:
        if not isinstance(model, (tuple, list)) or len(model) != 2:
            raise InputError("prefit=True with score='scaled' needs model=(fitted_mu, fitted_sigma).")
        mu, sigma = (wrap_prefit(m, n_features) for m in model)
        return ScaledPredictor(mu, sigma, self.floor if self.floor is not None else -np.inf)

    def _parts(self, pred: Any) -> tuple[np.ndarray, np.ndarray]:
        mu, sigma = prediction_pair(pred, self.name, "mu, sigma")
        bad = int(np.count_nonzero(sigma <= 0))
        if bad:
            raise InputError(
                f"sigma(x) <= 0 in {bad} of {sigma.shape[0]} row(s); the scale must be positive. "
                "Use a positive scale model or set a floor: ScaledScore(floor=...)."
            )
        return mu, sigma

    def score(self, y: np.ndarray, pred: Any) -> np.ndarray:
        mu, sigma = self._parts(pred)
        return np.abs(np.asarray(y, dtype=np.float64) - mu) / sigma

    def interval(self, pred: Any, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, sigma = self._parts(pred)
        half = np.asarray(t, dtype=np.float64) * sigma  # sigma > 0: t = inf gives inf, never NaN
        return mu - half, mu + half

    def center(self, pred: Any) -> np.ndarray:
        return self._parts(pred)[0]

    def interval_parts(self, pred: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``interval(pred, t)`` is exactly (mu - t * sigma, mu + t * sigma): centres mu, mu; scale sigma."""
        mu, sigma = self._parts(pred)
        return mu, mu, sigma

    def __repr__(self) -> str:
        return f"ScaledScore(sigma_model={self.sigma_model!r}, cv={self.cv}, floor={self.floor!r})"


register_score(ScoreSpec("scaled", ScaledScore, family="regression"))

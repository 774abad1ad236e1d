"""The CQR score max(q_lo(x) - y, y - q_hi(x)) (Romano, Patterson & Candes, 2019)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InputError
from ..models import StatsmodelsRegressor, make_model, wrap_prefit
from .base import prediction_pair
from .fitting import StackedPredictor
from .registry import ScoreSpec, register_score

#: model shortcuts of the quantile score; "gbm" and "ols" are read as their quantile versions
QUANTILE_SHORTCUTS = {"qr": "qr", "qgbm": "qgbm", "ols": "qr", "gbm": "qgbm"}


def quantile_models(
    model: Any, levels: tuple[float, float], *, fit_intercept: bool = True, random_state: int | None = None
) -> list[Any]:
    """Two unfitted regressors of the conditional quantiles at ``levels``.

    ``model`` is "qr" (statsmodels QuantReg on the design), "qgbm"
    (HistGradientBoostingRegressor with quantile loss), a pair
    ``(est_lo, est_hi)`` of scikit-learn regressors (cloned), or one
    estimator with a ``quantile`` parameter (cloned twice, one per level).
    "ols" and "gbm" mean "qr" and "qgbm".

    Examples
    --------
    >>> from confrf.scores.quantile import quantile_models
    >>> [m.quantile for m in quantile_models("qgbm", (0.05, 0.95))]
    [0.05, 0.95]
    """
    if isinstance(model, str):
        kind = QUANTILE_SHORTCUTS.get(model)
        if kind == "qr":
            import statsmodels.api as sm

            return [
                StatsmodelsRegressor(
                    model_class=sm.QuantReg, fit_intercept=fit_intercept, fit_kwargs={"q": q, "max_iter": 5000}
                )
                for q in levels
            ]
        if kind == "qgbm":
            from sklearn.ensemble import HistGradientBoostingRegressor

            return [
                HistGradientBoostingRegressor(loss="quantile", quantile=q, random_state=random_state) for q in levels
            ]
        raise InputError(
            f"model {model!r} does not estimate quantiles; with score='quantile' use model='qr' (QuantReg), "
            "'qgbm' (gradient boosting, quantile loss), a pair (est_lo, est_hi) or an estimator with a "
            "`quantile` parameter."
        )
    if isinstance(model, (tuple, list)):
        if len(model) != 2:
            raise InputError(f"score='quantile' needs a pair of models (est_lo, est_hi), got {len(model)}.")
        names = [m for m in model if isinstance(m, str)]
        if names:  # ("ols", "rf") would fit two mean models, not the two quantiles
            raise InputError(
                f"score='quantile' with a pair: give two estimators already set to the lower and upper quantile "
                f"(e.g. QuantileRegressor(quantile=0.05), QuantileRegressor(quantile=0.95)), not names {names}; "
                "a name gives both quantiles by itself: model='qr' or model='qgbm'."
            )
        return [make_model(m, fit_intercept=fit_intercept, random_state=random_state) for m in model]
    params = model.get_params() if hasattr(model, "get_params") else {}
    if "quantile" not in params:
        raise InputError(
            f"{type(model).__name__} has no `quantile` parameter; with score='quantile' pass model='qr', 'qgbm', "
            "a pair (est_lo, est_hi), or an estimator such as QuantileRegressor or "
            "HistGradientBoostingRegressor(loss='quantile')."
        )
    if "loss" in params and params["loss"] != "quantile":
        raise InputError(f"{type(model).__name__}(loss={params['loss']!r}) ignores `quantile`; set loss='quantile'.")
    return [
        make_model(model, fit_intercept=fit_intercept, random_state=random_state).set_params(quantile=q) for q in levels
    ]


class QuantileScore:
    """CQR score V = max(q_lo(x) - y, y - q_hi(x)); with ``method="split"`` this is CQR.

    Parameters
    ----------
    levels : (float, float) or None
        Quantile levels of the two models; ``None`` means (alpha/2, 1 - alpha/2)
        at the estimator's alpha.

    Notes
    -----
    *Crossing quantiles.* Where the fitted models cross (q_lo(x) > q_hi(x)),
    the pair is sorted first (the monotone rearrangement of Chernozhukov,
    Fernandez-Val & Galichon, 2010); the score, the interval and the center
    all use the sorted pair, so the score is a fixed function of (x, y) and
    every guarantee is unaffected.

    *Negative thresholds and empty sets.* V can be negative (y strictly
    inside the band), so t can be too. The exact inversion is
    {y : V <= t} = [q_lo - t, q_hi + t], which is empty when
    q_hi - q_lo + 2t < 0. Empty sets are reported by the same closed-form
    endpoints, so ``lwr > upr`` there (no y satisfies lwr <= y <= upr); they
    are never NaN. Infinite t gives (-inf, +inf).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.scores import QuantileScore
    >>> s = QuantileScore()
    >>> pred = np.array([[1.0, 3.0]])
    >>> s.score(np.array([0.0, 2.0, 5.0]), np.repeat(pred, 3, axis=0))
    array([ 1., -1.,  2.])
    >>> s.interval(pred, np.array([-0.5]))
    (array([1.5]), array([2.5]))
    >>> s.interval(pred, np.array([-2.0]))  # empty: lwr > upr
    (array([3.]), array([1.]))
    """

    name = "quantile"

    def __init__(self, levels: tuple[float, float] | None = None) -> None:
        if levels is not None:
            lo, hi = (float(v) for v in levels)
            if not (0.0 < lo < hi < 1.0):
                raise InputError(f"levels must satisfy 0 < lo < hi < 1, got {levels!r}.")
        self.levels = levels

    def quantile_levels(self, alpha: float) -> tuple[float, float]:
        """The levels (lo, hi) fitted at miscoverage ``alpha``."""
        if self.levels is not None:
            return float(self.levels[0]), float(self.levels[1])
        return alpha / 2.0, 1.0 - alpha / 2.0

    def fit_models(
        self,
        X: np.ndarray,
        y: np.ndarray,
        model: Any,
        *,
        alpha: float,
        random_state: int | None = None,
        fit_intercept: bool = True,
    ) -> StackedPredictor:
        models = quantile_models(
            model, self.quantile_levels(alpha), fit_intercept=fit_intercept, random_state=random_state
        )
        return StackedPredictor([m.fit(X, y) for m in models])

    def prefit_models(self, model: Any, n_features: int) -> StackedPredictor:
        if not isinstance(model, (tuple, list)) or len(model) != 2:
            raise InputError(
                "prefit=True with score='quantile' needs model=(fitted_lo, fitted_hi), the two fitted quantile models."
            )
        return StackedPredictor([wrap_prefit(m, n_features) for m in model])

    def _band(self, pred: Any) -> tuple[np.ndarray, np.ndarray]:
        a, b = prediction_pair(pred, self.name, "q_lo, q_hi")
        return np.minimum(a, b), np.maximum(a, b)  # rearrangement of crossing quantiles

    def score(self, y: np.ndarray, pred: Any) -> np.ndarray:
        lo, hi = self._band(pred)
        y = np.asarray(y, dtype=np.float64)
        return np.maximum(lo - y, y - hi)

    def interval(self, pred: Any, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self._band(pred)
        t = np.asarray(t, dtype=np.float64)
        # lo, hi are finite, so t = +inf gives exactly -inf / +inf
        return lo - t, hi + t

    def center(self, pred: Any) -> np.ndarray:
        lo, hi = self._band(pred)
        return (lo + hi) / 2.0

    def interval_parts(self, pred: Any) -> tuple[np.ndarray, np.ndarray, None]:
        """``interval(pred, t)`` is exactly (q_lo - t, q_hi + t): centres q_lo, q_hi (sorted); scale 1 (None)."""
        lo, hi = self._band(pred)
        return lo, hi, None

    def __repr__(self) -> str:
        return f"QuantileScore(levels={self.levels!r})"


register_score(ScoreSpec("quantile", QuantileScore, family="regression"))

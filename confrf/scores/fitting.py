"""Fitting the model(s) a score needs: fresh, prefit, and out of fold.

A score may declare the models it needs through two optional methods (see
:class:`confrf.scores.base.Score`): ``fit_models`` and ``prefit_models``. A
score without them uses one regressor mu(x), built by :func:`make_model`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.model_selection import KFold

from .._validation import check_int
from ..exceptions import InputError
from ..models import fit_weighted, make_model, wrap_prefit
from .base import Score


class StackedPredictor:
    """Fitted models side by side: ``predict(X)`` is an (n, k) array, one column per model.

    Parameters
    ----------
    models : sequence of fitted models
        Each has ``predict(X) -> (n,)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from confrf.scores.fitting import StackedPredictor
    >>> X = np.arange(6.0).reshape(-1, 1)
    >>> p = StackedPredictor([LinearRegression().fit(X, X[:, 0]), LinearRegression().fit(X, 2 * X[:, 0])])
    >>> np.round(p.predict(np.array([[1.0]])), 6)
    array([[1., 2.]])
    """

    def __init__(self, models: Any) -> None:
        self.models = tuple(models)

    @property
    def component_models(self) -> tuple:
        return self.models

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([np.asarray(m.predict(X), dtype=np.float64).ravel() for m in self.models])


def fit_score_models(
    score: Score,
    X: np.ndarray,
    y: np.ndarray,
    model: Any,
    *,
    alpha: float,
    random_state: int | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> Any:
    """Fit what ``score`` needs on (X, y); the result's ``predict(X)`` is the score's ``pred``.

    ``sample_weight``: case weights of the fit (scores with one model mu only).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.scores import get_score
    >>> from confrf.scores.fitting import fit_score_models
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> m = fit_score_models(get_score("absolute"), X, X[:, 0], "ols", alpha=0.1)
    >>> np.round(m.predict(np.array([[3.0]])), 6)
    array([3.])
    """
    fit = getattr(score, "fit_models", None)
    if fit is None:
        est = make_model(model, fit_intercept=fit_intercept, random_state=random_state)
        return est.fit(X, y) if sample_weight is None else fit_weighted(est, X, y, sample_weight)
    if sample_weight is not None:
        raise InputError(
            f"case weights (weights=) are offered for scores with one model mu(x), such as score='absolute'; "
            f"score {getattr(score, 'name', score)!r} fits several models of its own. Drop weights=, or use "
            "score='absolute'."
        )
    return fit(X, y, model, alpha=alpha, random_state=random_state, fit_intercept=fit_intercept)


def prefit_score_models(score: Score, model: Any, n_features: int) -> Any:
    """Use already fitted model(s) for ``score`` (e.g. a (q_lo, q_hi) pair for CQR)."""
    wrap = getattr(score, "prefit_models", None)
    if wrap is None:
        return wrap_prefit(model, n_features)
    return wrap(model, n_features)


def out_of_fold_scores(
    score: Score,
    X: np.ndarray,
    y: np.ndarray,
    model: Any,
    *,
    cv: int,
    alpha: float,
    random_state: int | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    """Scores of the training rows, each from models fitted without its fold (K-fold cross-fitting).

    In-sample scores of a flexible model are far smaller than the scores of new
    points; out-of-fold scores behave like calibration scores, which is what a
    localizer or a bandwidth rule learned on the training part needs.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.scores import get_score
    >>> from confrf.scores.fitting import out_of_fold_scores
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2)); y = X[:, 0] + rng.normal(size=50)
    >>> out_of_fold_scores(get_score("absolute"), X, y, "ols", cv=5, alpha=0.1, random_state=0).shape
    (50,)
    """
    n = X.shape[0]
    check_folds(cv, n)
    out = np.empty(n, dtype=np.float64)
    for tr, te in KFold(int(cv), shuffle=True, random_state=random_state).split(X):
        fitted = fit_score_models(
            score,
            X[tr],
            y[tr],
            model,
            alpha=alpha,
            random_state=random_state,
            fit_intercept=fit_intercept,
            sample_weight=None if sample_weight is None else sample_weight[tr],
        )
        out[te] = score.score(y[te], fitted.predict(X[te]))
    return out


def check_folds(cv: Any, n: int) -> None:
    """``cv``: an integer >= 2 and at most the ``n`` training rows (the folds of the out-of-fold scores)."""
    check_int(cv, "cv", minimum=2, hint="folds of the out-of-fold training scores")
    if n < cv:
        raise InputError(
            f"the training part has {n} row(s), fewer than cv={cv} folds; give more training data or a smaller cv."
        )


class DeferredScores:
    """The training rows' out-of-fold scores, computed on the first call and then kept.

    For a method that decides at calibration time whether the training rows teach its forest
    (LCP-RF's ``localizer_data="auto"``: only while the calibration set is small), so that a fit whose
    calibration set is large never pays the ``cv`` extra model fits. The scores equal
    :func:`out_of_fold_scores` with the same arguments (the same folds and seeds), whenever they are computed.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.scores import get_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2)); y = X[:, 0] + rng.normal(size=50)
    >>> pending = DeferredScores(get_score("absolute"), X, y, "ols", cv=5, alpha=0.1, random_state=0)
    >>> bool(np.array_equal(pending(), out_of_fold_scores(get_score("absolute"), X, y, "ols", cv=5, alpha=0.1,
    ...                                                   random_state=0)))
    True
    """

    def __init__(self, score: Score, X: np.ndarray, y: np.ndarray, model: Any, *, cv: int, **kw: Any) -> None:
        check_folds(cv, X.shape[0])  # a bad cv is an error at fit time, whether or not the scores are needed
        self._args: tuple[Any, ...] | None = (score, X, y, model, cv, kw)
        self._scores: np.ndarray | None = None

    @property
    def computed(self) -> bool:
        """Whether the out-of-fold fits have run."""
        return self._scores is not None

    def __call__(self) -> np.ndarray:
        if self._scores is None:
            assert self._args is not None
            score, X, y, model, cv, kw = self._args
            self._scores = out_of_fold_scores(score, X, y, model, cv=cv, **kw)
            self._args = None  # the response and the model spec are no longer needed
        return self._scores

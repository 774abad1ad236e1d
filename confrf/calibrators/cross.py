"""What the cross-conformal methods (CV+, jackknife+, J+aB) share.

They fit the base model many times on subsets of the training rows (folds,
all rows but one, bootstrap bags), score every row with models that did not
see it, and turn those out-of-fold scores into intervals with the models'
predictions at the new point (:mod:`confrf.calibrators.cross_bounds`). No
calibration set is split off: ``ConformalRegressor.fit`` does the whole job.

Every model is fitted with the same ``random_state``: the algorithm is one
fixed function of its training rows, which the jackknife+ and CV+ proofs
treat as "the" algorithm applied to different subsets. The fits run on
joblib's threading backend, each with single-threaded OpenMP and BLAS pools,
so the models (and every interval) are identical whatever ``n_jobs`` is.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._parallel import kernel_threads, limit_threads, resolve_jobs
from .._validation import as_float_matrix, min_calibration_size
from ..exceptions import InputError
from ..models import StatsmodelsRegressor
from ..scores.fitting import fit_score_models
from .base import Calibrator, Thresholds
from .cross_bounds import BLOCK_ENTRIES

#: the kind of the jackknife+'s and J+aB's statement: marginal, at level 1 - 2 alpha
KIND_2ALPHA = "marginal (1 - 2 alpha)"
#: a statement that is a worst case: what holds in practice, for every cross-conformal method
IN_PRACTICE = (
    "In practice coverage is close to {target:g} (1 - alpha) when the model is stable, i.e. its predictions change "
    "little when a few training rows are left out (least squares, ridge, bagged or boosted trees at moderate n; "
    "Barber et al. 2021, Section 5); the worst case needs an unstable fit. evaluate(test) measures it."
)


class CrossCalibrator(Calibrator):
    """Base of the methods that fit their own models: ``fit`` instead of ``calibrate``, intervals instead of thresholds.

    Subclasses implement :meth:`fit` (setting ``scores_``, the out-of-fold
    scores, and ``n_train_``) and :meth:`_bounds`.
    """

    #: title of the summary section that :meth:`describe` fills
    localizer_title = "Cross-fitting"
    supports_shift = False
    #: after fit: the training rows' out-of-fold scores (+inf for a row without a predictor)
    scores_: np.ndarray

    def __init__(self, n_jobs: int | None = None, seed: int | None = None) -> None:
        self.n_jobs = n_jobs
        self.seed = seed

    @abstractmethod
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        *,
        score: Any,
        model: Any,
        alpha: float,
        random_state: int | None,
        fit_intercept: bool,
        sample_weight: np.ndarray | None = None,
    ) -> CrossCalibrator:
        """Fit the models on subsets of (X, y) (with the rows' case weights) and score every row out of fold."""

    @abstractmethod
    def _bounds(self, X: np.ndarray, alpha: float, n_threads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower, upper, level) at the rows of X."""

    def _fit_subsets(
        self, X: np.ndarray, y: np.ndarray, subsets: Sequence[np.ndarray], score: Any, **fit_args: Any
    ) -> None:
        """The score's models on every row subset, in order (``models_``), and the seconds taken (``fit_seconds_``).

        ``fit_args``: those of :meth:`fit` (``model``, ``alpha``, ...), passed to :func:`fit_models`.
        """
        self.score = score
        self.models_, self.fit_seconds_ = fit_models(score, X, y, subsets=subsets, n_jobs=self.n_jobs, **fit_args)

    def cross_fit(self, X: np.ndarray, y: np.ndarray, **fit_args: Any) -> np.ndarray:
        """:meth:`fit`, then the out-of-fold scores (the estimator's calibration scores)."""
        return self.fit(X, y, **fit_args).scores_

    def predict_rows(self, X, alpha, *, interval=None, labels=None, likelihood_ratio=None) -> dict[str, np.ndarray]:
        """Bounds from the fold models (``interval`` is not used); t is NaN (+inf for an infinite interval).

        There is no score threshold: ``level`` is the upper end's.
        """
        lwr, upr, level = self.intervals(X, alpha)
        infinite = np.isinf(lwr) | np.isinf(upr)
        return {
            "lwr": lwr,
            "upr": upr,
            "t": np.where(infinite, np.inf, np.nan),
            "closed": np.ones(X.shape[0], dtype=bool),
            "level": level,
        }

    def intervals(self, X: Any, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Lower and upper bounds at the rows of X, and the level of the upper end (1 where it is infinite)."""
        return self._bounds(as_float_matrix(X, "X"), alpha, kernel_threads(self.n_jobs))

    def calibrate(self, X, scores, *, alpha, rng) -> CrossCalibrator:
        raise InputError(
            f"method {self.name!r} calibrates on the out-of-fold scores of the training rows during fit(); it "
            "takes no separate calibration set: predict right after fit (use method='split' or 'lcp-rf' to "
            "calibrate on separate data)."
        )

    def thresholds(self, X, alpha) -> Thresholds:
        raise InputError(
            f"method {self.name!r} has no per-row score threshold: its interval combines the scores of the "
            "training rows with the predictions of the models that left them out; use intervals(X, alpha)."
        )

    def sizes(self) -> dict[str, int]:
        return {"scored out of fold": int(self.scores_.shape[0])}

    def _check_scores(self, n_scores: int, alpha: float, what: str) -> None:
        need = min_calibration_size(alpha)
        if n_scores < need:
            raise InputError(
                f"{what} give {n_scores} out-of-fold score(s); at alpha={alpha} at least {need} are needed for a "
                "finite interval (ceil((1-alpha)(n+1)) <= n). Give more rows or a larger alpha."
            )


def row_step(n_models: int, width: int = 2) -> int:
    """New rows per block so that ``n_models`` predictions of ``width`` columns stay within BLOCK_ENTRIES."""
    return max(1, BLOCK_ENTRIES // max(1, n_models * width))


def fit_models(
    score: Any,
    X: np.ndarray,
    y: np.ndarray,
    model: Any,
    subsets: Sequence[np.ndarray],
    *,
    n_jobs: int | None,
    sample_weight: np.ndarray | None = None,
    **fit_args: Any,
) -> tuple[list[Any], float]:
    """The score's model(s) fitted on ``X[s], y[s]`` for every row subset s, in order, and the seconds taken.

    ``sample_weight``: case weights of the rows (each model gets those of its
    rows); ``fit_args``: ``alpha``, ``random_state`` and ``fit_intercept`` of
    :func:`confrf.scores.fitting.fit_score_models`. Statsmodels results drop
    their copy of the data (``remove_data``): a jackknife+ fit keeps n models,
    which must not keep n copies of the data.
    """

    def one(rows: np.ndarray) -> Any:
        weights = {} if sample_weight is None else {"sample_weight": sample_weight[rows]}
        fitted = fit_score_models(score, X[rows], y[rows], model, **fit_args, **weights)
        _drop_data(fitted)
        return fitted

    t0 = time.perf_counter()
    jobs = min(resolve_jobs(n_jobs), len(subsets))
    if jobs <= 1:
        out = [one(s) for s in subsets]
    else:
        from joblib import Parallel, delayed

        def run(rows: np.ndarray) -> Any:
            with limit_threads(1):  # OpenMP's limit belongs to each worker thread
                return one(rows)

        with limit_threads(1):  # BLAS's is process-wide: one thread per fit while fits run side by side
            out = Parallel(n_jobs=jobs, backend="threading")(delayed(run)(s) for s in subsets)
    return list(out), time.perf_counter() - t0


def _drop_data(fitted: Any) -> None:
    for part in getattr(fitted, "component_models", None) or (fitted,):
        if isinstance(part, StatsmodelsRegressor):
            remove = getattr(getattr(part, "results_", None), "remove_data", None)
            if remove is not None:
                remove()


def stacked_predictions(models: Sequence[Any], X: np.ndarray) -> np.ndarray:
    """(G, m) or (G, m, c) array: every model's ``predict(X)``."""
    return np.stack([np.asarray(mod.predict(X), dtype=np.float64) for mod in models])

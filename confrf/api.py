"""Formula entry points: ``conformal`` and its aliases ``split_cp`` and ``lcp_rf``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._validation import check_alpha
from .calibrators import get_method
from .estimator import ConformalRegressor
from .exceptions import InputError
from .formula import Design
from .results import ConformalResult

#: options accepted by :func:`conformal` besides its named arguments
OPTIONS = {
    "score": "absolute",
    "prefit": False,
    "honest": True,
    "localizer_size": 0.5,
    "n_estimators": 100,
    "min_samples_leaf": "auto",
    "max_features": 1.0,
    "max_depth": None,
    "na_action": "raise",
    "n_jobs": None,
}


def _split_rng(random_state: Any) -> np.random.Generator:
    # a stream of its own, so the train/calibration split does not share draws with the model
    if random_state is None:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence(entropy=int(random_state), spawn_key=(1,)))


def conformal(formula: str, data: Any, *, method: str = "lcp-rf", alpha: float = 0.1, model: Any = "gbm",
              calib: Any = None, calib_size: float = 0.5, random_state: int | None = None,
              **options: Any) -> ConformalResult:
    """Fit a base model and calibrate conformal prediction intervals, from a formula.

    Parameters
    ----------
    formula : str
        ``"response ~ predictors"`` (formulaic syntax: ``C(x)``, ``np.log(x)``,
        interactions ``a:b``; ``.`` stands for every other column).
    data : DataFrame
        Training data. Without ``calib`` it is split at random into a training
        part (fits the model) and a calibration part (``calib_size``).
    method : {"lcp-rf", "split"}
        ``"lcp-rf"``: exact localized conformal prediction with random-forest
        weights (honest by default). ``"split"``: split conformal.
    alpha : float
        Miscoverage in (0, 1): intervals aim at 1 - alpha coverage.
    model : str or estimator
        "gbm" (HistGradientBoostingRegressor), "rf", "ols" (statsmodels), a
        scikit-learn regressor (cloned and fitted), or with ``prefit=True`` a
        model already fitted on the same design (sklearn or statsmodels results).
    calib : DataFrame, optional
        Calibration data; then all of ``data`` trains the model.
    calib_size : float
        Share of ``data`` used for calibration when ``calib`` is not given.
    random_state : int, optional
        Makes the split, the model and the forest reproducible.
    **options
        ``score`` ("absolute"), ``prefit`` (False), ``honest`` (True),
        ``localizer_size`` (0.5: share of the calibration set that grows the
        forest when honest), ``n_estimators`` (100), ``min_samples_leaf``
        ("auto": ceil(sqrt(n_localizer)), at least 5), ``max_features`` (1.0),
        ``max_depth`` (None), ``na_action`` ("raise" or "drop"), ``n_jobs``.

    Returns
    -------
    ConformalResult

    Examples
    --------
    >>> import confrf as cf
    >>> df = cf.datasets.load_diamonds().sample(3000, random_state=1)
    >>> res = cf.lcp_rf("price ~ carat + C(cut) + C(color)", data=df, alpha=0.1, random_state=0)
    >>> res.predict(df.head(2)).shape
    (2, 3)
    """
    alpha = check_alpha(alpha)
    spec = get_method(method)
    unknown = sorted(set(options) - set(OPTIONS) - set(spec.options))
    if unknown:
        raise InputError(
            f"unknown option(s) {unknown}; valid options are {sorted(OPTIONS)} and, for method {method!r}, "
            f"{sorted(spec.options) or 'none'}."
        )
    opts = {**OPTIONS, **{k: v for k, v in options.items() if k in OPTIONS}}
    method_opts = {k: v for k, v in options.items() if k in spec.options}
    if not (isinstance(calib_size, float | int) and 0 < calib_size < 1):
        raise InputError(f"calib_size must lie in (0, 1), got {calib_size!r}.")

    design, X, y, _ = Design.fit(formula, data, na_action=opts["na_action"])
    prefit = bool(opts["prefit"])
    if calib is not None:
        if isinstance(calib, dict):
            calib = pd.DataFrame(calib)
        X_cal = design.transform(calib)
        y_cal = design.response(calib)
        X_tr, y_tr = X, y
    elif prefit:
        X_tr, y_tr, X_cal, y_cal = X[:0], y[:0], X, y
    else:
        n = X.shape[0]
        n_cal = int(round(calib_size * n))
        if n_cal < 1 or n - n_cal < 2:
            raise InputError(f"{n} rows cannot be split into training and calibration parts with calib_size={calib_size}.")
        perm = _split_rng(random_state).permutation(n)
        tr, cal = np.sort(perm[n_cal:]), np.sort(perm[:n_cal])
        X_tr, y_tr, X_cal, y_cal = X[tr], y[tr], X[cal], y[cal]

    est = ConformalRegressor(
        model=model, method=method, alpha=alpha, score=opts["score"], prefit=prefit, honest=opts["honest"],
        localizer_size=opts["localizer_size"], n_estimators=opts["n_estimators"],
        min_samples_leaf=opts["min_samples_leaf"], max_features=opts["max_features"], max_depth=opts["max_depth"],
        fit_intercept=design.has_intercept, random_state=random_state, n_jobs=opts["n_jobs"],
        options=method_opts,
    )
    if not prefit:
        est.fit(X_tr, y_tr)
    est.conformalize(X_cal, y_cal)
    nobs = {"train": int(X_tr.shape[0]), **est.calibrator_.sizes()}
    return ConformalResult(design=design, estimator=est, options={**opts, **method_opts}, nobs=nobs,
                           random_state=random_state)


def split_cp(formula: str, data: Any, **kwargs: Any) -> ConformalResult:
    """Split conformal prediction: :func:`conformal` with ``method="split"``.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(600, random_state=0)
    >>> cf.split_cp(sim.formula, data=sim.frame, random_state=0).method
    'split'
    """
    return conformal(formula, data, method="split", **kwargs)


def lcp_rf(formula: str, data: Any, **kwargs: Any) -> ConformalResult:
    """LCP-RF: :func:`conformal` with ``method="lcp-rf"`` (honest forest by default).

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(800, random_state=0)
    >>> cf.lcp_rf(sim.formula, data=sim.frame, random_state=0).method
    'lcp-rf'
    """
    return conformal(formula, data, method="lcp-rf", **kwargs)

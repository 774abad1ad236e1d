"""Formula entry points: ``conformal`` and its aliases ``split_cp`` and ``lcp_rf``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._validation import check_alpha, check_bool, check_fraction, seed_entropy
from .calibrators import get_method
from .estimator import ConformalRegressor
from .exceptions import ConfrfWarning, InputError
from .formula import Design
from .formula.frame import as_training_frame
from .formula.labels import label_column
from .group_labels import kept_positions, split_group_option
from .localizers._float32 import F32_MAX, blurred_columns
from .models import adapt_formula_results, check_linear_scale, no_predictor_model
from .results import ConformalResult

#: options accepted by :func:`conformal` besides its named arguments
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
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(1,)))


def _warn_float32_trees(model: Any, prefit: bool, X: np.ndarray, names: list[str]) -> None:
    """The localizer forest copes with columns float32 blurs (it uses ranks); model="rf" does not: say so."""
    if prefit or not (
        model == "rf" if isinstance(model, str) else type(model).__module__.startswith("sklearn.ensemble._forest")
    ):
        return
    over = [names[j] for j in range(X.shape[1]) if np.abs(X[:, j]).max(initial=0.0) > F32_MAX]
    if over:
        raise InputError(
            f"design column(s) {over} exceed float32's range (3.4e38), which scikit-learn's random forest "
            "uses; rescale them, e.g. I(x * 1e-39), or use model='gbm'."
        )
    blurred = [names[j] for j in blurred_columns(X)]
    if blurred:
        warnings.warn(
            f"design column(s) {blurred} differ only beyond float32 precision; "
            "scikit-learn's random forest casts X to float32 and cannot split on them, so the base model "
            "ignores them (the intervals stay valid). Rescale them, e.g. I((x - 1) * 1e9), or use model='gbm'.",
            ConfrfWarning,
            stacklevel=3,
        )


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


def conformal(
    formula: str,
    data: Any,
    *,
    method: str = "lcp-rf",
    alpha: float = 0.1,
    model: Any = "gbm",
    calib: Any = None,
    calib_size: float | None = None,
    random_state: Any = None,
    **options: Any,
) -> ConformalResult:
    """Fit a base model and calibrate conformal prediction intervals, from a formula.

    Parameters
    ----------
    formula : str
        ``"response ~ predictors"`` (formulaic syntax: ``C(x)``, ``np.log(x)``,
        interactions ``a:b``; ``.`` stands for every other column). A class-label
        response (``C(y)``, or a categorical, bool or string column) gives
        prediction sets instead of intervals: a
        :class:`confrf.classification.ClassificationResult`, with methods "split",
        "lcp-rf", "qrf-tc" and the class-conditional "split-g" / "lcp-rf-g",
        scores "lac" (default), "aps", "raps", and classifiers "gbm", "rf",
        "logit" (docs/guide/classification.md).
    data : DataFrame
        Training data. Without ``calib`` it is split at random into a training
        part (fits the model) and a calibration part (``calib_size``). The
        cross-conformal methods use all of it for both.
    method : {"lcp-rf", "split", "qrf-tc", "split-g", "lcp-rf-g", "lcp", "slcp", "cv+", "jackknife+", "jackknife+ab"}
        ``"lcp-rf"``: exact localized conformal prediction with random-forest
        weights (honest by default). ``"split"``: split conformal.
        ``"lcp"``: the same exact LCP with Guan's kernel weights. ``"slcp"``:
        split localized conformal prediction (Han et al.).
        ``"qrf-tc"``: forest quantiles with a training-conditional correction
        (see :func:`qrf_tc`). ``"split-g"``, ``"lcp-rf-g"``: split conformal or
        LCP-RF within each group, with coverage >= 1 - alpha within every group.
        ``"cv+"``, ``"jackknife+"``, ``"jackknife+ab"``: every row of ``data``
        trains and calibrates (see :func:`cv_plus`); for small data sets.
    alpha : float
        Miscoverage in (0, 1): intervals aim at 1 - alpha coverage.
    model : str, estimator or pair
        "gbm" (HistGradientBoostingRegressor), "rf", "ols" (statsmodels), a
        scikit-learn regressor (cloned and fitted), or with ``prefit=True`` a
        model already fitted on the same design: a scikit-learn model, or
        statsmodels results, including those of the formula API
        (``smf.ols("price ~ carat + C(cut)", data=train).fit()``, whose
        columns are matched by name to this formula's design). With no
        predictors (``"y ~ 1"``, ``"y ~ 0"``, only with ``method="split"``)
        the model is the constant mean (or 0 without intercept), as R's
        ``lm(y ~ 1)``.
        With ``score="quantile"``: "qr" (statsmodels QuantReg; "ols" means it
        too), "qgbm" (quantile-loss boosting; "gbm" means it too), or a pair
        ``(est_lo, est_hi)``.
    calib : DataFrame, optional
        Calibration data; then all of ``data`` trains the model.
    calib_size : float, optional
        Share of ``data`` used for calibration when ``calib`` is not given
        (default 0.5).
    random_state : int, Generator, RandomState or None
        Makes the split, the model and the forest reproducible. A numpy
        ``Generator`` or ``RandomState`` is drawn from once for an int seed,
        which ``result.random_state`` keeps. Floats, strings, bools and
        negative numbers are refused.
    **options
        ``score`` ("absolute"; "quantile" is CQR's max(q_lo - y, y - q_hi),
        "scaled" is ``|y - mu| / sigma``; or a :class:`confrf.scores.Score`),
        ``prefit`` (False), ``honest`` (True),
        ``localizer_size`` (0.5: share of the calibration set that grows the
        forest when honest), ``n_estimators`` ("auto": 100 trees, more, up to
        500, where the leaves are small and the data few; or an int), ``min_samples_leaf``
        ("tune": for "lcp-rf", chosen by simulated LCP-RF calibrations on the
        localizer part only, "auto" for the other methods; "auto":
        ceil(sqrt(n_localizer)), at least 5; or an int),
        ``max_features`` ("tune": all features, a third of them, or the
        columns a first forest finds relevant ("screened"), chosen with the
        leaf size; "screened"; or scikit-learn's values),
        ``max_depth`` (None), ``na_action`` ("raise" or "drop"), ``n_jobs``
        (None: one thread for everything confrf runs, the base model's OpenMP
        and BLAS pools included; -1: all cores; see the guide's "Threads").
        Method options: ``guarantee`` ("marginal" or "pac"),
        ``localizer_data`` ("calibration"; "training" grows the forest on the
        training part's ``cv``-fold out-of-fold scores) and ``scale``
        ("tune": chosen with the forest settings; "none": the weights
        localize the scores ``abs(y - mu)``; "forest": they localize
        ``abs(y - mu) / sigma(x)``, sigma the forest's prediction of the
        score, learned on the localizer part, so the guarantee stays exact)
        for "lcp-rf";
        For "cv+": ``cv`` (5: the number of folds K, or a scikit-learn
        splitter); for "jackknife+ab": ``n_bootstrap`` (30), ``aggregation``
        ("mean" or "median"), ``bag_size`` (None: n), ``replace`` (True).
        ``delta``, ``pac_size``, ``pac_bound`` ("binomial" or "hoeffding"),
        ``grid_size``, ``pac_form`` (Hoeffding only) for "qrf-tc" and
        "lcp-rf" with ``guarantee="pac"`` (see :func:`qrf_tc`).
        For "split-g" and "lcp-rf-g": ``groups`` ("leiden": communities of the
        forest's weight graph, needs ``pip install 'confrf[groups]'``;
        "components"; a column name such as ``"region"``, which need not be in
        the formula; an expression such as ``"C(region)"``; or a callable
        returning one label per row of a DataFrame), ``resolution`` (1.0,
        Leiden's), ``min_group_size`` ("auto": groups expected to hold too few
        conformal points to give finite intervals are merged into "(rest)",
        decided on the localizer part only; None: no merging).
        ``result.groups(newdata)`` gives each row's group; ``guarantee="pac"``
        (with ``delta``, and ``pac_size`` for "lcp-rf-g") covers every group at
        once with probability >= 1 - delta (binomial order statistic per group
        at delta / L).
        For "lcp" and "slcp": ``kernel`` ("gaussian" or "exponential", on
        features standardized on the training part), ``bandwidth`` ("auto":
        Guan's rule for "lcp", Han et al.'s median heuristic for "slcp"; or a
        number in standardized units), ``max_infinite`` ("lcp": Guan's
        delta, None = alpha/2), ``cv`` (5: folds of the out-of-fold training
        scores these rules learn from), ``reference_size`` (0.3 / 0.5: share
        of the calibration set held out for them when ``prefit=True``).

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
    if label_column(formula, data) is not None:  # a class-label response: prediction sets
        from .classification.api import conformal_sets

        return conformal_sets(
            formula,
            data,
            method=method,
            alpha=alpha,
            model=model,
            calib=calib,
            calib_size=0.5 if calib_size is None else calib_size,
            random_state=random_state,
            **options,
        )
    seed = seed_entropy(random_state)
    spec = get_method(method)
    unknown = sorted(set(options) - set(OPTIONS) - set(spec.options))
    if unknown:
        raise InputError(
            f"unknown option(s) {unknown}; valid options are {sorted(OPTIONS)} and, for method {method!r}, "
            f"{sorted(spec.options) or 'none'}."
        )
    opts = {**OPTIONS, **{k: v for k, v in options.items() if k in OPTIONS}}
    method_opts = {k: v for k, v in options.items() if k in spec.options}
    labeler, est_opts = split_group_option(method_opts)  # user groups: labels read from the rows
    prefit = check_bool(opts["prefit"], "prefit")
    if spec.fits_models:
        _refuse_calibration_set(method, calib, calib_size, prefit)
    calib_size = check_fraction(0.5 if calib_size is None else calib_size, "calib_size")
    if prefit and calib is not None:  # data would train nothing, yet be counted as training rows
        raise InputError(
            "prefit=True: the model is already fitted, so data= is the calibration set and nothing is "
            "trained; pass the calibration rows as data= and drop calib=."
        )

    data = as_training_frame(data, "data")
    design, X, y, kept = Design.fit(formula, data, na_action=opts["na_action"])
    _refuse_classification_settings(design, model, opts["score"])
    _warn_float32_trees(model, prefit, X, design.column_names)
    if model == "ols" and not prefit and opts["score"] != "quantile":  # names the columns before the model sees them
        check_linear_scale(X, design.has_intercept, design.column_names)
    if prefit:
        model = adapt_formula_results(model, design.column_names, design.has_intercept)
    if X.shape[1] == 0:
        model = no_predictor_model(model, design, method, prefit)
    if spec.fits_models:  # every row trains and calibrates
        X_tr, y_tr = X, y
    elif calib is not None:
        calib = as_training_frame(calib, "calib")
        X_cal = design.transform(calib, what="calib")
        y_cal = design.response(calib, what="calib")
        X_tr, y_tr = X, y
    elif prefit:
        X_tr, y_tr, X_cal, y_cal = X[:0], y[:0], X, y
        cal = slice(None)
    else:
        tr, cal = split_indices(X.shape[0], calib_size, seed)
        X_tr, y_tr, X_cal, y_cal = X[tr], y[tr], X[cal], y[cal]
    groups_cal = None
    if labeler is not None:
        groups_cal = (
            labeler(calib, "calib")
            if calib is not None
            else labeler(data.iloc[kept_positions(data, kept)], "data")[cal]
        )

    est = ConformalRegressor(
        model=model,
        method=method,
        alpha=alpha,
        score=opts["score"],
        prefit=prefit,
        honest=opts["honest"],
        localizer_size=opts["localizer_size"],
        n_estimators=opts["n_estimators"],
        min_samples_leaf=opts["min_samples_leaf"],
        max_features=opts["max_features"],
        max_depth=opts["max_depth"],
        fit_intercept=design.has_intercept,
        random_state=seed,
        n_jobs=opts["n_jobs"],
        options=est_opts,
    )
    if not prefit:
        est.fit(X_tr, y_tr)
    if not spec.fits_models:
        est.conformalize(X_cal, y_cal, groups=groups_cal)
    nobs = {"train": int(X_tr.shape[0]), **est.calibrator_.sizes()}
    return ConformalResult(
        design=design,
        estimator=est,
        options={**opts, **method_opts},
        nobs=nobs,
        random_state=seed,
        group_labeler=labeler,
    )


def _refuse_calibration_set(method: str, calib: Any, calib_size: Any, prefit: bool) -> None:
    """The cross-conformal methods use every row of ``data`` for both jobs: no calibration set, no prefit model."""
    why = (
        f"method {method!r} fits the model on folds of data= and calibrates on every row's out-of-fold score, "
        "so all of data= trains and calibrates"
    )
    if calib is not None:
        raise InputError(
            f"{why}; a separate calib= set has no role. Pass all the rows as data= (e.g. pd.concat([train, calib])), "
            "or use method='split' or 'lcp-rf' to calibrate on calib=."
        )
    if calib_size is not None:
        raise InputError(f"{why}; calib_size= has no role: drop it.")
    if prefit:
        raise InputError(
            f"{why}: it refits the model on every fold and cannot use a prefit model. Drop prefit=True and pass an "
            "unfitted model (e.g. model='ols'), or use method='split' for a fitted model."
        )


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

    ``guarantee="pac"`` (with ``delta``, ``pac_size``, ``pac_bound`` as in
    :func:`qrf_tc`) adds a training-conditional correction learned on a
    held-out part D2.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(800, random_state=0)
    >>> cf.lcp_rf(sim.formula, data=sim.frame, random_state=0).method
    'lcp-rf'
    """
    return conformal(formula, data, method="lcp-rf", **kwargs)


def cv_plus(formula: str, data: Any, **kwargs: Any) -> ConformalResult:
    """CV+: :func:`conformal` with ``method="cv+"``; every row of ``data`` trains and calibrates.

    The model is fitted ``cv`` times (default 5), each time without one fold
    of the rows; every row is scored by the model that did not see it, and a
    new point's interval takes order statistics of mu_{-k(i)}(x) -/+ R_i over
    the rows i (for the absolute score; any score's exact inversion in
    general). The guarantee is 1 - 2 alpha - epsilon in the worst case and
    close to 1 - alpha in practice (Barber, Candes, Ramdas & Tibshirani
    2021); the summary prints both. ``predict`` reuses the fold models; the
    ``fit`` column is a model fitted on all rows. Siblings:
    ``method="jackknife+"`` (leave one out: n fits) and
    ``method="jackknife+ab"`` (bootstrap models, Kim, Xu & Barber 2020).

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(300, random_state=0)
    >>> res = cf.cv_plus(sim.formula, data=sim.frame, model="ols", cv=10, random_state=0)
    >>> res.nobs
    {'train': 300, 'scored out of fold': 300}
    >>> res.predict(sim.frame.head(2)).columns.tolist()
    ['fit', 'lwr', 'upr']
    """
    return conformal(formula, data, method="cv+", **kwargs)


def qrf_tc(formula: str, data: Any, **kwargs: Any) -> ConformalResult:
    """QRF-TC: forest quantiles with only a training-conditional (PAC) calibration.

    The calibration set is split into three disjoint parts: D2 (``pac_size``,
    default 1/3) and, of the rest, a share ``localizer_size`` (0.5) that grows
    the forest and D1 that carries its weights. The interval of x uses
    Q(min(1, 1 - alpha + a_hat); F_x), F_x the forest's estimate of the score
    distribution at x on D1 with x's own mass at +inf (level 1 gives an
    infinite interval). With ``pac_bound="binomial"`` (default) a_hat is the
    k-th smallest of the corrections that just cover each D2 point, k the
    smallest integer with P(Binomial(n2, 1 - alpha) >= k) <= ``delta`` (0.1).
    Then, for i.i.d. data, P(coverage >= 1 - alpha) >= 1 - delta over the
    calibration draw. ``pac_bound="hoeffding"`` (or giving ``grid_size`` or
    ``pac_form``) is the paper's bound: the smallest of ``grid_size`` (20)
    values in [0, alpha] whose D2 coverage reaches 1 - alpha + epsilon,
    epsilon = sqrt(ln(grid_size / delta) / (2 n2)); ``pac_form="paper"`` its
    form (D2 target 1 - alpha, guarantee 1 - alpha - epsilon). The same options
    apply to :func:`lcp_rf` with ``guarantee="pac"``, whose base level is the
    exact LCP alpha-tilde(x) on D1. ``result.pac_report()`` gives the numbers;
    ``cf.pac_n2(alpha=0.1, delta=0.1)`` plans the D2 size.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(4000, random_state=0)
    >>> res = cf.qrf_tc(sim.formula, data=sim.frame, delta=0.1, random_state=0)
    >>> res.pac_report().reached
    True
    """
    return conformal(formula, data, method="qrf-tc", **kwargs)


def _refuse_classification_settings(design: Design, model: Any, score: Any) -> None:
    """A classifier or classification score with a numeric response: say why, and both ways out.

    The mirror of :func:`confrf.classification.api._refuse_regression_settings`.
    """
    from sklearn.base import is_classifier

    from .classification.scores import ClassScore

    try:
        classifier = not isinstance(model, (str, type)) and is_classifier(model)
    except AttributeError:  # an object outside scikit-learn's estimator protocol (no tags): not a known classifier
        classifier = False
    wrong = [f"model={model!r}"] if (isinstance(model, str) and model == "logit") or classifier else []
    wrong += (
        [f"score={score!r}"]
        if (isinstance(score, str) and score in ("lac", "aps", "raps")) or isinstance(score, ClassScore)
        else []
    )
    if wrong:
        raise InputError(
            f"the response {design.response_name!r} is numeric, so conformal() builds prediction intervals, but "
            f"{' and '.join(wrong)} belong{'s' if len(wrong) == 1 else ''} to classification. Use a regression model "
            "('gbm', 'rf', 'ols' or a regressor) and score ('absolute', 'quantile', 'scaled'), or make the response a "
            "class label (C(y) in the formula, or a categorical column) for prediction sets."
        )

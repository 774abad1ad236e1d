"""Formula entry points: ``conformal`` and its aliases ``split_cp`` and ``lcp_rf``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._formula_common import OPTIONS, FitCall, FitRows, split_indices
from ._levels import resolve_alpha
from ._validation import check_alpha, check_bool, check_fraction, seed_entropy
from ._warnings import user_stacklevel
from .calibrators import METHODS, get_method
from .classification import ClassificationResult
from .classification.api import conformal_sets
from .dask import DaskRows, is_dask_collection
from .estimator import ConformalRegressor
from .exceptions import ConfrfWarning, InputError
from .formula import Design
from .formula.frame import as_training_frame
from .formula.labels import label_column
from .group_labels import kept_positions, split_group_option
from .localizers._float32 import F32_MAX, blurred_columns
from .models import adapt_formula_results, check_linear_scale, name_model_terms, no_predictor_model
from .results import ConformalResult
from .results.response_scale import build_response_scale
from .shift.setup import SHIFT_OPTIONS, pop_shift_options, refuse_unweighted, resolve_shift

__all__ = ["OPTIONS", "conformal", "lcp_rf", "qrf_tc", "split_cp", "split_indices"]


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
            stacklevel=user_stacklevel(),
        )


def conformal(
    formula: str,
    data: Any,
    *,
    method: str = "lcp-rf",
    alpha: float | None = None,
    level: float | None = None,
    model: Any = "gbm",
    calib: Any = None,
    calib_size: float | None = None,
    random_state: Any = None,
    support: Any = None,
    **options: Any,
) -> ConformalResult | ClassificationResult:
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
    alpha : float, optional
        Miscoverage in (0, 1): intervals aim at 1 - alpha coverage (default
        0.1). An alpha above 0.5 warns (:class:`~confrf.exceptions.LevelWarning`):
        ``alpha=0.95`` gives 5% intervals, not 95% ones.
    level : float, optional
        R's name for the coverage, instead of ``alpha``: ``level=0.95`` is
        ``alpha=0.05`` exactly (read as the decimal typed). A probability in
        (0, 1), as in R; giving both ``alpha`` and ``level`` is an error.
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
    calib : DataFrame or dask.dataframe.DataFrame, optional
        Calibration data; then all of ``data`` trains the model. A Dask
        DataFrame (``method="lcp-rf"``) is calibrated on the cluster: scores
        and leaf lookups run on the workers partition by partition, the forest
        grows on the client from at most ``max_localizer_size`` rows, and the
        fit equals the one on the same rows in memory (docs/guide/scale.md).
    calib_size : float, optional
        Share of ``data`` used for calibration when ``calib`` is not given
        (default 0.5).
    random_state : int, Generator, RandomState or None
        Makes the split, the model and the forest reproducible. A numpy
        ``Generator`` or ``RandomState`` is drawn from once for an int seed,
        which ``result.random_state`` keeps; None draws it from numpy's
        global generator (scikit-learn's convention), so ``np.random.seed``
        plays R's ``set.seed`` part. Floats, strings, bools and
        negative numbers are refused.
    support : tuple or str, optional
        The range of the response column: ``(lower, upper)`` with None for
        no bound, or ``"nonnegative"`` [0, inf), ``"positive"`` (0, inf),
        ``"unit"`` [0, 1], ``"count"`` (whole numbers >= 0). Interval bounds
        (and the point prediction) are clipped to it, and for ``"count"``
        the bounds are rounded inward to whole numbers; the response never
        lies outside it, so the coverage is unchanged, and the summary says
        so. Responses outside it are an error. For a transformed response
        (``np.log(y) ~ x``) it is the range of the column ``y``.
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
        ``localizer_data`` ("calibration": the localizer part of the
        calibration set; "training": the training part's ``cv``-fold
        out-of-fold scores; "auto": either or both, chosen on held-out
        localizer rows) and ``scale``
        ("tune": chosen with the forest settings; "none": the weights
        localize the scores ``abs(y - mu)``; "forest": they localize
        ``abs(y - mu) / sigma(x)``, sigma the forest's prediction of the
        score, learned on the localizer part, so the guarantee stays exact),
        ``max_localizer_size`` ("auto": at most 50,000 calibration rows
        grow the forest, the others are conformal points; None: no cap; or
        an integer), ``max_samples`` (None, or the share of the localizer
        rows each tree draws), ``forest_backend`` ("sklearn", or "lightgbm":
        LightGBM grows the trees, ``pip install 'confrf[lightgbm]'``) and
        ``shift_tuning`` (with ``likelihood_ratio`` or
        ``shift``: "calibration", the default, tunes the forest for the
        calibration population; "target" weights the tuning's simulated
        calibrations by the localizer points' ratios, for the target
        population's loss) for "lcp-rf";
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
        Covariate shift (docs/guide/shift.md): ``likelihood_ratio`` (the
        rows to predict come from a target population with dP_target(x) =
        w(x) dP_calibration(x), w known: a column name present in the
        calibration rows and in new rows, an expression such as
        ``"np.exp(0.5 * x1)"``, or a function of the data frame; the
        calibration is weighted, and covers target rows with probability
        >= 1 - alpha exactly) or ``shift`` (a DataFrame of unlabeled target
        rows: w is estimated by a classifier of them against the training
        part, ``shift_model`` "logit" (default), "gbm" or a scikit-learn
        classifier, its probability clipped to [``shift_clip``,
        1 - ``shift_clip``], default 0.01). Methods "split", "lcp-rf",
        "lcp", "slcp", "split-g", "lcp-rf-g" (not the PAC variants); for a
        class-label response (prediction sets) "split", "lcp-rf", "split-g"
        and "lcp-rf-g".
        ``weights``: case weights of the base model's fit, R's
        ``lm(weights=)`` (a column, an expression or a function of the
        frame; "ols" becomes WLS); they do not enter the calibration.

    Returns
    -------
    ConformalResult
        ``predict(newdata, level=..., interval=..., scale=...)``, ``summary()``,
        and R's vocabulary: ``fitted()``, ``residuals()``, ``coef()``,
        ``update()``, ``plot()``, ``tidy()``, ``glance()``, ``augment()``.
        A formula whose response is a monotone transform of a column
        (``np.log(y) ~ x``) predicts on that transform's scale; add
        ``scale="response"`` to ``predict`` for intervals for ``y`` itself.

    Examples
    --------
    >>> import confrf as cf
    >>> df = cf.datasets.load_diamonds().sample(3000, random_state=1)
    >>> res = cf.lcp_rf("price ~ carat + C(cut) + C(color)", data=df, level=0.9, random_state=0)
    >>> res.predict(df.head(2)).shape
    (2, 3)
    >>> res.alpha
    0.1
    """
    alpha = check_alpha(resolve_alpha(alpha, level, 0.1))
    data = as_training_frame(data, "data")  # a polars or pyarrow frame too: label detection reads pandas dtypes
    seed = seed_entropy(random_state)  # drawn once: a Generator gives one seed, which update() reuses
    call = FitCall(
        conformal,
        formula,
        dict(
            data=data,
            method=method,
            alpha=alpha,
            model=model,
            calib=calib,
            calib_size=calib_size,
            random_state=seed,
            **({} if support is None else {"support": support}),
            **options,
        ),
    )
    shift_opts = pop_shift_options(options)  # after the call record, which keeps them for update()
    if label_column(formula, data) is not None:  # a class-label response: prediction sets
        if support is not None:
            raise InputError(
                "support= clips prediction intervals to the range of a numeric response; the response of "
                f"{formula!r} is a class label (prediction sets), so drop support=."
            )
        sets = conformal_sets(
            formula,
            data,
            method=method,
            alpha=alpha,
            model=model,
            calib=calib,
            calib_size=0.5 if calib_size is None else calib_size,
            random_state=seed,
            shift_options=shift_opts,
            **options,
        )
        sets.fit_call = call
        return sets
    spec = get_method(method)
    unknown = sorted(set(options) - set(OPTIONS) - set(spec.options))
    if unknown:
        raise InputError(
            f"unknown option(s) {unknown}; valid options are {sorted({**OPTIONS, **SHIFT_OPTIONS})} and, for method "
            f"{method!r}, {sorted(spec.options) or 'none'}."
        )
    opts = {**OPTIONS, **{k: v for k, v in options.items() if k in OPTIONS}}
    method_opts = {k: v for k, v in options.items() if k in spec.options}
    labeler, est_opts = split_group_option(method_opts)  # user groups: labels read from the rows
    prefit = check_bool(opts["prefit"], "prefit")
    if spec.fits_models:
        _refuse_calibration_set(method, calib, calib_size, prefit, shift_opts)
    calib_size = check_fraction(0.5 if calib_size is None else calib_size, "calib_size")
    if prefit and calib is not None:  # data would train nothing, yet be counted as training rows
        raise InputError(
            "prefit=True: the model is already fitted, so data= is the calibration set and nothing is "
            "trained; pass the calibration rows as data= and drop calib=."
        )

    design, X, y, kept = Design.fit(formula, data, na_action=opts["na_action"])
    _refuse_classification_settings(design, model, opts["score"])
    _warn_float32_trees(model, prefit, X, design.column_names)
    if model == "ols" and not prefit and opts["score"] != "quantile":  # names the columns before the model sees them
        check_linear_scale(X, design.has_intercept, design.column_names)
    if prefit:
        model = adapt_formula_results(model, design.column_names, design.has_intercept)
    if X.shape[1] == 0:
        model = no_predictor_model(model, design, method, prefit)
    kept_pos = np.arange(len(data)) if design.kept_positions is None else design.kept_positions
    scale_parts = [(data, design.kept_positions, y, "data")]
    dask_calib = calib is not None and is_dask_collection(calib)
    if spec.fits_models:  # every row trains and calibrates (calib= was refused above)
        X_tr, y_tr, X_cal = X, y, X[:0]
        every = np.arange(X.shape[0])
        rows = FitRows.from_split(len(data), kept_pos, every, every, None, None)
    elif dask_calib:  # built on the workers, partition by partition (confrf.dask.DaskRows)
        if labeler is not None or shift_opts or support is not None:
            raise InputError(
                "with Dask calibration data, groups=, the covariate-shift options and support= are not offered; "
                "compute the frame first (calib.compute()) to use them."
            )
        X_tr, y_tr, rows = X, y, None  # rows: once the partitions' row count is known
    elif calib is not None:
        calib = as_training_frame(calib, "calib")
        X_cal = design.transform(calib, what="calib")
        y_cal = design.response(calib, what="calib")
        X_tr, y_tr = X, y
        rows = FitRows.from_split(len(data), kept_pos, None, None, len(calib), None)
        scale_parts.append((calib, None, y_cal, "calib"))
    elif prefit:
        X_tr, y_tr, X_cal, y_cal = X[:0], y[:0], X, y
        cal: slice | np.ndarray = slice(None)
        rows = FitRows.from_split(len(data), kept_pos, np.arange(0), np.arange(X.shape[0]), None, None)
    else:
        tr, cal = split_indices(X.shape[0], calib_size, seed)
        X_tr, y_tr, X_cal, y_cal = X[tr], y[tr], X[cal], y[cal]
        rows = FitRows.from_split(len(data), kept_pos, tr, cal, None, None)
    response_scale = build_response_scale(design, support, scale_parts)
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
    sample_weight, ratio, shift_setup = None, None, None
    if shift_opts:  # docs/theory.md, "Covariate shift"
        refuse_unweighted(est._shift_refusal(), shift_opts)
        kept_rows = data.iloc[kept_pos]
        sample_weight, ratio, shift_setup = resolve_shift(
            shift_opts,
            design=design,
            train_rows=None if prefit else (kept_rows if calib is not None or spec.fits_models else kept_rows.iloc[tr]),
            calib_rows=calib
            if calib is not None
            else (kept_rows if prefit or spec.fits_models else kept_rows.iloc[cal]),
            X_tr=X_tr,
            X_cal=X_cal,
            seed=seed,
        )
    groups_cal = None
    if labeler is not None:
        groups_cal = (
            labeler(calib, "calib")
            if calib is not None
            else labeler(data.iloc[kept_positions(data, kept)], "data")[cal]
        )

    if not prefit:
        est.fit(X_tr, y_tr, sample_weight=sample_weight)
        name_model_terms(est.model_, design)  # OLS / QuantReg summaries show the formula's names
    if dask_calib:
        est._conformalize_rows(
            lambda: DaskRows.from_formula(calib, design, est.model_, est.score_), X.shape[1], None, None
        )
        rows = FitRows.from_split(len(data), kept_pos, None, None, est.n_calib_, None)
    elif not spec.fits_models:  # the cross-conformal methods calibrated in fit
        est.conformalize(X_cal, y_cal, groups=groups_cal, likelihood_ratio=ratio)
    nobs = {"train": int(X_tr.shape[0]), **est.calibrator_.sizes()}
    result = ConformalResult(
        design=design,
        estimator=est,
        options={**opts, **method_opts},
        nobs=nobs,
        random_state=seed,
        group_labeler=labeler,
        response_scale=response_scale,
        fit_call=call,
        rows=rows,
    )
    result.shift = shift_setup
    return result


def _refuse_calibration_set(method: str, calib: Any, calib_size: Any, prefit: bool, shift_opts: dict) -> None:
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
    shifted = [k for k in ("likelihood_ratio", "shift") if shift_opts.get(k) is not None]  # one: both is refused
    if shifted:
        raise InputError(
            f"{shifted[0]}= (covariate shift) is not offered with method {method!r}: its weighted version is not "
            "built. Use method='split' or 'lcp-rf', whose weighted calibration is exact (weights= for the model's "
            "case weights is accepted)."
        )


def split_cp(formula: str, data: Any, **kwargs: Any) -> ConformalResult | ClassificationResult:
    """Split conformal prediction: :func:`conformal` with ``method="split"`` (another ``method`` is refused).

    A class-label response (bool, categorical, string or ``C(y)``) gives prediction sets, as in :func:`conformal`.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(600, random_state=0)
    >>> cf.split_cp(sim.formula, data=sim.frame, random_state=0).method
    'split'
    """
    return conformal(formula, data, method="split", **_alias_options("split_cp", "split", kwargs))


def lcp_rf(formula: str, data: Any, **kwargs: Any) -> ConformalResult | ClassificationResult:
    """LCP-RF: :func:`conformal` with ``method="lcp-rf"`` (honest forest by default; another ``method`` is refused).

    A class-label response (bool, categorical, string or ``C(y)``) gives prediction sets, as in :func:`conformal`.

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
    return conformal(formula, data, method="lcp-rf", **_alias_options("lcp_rf", "lcp-rf", kwargs))


def cv_plus(formula: str, data: Any, **kwargs: Any) -> ConformalResult | ClassificationResult:
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
    Another ``method`` is refused.

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
    return conformal(formula, data, method="cv+", **_alias_options("cv_plus", "cv+", kwargs))


def qrf_tc(formula: str, data: Any, **kwargs: Any) -> ConformalResult | ClassificationResult:
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
    ``cf.pac_n2(alpha=0.1, delta=0.1)`` plans the D2 size. A class-label response
    (bool, categorical, string or ``C(y)``) gives prediction sets, as in :func:`conformal`.
    This is :func:`conformal` with ``method="qrf-tc"``, whose only guarantee is the PAC one:
    another ``method``, or ``guarantee`` other than "pac", is refused.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(4000, random_state=0)
    >>> res = cf.qrf_tc(sim.formula, data=sim.frame, delta=0.1, random_state=0)
    >>> res.pac_report().reached
    True
    """
    return conformal(formula, data, method="qrf-tc", **_alias_options("qrf_tc", "qrf-tc", kwargs))


#: the alias of each method that has one
_ALIASES = {"split": "split_cp", "lcp-rf": "lcp_rf", "qrf-tc": "qrf_tc", "cv+": "cv_plus"}


def _alias_options(alias: str, method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options an alias passes on to :func:`conformal`: no ``method`` (the alias fixes it), nor a conflicting one.

    ``method`` equal to the alias's own, or ``guarantee="pac"`` for :func:`qrf_tc` (its only guarantee), are
    accepted and dropped: they ask for what the alias does.
    """
    kwargs = dict(kwargs)
    given = kwargs.pop("method", method)
    if not (isinstance(given, str) and given == method):
        fixed = f"cf.{alias}() is cf.conformal() with method={method!r}, so it cannot take method={given!r}"
        if not (isinstance(given, str) and given in METHODS):
            raise InputError(f"{fixed}; the methods of cf.conformal() are {sorted(METHODS)}.")
        other = f" or its alias cf.{_ALIASES[given]}(formula, data)" if given in _ALIASES else ""
        raise InputError(f"{fixed}; call cf.conformal(formula, data, method={given!r}){other} instead.")
    if alias == "qrf_tc" and "guarantee" in kwargs:
        guarantee = kwargs.pop("guarantee")
        if not (isinstance(guarantee, str) and guarantee == "pac"):
            raise InputError(
                f"cf.qrf_tc() always gives the training-conditional guarantee (guarantee='pac'), so it cannot take "
                f"guarantee={guarantee!r}; drop it, or for a marginal guarantee call cf.lcp_rf(formula, data) "
                "(exact LCP-RF) or cf.split_cp(formula, data)."
            )
    return kwargs


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

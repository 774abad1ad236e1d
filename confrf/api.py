"""Formula entry points: ``conformal`` and its aliases ``split_cp`` and ``lcp_rf``."""

from __future__ import annotations

from typing import Any

from ._formula_common import OPTIONS, FitCall, split_indices
from ._levels import resolve_alpha
from ._regression_fit import conformal_intervals
from ._validation import check_alpha, seed_entropy
from .calibrators import METHODS
from .classification import ClassificationResult
from .classification.api import conformal_sets
from .exceptions import InputError
from .formula.frame import as_training_frame
from .formula.labels import label_column
from .results import ConformalResult
from .shift.setup import pop_shift_options

__all__ = ["OPTIONS", "conformal", "lcp_rf", "qrf_tc", "split_cp", "split_indices"]


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
        ``localizer_data`` ("auto", the default: below 2,500 localizer
        rows the localizer part, the training part's ``cv``-fold out-of-fold
        scores or both, chosen on held-out localizer rows, and from there on
        the localizer part; "calibration": the localizer part of the
        calibration set; "training": the out-of-fold scores) and ``scale``
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
    given: dict[str, Any] = dict(
        method=method, alpha=alpha, model=model, calib=calib, calib_size=calib_size, random_state=seed, **options
    )
    if label_column(formula, data) is None:  # a numeric response: prediction intervals
        return conformal_intervals(formula, data, support=support, shift_options=shift_opts, fit_call=call, **given)
    _refuse_support(formula, support)  # a class-label response: prediction sets
    sets = conformal_sets(formula, data, shift_options=shift_opts, **given)
    sets.fit_call = call
    return sets


def _refuse_support(formula: str, support: Any) -> None:
    """``support=`` bounds a numeric response: refused for a class label."""
    if support is not None:
        raise InputError(
            "support= clips prediction intervals to the range of a numeric response; the response of "
            f"{formula!r} is a class label (prediction sets), so drop support=."
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

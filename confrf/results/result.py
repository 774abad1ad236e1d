"""Fitted results of the formula API: predict frames and summaries."""

from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .._levels import resolve_alpha, warns_level_once
from .._tables import Summary, frame_table, text_table, two_column_table
from .._validation import check_alphas, check_bool
from .._warnings import user_stacklevel
from ..calibrators import Guarantee
from ..calibrators.grouping import groups_shown
from ..exceptions import InfiniteIntervalWarning, InputError
from ..formula import Design, as_frame
from ..formula.transforms import response_transform
from ..models import base_model
from ..shift.guarantee import shift_guarantee
from ..shift.section import add_shift_section, predict_shift_facts
from .base import ResultBase, _is_dask_collection, _multi_alpha_frame, own_methods
from .diagnostics import CalibrationDiagnostics, calibration_diagnostics
from .distribution import DistributionMethods
from .evaluation import Evaluation, evaluate
from .localizer_views import LocalizerMethods
from .plots import ResultPlots
from .reject import check_max_width, rejected
from .report import add_diagnostics, add_header
from .response_scale import ResponseScale, add_response_scale
from .rstyle import RegressionVocabulary


def _predict_frame(d: dict[str, np.ndarray], index: pd.Index, details: bool, max_width: float | None) -> pd.DataFrame:
    cols = ["fit", "lwr", "upr"] + (["group"] if "group" in d else []) + (["t", "closed", "level"] if details else [])
    out = pd.DataFrame({c: d[c] for c in cols}, index=index)
    if max_width is not None:
        out["rejected"] = rejected(d["lwr"], d["upr"], max_width)
    return out


#: what predict(interval=...) accepts, as R's predict.lm
INTERVALS = ("prediction", "none")


def check_interval(interval: Any) -> str:
    """R's ``interval=``: "prediction" or "none"; "confidence" is refused with the reason."""
    if isinstance(interval, str) and interval == "confidence":
        raise InputError(
            "interval='confidence' is an interval for the mean response E[Y | x], which conformal prediction does not "
            "give; its intervals are prediction intervals, which hold a new response Y with the stated probability. "
            "Use interval='prediction' (the default), or interval='none' for the fitted values only."
        )
    if not isinstance(interval, str) or interval not in INTERVALS:
        raise InputError(
            f"interval must be 'prediction' (the default) or 'none' (fitted values only), got {interval!r}."
        )
    return interval


@own_methods(LocalizerMethods, DistributionMethods, RegressionVocabulary, ResultBase)
class ConformalResult(LocalizerMethods, DistributionMethods, RegressionVocabulary, ResultBase):
    """A fitted conformal model from :func:`confrf.conformal`.

    Attributes
    ----------
    formula : str
    method : str
    alpha : float
    design : Design
        The fitted formula (reapplied to new data, never re-parsed).
    estimator : ConformalRegressor
        The array-level estimator underneath.
    model : object
        The fitted base model mu(x): scikit-learn estimator, statsmodels results or a tuple.
    nobs : dict
        Size of every data part: train, calibration parts.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(1200, random_state=0)
    >>> res = cf.lcp_rf(sim.formula, data=sim.frame, alpha=0.1, random_state=0)
    >>> res.predict(sim.frame.head(3)).columns.tolist()
    ['fit', 'lwr', 'upr']
    """

    def __init__(self, *, group_labeler: Any = None, response_scale: ResponseScale | None = None, **base: Any) -> None:
        """``base``: the arguments of :class:`confrf.results.base.ResultBase` (``design``, ``estimator``, ...)."""
        super().__init__(**base)
        design: Design = self.design
        self.group_labeler = group_labeler  # reads user-given groups from raw rows (split-g / lcp-rf-g)
        if response_scale is None:  # no support; the transform read from the formula
            response_scale = ResponseScale(response_transform(design), None)
        self.response_scale = response_scale

    def __getstate__(self) -> dict[str, Any]:
        if self.group_labeler is not None:  # a groups= function that cannot pickle: its own message, before options'
            self.group_labeler.__getstate__()
        return self.__dict__

    _PAC_HINT = "use method='qrf-tc' or guarantee='pac' (lcp-rf, split-g, lcp-rf-g)."

    # -- basic facts -------------------------------------------------------
    @property
    def guarantee(self) -> Guarantee:
        """The coverage statement that holds for this fit (at its alpha)."""
        g = self.estimator.calibrator_.guarantee(self.alpha)
        return g if self.shift is None else shift_guarantee(g, self.alpha, self.shift.estimated)

    # -- prediction --------------------------------------------------------
    @property
    def model(self) -> Any:
        """The fitted base model mu(x).

        A scikit-learn estimator as fitted on the training part, statsmodels
        results for ``model="ols"`` or a prefit statsmodels model, or a tuple
        of fitted models for scores that need several (``score="quantile"``:
        ``(q_lo, q_hi)``; ``score="scaled"``: ``(mu, sigma)``). Its inputs
        are the design columns ``result.design.column_names`` (no intercept
        column), as built by ``result.design.transform(newdata)``.
        """
        return base_model(self.estimator._model())

    @warns_level_once
    def predict(
        self,
        newdata: Any,
        alpha: Any = None,
        *,
        level: Any = None,
        interval: str = "prediction",
        scale: str = "model",
        details: bool = False,
        max_width: float | None = None,
        n_jobs: int | None = None,
        chunk_size: int | None = None,
        progress: bool | None = None,
        type: str = "interval",
        q: Any = None,
    ) -> Any:
        """Point prediction and interval for every row of ``newdata``.

        Parameters
        ----------
        newdata : DataFrame
            Needs the predictors of the formula; the response may be absent and
            extra columns are ignored.
        alpha : float or sequence of floats, optional
            Another miscoverage level than the fitted one, or several levels
            at once (``alpha=[0.05, 0.1]``): then the columns are ``fit``
            and, per level in the order given, ``lwr_0.05``, ``upr_0.05``,
            ``lwr_0.1``, ``upr_0.1`` (and ``t_0.05``, ... with ``details``,
            ``rejected_0.05``, ... with ``max_width``), one row per input row
            as always. ``res.predict(new, alpha=[0.05, 0.1])`` gives both the
            95% and the 90% interval, as MAPIE's ``predict(X, alpha=[...])``.
        level : float or sequence of floats, optional
            R's name: the coverage 1 - alpha, instead of ``alpha``
            (``level=0.95`` is ``alpha=0.05`` exactly; giving both is an
            error). Columns are named by alpha: ``level=[0.95, 0.9]`` gives
            ``lwr_0.05``, ``upr_0.05``, ``lwr_0.1``, ``upr_0.1``.
        interval : {"prediction", "none"}
            As R's ``predict.lm``: "prediction" (the default) gives the
            intervals; "none" only the ``fit`` column (no threshold is
            computed). "confidence" is refused: conformal intervals hold a
            new response, not its mean.
        scale : {"model", "response"}
            "model" (the default, as R's ``type="link"``): the scale of the
            formula's left-hand side. "response": for a response that is a
            monotone transform g of a column (``np.log(y) ~ x``), the
            interval for the column itself, [g^-1(lwr), g^-1(upr)] (ends
            swapped when g decreases), which holds y exactly when the
            model-scale interval holds g(y): same coverage. ``fit`` is then
            g^-1(fit), a median-type prediction (the median of y if ``fit``
            is the median of g(y)), not the mean of y. Refused, with the
            reason, when the left-hand side is not a transform confrf can
            invert (docs/guide/options.md lists them).
        details : bool
            Also return the score threshold ``t``, whether the interval is
            ``closed`` and the localizer ``level`` (alpha-tilde); these stay
            on the model's scale.
        max_width : float, optional
            Reject option: add a column ``rejected``, True where the interval
            is wider than ``max_width`` (the model abstains; infinite
            intervals are rejected). The coverage guarantee does not transfer
            to the accepted rows, whose coverage can be below 1 - alpha;
            ``evaluate(test, max_width=...)`` measures it on held-out data.
        n_jobs : int, optional
            Threads for prediction (default: the fit's ``n_jobs``); rows are
            processed in chunks of ``chunk_size`` (default 10,000), so memory
            stays bounded whatever the size of ``newdata``.
        chunk_size : int, optional
        progress : bool, optional
            Progress bar on stderr: by default only when prediction takes
            more than about 2 seconds; False turns it off.
        type : {"interval", "quantile"}
            "quantile" (as ranger's and quantregForest's predict): the
            conformal quantiles at the levels ``q`` instead, one column
            ``q_<level>`` each, with P(Y <= Q_tau(X)) >= tau exactly and no
            crossing (docs/theory.md, "Predictive distributions").
        q : float or sequence of floats
            Quantile levels in (0, 1) for ``type="quantile"``.

        Returns
        -------
        DataFrame
            Indexed like ``newdata``, columns ``fit``, ``lwr``, ``upr``
            (for several levels see ``alpha``). ``newdata`` may also be a
            one-row Series (``df.iloc[0]``) or an empty frame, which gives an
            empty frame with these columns.
            Infinite bounds are ``-inf``/``+inf`` (never NaN); with
            ``support=`` at fit, bounds and ``fit`` are clipped to the
            response's range. For a Dask
            DataFrame ``newdata`` the result is a lazy Dask DataFrame with the
            same columns and partitions (see :func:`confrf.dask.predict`).

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(800, random_state=0)
        >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
        >>> res.predict(sim.frame.head(2), level=0.95).equals(res.predict(sim.frame.head(2), alpha=0.05))
        True
        >>> res.predict(sim.frame.head(2), interval="none").columns.tolist()
        ['fit']
        """
        if type == "quantile":
            if q is None:
                raise InputError("type='quantile' needs the levels: q=[0.1, 0.5, 0.9], for example.")
            return self._quantile_frame(newdata, q)
        if type != "interval":
            raise InputError(f"type must be 'interval' (the default) or 'quantile', got {type!r}.")
        if q is not None:
            raise InputError("q= gives quantile levels for type='quantile'; add type='quantile' or drop q.")
        interval = check_interval(interval)
        scale = self.response_scale.check_scale(scale)
        a = resolve_alpha(alpha, level, several=True)
        if max_width is not None:
            check_max_width(max_width)
        details = check_bool(details, "details")
        if interval == "none" and (a is not None or details or max_width is not None):
            given = [n for n, v in (("alpha/level", a), ("details", details or None), ("max_width", max_width)) if v]
            raise InputError(
                f"interval='none' gives the fitted values only, so {', '.join(given)} would have no effect; "
                "drop them, or use interval='prediction'."
            )
        alphas, several = check_alphas(self.alpha if a is None else a)
        if _is_dask_collection(newdata):
            if several:
                raise InputError(
                    "several alpha levels at once are not offered for Dask frames; call predict once per level."
                )
            from ..dask import predict as dask_predict

            return dask_predict(self, newdata, a, details=details, max_width=max_width, interval=interval, scale=scale)
        newdata = as_frame(newdata, "newdata")
        X, index = self._X(newdata)
        if interval == "none":
            fit = self.response_scale.points(self.estimator.predict(X), scale)
            return pd.DataFrame({"fit": fit}, index=index)
        labels = self._group_labels(newdata)
        ratios = None if self.shift is None else self.shift.ratios(newdata, X)
        frames, n_inf = [], 0
        for a in alphas:
            d = self.estimator.predict_details(
                X, a, groups=labels, n_jobs=n_jobs, chunk_size=chunk_size, progress=progress, likelihood_ratio=ratios
            )
            n_inf = max(n_inf, int(np.count_nonzero(np.isinf(d["lwr"]) | np.isinf(d["upr"]))))
            frames.append(_predict_frame(self.response_scale.apply(d, scale), index, details, max_width))
        self._last_predict = {"n": int(X.shape[0]), "n_infinite": n_inf}
        if ratios is not None:
            self._last_predict["shift"] = predict_shift_facts(self, X, ratios)
        if n_inf:
            support = self.response_scale.support
            warnings.warn(
                f"{n_inf} of {X.shape[0]} intervals are infinite (too few calibration points share the test "
                "point's leaves or the calibration set is too small for this alpha); they are reported as -inf/+inf"
                + ("." if support is None else f", then clipped to the support {support.describe()}."),
                InfiniteIntervalWarning,
                stacklevel=user_stacklevel(),
            )
        return _multi_alpha_frame(frames, alphas) if several else frames[0]

    def _predict_meta(
        self,
        index: pd.Index,
        details: bool = False,
        max_width: float | None = None,
        interval: str = "prediction",
        scale: str = "model",
    ) -> pd.DataFrame:
        """Empty frame with the columns and dtypes of :meth:`predict` (for lazy Dask output)."""
        details = check_bool(details, "details")
        if max_width is not None:
            check_max_width(max_width)
        self.response_scale.check_scale(scale)
        if check_interval(interval) == "none":
            return pd.DataFrame({"fit": np.empty(0, dtype=np.float64)}, index=index[:0])
        est = self.estimator
        labels = None if est.calib_groups_ is None else np.asarray(est.calib_groups_)[:1]
        ratio = getattr(est, "calib_ratio_", None)
        d = est.predict_details(
            est.calib_X_[:1], groups=labels, progress=False, likelihood_ratio=None if ratio is None else ratio[:1]
        )
        return _predict_frame(d, pd.RangeIndex(1), details, max_width).iloc[:0].set_axis(index[:0])

    # -- reporting ---------------------------------------------------------
    @cached_property
    def _calibration_diagnostics(self) -> CalibrationDiagnostics:
        """ESS, alpha-tilde and widths with the calibration rows as test points (the summary's section).

        Computed once, at the first ``summary()``: it predicts every calibration
        row. Kept with the result, so it pickles with it.
        """
        return calibration_diagnostics(self.estimator, self.alpha)

    @warns_level_once
    def evaluate(
        self,
        test: Any,
        *,
        alpha: float | None = None,
        level: float | None = None,
        oracle: Any = None,
        max_width: float | None = None,
        conf_level: float = 0.95,
        delta: float = 0.1,
        n_directions: int = 1000,
        random_state: int | None = 0,
    ) -> Evaluation:
        """Held-out diagnostics on ``test`` (a DataFrame with the response).

        Coverage with its exact (Clopper-Pearson) ``conf_level`` interval
        (R's ``binom.test(conf.level=)``), width
        quantiles, share of infinite intervals, worst-slab coverage (slabs
        with at least ``delta`` of the rows, ``n_directions`` directions seeded
        by ``random_state``), coverage by width decile and by group, the
        paper's fidelity error and the Spearman correlation of width with
        ``|y - fit|``. ``alpha`` or ``level`` (1 - alpha, R's name): the
        intervals evaluated, by default the fit's. ``oracle``: the
        :class:`confrf.datasets.SimulatedData` the
        test rows come from, for the exact oracle width and conditional
        coverage. ``max_width``: coverage and acceptance rate of the reject
        option (measured, not guaranteed).

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(1200, random_state=0)
        >>> test = cf.datasets.make_sim(500, random_state=1)
        >>> res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=30)
        >>> ev = res.evaluate(test.frame, oracle=test, max_width=2.0, n_directions=100)
        >>> sorted(ev.frames)[:3]
        ['by_width', 'distributions', 'metrics']
        """
        return evaluate(
            self,
            test,
            alpha=resolve_alpha(alpha, level),
            oracle=oracle,
            max_width=max_width,
            conf_level=conf_level,
            delta=delta,
            n_directions=n_directions,
            random_state=random_state,
        )

    @property
    def plot(self) -> ResultPlots:
        """Plots (matplotlib). ``result.plot()`` draws the diagnostic panel, as R's ``plot(lm)``.

        ``result.plot(test)``: residuals against fitted values with each
        row's interval, interval width against fitted values, coverage by
        width decile, and the absolute residual against the half-width; each plot alone:
        ``.intervals``, ``.coverage``, ``.widths``, ``.alpha_tilde``. Each
        returns the Axes (the panel its Figure).
        """
        return ResultPlots(self)

    def summary(self, *, beta: float = 1.01, tree_exponent: float = 1.0) -> Summary:
        """Full report: header, guarantee, calibration diagnostics, assumption checks, last predict.

        ``beta`` (> 1) and ``tree_exponent`` (a > 0) set the references of
        Assumption 3: leaf masses against sqrt(n) ln(n)^beta, trees against
        n^a. docs/summary.md explains every section; ``.frames`` holds every
        number as DataFrames.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(1200, random_state=0)
        >>> res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=30)
        >>> s = res.summary()
        >>> s.frames["assumption_status"].loc["A2", "status"]
        'unverifiable'
        """
        est = self.estimator
        s = Summary()
        add_header(s, self)
        if hasattr(est.calibrator_, "group_table"):
            info = est.calibrator_.describe_groups()
            s.add_section(
                "group_settings", two_column_table(list(info.items()), title="Groups"), pd.DataFrame({"value": info})
            )
            table = est.calibrator_.group_table(self.alpha)
            shown, note = groups_shown(table, ("localizer", "conformal", "D2"))
            s.add_section(
                "groups", frame_table(shown, title=f"Group sizes (coverage >= {1 - self.alpha:g} within each)"), table
            )
            if note:
                s.tables.append(text_table([note]))
        if hasattr(est.calibrator_, "pac_report"):
            pac = self.pac_report()
            s.add_section(
                "pac", two_column_table(pac.items(), title="Training-conditional (PAC) calibration"), pac.to_frame()
            )
        if self.shift is not None:
            add_shift_section(s, self)
        add_response_scale(s, self.response_scale)
        add_diagnostics(s, self, beta=beta, tree_exponent=tree_exponent)
        last = self._last_predict
        pred_items = [
            ("Last predict rows", last["n"] if last else None),
            ("Infinite intervals", last["n_infinite"] if last else None),
            ("Share infinite", (last["n_infinite"] / last["n"]) if last and last["n"] else None),
        ]
        s.add_section(
            "last_predict",
            two_column_table(pred_items, title="Last predict"),
            pd.DataFrame({"value": dict(pred_items)}),
        )
        return s

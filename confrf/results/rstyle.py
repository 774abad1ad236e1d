"""R's vocabulary on a fitted result: ``fitted``, ``residuals``, ``coef``, ``tidy``, ``glance``, ``augment``.

The names and columns are those an R user knows from ``lm`` and broom:

* ``fitted()`` and ``residuals()`` are the base model's values mu(x) and
  y - mu(x) on every row of the fit (all n, as R's), or on the training
  part (``part="train"``) or the calibration part (``part="calibration"``,
  held out from the model) only; ``augment()`` labels each row's part.
* ``coef()`` and ``tidy()`` are the base model's coefficients, for models
  that have them (``model="ols"``, QuantReg pairs, scikit-learn linear
  models, prefit statsmodels results); broom's columns ``term``,
  ``estimate``, ``std.error``, ``statistic``, ``p.value`` (``conf.low``,
  ``conf.high`` with ``conf_int=True``), with ``.part`` and ``.nobs``
  naming the rows the model was fitted on (the training part for split
  methods, not all n as in R).
* ``glance()`` is one row of model-level facts: the conformal set-up, the
  guarantee, the part sizes, and the base model's fit statistics (broom's
  ``r.squared``, ``sigma``, ``AIC``, ... for OLS).
* ``augment()`` is the data with broom's ``.fitted``, ``.lower``,
  ``.upper`` and, when the response is there, ``.resid`` (and ``.covered``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..formula import as_frame
from ..formula.frame import as_training_frame
from ..formula.transforms import ResponseTransform
from ..models import model_name

PARTS = ("train", "calibration", "all")
#: ``.part`` of a row that both trained the model and was scored out of fold (cv+, jackknife+, J+aB)
CROSS_PART = "train+calibration"


def fit_frames(result: Any, part: str) -> list[tuple[pd.DataFrame, str]]:
    """The rows of ``part`` of the fit, as (frame, part name) pieces, in the data's order.

    Only a result from :func:`confrf.conformal` knows its data; the frames
    are read again from the objects given at fit (R's ``update`` and
    ``fitted`` also work from the call), so they must not have changed size.
    """
    if not isinstance(part, str) or part not in PARTS:
        raise InputError(f"part must be one of {list(PARTS)}, got {part!r}.")
    call, rows = getattr(result, "fit_call", None), getattr(result, "fit_rows", None)
    if call is None or rows is None:
        raise InputError(
            "this result does not know the data it was fitted on (it was not made by cf.conformal or one of its "
            "shortcuts); pass the rows explicitly, e.g. augment(data)."
        )
    data = as_training_frame(call.kwargs["data"], "data")
    if len(data) != rows.n_data:
        raise InputError(
            f"the data given at fit had {rows.n_data} rows and now has {len(data)}: it was changed since the fit, so "
            "its training and calibration rows cannot be found again; refit (result.update()) or pass the rows."
        )
    sources = {"data": data}
    if call.kwargs.get("calib") is not None:
        sources["calib"] = as_training_frame(call.kwargs["calib"], "calib")
    if cross_fitted(rows):  # cv+, jackknife+, J+aB: every row trained and was scored out of fold, once each
        if len(rows.train[1]) == 0:
            raise InputError("this fit has no rows to show.")
        frame = data.iloc[rows.train[1]]
        return [(frame.assign(**{".part": CROSS_PART}) if part == "all" else frame, CROSS_PART)]
    wanted = {"train": ["train"], "calibration": ["calibration"], "all": ["train", "calibration"]}[part]
    pieces = {name: getattr(rows, name) for name in wanted}
    if part == "all" and rows.train[0] == rows.calibration[0] == "data":  # one frame: keep its row order
        pos = np.concatenate([rows.train[1], rows.calibration[1]])
        labels = np.array(["train"] * len(rows.train[1]) + ["calibration"] * len(rows.calibration[1]), dtype=object)
        order = np.argsort(pos, kind="stable")
        frame = data.iloc[pos[order]]
        return [(frame.assign(**{".part": labels[order]}), "all")]
    out = []
    for name, (source, pos) in pieces.items():
        if name == "train" and len(pos) == 0 and part == "train":
            raise InputError(
                "the base model was fitted outside confrf (prefit=True), so this fit has no training part; use "
                "part='calibration' or part='all' for the calibration rows."
            )
        frame = sources[source].iloc[pos]
        out.append((frame.assign(**{".part": name}) if part == "all" else frame, name))
    return out


def cross_fitted(rows: Any) -> bool:
    """Whether the training and calibration rows are the same rows (the cross-conformal methods)."""
    return bool(
        rows.train[0] == rows.calibration[0]
        and len(rows.train[1]) == len(rows.calibration[1])
        and np.array_equal(rows.train[1], rows.calibration[1])
    )


def n_distinct_rows(result: Any, n_train: int, n_cal: int) -> int:
    """broom's ``nobs``: rows used by the fit, each once (cross-conformal rows train and calibrate)."""
    rows = getattr(result, "fit_rows", None)
    if rows is not None and cross_fitted(rows):
        return int(len(rows.train[1]))
    if rows is None and "scored out of fold" in getattr(result, "nobs", {}):
        return n_cal
    return n_train + n_cal


def fit_part(result: Any) -> tuple[str, int | float]:
    """(name, number of rows) of the part the base model was fitted on, for tidy()'s ``.part`` and ``.nobs``.

    The number is NaN only for a prefit model that does not say how many rows it saw.
    """
    if result.estimator.prefit:
        nobs = getattr(result.model, "nobs", None)
        return "prefit", int(nobs) if isinstance(nobs, (int, float, np.number)) and np.isfinite(nobs) else np.nan
    rows = getattr(result, "fit_rows", None)
    cross = "scored out of fold" in result.nobs or (rows is not None and cross_fitted(rows))
    return (CROSS_PART if cross else "train"), int(result.nobs["train"])


def _statsmodels_table(res: Any, conf_int: bool, conf_level: float) -> pd.DataFrame | None:
    params = np.asarray(res.params, dtype=np.float64)
    names = [str(n) for n in res.model.exog_names]
    if params.ndim != 1 or len(names) != params.shape[0]:
        return None
    out = pd.DataFrame({"term": names, "estimate": params})
    for col, attr in (("std.error", "bse"), ("statistic", "tvalues"), ("p.value", "pvalues")):
        try:
            out[col] = np.asarray(getattr(res, attr), dtype=np.float64)
        except (AttributeError, ValueError, NotImplementedError):
            out[col] = np.nan
    if conf_int:
        try:
            ci = np.asarray(res.conf_int(alpha=float(1 - Fraction(repr(conf_level)))), dtype=np.float64)
            out["conf.low"], out["conf.high"] = ci[:, 0], ci[:, 1]
        except (AttributeError, ValueError, NotImplementedError):
            out["conf.low"] = out["conf.high"] = np.nan
    return out


def model_table(
    model: Any, names: list[str], has_intercept: bool, conf_int: bool, conf_level: float
) -> pd.DataFrame | None:
    """broom's tidy table of one fitted model, or None when it has no coefficients."""
    if hasattr(model, "params") and hasattr(getattr(model, "model", None), "exog_names"):
        return _statsmodels_table(model, conf_int, conf_level)
    est: list[float]
    terms: list[str]
    if getattr(model, "coef_", None) is not None:
        coef = np.ravel(np.asarray(model.coef_, dtype=np.float64))
        feature_names = getattr(model, "feature_names_in_", None)
        terms = [str(c) for c in feature_names] if feature_names is not None else list(names)
        if coef.shape[0] != len(terms):
            return None
        est = list(coef)
        icpt = getattr(model, "intercept_", None)
        if icpt is not None and np.ndim(icpt) == 0 and getattr(model, "fit_intercept", True):
            terms, est = ["Intercept"] + terms, [float(icpt)] + est
    elif type(model).__name__ == "DummyRegressor" and hasattr(model, "constant_"):
        terms, est = (["Intercept"], [float(np.ravel(model.constant_)[0])]) if has_intercept else ([], [])
    else:
        return None
    out = pd.DataFrame({"term": terms, "estimate": np.asarray(est, dtype=np.float64)})
    for col in ("std.error", "statistic", "p.value") + (("conf.low", "conf.high") if conf_int else ()):
        out[col] = np.nan  # no sampling theory from this model
    return out


def _components(result: Any) -> list[tuple[str, Any]]:
    """(label, fitted model) of each base model: one, or the pair of a two-model score."""
    model = result.model
    if not isinstance(model, tuple):
        return [("", model)]
    score = result.estimator.score_
    if hasattr(score, "quantile_levels"):
        lo, hi = score.quantile_levels(result.alpha)
        return [(f"tau={lo:g}", model[0]), (f"tau={hi:g}", model[1])]
    labels = ["mu", "sigma"] if score.name == "scaled" else [f"model{i + 1}" for i in range(len(model))]
    return list(zip(labels, model))


class RegressionVocabulary:
    """R's and broom's names on :class:`confrf.ConformalResult` (see the module's docstring)."""

    design: Any
    estimator: Any
    alpha: float
    model: Any
    nobs: dict[str, int]
    response_scale: Any
    options: dict[str, Any]

    predict: Any
    guarantee: Any
    method: str
    _calibration_diagnostics: Any

    # -- fitted values and residuals ------------------------------------------------
    def _part_values(self, part: str, scale: str) -> list[tuple[pd.DataFrame, np.ndarray, np.ndarray, str]]:
        """(frame, mu on scale, y on scale, part name) for each piece of ``part``."""
        scale = self.response_scale.check_scale(scale)
        out = []
        for frame, name in fit_frames(self, part):
            X = self.design.transform(frame, what="data")
            fit = self.estimator.predict(X)
            y = self.design.response(frame)
            if scale == "response" and not self.response_scale.identity:
                g = self.response_scale.transform
                fit = g.inverse(fit)
                y = np.asarray(pd.to_numeric(frame[g.variable]), dtype=np.float64)
            out.append((frame, fit, y, name))
        return out

    def fitted(self, part: str = "all", *, scale: str = "model") -> pd.Series:
        """The base model's fitted values mu(x), as R's ``fitted(lm)``: by default on all n rows of the fit.

        Parameters
        ----------
        part : {"all", "train", "calibration"}
            The rows: every row of the fit, in the data's order (R's
            choice; ``augment()`` gives the same rows with a ``.part``
            column), the training part only (which fitted the model), or
            the calibration part only (held out from the model). The
            cross-conformal methods (cv+, jackknife+, J+aB) have one set of
            rows, each both training and scored out of fold, listed once.
            With ``prefit=True`` there is no training part.
        scale : {"model", "response"}
            The left-hand side's scale, or the response column's (g^-1 of
            the fitted value for ``np.log(y) ~ ...``). Never clipped to
            ``support``; ``predict`` clips its ``fit`` column.

        Returns
        -------
        Series
            Indexed by the rows' labels.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp(sim.formula, data=sim.frame, model="ols", random_state=0)
        >>> len(res.fitted()), len(res.fitted(part="train")), res.nobs["train"]
        (600, 300, 300)
        """
        pieces = self._part_values(part, scale)
        return pd.concat([pd.Series(fit, index=frame.index, name="fitted") for frame, fit, _, _ in pieces])

    def residuals(self, part: str = "all", *, scale: str = "model") -> pd.Series:
        """y - mu(x), as R's ``residuals(lm)``: by default on all n rows of the fit.

        The calibration part's residuals (``part="calibration"``) are the
        held-out errors the scores are made of (the absolute score is their
        absolute value). ``part`` and ``scale`` as in :meth:`fitted`.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp(sim.formula, data=sim.frame, model="ols", random_state=0)
        >>> import numpy as np
        >>> r = res.residuals(part="calibration")
        >>> bool(np.allclose(np.sort(np.abs(r)), np.sort(res.estimator.calib_scores_)))
        True
        """
        pieces = self._part_values(part, scale)
        return pd.concat([pd.Series(y - fit, index=frame.index, name="residuals") for frame, fit, y, _ in pieces])

    # -- coefficients ---------------------------------------------------------------
    def tidy(self, *, conf_int: bool = False, conf_level: float = 0.95) -> pd.DataFrame:
        """The base model's coefficients with broom's columns (``tidy(lm)``).

        ``term``, ``estimate``, ``std.error``, ``statistic``, ``p.value`` and,
        with ``conf_int=True``, ``conf.low`` and ``conf.high`` at
        ``conf_level``, then ``.part`` and ``.nobs``: the rows the model
        was fitted on and their number. Unlike R's ``lm``, a split method's
        model is fitted on the training part only (``"train"``), the other
        rows calibrate; the cross-conformal methods' point model is fitted
        on all rows (``"train+calibration"``); ``"prefit"``: fitted outside
        confrf (``.nobs`` is the model's own count, when it has one).
        statsmodels models (``model="ols"``, ``"qr"``,
        prefit results) give their inference; scikit-learn linear models
        only estimates (the other columns are NaN). A quantile pair
        (``score="quantile"``, ``model="qr"``) adds broom's ``tau`` column.
        These are statements about the base model, which the conformal
        guarantee does not rely on. Models without coefficients (``"gbm"``,
        ``"rf"``) are an error naming :meth:`glance`.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp("y ~ x1 + x2", data=sim.frame, model="ols", random_state=0)
        >>> res.tidy().columns.tolist()
        ['term', 'estimate', 'std.error', 'statistic', 'p.value', '.part', '.nobs']
        >>> t = res.tidy()
        >>> str(t.loc[0, ".part"]), int(t.loc[0, ".nobs"])
        ('train', 300)
        """
        tables = []
        for label, m in _components(self):
            t = model_table(m, list(self.design.column_names), self.design.has_intercept, conf_int, conf_level)
            if t is None:
                continue
            if label.startswith("tau="):
                t["tau"] = float(label[4:])
            elif label:
                t["component"] = label
            tables.append(t)
        if not tables:
            raise InputError(
                f"the base model ({model_name(self.estimator.model_)}) has no coefficients; tidy() and coef() are for "
                "linear models (model='ols', QuantReg with score='quantile' and model='qr', scikit-learn linear "
                "models). glance() gives the fit's model-level facts and summary().frames every number."
            )
        out = pd.concat(tables, ignore_index=True)
        out[".part"], out[".nobs"] = fit_part(self)
        return out

    def coef(self) -> Any:
        """The base model's coefficients by term name, as R's ``coef(lm)`` (``Intercept`` first).

        A Series; a DataFrame with one column per model for a pair of
        models (``tau=0.05`` and ``tau=0.95`` for QuantReg bounds, ``mu``
        and ``sigma`` for ``score="scaled"``). An error for models without
        coefficients.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp("y ~ x1 + x2", data=sim.frame, model="ols", random_state=0)
        >>> res.coef().index.tolist()
        ['Intercept', 'x1', 'x2']
        """
        t = self.tidy()
        key = "tau" if "tau" in t else "component" if "component" in t else None
        if key is None:
            return pd.Series(t["estimate"].to_numpy(), index=t["term"].to_numpy(), name="coef")
        wide = t.pivot(index="term", columns=key, values="estimate")
        order = list(dict.fromkeys(t["term"]))
        wide = wide.loc[order]
        wide.columns = [f"tau={c:g}" if key == "tau" else str(c) for c in wide.columns]
        wide.index.name = None
        return wide

    # -- model-level facts ----------------------------------------------------------
    def glance(self) -> pd.DataFrame:
        """One row of model-level facts, as broom's ``glance``.

        The conformal set-up (``method``, ``score``, ``model``, ``alpha``,
        ``level``, ``guarantee``, ``certified``, ``support``), the part sizes
        (``nobs`` = the rows used, each once: training + calibration rows,
        or n for the cross-conformal methods, whose rows are both; ``n.train``,
        ``n.calibration`` and the calibration parts), the calibration rows
        treated as new points (``width.median``, ``share.infinite``, as in
        the summary), and for an OLS base model broom's ``r.squared``,
        ``adj.r.squared``, ``sigma``, ``statistic``, ``p.value``, ``df``,
        ``logLik``, ``AIC``, ``BIC``, ``df.residual`` of the training fit.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> g = cf.split_cp("y ~ x1", data=sim.frame, model="ols", random_state=0).glance()
        >>> g[["method", "level", "nobs"]].to_dict("records")
        [{'method': 'split', 'level': 0.9, 'nobs': 600}]
        """
        g = self.guarantee
        # every calibration row (the design kept for the summary is a subsample past DIAGNOSTIC_ROWS)
        n_cal = int(getattr(self.estimator, "n_calib_", self.estimator.calib_X_.shape[0]))
        row: dict[str, Any] = {
            "method": self.method,
            "score": self.estimator.score_.name,
            "model": model_name(self.estimator.model_ if self.estimator.prefit else self.estimator.model),
            "alpha": self.alpha,
            "level": float(1 - Fraction(repr(self.alpha))),
            "guarantee": g.kind,
            "certified": bool(g.certified),
            "support": None if self.response_scale.support is None else self.response_scale.support.describe(),
            "nobs": n_distinct_rows(self, int(self.nobs.get("train", 0)), n_cal),
            "n.train": int(self.nobs.get("train", 0)),
            "n.calibration": n_cal,
        }
        row.update({f"n.{k}": int(v) for k, v in self.nobs.items() if k not in ("train", "calibration")})
        diag = self._calibration_diagnostics
        width = diag.table.loc["width"] if "width" in diag.table.index else None
        row["width.median"] = float(width["median"]) if width is not None and "median" in width else np.nan
        row["share.infinite"] = diag.share_infinite
        res = self.model
        if hasattr(res, "rsquared"):  # statsmodels OLS/WLS: broom's glance.lm columns
            facts = {
                "r.squared": "rsquared",
                "adj.r.squared": "rsquared_adj",
                "statistic": "fvalue",
                "p.value": "f_pvalue",
                "df": "df_model",
                "logLik": "llf",
                "AIC": "aic",
                "BIC": "bic",
                "df.residual": "df_resid",
            }
            for key, attr in facts.items():
                try:
                    row[key] = float(getattr(res, attr))
                except (AttributeError, TypeError, ValueError):
                    row[key] = np.nan
            row["sigma"] = float(np.sqrt(res.scale))
        return pd.DataFrame([row])

    # -- the data with predictions --------------------------------------------------
    def augment(
        self,
        data: Any = None,
        *,
        alpha: Any = None,
        level: Any = None,
        interval: str = "prediction",
        scale: str = "model",
    ) -> pd.DataFrame:
        """The data with predictions in broom's columns, one row per row (``augment(lm, newdata=)``).

        Adds ``.fitted``, ``.lower`` and ``.upper`` (the interval, as
        ``predict``; not with ``interval="none"``), ``.group`` for groupwise
        methods, and, when the response is in the data, ``.resid``
        (y - .fitted) and ``.covered`` (y within the interval).

        Parameters
        ----------
        data : DataFrame, optional
            Rows to augment. By default the fit's own rows, each once (the
            training and calibration parts, in the data's order, with a
            ``.part`` column: ``"train"``, ``"calibration"``, or
            ``"train+calibration"`` for the cross-conformal methods, whose
            rows are both): intervals on them are not a held-out check, since the
            training rows fitted the model and the calibration rows the
            thresholds; ``evaluate(test)`` is.
        alpha, level, interval, scale
            As in :meth:`predict` (one level).

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(600, random_state=0)
        >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
        >>> res.augment(sim.frame.head(3)).columns.tolist()[-5:]
        ['.fitted', '.lower', '.upper', '.resid', '.covered']
        """
        if data is None:
            frame = pd.concat([f for f, _ in fit_frames(self, "all")])
        else:
            frame = as_frame(data, "data")
        pred = self.predict(frame, alpha, level=level, interval=interval, scale=scale)
        out = frame.copy()
        out[".fitted"] = pred["fit"].to_numpy()
        if interval != "none":
            out[".lower"] = pred["lwr"].to_numpy()
            out[".upper"] = pred["upr"].to_numpy()
            if "group" in pred:
                out[".group"] = pred["group"].to_numpy()
        y = self._response_if_present(frame, scale)
        if y is not None:
            out[".resid"] = y - out[".fitted"].to_numpy()
            if interval != "none":
                out[".covered"] = (out[".lower"].to_numpy() <= y) & (y <= out[".upper"].to_numpy())
        return out

    def _response_if_present(self, frame: pd.DataFrame, scale: str) -> np.ndarray | None:
        """The response on ``scale`` when ``frame`` has it (None when a column is missing)."""
        rs = self.response_scale
        if scale == "response" and isinstance(rs.transform, ResponseTransform) and not rs.identity:
            col = rs.transform.variable
            return None if col not in frame.columns else np.asarray(pd.to_numeric(frame[col]), dtype=np.float64)
        if any(v not in frame.columns for v in self.design._response_variables):
            return None
        return self.design.response(frame)

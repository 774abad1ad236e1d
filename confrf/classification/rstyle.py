"""R's vocabulary on a classification result, where it makes sense for prediction sets.

``fitted()`` gives the class probabilities (R's ``fitted`` of a multinomial
model), ``coef()``/``tidy()`` the coefficients of a logistic base model with
broom's ``y.level`` column, ``glance()`` one row of facts, ``augment()`` the
data with ``.pred_class``, one ``.pred_<level>`` probability per class, the
set (``.set_size``, ``.set``) and ``.covered``. ``residuals()`` has no meaning
for class labels and says which call to use instead.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._docstrings import fill
from ..exceptions import InputError
from ..formula import as_frame
from ..results.rstyle import _statsmodels_table, fit_frames, fit_part, n_distinct_rows
from .evaluation import set_facts


class ClassificationVocabulary:
    """``fitted``, ``residuals``, ``coef``, ``tidy``, ``glance``, ``augment`` of a ClassificationResult."""

    design: Any
    estimator: Any
    alpha: float
    method: str
    model: Any
    nobs: dict[str, int]
    guarantee: Any
    predict: Any
    predict_proba: Any

    if TYPE_CHECKING:  # read-only properties of ClassificationResult

        @property
        def levels(self) -> list: ...

        @property
        def model_title(self) -> str: ...

    @fill
    def fitted(self, part: str = "all") -> pd.DataFrame:
        """Class probabilities of the base model on the fit's rows (R's ``fitted`` of a multinomial model).

        ``part``: "all" (default: every row of the fit, as R), "train" or "calibration", as for regression
        results.

        Examples
        --------
        {{wine}}
        >>> res = cf.conformal("target ~ .", data=df, method="split", model="logit", random_state=0)
        >>> res.fitted().shape[1]
        3
        """
        return pd.concat([self.predict_proba(frame) for frame, _ in fit_frames(self, part)])

    def residuals(self, part: str = "all") -> Any:
        """Not defined for a class label: the error names ``fitted()`` and ``augment()``."""
        raise InputError(
            "a class-label response has no residuals; fitted() gives the class probabilities, augment(data) the "
            "prediction sets with .covered, and evaluate(test) the coverage."
        )

    def _classes(self) -> list:
        """Level of each class the base model was fitted on (its probability columns' order)."""
        inner = getattr(self.estimator.model_, "model", None)
        classes = getattr(inner, "classes_", None)
        if classes is None:
            return list(self.levels)
        codes = np.asarray(classes)
        if codes.dtype.kind in "iu" and codes.size and codes.max() < len(self.levels):
            return [self.levels[int(c)] for c in codes]
        return [c for c in codes]

    @fill
    def tidy(self, *, conf_int: bool = False, conf_level: float = 0.95) -> pd.DataFrame:
        """Coefficients of a logistic base model with broom's columns and ``y.level``.

        ``y.level`` is the class whose log-odds against the first class
        (the reference, ``self._classes()[0]``) the row describes, as
        broom's ``tidy(multinom)``; ``term``, ``estimate``, ``std.error``,
        ``statistic``, ``p.value`` (``conf.low``, ``conf.high`` with
        ``conf_int=True``), then ``.part`` and ``.nobs``: the rows the model
        was fitted on (the training part for split methods, not all n as
        in R) and their number, as for regression results. For ``model="logit"`` (statsmodels), prefit
        statsmodels results and scikit-learn linear classifiers (estimates
        only); other classifiers have no coefficients (an error).

        Examples
        --------
        {{wine}}
        >>> res = cf.conformal("target ~ alcohol + hue", data=df, method="split", model="logit", random_state=0)
        >>> res.tidy()[["y.level", "term"]].head(3).values.tolist()
        [[1, 'Intercept'], [1, 'alcohol'], [1, 'hue']]
        """
        out = self._coefficients(conf_int, conf_level)
        out[".part"], out[".nobs"] = fit_part(self)
        return out

    def _coefficients(self, conf_int: bool, conf_level: float) -> pd.DataFrame:
        m = self.model
        classes = self._classes()
        names = (["Intercept"] if self.design.has_intercept else []) + list(self.design.column_names)
        if hasattr(m, "params") and hasattr(getattr(m, "model", None), "exog_names"):
            params = np.asarray(m.params, dtype=np.float64)
            exog = [str(n) for n in m.model.exog_names]
            terms = names if len(names) == params.shape[0] and exog[0] in ("const", "x1") else exog
            if params.ndim == 1:
                t = _statsmodels_table(m, conf_int, conf_level)
                if t is None:
                    raise InputError("the base model's coefficients cannot be read.")
                t["term"] = terms
                t.insert(0, "y.level", classes[1] if len(classes) > 1 else None)
                return t
            tables = []
            for j in range(params.shape[1]):
                t = pd.DataFrame({"y.level": classes[j + 1], "term": terms, "estimate": params[:, j]})
                for col, attr in (("std.error", "bse"), ("statistic", "tvalues"), ("p.value", "pvalues")):
                    t[col] = np.asarray(getattr(m, attr), dtype=np.float64)[:, j]
                if conf_int:
                    ci = m.conf_int(alpha=float(1 - Fraction(repr(conf_level))))
                    ci = np.asarray(ci, dtype=np.float64).reshape(params.shape[1], params.shape[0], 2)[j]
                    t["conf.low"], t["conf.high"] = ci[:, 0], ci[:, 1]
                tables.append(t)
            return pd.concat(tables, ignore_index=True)
        if getattr(m, "coef_", None) is not None:
            coef = np.atleast_2d(np.asarray(m.coef_, dtype=np.float64))
            icpt = np.ravel(getattr(m, "intercept_", np.zeros(coef.shape[0])))
            cols = list(self.design.column_names)
            rows = classes[1:] if coef.shape[0] == 1 else classes
            tables = []
            for j, lv in enumerate(rows):
                terms = (["Intercept"] if getattr(m, "fit_intercept", True) else []) + cols
                est = ([float(icpt[j])] if getattr(m, "fit_intercept", True) else []) + list(coef[j])
                t = pd.DataFrame({"y.level": lv, "term": terms, "estimate": est})
                for col in ("std.error", "statistic", "p.value") + (("conf.low", "conf.high") if conf_int else ()):
                    t[col] = np.nan
                tables.append(t)
            return pd.concat(tables, ignore_index=True)
        raise InputError(
            f"the base classifier ({self.model_title}) has no coefficients; tidy() and coef() are for logistic "
            "models (model='logit' or a linear scikit-learn classifier). glance() gives the fit's model-level facts."
        )

    def coef(self) -> Any:
        """Coefficients by term (a Series for two classes; terms x ``y.level`` for more), as R's ``coef``."""
        t = self.tidy()
        if t["y.level"].nunique() == 1:
            return pd.Series(t["estimate"].to_numpy(), index=t["term"].to_numpy(), name="coef")
        wide = t.pivot(index="term", columns="y.level", values="estimate")
        wide = wide.loc[list(dict.fromkeys(t["term"]))]
        wide.index.name = None
        return wide

    def glance(self) -> pd.DataFrame:
        """One row of model-level facts: set-up, guarantee, sizes, sets on the calibration rows, logit fit."""
        est = self.estimator
        g = self.guarantee
        n_cal = int(est.calib_X_.shape[0])
        d = est.calibration_details(self.alpha)
        facts = set_facts(d["sets"])
        row: dict[str, Any] = {
            "method": self.method,
            "score": est.score_.name,
            "model": self.model_title,
            "alpha": self.alpha,
            "level": float(1 - Fraction(repr(self.alpha))),
            "guarantee": g.kind,
            "certified": bool(g.certified),
            "n.classes": len(self.levels),
            "nobs": n_distinct_rows(self, int(self.nobs.get("train", 0)), n_cal),
            "n.train": int(self.nobs.get("train", 0)),
            "n.calibration": n_cal,
            "mean.size": facts["mean_size"],
            "share.empty": facts["share_empty"],
            "share.full": facts["share_full"],
        }
        m = self.model
        for key, attr in (("logLik", "llf"), ("AIC", "aic"), ("BIC", "bic"), ("pseudo.r.squared", "prsquared")):
            if hasattr(m, attr):
                try:
                    row[key] = float(getattr(m, attr))
                except (TypeError, ValueError):
                    row[key] = np.nan
        return pd.DataFrame([row])

    @fill
    def augment(self, data: Any = None, *, alpha: Any = None, level: Any = None) -> pd.DataFrame:
        """The data with the prediction: ``.pred_class``, ``.pred_<level>`` probabilities, ``.set_size``, ``.set``.

        ``.set`` is the tuple of classes in the prediction set; with the
        response in the data, ``.covered`` says whether it holds the true
        class. ``data`` defaults to the fit's rows (with ``.part``), as for
        regression results.

        Examples
        --------
        {{wine_rf}}
        >>> res.augment(df.head(2)).columns.tolist()[-7:]
        ['.pred_class', '.pred_0', '.pred_1', '.pred_2', '.set_size', '.set', '.covered']
        """
        frame = pd.concat([f for f, _ in fit_frames(self, "all")]) if data is None else as_frame(data, "data")
        pred = self.predict(frame, alpha, level=level)
        proba = self.predict_proba(frame)
        out = frame.copy()
        out[".pred_class"] = pred["pred"].to_numpy()
        for lv in self.levels:
            out[f".pred_{lv}"] = proba[lv].to_numpy()
        # by position: a list of bool levels ([False, True]) would be read by pandas as a row mask
        sets = pred.iloc[:, pred.columns.get_indexer(self.levels)].to_numpy(dtype=bool)
        out[".set_size"] = pred["size"].to_numpy()
        out[".set"] = [tuple(lv for lv, inside in zip(self.levels, row) if inside) for row in sets]
        if self.design.response_name in frame.columns:
            codes = self.design.codes(frame)
            out[".covered"] = sets[np.arange(sets.shape[0]), codes]
        return out

"""Fitted classification results of the formula API: set frames, summaries, evaluation."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._docstrings import fill
from .._format import format_number
from .._levels import resolve_alpha, warns_level_once
from .._tables import Summary, frame_table, text_table, two_column_table
from .._validation import check_alphas, min_calibration_size
from .._warnings import user_stacklevel
from ..calibrators import Guarantee, get_method
from ..exceptions import InfiniteIntervalWarning, InputError
from ..formula import as_frame
from ..results.base import ResultBase, _is_dask_collection, _multi_alpha_frame, own_methods
from ..results.diagnostics import calibration_ess, distribution_row, level_note, shown_levels
from ..results.report import add_assumptions, add_header
from ..shift.section import add_shift_section, predict_shift_facts
from ..shift.value import ShiftRatio
from .evaluation import ClassEvaluation, evaluate_sets, set_facts
from .models import base_classifier, classifier_name
from .rstyle import ClassificationVocabulary

if TYPE_CHECKING:  # pragma: no cover
    from .plots import ClassPlots


@own_methods(ClassificationVocabulary, ResultBase)
@fill
class ClassificationResult(ClassificationVocabulary, ResultBase):
    """A fitted conformal classifier from :func:`confrf.conformal` with a class-label response.

    Attributes
    ----------
    formula, method, alpha
    design : LabelDesign
        The fitted formula and the class levels.
    estimator : ConformalClassifier
    levels : list
        Class levels, in the order of the set columns.
    nobs : dict
        Size of every data part.

    Examples
    --------
    {{wine_rf}}
    >>> res.predict(df.head(2)).columns.tolist()
    ['pred', 'size', 0, 1, 2]
    """

    _PAC_HINT = "use method='qrf-tc' or guarantee='pac' with 'lcp-rf'."

    @property
    def levels(self) -> list:
        return list(self.design.levels)

    @property
    def level_columns(self) -> list:
        """Names of the set columns of :meth:`predict` (the levels)."""
        return self.levels

    @property
    def guarantee(self) -> Guarantee:
        return self.estimator.guarantee()

    @property
    def title(self) -> str | None:
        """Summary title of class-conditional methods (None: the method's own)."""
        return (get_method(self.method).mondrian_title or None) if self.estimator.mondrian_ else None

    @property
    def model_title(self) -> str:
        est = self.estimator
        return classifier_name(est.model_ if est.prefit else est.model)

    @property
    def model(self) -> Any:
        """The fitted base classifier.

        A prefit model as given (statsmodels results unwrapped); a model
        confrf fitted was fitted on the class codes 0..K-1 (the positions of
        :attr:`levels`), statsmodels results for ``model="logit"``. Its inputs
        are the design columns, as built by ``result.design.transform(newdata)``.
        """
        return base_classifier(self.estimator.model_.model)

    # -- prediction --------------------------------------------------------
    @warns_level_once
    @fill
    def predict(
        self,
        newdata: Any,
        alpha: Any = None,
        *,
        level: Any = None,
        interval: str = "prediction",
        scale: str | None = None,
        n_jobs: int | None = None,
        chunk_size: int | None = None,
        progress: bool | None = None,
    ) -> Any:
        """Prediction sets of every row of ``newdata``.

        Parameters
        ----------
        newdata : DataFrame
            Needs the predictors of the formula. Also a one-row Series
            (``df.iloc[0]``), a dict of scalars (one row), a polars frame, or
            a Dask DataFrame (the result is then a lazy Dask DataFrame, see
            :func:`confrf.dask.predict`).
        alpha : float or sequence of floats, optional
            Another miscoverage level than the fitted one, or several at once
            (``alpha=[0.05, 0.1]``): then ``pred`` once and, per level in the
            order given, ``size_0.05``, one column ``<level>_0.05`` per class,
            ``size_0.1``, ...
        level : float or sequence of floats, optional
            R's name for the coverage 1 - alpha, instead of ``alpha``
            (``level=0.95`` is ``alpha=0.05`` exactly); columns are named by alpha.
        interval : {"prediction", "none"}
            "prediction" (the default): the prediction sets; "none": the
            ``pred`` column only (R's ``predict(type="class")``).
        scale : None
            Only for a numeric response (``scale="response"`` maps intervals
            back through a transform); given here it is an error.
        n_jobs, chunk_size, progress
            As in :meth:`confrf.ConformalResult.predict`: rows run in chunks
            of ``chunk_size`` (default 10,000) on ``n_jobs`` threads, with a
            progress bar after about 2 seconds; the sets do not depend on them.

        Returns
        -------
        DataFrame
            Indexed like ``newdata``: ``pred`` (most probable class), ``size``
            (number of classes in the set; 0 is an empty set, K the full set)
            and one boolean column per class level, named by the level. An
            empty ``newdata`` gives an empty frame with these columns.

        Examples
        --------
        {{wine_rf}}
        >>> res.predict(df.head(2), alpha=[0.05, 0.2]).columns.tolist()[:4]
        ['pred', 'size_0.05', '0_0.05', '1_0.05']
        """
        if scale is not None:
            raise InputError(
                f"scale={scale!r} maps intervals of a transformed numeric response back to its scale; the response "
                f"{self.design.response_name!r} is a class label, whose prediction sets have no scale: drop scale=."
            )
        if isinstance(interval, str) and interval == "confidence":
            raise InputError(
                "interval='confidence' is not offered: a class-label response gets prediction sets, which hold the "
                "true class with the stated probability; predict(newdata) gives them and predict_proba(newdata) "
                "the class probabilities."
            )
        if not isinstance(interval, str) or interval not in ("prediction", "none"):
            raise InputError(f"interval must be 'prediction' (the sets) or 'none' (pred only), got {interval!r}.")
        alpha = resolve_alpha(alpha, level, several=True)
        if interval == "none":
            if alpha is not None:
                raise InputError("interval='none' gives the predicted class only, so alpha/level would have no effect.")
            frame = as_frame(newdata, "newdata")
            proba = self.estimator.predict_proba(self.design.transform(frame))
            levels = np.asarray(self.levels, dtype=object)
            pred = levels[np.argmax(proba, axis=1)] if len(proba) else levels[:0]
            return pd.DataFrame({"pred": pred}, index=frame.index)
        alphas, several = check_alphas(self.alpha if alpha is None else alpha)
        if _is_dask_collection(newdata):
            if several:
                raise InputError(
                    "several alpha levels at once are not offered for Dask frames; call predict once per level."
                )
            from ..dask import predict as dask_predict

            return dask_predict(self, newdata, alpha)
        newdata = as_frame(newdata, "newdata")
        X = self.design.transform(newdata)
        ratios = self._ratios(newdata, X)
        frames = []
        for a in alphas:
            d = self.estimator.predict_details(
                X, a, n_jobs=n_jobs, chunk_size=chunk_size, progress=progress, likelihood_ratio=ratios
            )
            frames.append(self._set_frame(d, newdata.index))
            if a == alphas[0]:
                self._last_predict = {"n": int(X.shape[0]), **set_facts(d["sets"])}
                if ratios is not None:
                    self._last_predict["shift"] = predict_shift_facts(self, X, ratios)
            self._warn_infinite(d["t"], a)
        return _multi_alpha_frame(frames, alphas, shared=("pred",)) if several else frames[0]

    def _ratios(self, newdata: pd.DataFrame, X: np.ndarray) -> ShiftRatio | None:
        """The likelihood ratios of new rows under covariate shift (None without)."""
        return None if self.shift is None else self.shift.ratios(newdata, X)

    def _warn_infinite(self, t: np.ndarray, alpha: float) -> None:
        """Full sets from an infinite threshold: say how many and the calibration size a finite one needs."""
        inf = ~np.isfinite(t)
        if not inf.any():
            return
        parts = ", ".join(f"{k}={v}" for k, v in self.nobs.items() if k != "train")
        need = min_calibration_size(alpha)
        if inf.ndim == 2:  # class-conditional: a class calibrated on too few of its points is in every set
            shown = ", ".join(f"{self.levels[k]!r}" for k in np.flatnonzero(inf.any(axis=0)))
            what = (
                f"class(es) {shown} have an infinite threshold at alpha={alpha:g} in {int(inf.any(axis=1).sum())} "
                f"of {t.shape[0]} rows, so they are in those sets: a finite threshold needs at least {need} "
                "conformal calibration points of the class (see summary()'s Classes table; localized methods "
                "need that much forest weight near the row)"
            )
        else:
            what = (
                f"{int(inf.sum())} of {t.shape[0]} rows have an infinite threshold at alpha={alpha:g}, so their "
                f"sets hold every class: a finite threshold needs at least {need} conformal calibration points "
                f"(this fit: {parts}; localized methods need that much forest weight near the row)"
            )
        warnings.warn(
            what + ". Give more calibration data or a larger alpha.",
            InfiniteIntervalWarning,
            stacklevel=user_stacklevel(),
        )

    def _set_frame(self, d: dict[str, np.ndarray], index: pd.Index) -> pd.DataFrame:
        sets = d["sets"]
        levels = np.asarray(self.levels, dtype=object)
        out = pd.DataFrame(
            {
                "pred": levels[np.argmax(d["proba"], axis=1)] if len(sets) else levels[:0],
                "size": sets.sum(axis=1).astype(np.int64),
            },
            index=index,
        )
        for k, lv in enumerate(self.levels):
            out[lv] = sets[:, k]
        return out

    def pvalue(self, newdata: Any) -> pd.DataFrame:
        """Conformal p-value of every candidate label for every row (one column per class level).

        A level is in ``predict(newdata, alpha=a)``'s set iff its p-value exceeds ``a``, for every ``a``;
        for the true label P(p <= a) <= a (per class with the class-conditional methods).
        """
        newdata = as_frame(newdata, "newdata")
        X = self.design.transform(newdata)
        p = self.estimator.predict_pvalues(X, likelihood_ratio=self._ratios(newdata, X))
        return pd.DataFrame(p, index=newdata.index, columns=self.levels)

    def _predict_meta(self, index: pd.Index) -> pd.DataFrame:
        """Empty frame with the columns and dtypes of :meth:`predict` (for lazy Dask output)."""
        est = self.estimator
        ratio = getattr(est, "calib_ratio_", None)
        d = est.predict_details(est.calib_X_[:0], progress=False, likelihood_ratio=None if ratio is None else ratio[:0])
        return self._set_frame(d, index[:0])

    def predict_proba(self, newdata: Any) -> pd.DataFrame:
        """Class probabilities of the base model, one column per level."""
        newdata = as_frame(newdata, "newdata")
        X = self.design.transform(newdata)
        return pd.DataFrame(self.estimator.predict_proba(X), index=newdata.index, columns=self.levels)

    # -- reporting ---------------------------------------------------------
    @warns_level_once
    def evaluate(
        self, test: Any, *, alpha: float | None = None, level: float | None = None, conf_level: float = 0.95
    ) -> ClassEvaluation:
        """Coverage (exact ``conf_level`` CI), mean set size, coverage by set size and by class on ``test``.

        ``alpha`` or R's ``level`` (1 - alpha): the sets evaluated, by
        default the fit's. A true label that is not a level seen at fit
        raises an error.
        """
        return evaluate_sets(self, test, alpha=resolve_alpha(alpha, level), conf_level=conf_level)

    @property
    def plot(self) -> ClassPlots:
        """Plots. ``result.plot()`` draws the diagnostic panel (as for regression results).

        Each plot alone: ``.set_sizes(data)``, ``.coverage(test, by="class")``
        (or ``by="set_size"``), ``.alpha_tilde(data)``; each returns the Axes.
        ``.intervals`` and ``.widths`` belong to prediction intervals and
        raise an error naming the call for sets.
        """
        from .plots import ClassPlots

        return ClassPlots(self)

    def class_table(self) -> pd.DataFrame:
        """Rows of every class in the training and calibration parts (and the conformal part per class)."""
        est = self.estimator
        df = pd.DataFrame(index=pd.Index(self.levels, name="class", dtype=object))
        if est.train_counts_ is not None:
            df["train"] = est.train_counts_
        df["calibration"] = est.calib_counts_
        if est.mondrian_:
            table = est.calibrator_.group_table(self.alpha)
            for col in ("localizer", "conformal"):
                if col in table.columns:
                    df[col] = table[col].reindex(range(len(self.levels)), fill_value=0).to_numpy()
            df["finite threshold"] = table["finite"].reindex(range(len(self.levels)), fill_value=False).to_numpy()
        return df

    def summary(self, *, beta: float = 1.01, tree_exponent: float = 1.0) -> Summary:
        """Header, guarantee, classes, PAC facts, sets on the calibration rows, assumption checks, last predict.

        ``beta`` and ``tree_exponent``: the references of the assumption checks, as in
        :meth:`confrf.ConformalResult.summary` (they concern the forest, not the guarantee).
        """
        est = self.estimator
        s = Summary()
        add_header(s, self)
        classes = self.class_table()
        s.add_section("classes", frame_table(classes, title="Classes"), classes)
        if hasattr(est.calibrator_, "pac_report"):
            pac = self.pac_report()
            s.add_section(
                "pac", two_column_table(pac.items(), title="Training-conditional (PAC) calibration"), pac.to_frame()
            )
        if self.shift is not None:
            add_shift_section(s, self)
        d = est.calibration_details(self.alpha)
        facts = set_facts(d["sets"])
        rows = {"set size": distribution_row(d["sets"].sum(axis=1)), "alpha-tilde": distribution_row(d["level"])}
        ess = calibration_ess(est.calibrator_, est.n_jobs)
        if ess is not None:
            rows["ESS 1/sum(w^2)"] = distribution_row(ess)
        table = pd.DataFrame.from_dict(rows, orient="index")
        s.add_section("calibration", frame_table(shown_levels(table), title="Calibration diagnostics"), table)
        s.frames["calibration_facts"] = pd.DataFrame({"value": facts})
        s.tables.append(
            text_table(
                [
                    f"Set size and alpha-tilde: the {d['sets'].shape[0]} calibration rows treated as new "
                    "points (alpha-tilde: "
                    "the localizer's mass at or below the threshold; 1 for an infinite threshold; per class for "
                    "class-conditional methods). On them: mean set size "
                    f"{format_number(facts['mean_size'])}, singletons {facts['share_singleton']:.1%}, empty "
                    f"{facts['share_empty']:.1%}, "
                    f"full {facts['share_full']:.1%}.",
                    level_note(self.alpha).replace("an infinite interval", "an infinite threshold"),
                ]
            )
        )
        add_assumptions(s, self, beta=beta, tree_exponent=tree_exponent)
        last = self._last_predict
        items = [
            ("Last predict rows", last["n"] if last else None),
            ("Mean set size", last["mean_size"] if last else None),
            ("Share singletons", last["share_singleton"] if last else None),
            ("Share empty", last["share_empty"] if last else None),
            ("Share full", last["share_full"] if last else None),
        ]
        s.add_section(
            "last_predict", two_column_table(items, title="Last predict"), pd.DataFrame({"value": dict(items)})
        )
        return s

    def _repr_extra(self) -> str:
        return f"{len(self.levels)} classes; "

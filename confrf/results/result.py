"""Fitted results of the formula API: predict frames and summaries."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..calibrators import Guarantee, get_method
from ..estimator import ConformalRegressor
from ..exceptions import InfiniteIntervalWarning
from ..formula import Design
from ..models import model_name
from .summary import Summary, two_column_table

class ConformalResult:
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

    def __init__(self, *, design: Design, estimator: ConformalRegressor, options: dict[str, Any],
                 nobs: dict[str, int], random_state: Any) -> None:
        self.design = design
        self.estimator = estimator
        self.options = options
        self.nobs = nobs
        self.random_state = random_state
        self._last_predict: dict[str, int] | None = None

    # -- basic facts -------------------------------------------------------
    @property
    def formula(self) -> str:
        return self.design.formula

    @property
    def method(self) -> str:
        return self.estimator.method

    @property
    def alpha(self) -> float:
        return float(self.estimator.alpha)

    @property
    def guarantee(self) -> Guarantee:
        """The coverage statement that holds for this fit (at its alpha)."""
        return self.estimator.calibrator_.guarantee(self.alpha)

    # -- prediction --------------------------------------------------------
    def _X(self, newdata: Any) -> tuple[np.ndarray, pd.Index]:
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        if not isinstance(newdata, pd.DataFrame):
            raise TypeError(f"newdata must be a pandas DataFrame, got {type(newdata).__name__}.")
        return self.design.transform(newdata), newdata.index

    def predict(self, newdata: Any, alpha: float | None = None, *, details: bool = False) -> pd.DataFrame:
        """Point prediction and interval for every row of ``newdata``.

        Parameters
        ----------
        newdata : DataFrame
            Needs the predictors of the formula; the response may be absent and
            extra columns are ignored.
        alpha : float, optional
            Another miscoverage level than the fitted one.
        details : bool
            Also return the score threshold ``t``, whether the interval is
            ``closed`` and the localizer ``level`` (alpha-tilde).

        Returns
        -------
        DataFrame
            Indexed like ``newdata``, columns ``fit``, ``lwr``, ``upr``.
            Infinite bounds are ``-inf``/``+inf`` (never NaN).
        """
        X, index = self._X(newdata)
        d = self.estimator.predict_details(X, alpha)
        n_inf = int(np.count_nonzero(~np.isfinite(d["t"])))
        self._last_predict = {"n": int(X.shape[0]), "n_infinite": n_inf}
        if n_inf:
            warnings.warn(
                f"{n_inf} of {X.shape[0]} intervals are infinite (too few calibration points share the test "
                "point's leaves or the calibration set is too small for this alpha); they are reported as -inf/+inf.",
                InfiniteIntervalWarning, stacklevel=2,
            )
        cols = ["fit", "lwr", "upr"] + (["t", "closed", "level"] if details else [])
        return pd.DataFrame({c: d[c] for c in cols}, index=index)

    def forest_weights(self, newdata: Any, include_self: bool = False) -> sp.csr_matrix:
        """Sparse localizer weights of each new row on the conformal calibration points.

        ``include_self=False`` gives the QRF weights (rows sum to 1);
        ``include_self=True`` the LCP row with the test point counted in its
        leaves, its own mass in an extra last column.
        """
        X, _ = self._X(newdata)
        return self.estimator.localizer_.weights(X, include_self=include_self)

    def conditional_quantiles(self, newdata: Any, q: Any = (0.1, 0.5, 0.9)) -> pd.DataFrame:
        """QRF estimate of the score's conditional quantiles at levels ``q``."""
        X, index = self._X(newdata)
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        out = self.estimator.localizer_.conditional_quantiles(X, qs)
        return pd.DataFrame(out, index=index, columns=[f"q{v:g}" for v in qs])

    # -- reporting ---------------------------------------------------------
    def summary(self) -> Summary:
        """Full report: set-up, data parts, guarantee, last predict."""
        est = self.estimator
        g = self.guarantee
        head = [
            ("Method", self.method),
            ("Formula", self.formula),
            ("Score", est.score_.name),
            ("Base model", model_name(est.model_ if est.prefit else est.model)),
            ("alpha", self.alpha),
            ("Target coverage", 1 - self.alpha),
            ("random_state", self.random_state),
            ("Design columns", len(self.design.column_names)),
        ]
        nobs = [(f"No. {k}", v) for k, v in self.nobs.items()]
        if self.design.n_dropped:
            nobs.append(("Rows dropped (NA)", self.design.n_dropped))
        s = Summary()
        s.add_section("setup", two_column_table(head + nobs, title=get_method(self.method).title or self.method),
                      pd.DataFrame({"value": dict(head + nobs)}))
        forest = est.calibrator_.describe()
        if forest:
            items = [(k.replace("_", " "), v) for k, v in forest.items()]
            s.add_section("localizer", two_column_table(items, title="Forest localizer"),
                          pd.DataFrame({"value": forest}))
        last = self._last_predict
        pred_items = [("Last predict rows", last["n"] if last else None),
                      ("Infinite intervals", last["n_infinite"] if last else None),
                      ("Share infinite", (last["n_infinite"] / last["n"]) if last and last["n"] else None)]
        s.add_section("last_predict", two_column_table(pred_items, title="Last predict"),
                      pd.DataFrame({"value": dict(pred_items)}))
        s.frames["guarantee"] = pd.DataFrame({"value": {"kind": g.kind, "certified": g.certified, "statement": g.sentence}})
        s.add_extra_txt([f"Guarantee ({'certified' if g.certified else 'NOT certified'}): {g.sentence}"])
        return s

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={v}" for k, v in self.nobs.items())
        return (f"<ConformalResult {self.method} alpha={self.alpha:g}: {self.formula!r}; {parts}; "
                f"guarantee: {self.guarantee.kind}{'' if self.guarantee.certified else ' (not certified)'}>")

    def __str__(self) -> str:
        return self.__repr__()

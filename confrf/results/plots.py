"""Plots of a fitted result (matplotlib, the optional ``plot`` extra): ``result.plot.<kind>(...)``.

Every method draws on ``ax`` (a new figure when None) and returns the Axes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._levels import resolve_alpha, warns_level_once
from .._validation import check_alpha
from ..exceptions import InputError
from ..metrics import coverage_by_width, coverage_table, interval_width
from .evaluation import held_out_rows
from .report import method_label

if TYPE_CHECKING:  # pragma: no cover
    from .base import ResultBase
    from .result import ConformalResult


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError(
            "plotting needs matplotlib, an optional dependency: pip install 'confrf[plot]' (or pip install matplotlib)."
        ) from err
    return plt


def _coverage(alpha: float) -> str:
    """1 - alpha as the decimal typed: alpha=0.1 gives "0.9", not 0.9000000000000000222."""
    return f"{float(1 - Fraction(repr(float(alpha)))):g}"


def _axes(ax: Any) -> Any:
    if ax is None:
        _, ax = _pyplot().subplots()
    return ax


def _coverage_points(ax: Any, table: pd.DataFrame, alpha: float, xlabel: str, label: str | None = None) -> None:
    """Coverage per row of ``table`` (``coverage``, ``ci_lower``, ``ci_upper``) with its exact CI, and the target."""
    pos = np.arange(table.shape[0])
    cov = table["coverage"].to_numpy(dtype=float)
    err = np.vstack([cov - table["ci_lower"].to_numpy(dtype=float), table["ci_upper"].to_numpy(dtype=float) - cov])
    ax.errorbar(pos, cov, yerr=err, fmt="o", color="tab:blue", capsize=3, label=label)
    ax.axhline(1 - alpha, color="tab:red", ls="--", lw=1, label=f"target {_coverage(alpha)}")
    ax.set_xticks(pos, [str(i) for i in table.index])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("coverage")


class PlotsBase:
    """What the plots of both families share: the result, the level asked, the panel's rows, alpha-tilde's histogram."""

    def __init__(self, result: ResultBase) -> None:
        self.result = result

    def _alpha(self, alpha: Any, level: Any) -> float:
        return check_alpha(resolve_alpha(alpha, level, self.result.alpha))

    def _panel_rows(self, data: Any) -> tuple[Any, str]:
        """The diagnostic panel's rows and how its title names them: ``data``, else the calibration rows."""
        from .rstyle import fit_frames

        if data is None:
            frame = fit_frames(self.result, "calibration")[0][0]
            return frame, f"the {len(frame)} calibration rows (they set the thresholds: not a held-out check)"
        return data, f"{len(data)} held-out rows"

    def _level_histogram(self, ax: Any, levels: np.ndarray, alpha: float, bins: int, counted: str) -> Any:
        """Histogram of alpha-tilde, with 1 - alpha marked; ``counted`` names what the bars count."""
        ax.hist(levels, bins=bins, color="tab:green", alpha=0.8)
        ax.axvline(1 - alpha, color="tab:red", ls="--", lw=1, label=f"1 - alpha = {_coverage(alpha)}")
        ax.set_xlabel("LCP level alpha-tilde (coverage side, near 1 - alpha)")
        ax.set_ylabel(counted)
        ax.set_title(f"{method_label(self.result)}: alpha-tilde")
        ax.legend(loc="best", fontsize="small")
        return ax


class ResultPlots(PlotsBase):
    """The plots of one fitted result: ``result.plot(test)`` is the diagnostic panel, ``result.plot.<kind>`` one plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(800, random_state=0)
    >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    >>> ax = res.plot.intervals(sim.frame.head(100), x="x1")
    >>> ax.get_xlabel()
    'x1'
    """

    result: ConformalResult

    @warns_level_once
    def __call__(
        self,
        data: Any = None,
        *,
        alpha: float | None = None,
        level: float | None = None,
        max_points: int = 2000,
        random_state: int | None = 0,
        conf_level: float = 0.95,
        figsize: tuple[float, float] = (10.0, 8.0),
    ) -> Any:
        """The diagnostic panel, as R's ``plot(lm)``: four plots of one fit on rows with the response.

        Residuals against fitted values, with each row's interval drawn as
        its offsets from the fit (missed rows as red crosses); interval width
        against fitted values (how the intervals adapt); coverage by width
        decile with exact ``conf_level`` intervals and the target; and the
        absolute residual against the interval's half-width (rows above the
        line are outside their interval).

        Parameters
        ----------
        data : DataFrame, optional
            Held-out rows with the response (a test set). By default the
            fit's calibration rows, which set the thresholds: their coverage
            is not a held-out check, and the panel's title says so.
        alpha, level : float, optional
            Another level than the fit's (``level`` is 1 - alpha).
        max_points : int
            At most this many rows (a seeded sample) are drawn.

        Returns
        -------
        matplotlib Figure
            Its four Axes are ``fig.axes``.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(800, random_state=0)
        >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
        >>> fig = res.plot(cf.datasets.make_sim(300, random_state=1).frame)
        >>> len(fig.axes)
        4
        """
        a = self._alpha(alpha, level)
        res = self.result
        if data is not None:
            data = pd.DataFrame(data) if isinstance(data, dict) else data
            if not isinstance(data, pd.DataFrame) or len(data) == 0:
                raise InputError("data must be a non-empty pandas DataFrame with the response.")
        frame, where = self._panel_rows(data)
        if len(frame) > max_points:
            frame = frame.sample(max_points, random_state=random_state)
            where += f" ({max_points} drawn)"
        try:
            rows, _ = held_out_rows(res, frame, a)
        except InputError as err:
            raise InputError(
                f"plot() draws residuals, so data needs the response: {err} (plot.widths(data) needs no response)."
            ) from None
        fig, axes = _pyplot().subplots(2, 2, figsize=figsize)
        fit, y = rows["fit"].to_numpy(), rows["y"].to_numpy()
        lwr, upr, covered = rows["lwr"].to_numpy(), rows["upr"].to_numpy(), rows["covered"].to_numpy(dtype=bool)
        resid = y - fit
        fin = np.isfinite(lwr) & np.isfinite(upr)

        ax = axes[0, 0]
        ax.vlines(fit[fin], (lwr - fit)[fin], (upr - fit)[fin], color="tab:blue", alpha=0.25, lw=1, label="interval")
        ax.scatter(fit[covered], resid[covered], s=6, color="black", label="covered")
        if (~covered).any():
            ax.scatter(fit[~covered], resid[~covered], s=14, marker="x", color="tab:red", label="not covered")
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel("fitted value")
        ax.set_ylabel("residual (y - fit)")
        ax.set_title("Residuals vs fitted, with intervals")
        ax.legend(loc="best", fontsize="small")

        ax = axes[0, 1]
        width = rows["width"].to_numpy()
        wfin = np.isfinite(width)
        ax.scatter(fit[wfin], width[wfin], s=6, color="tab:blue")
        ax.set_xlabel("fitted value")
        ax.set_ylabel("interval width")
        n_inf = int((~wfin).sum())
        ax.set_title("Width vs fitted" + (f" ({n_inf} infinite not shown)" if n_inf else ""))

        self.coverage(frame, alpha=a, ax=axes[1, 0], conf_level=conf_level)
        axes[1, 0].set_title("Coverage by width decile")

        ax = axes[1, 1]
        half = width / 2.0
        ax.scatter(half[wfin], np.abs(resid)[wfin], s=6, c=np.where(covered[wfin], "black", "tab:red"))
        top = float(np.nanmax(half[wfin])) if wfin.any() else 1.0
        ax.plot([0.0, top], [0.0, top], color="tab:red", ls="--", lw=1, label="|residual| = half-width")
        ax.set_xlabel("interval half-width")
        ax.set_ylabel("|residual|")
        ax.set_title("|Residual| vs half-width")
        ax.legend(loc="upper left", fontsize="small")

        fig.suptitle(f"{method_label(res)}, {_coverage(a)} intervals: {res.formula}\non {where}", fontsize="medium")
        fig.tight_layout()
        return fig

    @warns_level_once
    def intervals(
        self,
        data: Any,
        x: str | None = None,
        *,
        alpha: float | None = None,
        level: float | None = None,
        ax: Any = None,
        max_points: int = 500,
        random_state: int | None = 0,
    ) -> Any:
        """Intervals against the fitted values (``x=None``) or one predictor, with the observed responses.

        Covered responses are dots, missed ones crosses (when ``data`` has the
        response); infinite intervals are drawn across the whole plot in
        another colour. At most ``max_points`` rows (a seeded sample) are drawn.
        ``alpha`` or ``level`` (1 - alpha): another level than the fit's.
        """
        a = self._alpha(alpha, level)
        ax = _axes(ax)
        res = self.result
        frame = pd.DataFrame(data) if isinstance(data, dict) else data
        if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
            raise InputError("data must be a non-empty pandas DataFrame.")
        if len(frame) > max_points:
            frame = frame.sample(max_points, random_state=random_state)
        pred = res.predict(frame, a)
        if x is None:
            xs, xlabel = pred["fit"].to_numpy(), "fitted value"
        else:
            if x not in frame.columns:
                raise InputError(f"x={x!r} is not a column of the data; columns: {list(frame.columns)[:20]}.")
            xs, xlabel = pd.to_numeric(frame[x], errors="coerce").to_numpy(dtype=float), x
            if np.isnan(xs).any():
                raise InputError(f"column {x!r} must be numeric (and without NaN) to be the x axis.")
        lwr, upr = pred["lwr"].to_numpy(), pred["upr"].to_numpy()
        fin = np.isfinite(lwr) & np.isfinite(upr)
        try:
            y = res.design.response(frame)
        except InputError:
            y = None  # no response in the data: intervals only
        ax.vlines(xs[fin], lwr[fin], upr[fin], color="tab:blue", alpha=0.35, lw=1, label="interval")
        if y is not None:
            inside = (lwr <= y) & (y <= upr)
            ax.scatter(xs[inside], y[inside], s=8, color="black", label="covered")
            if (~inside).any():
                ax.scatter(xs[~inside], y[~inside], s=14, marker="x", color="tab:red", label="not covered")
        if (~fin).any():
            lo, hi = ax.get_ylim()
            ax.vlines(xs[~fin], lo, hi, color="tab:orange", alpha=0.5, lw=1, label="infinite interval")
            ax.set_ylim(lo, hi)
        ax.scatter(xs, pred["fit"].to_numpy(), s=4, color="tab:blue", marker="_", label="fit")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(res.design.formula.split("~")[0].strip())
        ax.set_title(f"{method_label(res)}: {_coverage(a)} intervals")
        ax.legend(loc="best", fontsize="small")
        return ax

    @warns_level_once
    def coverage(
        self,
        data: Any,
        by: str = "width_decile",
        *,
        alpha: float | None = None,
        level: float | None = None,
        ax: Any = None,
        conf_level: float = 0.95,
    ) -> Any:
        """Held-out coverage by width decile or by group, with exact ``conf_level`` intervals and the target line.

        ``alpha`` or ``level`` (1 - alpha): the intervals evaluated, by default the fit's.
        """
        if by not in ("width_decile", "group"):
            raise InputError(f"by must be 'width_decile' or 'group', got {by!r}.")
        a = self._alpha(alpha, level)
        ax = _axes(ax)
        res = self.result
        rows, _ = held_out_rows(res, data, a)
        level = conf_level
        if by == "group":
            if "group" not in rows:
                raise InputError(f"method {res.method!r} has no groups; use by='width_decile'.")
            table = coverage_table(rows["covered"], rows["group"], level)
            xlabel = "group"
        else:
            table = coverage_by_width(rows["covered"], rows["width"], level=level)
            xlabel = "width decile (1 = narrowest)"
        _coverage_points(ax, table, a, xlabel, label=f"coverage ({level:.0%} exact CI)")
        ax.set_ylim(min(0.5, float(np.nanmin(table["ci_lower"]))) - 0.02, 1.02)
        ax.set_title(f"{method_label(res)}: held-out coverage by {by.replace('_', ' ')}")
        ax.legend(loc="lower left", fontsize="small")
        return ax

    @warns_level_once
    def widths(
        self, data: Any, *, alpha: float | None = None, level: float | None = None, ax: Any = None, bins: int = 30
    ) -> Any:
        """Histogram of the finite interval widths on ``data`` (the response is not needed)."""
        a = self._alpha(alpha, level)
        ax = _axes(ax)
        pred = self.result.predict(data, a)
        w = interval_width(pred["lwr"], pred["upr"])
        fin = np.isfinite(w)
        ax.hist(w[fin], bins=bins, color="tab:blue", alpha=0.8)
        n_inf = int((~fin).sum())
        ax.set_xlabel("interval width")
        ax.set_ylabel("rows")
        ax.set_title(f"{method_label(self.result)}: widths" + (f" ({n_inf} infinite not shown)" if n_inf else ""))
        return ax

    @warns_level_once
    def alpha_tilde(
        self, data: Any, *, alpha: float | None = None, level: float | None = None, ax: Any = None, bins: int = 30
    ) -> Any:
        """Histogram of alpha-tilde (the localizer's level at the threshold), with 1 - alpha marked."""
        a = self._alpha(alpha, level)
        pred = self.result.predict(data, a, details=True)
        return self._level_histogram(_axes(ax), pred["level"].to_numpy(), a, bins, "rows")

    def pit(self, test: Any, *, ax: Any = None, bins: int = 10, random_state: int | None = 0) -> Any:
        """Histogram of the randomized PIT F(y-) + U (F(y) - F(y-)) of the predictive distribution on ``test``.

        A calibrated distribution gives a flat histogram (the dashed line); the title gives the Kolmogorov
        distance of the PIT from uniform. Needs the response in ``test`` and a method with a predictive
        distribution ("split", "lcp-rf").
        """
        from .distribution import randomized_pit

        ax = _axes(ax)
        X, _ = self.result._X(test)
        y = self.result.design.response(test)
        indptr, u, cnt, n = self.result.estimator.predict_profiles(X)
        pit = randomized_pit(indptr, u, cnt, n, y, np.random.default_rng(random_state))
        ax.hist(pit, bins=np.linspace(0.0, 1.0, bins + 1), color="tab:blue", alpha=0.8)
        ax.axhline(pit.shape[0] / bins, color="black", linestyle="--", linewidth=1)
        s = np.sort(pit)
        m = s.shape[0]
        ks = float(np.max(np.maximum(np.arange(1, m + 1) / m - s, s - np.arange(m) / m)))
        ax.set_xlabel("PIT")
        ax.set_ylabel("rows")
        ax.set_title(f"{self.result.method}: PIT (KS distance from uniform {ks:.3f})")
        return ax

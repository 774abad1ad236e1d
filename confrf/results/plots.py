"""Plots of a fitted result (matplotlib, the optional ``plot`` extra): ``result.plot.<kind>(...)``.

Every method draws on ``ax`` (a new figure when None) and returns the Axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..metrics import coverage_by_width, coverage_table, interval_width
from .evaluation import held_out_rows

if TYPE_CHECKING:  # pragma: no cover
    from .result import ConformalResult


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError(
            "plotting needs matplotlib, an optional dependency: pip install 'confrf[plot]' (or pip install matplotlib)."
        ) from err
    return plt


def _axes(ax: Any) -> Any:
    if ax is None:
        _, ax = _pyplot().subplots()
    return ax


class ResultPlots:
    """The plots of one fitted result.

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

    def __init__(self, result: ConformalResult) -> None:
        self.result = result

    def intervals(
        self, data: Any, x: str | None = None, *, ax: Any = None, max_points: int = 500, random_state: int | None = 0
    ) -> Any:
        """Intervals against the fitted values (``x=None``) or one predictor, with the observed responses.

        Covered responses are dots, missed ones crosses (when ``data`` has the
        response); infinite intervals are drawn across the whole plot in
        another colour. At most ``max_points`` rows (a seeded sample) are drawn.
        """
        ax = _axes(ax)
        res = self.result
        frame = pd.DataFrame(data) if isinstance(data, dict) else data
        if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
            raise InputError("data must be a non-empty pandas DataFrame.")
        if len(frame) > max_points:
            frame = frame.sample(max_points, random_state=random_state)
        pred = res.predict(frame)
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
        ax.set_title(f"{res.method}: {1 - res.alpha:g} intervals")
        ax.legend(loc="best", fontsize="small")
        return ax

    def coverage(self, data: Any, by: str = "width_decile", *, ax: Any = None, level: float = 0.95) -> Any:
        """Held-out coverage by width decile or by group, with exact ``level`` intervals and the target line."""
        if by not in ("width_decile", "group"):
            raise InputError(f"by must be 'width_decile' or 'group', got {by!r}.")
        ax = _axes(ax)
        res = self.result
        rows, _ = held_out_rows(res, data)
        if by == "group":
            if "group" not in rows:
                raise InputError(f"method {res.method!r} has no groups; use by='width_decile'.")
            table = coverage_table(rows["covered"], rows["group"], level)
            xlabel = "group"
        else:
            table = coverage_by_width(rows["covered"], rows["width"], level=level)
            xlabel = "width decile (1 = narrowest)"
        pos = np.arange(table.shape[0])
        cov = table["coverage"].to_numpy(dtype=float)
        err = np.vstack([cov - table["ci_lower"].to_numpy(dtype=float), table["ci_upper"].to_numpy(dtype=float) - cov])
        ax.errorbar(pos, cov, yerr=err, fmt="o", capsize=3, label=f"coverage ({level:.0%} exact CI)")
        ax.axhline(1 - res.alpha, color="tab:red", ls="--", lw=1, label=f"target {1 - res.alpha:g}")
        ax.set_xticks(pos, [str(i) for i in table.index])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("coverage")
        ax.set_ylim(min(0.5, float(np.nanmin(table["ci_lower"]))) - 0.02, 1.02)
        ax.set_title(f"{res.method}: held-out coverage by {by.replace('_', ' ')}")
        ax.legend(loc="lower left", fontsize="small")
        return ax

    def widths(self, data: Any, *, ax: Any = None, bins: int = 30) -> Any:
        """Histogram of the finite interval widths on ``data`` (the response is not needed)."""
        ax = _axes(ax)
        pred = self.result.predict(data)
        w = interval_width(pred["lwr"], pred["upr"])
        fin = np.isfinite(w)
        ax.hist(w[fin], bins=bins, color="tab:blue", alpha=0.8)
        n_inf = int((~fin).sum())
        ax.set_xlabel("interval width")
        ax.set_ylabel("rows")
        ax.set_title(f"{self.result.method}: widths" + (f" ({n_inf} infinite not shown)" if n_inf else ""))
        return ax

    def alpha_tilde(self, data: Any, *, ax: Any = None, bins: int = 30) -> Any:
        """Histogram of alpha-tilde (the localizer's level at the threshold), with 1 - alpha marked."""
        ax = _axes(ax)
        pred = self.result.predict(data, details=True)
        ax.hist(pred["level"].to_numpy(), bins=bins, color="tab:green", alpha=0.8)
        ax.axvline(
            1 - self.result.alpha, color="tab:red", ls="--", lw=1, label=f"1 - alpha = {1 - self.result.alpha:g}"
        )
        ax.set_xlabel("alpha-tilde")
        ax.set_ylabel("rows")
        ax.set_title(f"{self.result.method}: alpha-tilde")
        ax.legend(loc="best", fontsize="small")
        return ax

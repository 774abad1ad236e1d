"""Held-out diagnostics of a fitted result: ``ConformalResult.evaluate(test_df)``.

Coverage with its exact interval, widths, worst-slab coverage, coverage by
width decile and by group, the paper's fidelity error, the rank correlation
of width with the error, the reject option, and, for the package's
simulators, the exact oracle. Printable (text, HTML, LaTeX) and tidy
(``.frames``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._format import format_interval, format_number
from .._report import Report
from .._tables import Summary, frame_table, text_table, two_column_table
from .._validation import check_alpha
from ..calibrators import get_method
from ..datasets import SimulatedData
from ..exceptions import InputError
from ..formula import as_frame
from ..metrics import (
    SlabCoverage,
    clopper_pearson,
    coverage_by_width,
    coverage_table,
    covered,
    fidelity_error,
    interval_width,
    oracle_width_error,
    width_bins,
    width_spearman,
    worst_slab_coverage,
)
from .diagnostics import distribution_row, level_note, shown_levels
from .distribution import distribution_metrics
from .reject import REJECT_NOTE, rejected
from .report import method_title

if TYPE_CHECKING:  # pragma: no cover
    from .result import ConformalResult


def held_out_rows(
    result: ConformalResult,
    data: Any,
    alpha: float | None = None,
    *,
    oracle: SimulatedData | None = None,
    max_width: float | None = None,
    n_bins: int = 10,
) -> tuple[pd.DataFrame, float]:
    """Per-row facts on held-out data: (rows, predict seconds).

    ``rows`` has y, fit, lwr, upr, width, covered, level (alpha-tilde),
    fidelity, width_bin, and when they apply group, rejected, oracle_width,
    oracle_error, conditional_coverage.
    """
    data = as_frame(data, "test")
    if alpha is not None:
        alpha = check_alpha(alpha)  # one level: every metric below is about one interval per row
    if len(data) == 0:
        raise InputError("the test data has no rows.")
    y = result.design.response(data)
    t0 = time.perf_counter()
    pred = result.predict(data, alpha, details=True)
    seconds = time.perf_counter() - t0
    rows = pd.DataFrame(
        {"y": y, "fit": pred["fit"].to_numpy(), "lwr": pred["lwr"].to_numpy(), "upr": pred["upr"].to_numpy()},
        index=pred.index,
    )
    rows["width"] = interval_width(rows["lwr"], rows["upr"])
    rows["covered"] = covered(y, rows["lwr"], rows["upr"])
    rows["level"] = pred["level"].to_numpy()
    rows["fidelity"] = fidelity_error(y, rows["fit"], rows["width"] / 2.0)
    rows["width_bin"] = width_bins(rows["width"], n_bins)
    if "group" in pred.columns:
        rows["group"] = pred["group"].to_numpy()
    if max_width is not None:
        rows["rejected"] = rejected(rows["lwr"], rows["upr"], max_width)
    if oracle is not None:
        a = result.alpha if alpha is None else alpha
        _check_oracle(oracle, y)
        q_star = oracle.oracle_score_quantile(rows["fit"].to_numpy(), 1.0 - a)
        rows["oracle_width"] = 2.0 * q_star
        rows["oracle_error"] = oracle_width_error(rows["width"], rows["oracle_width"])
        rows["conditional_coverage"] = oracle.conditional_coverage(None, rows["lwr"].to_numpy(), rows["upr"].to_numpy())
    return rows, seconds


def _check_oracle(oracle: Any, y: np.ndarray) -> None:
    if not isinstance(oracle, SimulatedData):
        raise InputError(
            f"oracle must be the confrf.datasets.SimulatedData the test data come from, got {type(oracle).__name__}."
        )
    if oracle.n != y.shape[0] or not np.array_equal(oracle.y.to_numpy(dtype=np.float64), y):
        raise InputError(
            "oracle= must describe the test rows themselves: pass the SimulatedData whose .frame is "
            "the test data (same rows, same order), with the plain response 'y' in the formula."
        )


class Evaluation(Report):
    """Held-out diagnostics of one fitted result.

    Attributes
    ----------
    method, title : str
    alpha : float
        Miscoverage of the intervals evaluated.
    conf_level : float
        Confidence level of the exact (Clopper-Pearson) intervals of the coverage.
    metrics : Series
        Every scalar: n, covered, coverage, ci_lower, ci_upper, widths,
        share_infinite, worst-slab coverage, fidelity quantiles, Spearman,
        predict_time (seconds).
    rows : DataFrame
        Per-row facts (see :func:`held_out_rows`).
    by_width, by_group : DataFrame or None
        Coverage within width deciles / groups, with exact intervals.
    slab : SlabCoverage
    oracle, reject : Series or None
        Present with ``oracle=`` / ``max_width=``.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(1000, random_state=0)
    >>> test = cf.datasets.make_sim(400, random_state=1)
    >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    >>> ev = res.evaluate(test.frame, oracle=test, n_directions=50)
    >>> 0.8 < ev.coverage < 1.0 and ev.coverage_ci[0] < ev.coverage < ev.coverage_ci[1]
    True
    """

    def __init__(
        self,
        *,
        method: str,
        title: str,
        alpha: float,
        conf_level: float,
        rows: pd.DataFrame,
        metrics: pd.Series,
        by_width: pd.DataFrame,
        by_group: pd.DataFrame | None,
        slab: SlabCoverage,
        oracle: pd.Series | None,
        reject: pd.Series | None,
        n_bins: int = 10,
        predictive: pd.Series | None = None,
    ) -> None:
        self.method = method
        self.title = title
        self.alpha = alpha
        self.conf_level = conf_level
        self.rows = rows
        self.metrics = metrics
        self.by_width = by_width
        self.by_group = by_group
        self.slab = slab
        self.oracle = oracle
        self.reject = reject
        self.n_bins = n_bins
        self.predictive = predictive

    @property
    def coverage(self) -> float:
        return float(self.metrics["coverage"])

    @property
    def coverage_ci(self) -> tuple[float, float]:
        return float(self.metrics["ci_lower"]), float(self.metrics["ci_upper"])

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        """Every number as DataFrames: metrics, widths, by_width, by_group, slab, oracle, reject, rows."""
        out = {
            "metrics": self.metrics.to_frame("value"),
            "distributions": self._distributions(),
            "by_width": self.by_width,
            "slab": self._slab_frame(),
            "rows": self.rows,
        }
        if self.by_group is not None:
            out["by_group"] = self.by_group
        if self.oracle is not None:
            out["oracle"] = self.oracle.to_frame("value")
        if self.reject is not None:
            out["reject"] = self.reject.to_frame("value")
        if self.predictive is not None:
            out["predictive"] = self.predictive.to_frame("value")
        return out

    def _distributions(self) -> pd.DataFrame:
        rows = {
            "width": distribution_row(self.rows["width"]),
            "alpha-tilde": distribution_row(self.rows["level"]),
            "fidelity error": distribution_row(self.rows["fidelity"]),
        }
        if "oracle_error" in self.rows:
            rows["oracle error"] = distribution_row(self.rows["oracle_error"])
            rows["cond. coverage"] = distribution_row(self.rows["conditional_coverage"])
        return pd.DataFrame.from_dict(rows, orient="index")

    def _slab_frame(self) -> pd.DataFrame:
        s = self.slab
        return pd.DataFrame(
            {
                "value": {
                    "coverage": s.coverage,
                    "n_in_slab": s.n_in_slab,
                    "n_covered": s.n_covered,
                    "lower": s.lower,
                    "upper": s.upper,
                    "delta": s.delta,
                    "n_directions": s.n_directions,
                }
            }
        )

    def summary(self) -> Summary:
        """The printed report (text, HTML, LaTeX)."""
        m = self.metrics
        pct = f"{self.conf_level:.0%}"
        s = Summary()
        head = [
            ("Method", self.method),
            ("alpha", self.alpha),
            ("Target coverage", 1 - self.alpha),
            ("Test rows", int(m["n"])),
            ("Coverage", m["coverage"]),
            (f"{pct} CI (exact)", format_interval(m["ci_lower"], m["ci_upper"])),
            ("Share infinite", m["share_infinite"]),
            ("Predict time (s)", m["predict_time"]),
        ]
        s.add_section(
            "metrics",
            two_column_table(head, title=f"Held-out evaluation: {self.title}"),
            self.metrics.to_frame("value"),
        )
        s.add_section(
            "distributions",
            frame_table(shown_levels(self._distributions()), title="Distributions on the test rows"),
            self._distributions(),
        )
        slab = self.slab
        adapt = [
            ("Spearman(width, |y - fit|)", m["spearman"]),
            (f"Worst-slab coverage (delta={slab.delta:g})", slab.coverage),
            ("Rows in the worst slab", slab.n_in_slab),
            ("Directions searched", slab.n_directions),
        ]
        s.add_section("slab", two_column_table(adapt, title="Adaptivity"), self._slab_frame())
        s.add_section("by_width", frame_table(self.by_width, title=self._by_width_title()), self.by_width)
        if self.by_group is not None:
            s.add_section("by_group", frame_table(self.by_group, title="Coverage by group"), self.by_group)
        if self.oracle is not None:
            o = self.oracle
            items = [
                ("Mean conditional coverage", o["conditional_coverage_mean"]),
                ("Min conditional coverage", o["conditional_coverage_min"]),
                ("Share below target", o["share_below_target"]),
                ("Median |q - q*| / q*", o["oracle_error_median"]),
            ]
            s.add_section(
                "oracle", two_column_table(items, title="Oracle (exact, simulated data)"), o.to_frame("value")
            )
        if self.reject is not None:
            r = self.reject
            items = [
                ("max_width", r["max_width"]),
                ("Accepted rows", int(r["n_accepted"])),
                ("Acceptance rate", r["acceptance_rate"]),
                ("Coverage (accepted)", r["coverage_accepted"]),
                (f"{pct} CI (accepted)", format_interval(r["ci_lower"], r["ci_upper"])),
                ("Coverage (rejected)", r["coverage_rejected"]),
            ]
            s.add_section(
                "reject",
                two_column_table(items, title="Reject option (abstain when width > max_width)"),
                r.to_frame("value"),
            )
            s.tables.append(text_table([REJECT_NOTE]))
        if self.predictive is not None:
            d = self.predictive
            items = [("CRPS (finite tail)", d["crps"]), ("PIT distance from uniform (KS)", d["pit_ks"])]
            items += [
                (f"P(Y <= Q_{k[9:]})", v) for k, v in d.items() if k.startswith("onesided_") and k[9:] != "se_max"
            ]
            s.add_section(
                "predictive",
                two_column_table(items, title="Predictive distribution (every level)"),
                d.to_frame("value"),
            )
        s.tables.append(
            text_table(
                [
                    f"CI: exact (Clopper-Pearson) {pct} interval of the coverage of this fit, P(Y in interval | "
                    "calibration data), if the test rows are i.i.d.; fidelity error |q(x) - |y - fit|| / |y - "
                    "fit| with "
                    "q(x) the half-width; worst-slab coverage: the least-covered slab {a <= v.x <= b} holding at least "
                    f"delta of the rows over {slab.n_directions} random directions (seeded), biased low on "
                    "small test sets.",
                    level_note(self.alpha, cross=get_method(self.method).fits_models),
                ]
            )
        )
        return s

    def _by_width_title(self) -> str:
        finite = sum(1 for b in self.by_width.index if b != "inf")
        title = "Coverage by width decile (1 = narrowest)"
        if finite < self.n_bins and finite < int(np.isfinite(self.rows["width"]).sum()):
            # repeated widths share a bin: say why there are fewer rows than deciles
            title = f"Coverage by width ({finite} bins, 1 = narrowest; equal widths share a bin)"
        return title

    def __repr__(self) -> str:
        m = self.metrics
        return (
            f"<Evaluation {self.method}: coverage {format_number(m['coverage'])} "
            f"{format_interval(m['ci_lower'], m['ci_upper'])} on {int(m['n'])} rows, "
            f"median width {format_number(m['width_median'])}>"
        )


def evaluate(
    result: ConformalResult,
    data: Any,
    *,
    alpha: float | None = None,
    oracle: SimulatedData | None = None,
    max_width: float | None = None,
    conf_level: float = 0.95,
    delta: float = 0.1,
    n_directions: int = 1000,
    random_state: int | None = 0,
    n_bins: int = 10,
) -> Evaluation:
    """Held-out diagnostics; see :meth:`confrf.ConformalResult.evaluate`."""
    a = result.alpha if alpha is None else check_alpha(alpha)
    rows, seconds = held_out_rows(result, data, alpha, oracle=oracle, max_width=max_width, n_bins=n_bins)
    X, _ = result._X(data)  # the design columns span the slabs
    n = rows.shape[0]
    k = int(rows["covered"].sum())
    lo, hi = clopper_pearson(k, n, conf_level)
    w = rows["width"].to_numpy()
    widths = distribution_row(w)
    fid = distribution_row(rows["fidelity"].to_numpy())
    slab = worst_slab_coverage(
        X, rows["covered"].to_numpy(), delta=delta, n_directions=n_directions, random_state=random_state
    )
    metrics = pd.Series(
        {
            "n": n,
            "covered": k,
            "coverage": k / n,
            "ci_lower": lo,
            "ci_upper": hi,
            "target": 1 - a,
            "width_mean": widths["mean"],
            "width_median": widths["median"],
            "width_q10": widths["10%"],
            "width_q25": widths["25%"],
            "width_q75": widths["75%"],
            "width_q90": widths["90%"],
            "share_infinite": float(np.isinf(w).mean()),
            "worst_slab_coverage": slab.coverage,
            "worst_slab_n": slab.n_in_slab,
            "fidelity_median": fid["median"],
            "fidelity_q25": fid["25%"],
            "fidelity_q75": fid["75%"],
            "fidelity_q90": fid["90%"],
            "spearman": width_spearman(w, rows["y"], rows["fit"]),
            "predict_time": seconds,
        },
        dtype=object,
    )
    by_width = coverage_by_width(rows["covered"], w, n_bins=n_bins, level=conf_level)
    by_group = coverage_table(rows["covered"], rows["group"], conf_level) if "group" in rows else None
    oracle_s = None
    if oracle is not None:
        cc = rows["conditional_coverage"].to_numpy()
        oe = distribution_row(rows["oracle_error"].to_numpy())
        oracle_s = pd.Series(
            {
                "conditional_coverage_mean": float(cc.mean()),
                "conditional_coverage_min": float(cc.min()),
                "conditional_coverage_q10": distribution_row(cc)["10%"],
                "share_below_target": float(np.mean(cc < 1 - a)),
                "oracle_error_median": oe["median"],
                "oracle_error_q25": oe["25%"],
                "oracle_error_q75": oe["75%"],
                "oracle_error_q90": oe["90%"],
            },
            dtype=object,
        )
    predictive = distribution_metrics(result, data, rows["y"].to_numpy(), random_state)
    if predictive is not None:
        metrics = pd.concat([metrics, predictive])
    reject_s = None
    if max_width is not None:
        acc = ~rows["rejected"].to_numpy()
        n_acc = int(acc.sum())
        k_acc = int(rows["covered"].to_numpy()[acc].sum())
        lo_a, hi_a = clopper_pearson(k_acc, n_acc, conf_level) if n_acc else (float("nan"), float("nan"))
        n_rej = n - n_acc
        reject_s = pd.Series(
            {
                "max_width": float(max_width),
                "n_accepted": n_acc,
                "acceptance_rate": n_acc / n,
                "coverage_accepted": k_acc / n_acc if n_acc else float("nan"),
                "ci_lower": lo_a,
                "ci_upper": hi_a,
                "coverage_rejected": (k - k_acc) / n_rej if n_rej else float("nan"),
                "width_mean_accepted": float(w[acc].mean()) if n_acc else float("nan"),
            },
            dtype=object,
        )
    return Evaluation(
        method=result.method,
        title=method_title(result),
        alpha=a,
        conf_level=conf_level,
        rows=rows,
        metrics=metrics,
        by_width=by_width,
        by_group=by_group,
        slab=slab,
        oracle=oracle_s,
        reject=reject_s,
        n_bins=n_bins,
        predictive=predictive,
    )

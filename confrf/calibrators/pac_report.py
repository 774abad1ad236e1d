"""The report of a training-conditional (PAC) calibration: what was chosen and what it guarantees."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._format import format_value
from .._report import Report
from .._tables import Summary, frame_table, text_table, two_column_table
from .grouping import groups_shown
from .pac_correction import Correction, PACNumbers

IID = (
    "if the calibration and test points are i.i.d. (independent draws from one distribution; "
    "exchangeability is not enough)."
)


@dataclass(frozen=True, eq=False, repr=False)
class PACReport(Report, PACNumbers):
    """What the training-conditional calibration chose and what it guarantees.

    ``print(report)`` shows it as a report (the settings, what was reached,
    the guarantee in words, and the groups of the groupwise methods); in
    Jupyter it renders as HTML. Every number is an attribute, and
    :meth:`to_frame` gives them as a DataFrame.

    Attributes
    ----------
    method : str
        "qrf-tc" or "lcp-rf" (or "split-g" / "lcp-rf-g" per group).
    bound : str
        "binomial" (exact order statistic) or "hoeffding" (the paper's grid and union bound).
    form : str
        "exact" (binomial), "inflated" (Hoeffding, D2 target 1 - alpha + epsilon,
        guarantee 1 - alpha) or "paper" (Hoeffding, D2 target 1 - alpha,
        guarantee 1 - alpha - epsilon).
    alpha, delta : float
    n2 : int
        Size of the correction part D2.
    k : int
        Binomial: the order statistic, the smallest k with
        P(Binomial(n2, 1 - alpha) >= k) <= delta (n2 + 1: none, all infinite).
        Hoeffding: the D2 count needed, ceil(n2 * target).
    epsilon : float
        D2 coverage excess asked for: k / n2 - (1 - alpha) (binomial) or
        sqrt(ln(K / delta) / (2 n2)) (Hoeffding).
    K : int or None
        Hoeffding's number of grid values (the union bound runs over all of them).
    target : float
        D2 coverage the correction must reach (k / n2 for the binomial bound).
    required_count : int
        The same as a count (= k).
    a_hat : float or None
        The chosen correction of the quantile level; None when every interval is infinite.
    d2_coverage : float
        Achieved D2 coverage at ``a_hat`` (at the largest grid value when none reached).
    d2_infinite : float
        Share of the D2 points whose interval at ``a_hat`` is infinite: an
        estimate of that share on new points.
    reached : bool
        Whether a finite correction was found.
    guaranteed_coverage : float
        Held with probability at least 1 - delta.
    sentence : str
        The guarantee in words.
    grid : DataFrame or None
        D2 coverage as a function of the correction (columns ``a``, ``d2_coverage``):
        at every grid value (Hoeffding), or at every distinct correction A_j that
        just covers a D2 point (binomial); None for the groupwise methods.
    groups : DataFrame or None
        Groupwise methods: one row per group (n2, k, finite, a_hat or threshold,
        D2 coverage); ``k``, ``target`` and ``required_count`` are then sums over
        the groups with finite intervals, ``a_hat`` is None.
    n_groups, delta_group : int, float or None
        Groupwise methods: L, the number of groups with points, and delta / L.
    """

    method: str
    K: int | None
    target: float
    required_count: int
    a_hat: float | None
    d2_coverage: float
    d2_infinite: float
    reached: bool
    guaranteed_coverage: float
    sentence: str
    grid: pd.DataFrame | None = field(default=None, repr=False)
    groups: pd.DataFrame | None = field(default=None, repr=False)
    n_groups: int | None = None
    delta_group: float | None = None

    def items(self) -> list[tuple[str, Any]]:
        """(label, value) pairs for printed tables."""
        if self.groups is not None:
            return [
                ("Bound", "binomial, per group"),
                ("alpha", self.alpha),
                ("delta", self.delta),
                ("Groups with points L", self.n_groups),
                ("delta / L per group", self.delta_group),
                ("n2 (all groups)", self.n2),
                ("Groups finite", int(self.groups["finite"].sum())),
                ("D2 coverage", self.d2_coverage),
                ("D2 share infinite", self.d2_infinite),
                ("Guaranteed coverage", self.guaranteed_coverage),
            ]
        out = [("Bound", self.bound), ("alpha", self.alpha), ("delta", self.delta), ("n2 (D2)", self.n2)]
        if self.bound == "binomial":
            out += [("k (order statistic)", self.k)]
        else:
            out += [
                ("Form", self.form),
                ("Grid values K", self.K),
                ("epsilon", self.epsilon),
                ("D2 count needed", self.required_count),
            ]
        out += [
            ("D2 target", self.target),
            ("a_hat", self.a_hat if self.reached else "none (all infinite)"),
            ("D2 coverage", self.d2_coverage),
            ("Target reached", self.reached),
            ("D2 share infinite", self.d2_infinite),
            ("Guaranteed coverage", self.guaranteed_coverage),
        ]
        return out

    def summary(self) -> Summary:
        """The printable report (text by ``print``, HTML in Jupyter, ``.as_latex()``), numbers by the report rule.

        Examples
        --------
        >>> import confrf as cf
        >>> sim = cf.datasets.make_sim(1500, random_state=0)
        >>> rep = cf.qrf_tc(sim.formula, data=sim.frame, delta=0.1, random_state=0, n_estimators=30).pac_report()
        >>> print(rep.summary().tables[0].title)
        Training-conditional (PAC) calibration: qrf-tc
        >>> rep.epsilon == rep.to_frame().loc["epsilon", "value"]
        True
        """
        s = Summary()
        s.add_section(
            "pac",
            two_column_table(self.items(), title=f"Training-conditional (PAC) calibration: {self.method}"),
            self.to_frame(),
        )
        s.tables.append(text_table([self.sentence], title="Guarantee"))
        if self.groups is not None:
            shown, note = groups_shown(self.groups, ("n2",))
            s.add_section("groups", frame_table(shown, title="Per group"), self.groups)
            if note:
                s.tables.append(text_table([note]))
        return s

    def __repr__(self) -> str:
        reached = f"a_hat={format_value(self.a_hat)}" if self.groups is None else f"{self.n_groups} groups"
        return (
            f"<PACReport {self.method}: {self.bound}, alpha={format_value(self.alpha)}, "
            f"delta={format_value(self.delta)}, n2={self.n2}, {reached}, "
            f"guaranteed coverage {format_value(self.guaranteed_coverage)}; print() for the report>"
        )

    def to_frame(self) -> pd.DataFrame:
        """One ``value`` column indexed by field name (grid and groups left out)."""
        keys = [
            "method",
            "bound",
            "form",
            "alpha",
            "delta",
            "n2",
            "k",
            "epsilon",
            "K",
            "target",
            "required_count",
            "a_hat",
            "d2_coverage",
            "d2_infinite",
            "reached",
            "guaranteed_coverage",
            "sentence",
            "n_groups",
            "delta_group",
        ]
        return pd.DataFrame({"value": {k: getattr(self, k) for k in keys}})


def guaranteed(c: Correction) -> float:
    return 1 - c.alpha - (c.epsilon if c.form == "paper" else 0.0)


def how(c: Correction) -> str:
    """The bound in words, for the guarantee sentence."""
    if c.bound == "binomial":
        return (
            f"exact binomial order statistic on n2={c.n2} correction points: the correction is the "
            f"k={c.k}-th smallest of the corrections that just cover each D2 point, k the smallest integer "
            f"with P(Binomial({c.n2}, {1 - c.alpha:g}) >= k) <= {c.delta:g}"
        )
    assert c.grid is not None  # Hoeffding's correction always has its grid
    K = len(c.grid)
    if c.form == "inflated":
        what = f"the D2 target is 1 - alpha + epsilon = {1 - c.alpha + c.epsilon:.4g}"
    else:
        what = "the paper's form: D2 target 1 - alpha, guarantee 1 - alpha - epsilon"
    return (
        f"Hoeffding on n2={c.n2} correction points and a union bound over K={K} grid values, "
        f"epsilon={c.epsilon:.4g}; {what}"
    )


def shown(level: float) -> str:
    return f"{math.floor(level * 1e4) / 1e4:g}"  # rounded down: never print more than holds


def make_report(method: str, c: Correction) -> PACReport:
    """The report of one correction (QRF-TC, LCP-RF with guarantee='pac')."""
    g = guaranteed(c)
    sentence = (
        f"With probability at least {1 - c.delta:g} over the calibration data, the coverage "
        f"P(Y in interval | calibration data) is at least {shown(g)} (training-conditional, PAC: {how(c)}), " + IID
    )
    if not c.reached:
        what = "grid value" if c.bound == "hoeffding" else "finite correction"
        sentence += f" No {what} reached the D2 target, so every interval is infinite (coverage 1)."
    if c.grid is not None:
        assert c.counts is not None  # counted on the grid
        grid = pd.DataFrame({"a": c.grid, "d2_coverage": c.counts / c.n2})
    else:  # the D2 coverage curve: at each distinct A_j, the share of D2 points with A_j <= a
        assert c.corrections is not None  # the binomial correction keeps every D2 point's
        a, counts = np.unique(c.corrections, return_counts=True)
        grid = pd.DataFrame({"a": a, "d2_coverage": np.cumsum(counts) / c.n2})
    return PACReport(
        method=method,
        bound=c.bound,
        form=c.form,
        alpha=c.alpha,
        delta=c.delta,
        n2=c.n2,
        k=c.k,
        epsilon=float(c.epsilon),
        K=None if c.grid is None else len(c.grid),
        target=c.k / c.n2,
        required_count=c.k,
        a_hat=c.a_hat if c.reached else None,
        d2_coverage=c.covered / c.n2,
        d2_infinite=c.d2_infinite,
        reached=c.reached,
        guaranteed_coverage=float(g),
        sentence=sentence,
        grid=grid,
    )

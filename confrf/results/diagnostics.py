"""Calibration diagnostics and the asymptotic-assumption checks of the summary.

Both read a fitted :class:`confrf.ConformalRegressor`: its calibrator (the
forest's leaf index, the kernel's indexed points, the groups) and the
calibration rows it keeps. Nothing here changes an interval or a guarantee;
the checks concern the paper's asymptotic conditional coverage (section
"Asymptotic conditional coverage", Assumptions 1-3), not the finite-sample
statement.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._calibration_record import DIAGNOSTIC_ROWS, diagnostic_rows, score_ties
from .._parallel import kernel_threads
from .._validation import check_real, min_calibration_size
from ..exceptions import NotFittedError
from ..localizers.diagnostics import forest_ess, kernel_ess, leaf_masses, within_leaf_variance_ratio
from ..localizers.forest import ForestLocalizer
from ..localizers.kernel import KernelLocalizer
from ..metrics import interval_width, quantiles

#: quantile levels shown for every distribution
LEVELS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
LEVEL_NAMES = ("min", "10%", "25%", "median", "75%", "90%", "max")

#: adds one row to the checks table: (assumption, check, value, reference, status, reference_value)
AddCheck = Callable[..., None]

#: statuses of a check; NOTE: a condition of the asymptotic theory only, not a threat to the guarantee
OK, NOTE, WARN, FAIL, UNVERIFIABLE = "ok", "note", "warn", "fail", "unverifiable"


def distribution_row(x: np.ndarray) -> dict[str, float]:
    """mean and the quantiles of LEVELS (+inf allowed)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        row = {"mean": float(np.mean(x))}
    row.update(zip(LEVEL_NAMES, map(float, quantiles(x, LEVELS))))
    return row


def forest_localizers(calibrator: Any) -> list[ForestLocalizer]:
    """The indexed forest localizers of a calibrator: one, one per group (LCP-RF-G), or none."""
    groups = getattr(calibrator, "group_localizers_", None)
    if groups is not None:
        return [g for g in groups if isinstance(g, ForestLocalizer) and g.index_ is not None]
    loc = getattr(calibrator, "localizer", None)
    if isinstance(loc, ForestLocalizer) and loc.index_ is not None:
        return [loc]
    return []


def _kernel_localizer(calibrator: Any) -> KernelLocalizer | None:
    loc = getattr(calibrator, "localizer", None)
    return loc if isinstance(loc, KernelLocalizer) and loc.Z_ is not None else None


# -- calibration diagnostics -----------------------------------------------------
@dataclass
class CalibrationDiagnostics:
    """Distributions on the calibration data (section 3 of the summary).

    Attributes
    ----------
    table : DataFrame
        One row per quantity ("ESS 1/sum(w^2)" when the method localizes,
        "alpha-tilde", "width"), columns mean and quantiles.
    n_rows : int
        Calibration rows treated as test points (alpha-tilde, width).
    n_infinite : int
        Infinite intervals among them.
    n_ess : int
        Conformal points whose weight rows give the ESS (0 without localizer).
    notes : list of str
        What each row is computed on.
    """

    table: pd.DataFrame
    n_rows: int
    n_infinite: int
    n_ess: int
    notes: list[str] = field(default_factory=list)

    @property
    def share_infinite(self) -> float:
        return self.n_infinite / self.n_rows if self.n_rows else float("nan")

    def facts(self) -> dict[str, Any]:
        return {
            "calibration rows as test points": self.n_rows,
            "infinite intervals": self.n_infinite,
            "share infinite": self.share_infinite,
            "points with an ESS": self.n_ess,
        }


def calibration_ess(calibrator: Any, n_jobs: int | None = None) -> np.ndarray | None:
    """ESS of every conformal point's localizing weight row, or None when the method has no localizer weights.

    Of a random subsample (seed 0) of DIAGNOSTIC_ROWS points of a forest that indexes more: each row costs
    its neighbours, and a million rows would cost minutes for a distribution.
    """
    forests = forest_localizers(calibrator)
    if forests:
        return np.concatenate(
            [forest_ess(loc, n_threads=kernel_threads(n_jobs), rows=_ess_rows(loc._index().n)) for loc in forests]
        )
    kernel = _kernel_localizer(calibrator)
    return None if kernel is None else kernel_ess(kernel)


def _ess_rows(n: int) -> np.ndarray | None:
    return None if n <= DIAGNOSTIC_ROWS else diagnostic_rows(n, 0)


#: how reports show the frames' "alpha-tilde" row: the name alone reads like a miscoverage next to alpha
LEVEL_LABEL = "LCP level alpha-tilde"


def level_note(alpha: float, *, cross: bool = False) -> str:
    """The reports' sentence on alpha-tilde: a level on the coverage side, not a miscoverage.

    ``cross``: a cross-conformal method (CV+, jackknife+, J+aB), whose level is an order statistic's.
    """
    cover = f"{float(1 - Fraction(repr(float(alpha)))):g}"
    how = (
        "the share of the n + 1 upper interval ends at or below the upper bound"
        if cross
        else "the quantile level of the localized score distribution that gives the threshold, which LCP chooses "
        "so that coverage is exact"
    )
    return (
        f"LCP level alpha-tilde: not a miscoverage like alpha = {float(alpha):g} but a level on the coverage "
        f"side, {how}; it sits near 1 - alpha = {cover} (1 for an infinite interval)."
    )


def shown_levels(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its "alpha-tilde" row named :data:`LEVEL_LABEL` for display (the frame keeps its name)."""
    return table.rename(index={"alpha-tilde": LEVEL_LABEL})


def calibration_diagnostics(est: Any, alpha: float) -> CalibrationDiagnostics:
    """ESS of the weights on the conformal points; alpha-tilde and widths with the calibration rows as test points."""
    X = getattr(est, "calib_X_", None)
    if X is None:
        raise NotFittedError("the estimator keeps no calibration rows; call conformalize() first.")
    # the summary computes this itself: no progress bar labelled "predict:" (the user called summary())
    d = est.predict_details(
        X,
        alpha,
        groups=getattr(est, "calib_groups_", None),
        likelihood_ratio=getattr(est, "calib_ratio_", None),
        progress=False,
    )
    width = interval_width(d["lwr"], d["upr"])
    rows: dict[str, dict[str, float]] = {}
    notes = []
    ess = calibration_ess(est.calibrator_, est.n_jobs)
    if ess is not None:
        rows["ESS 1/sum(w^2)"] = distribution_row(ess)
        per_group = " (within its group)" if getattr(est.calibrator_, "group_localizers_", None) is not None else ""
        n_carry = sum(loc._index().n for loc in forest_localizers(est.calibrator_)) or ess.shape[0]
        sub = f" (a random subsample of {ess.shape[0]} of the {n_carry})" if n_carry > ess.shape[0] else ""
        notes.append(
            f"ESS: 1/sum_j w_ij^2 of the localizing weights of each of the {ess.shape[0]} points that "
            f"carry the weights (conformal part, or D1){sub} on these points{per_group}, itself included (its "
            "LCP row without a test point)."
        )
    rows["alpha-tilde"] = distribution_row(d["level"])
    rows["width"] = distribution_row(width)
    if hasattr(est.calibrator_, "intervals"):  # a cross-conformal method: no threshold, training rows
        notes.append(
            f"alpha-tilde and width: {X.shape[0]} training rows (each scored out of fold) treated as new test "
            "points. " + level_note(alpha, cross=True)
        )
    else:
        n_all = getattr(est, "n_calib_", X.shape[0])
        which = (
            f"the {X.shape[0]} calibration rows"
            if getattr(est, "calib_rows_", None) is None
            else f"a random subsample of {X.shape[0]} of the {n_all} calibration rows (at most {DIAGNOSTIC_ROWS}: "
            "kept with the fit so that it does not grow with the data)"
        )
        notes.append(
            f"alpha-tilde and width: {which} treated as new test points "
            "(alpha-tilde: the localizer's mass at or below the threshold). " + level_note(alpha)
        )
    table = pd.DataFrame.from_dict(rows, orient="index")
    return CalibrationDiagnostics(
        table, int(X.shape[0]), int(np.isinf(width).sum()), 0 if ess is None else int(ess.shape[0]), notes
    )


# -- assumption checks -----------------------------------------------------------
@dataclass
class AssumptionChecks:
    """Section 4 of the summary: one row per check, and one note per assumption.

    ``table`` columns: assumption, check, value, reference, status; the
    numeric reference (when there is one) is in ``reference_value``.
    """

    table: pd.DataFrame
    notes: list[str]

    @property
    def status(self) -> dict[str, str]:
        """Status of every assumption: the worst status among its checks (fail > warn > note > ok > unverifiable)."""
        rank = {FAIL: 4, WARN: 3, NOTE: 2, OK: 1, UNVERIFIABLE: 0}
        out: dict[str, str] = {}
        for assumption, status in zip(self.table["assumption"], self.table["status"]):
            if status and (assumption not in out or rank[status] > rank[out[assumption]]):
                out[assumption] = status
        return out


def leaf_threshold(n: int, beta: float) -> float:
    """sqrt(n) ln(n)^beta, the leaf mass Assumption 3 asks for (up to a constant)."""
    return math.sqrt(n) * math.log(n) ** beta if n > 1 else 0.0


def _check_beta(beta: float) -> float:
    return check_real(beta, "beta", low=1.0, high=math.inf, hint="Assumption 3 asks beta > 1, e.g. 1.01")


def _check_tree_exponent(a: float) -> float:
    return check_real(a, "tree_exponent", low=0.0, high=math.inf, hint="Assumption 3: k = O(n^a), a > 0")


def assumption_checks(
    est: Any, alpha: float, beta: float = 1.01, tree_exponent: float = 1.0
) -> AssumptionChecks | None:
    """The checks that apply to the fitted method; None when none does (no forest, no groups)."""
    beta = _check_beta(beta)
    a = _check_tree_exponent(tree_exponent)
    cal = est.calibrator_
    rows: list[dict[str, Any]] = []
    notes: list[str] = []

    def add(
        assumption: str,
        check: str,
        value: Any,
        reference: str = "",
        status: str = "",
        reference_value: float = float("nan"),
    ) -> None:
        rows.append(
            {
                "assumption": assumption,
                "check": check,
                "value": value,
                "reference": reference,
                "status": status,
                "reference_value": reference_value,
            }
        )

    forests = forest_localizers(cal)
    if forests:
        _leaf_checks(forests, beta, a, add, notes)
        # a classifier keeps every calibration score and no tie counts; a regressor may keep a subsample of them
        ties = getattr(est, "calib_score_ties_", None)
        _tie_check(score_ties(np.asarray(est.calib_scores_)) if ties is None else ties, add, notes)
        _spread_check(forests, add, notes)
    table_fn = getattr(cal, "group_table", None)
    if callable(table_fn):
        part, need = cal.required_points(alpha)
        _group_check(table_fn(alpha), part, need, alpha, add, notes)
    if not rows:
        return None
    table = pd.DataFrame(rows)
    table["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # counts stay integers
    return AssumptionChecks(table, notes)


def _leaf_checks(forests: list[ForestLocalizer], beta: float, a: float, add: AddCheck, notes: list[str]) -> None:
    masses, thresholds, grow_hint = [], [], []
    for loc in forests:
        n_loc = loc._index().n
        leaf_thr = leaf_threshold(n_loc, beta)
        N = leaf_masses(loc)
        if len(forests) > 1:
            # the groups share one forest and each indexes only its own points: the other groups' leaves are
            # empty by construction, so a group's leaves are those its points reach
            N = N[N > 0]
        masses.append(N)
        thresholds.append(np.full(N.shape[0], leaf_thr))
        # leaves are grown on n_grow points; a leaf of min_samples_leaf grown points holds ~ that share of n_loc
        grow_hint.append(math.ceil(leaf_thr * (loc.n_grow_ or n_loc) / n_loc))
    N, thr = np.concatenate(masses), np.concatenate(thresholds)
    below = float(np.mean(N < thr))
    # small leaves only slow the asymptotic conditional coverage down; the finite-sample guarantee holds for any
    # leaf size, so this is a note, never a warning
    status = OK if below == 0.0 else NOTE
    n = int(sum(loc._index().n for loc in forests))
    n0 = forests[0]._index().n
    ref = f">= {thr[0]:.4g}" if len(forests) == 1 else ">= per group"
    add("A3", "leaf mass N, min", int(N.min()), ref, status, float(thr.min()))
    add("A3", "leaf mass N, median", float(np.median(N)), ref, "", float(np.median(thr)))
    add("A3", "share of leaves below", below, "0", "", 0.0)
    k = forests[0].n_trees
    tree_status = OK if k <= n**a else NOTE
    add("A3", "trees k", int(k), f"<= {n**a:.4g}", tree_status, float(n**a))
    multiplicity = "" if forests[0].honest else " (bootstrap draws: honest=False)"
    where = (
        f"sqrt(n) ln(n)^beta = {thr[0]:.4g} at n = {n0}"
        if len(forests) == 1
        else "n = the group's conformal points; a group's leaves: those of the shared forest that its points reach"
    )
    hint = (
        f"; for larger leaves set min_samples_leaf to about {max(grow_hint)} (it applies to the localizer part)"
        if status != OK and len(forests) == 1
        else ""
    )
    notes.append(
        "A3 concerns asymptotic conditional coverage only, not the guarantee above ('note' is not a warning). "
        f"Leaves should hold Omega(sqrt(n) ln(n)^beta) conformal points{multiplicity}, beta = {beta:g} > 1, "
        f"read with constant 1 ({where}): {below:.0%} of the {N.shape[0]} leaves hold fewer{hint}. Trees: k = "
        f"O(n^a) for a fixed a > 0; one fit cannot test a rate, so k is compared with n^a = {n**a:.4g} at "
        f"n = {n}, a = {a:g} (tree_exponent=): "
        "in the proof k only multiplies a tail exp(-c ln(n)^beta) in a union bound over trees, which any fixed "
        "a keeps summable."
    )


def _tie_check(ties: tuple[int, int, int], add: AddCheck, notes: list[str]) -> None:
    n, n_tied, n_distinct = ties  # over every calibration score (confrf._calibration_record.score_ties)
    tied = n_tied / n if n else 0.0
    # ties concern the asymptotic theory only: the finite-sample guarantee holds with ties (it can only
    # over-cover), so they are a note, not a warning (class probabilities and integer responses tie)
    status = OK if tied == 0.0 else NOTE
    add("A1", "share of tied scores", tied, "0 (continuous)", status, 0.0)
    add("A1", "distinct scores / n", n_distinct / n if n else float("nan"), "1", "", 1.0)
    looks = (
        "the scores look discrete (at least half share their value)"
        if tied >= 0.5
        else "some scores are tied"
        if tied > 0.0
        else "no score is tied"
    )
    notes.append(
        "A1 (x -> F(r|x) continuous) cannot be confirmed from data; ties are atoms of the score distribution, "
        f"which the proof does not cover (alpha-tilde need not approach 1 - alpha, coverage can exceed the "
        f"target; the guarantee above still holds): {looks}, among the {n} calibration scores."
    )


def _spread_check(forests: list[ForestLocalizer], add: AddCheck, notes: list[str]) -> None:
    ratios = [within_leaf_variance_ratio(loc) for loc in forests]
    sizes = [loc._index().n for loc in forests]
    ok = [(r, s) for r, s in zip(ratios, sizes) if not math.isnan(r)]
    ratio = sum(r * s for r, s in ok) / sum(s for _, s in ok) if ok else float("nan")
    add("A2", "within-leaf / total variance", ratio, "(proxy)", UNVERIFIABLE)
    notes.append(
        "A2 (F(r|.) varies less and less inside a leaf) cannot be checked from data: the within-leaf spread of "
        "the scores also holds the noise of Y given x, so it does not vanish even when A2 holds. Proxy: "
        f"{_pct(ratio)} of the conformal scores' variance lies within leaves; near 100% the leaves do not "
        "separate small from large scores and LCP-RF behaves like split conformal."
    )


def _group_check(table: pd.DataFrame, part: str, need: int, alpha: float, add: AddCheck, notes: list[str]) -> None:
    # ``part``/``need``: the calibrator's own rule (split conformal: ceil(1/alpha) - 1 conformal points; PAC: the
    # binomial correction's count at delta / L), so the check agrees with the intervals it describes
    counts = table[[c for c in ("localizer", "conformal", "D2") if c in table.columns]]
    sizes = table[part].to_numpy()[counts.sum(axis=1).to_numpy() > 0]  # an empty '(rest)' is no group
    small = int(np.sum(sizes < need))
    status = OK if small == 0 else FAIL
    add("Groups", f"smallest group ({part})", int(sizes.min()), f">= {need}", status, float(need))
    add("Groups", "groups below", small, "0", "", 0.0)
    rule = (
        f"ceil(1/alpha) - 1 = {need}"
        if need == min_calibration_size(alpha)
        else f"{need} (the PAC correction's order statistic must exist)"
    )
    notes.append(
        f"Groups: a group needs {rule} {part} points for a finite interval at "
        f"alpha = {alpha:g}; {small} of {sizes.shape[0]} groups have fewer (their intervals are infinite)."
    )


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.0%}"

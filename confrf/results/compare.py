"""Regression results side by side on one test set (``confrf.compare`` routes here) and their column names."""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

from .._format import format_interval, format_number, format_value
from .._report import Report
from .._tables import Summary, _fmt, frame_table, text_table
from ..exceptions import InputError
from ..models import model_name
from .evaluation import Evaluation, evaluate
from .result import ConformalResult


class Comparison(Report):
    """Methods side by side (one column each), as linearmodels' ``compare``.

    Attributes
    ----------
    frame : DataFrame
        Rows: metrics (numbers only); columns: the results' names.
    evaluations : dict
        Name -> :class:`confrf.results.evaluation.Evaluation` (per-row facts, tables).
    """

    def __init__(self, frame: pd.DataFrame, evaluations: dict[str, Evaluation], conf_level: float) -> None:
        self.frame = frame
        self.evaluations = evaluations
        self.conf_level = conf_level

    def summary(self) -> Summary:
        f = self.frame
        pct = f"{self.conf_level:.0%}"
        # fits of different responses (np.log(y) vs y): widths are on different scales, say so
        responses = f.loc["response"] if "response" in f.index else None
        mixed = responses is not None and responses.nunique() > 1
        shown: dict[str, list[str]] = {}
        for name in f.columns:
            c = f[name]
            col = (
                [str(c["method"])]
                + ([str(c["response"])] if mixed else [])
                + [
                    _fmt(c["alpha"]),
                    _fmt(c["coverage"]),
                    format_interval(c["ci_lower"], c["ci_upper"], digits=3),
                    _fmt(c["width_mean"]),
                    _fmt(c["width_median"]),
                    _fmt(c["share_infinite"]),
                    _fmt(c["worst_slab_coverage"]),
                    _fmt(c["fidelity_median"]),
                    _fmt(c["spearman"]),
                ]
            )
            if "oracle_error_median" in f.index:
                col += [_fmt(c["oracle_error_median"]), _fmt(c["conditional_coverage_min"])]
            if "crps" in f.index:  # NaN for a fit without a predictive distribution
                col += [_fmt(c["crps"]), _fmt(c["pit_ks"])]
            col += [
                _fmt(c["fit_time"]),
                _fmt(c["conformalize_time"]),
                _fmt(c["predict_time"]),
                f"{c['guarantee']}{'' if c['certified'] else ' (NOT cert.)'}",
            ]
            shown[name] = col
        stubs = (
            ["Method"]
            + (["Response"] if mixed else [])
            + [
                "alpha",
                "Coverage",
                f"{pct} CI (exact)",
                "Mean width",
                "Median width",
                "Share infinite",
                "Worst-slab coverage",
                "Fidelity error (median)",
                "Spearman(width, |err|)",
            ]
        )
        if "oracle_error_median" in f.index:
            stubs += ["|q - q*|/q* (median)", "Min cond. coverage"]
        if "crps" in f.index:
            stubs += ["CRPS (finite tail)", "PIT distance (KS)"]
        stubs += ["Fit time (s)", "Conformalize time (s)", "Predict time (s)", "Guarantee"]
        table = pd.DataFrame(shown, index=stubs)
        s = Summary()
        n = int(f.loc["n"].iloc[0])
        s.add_section("comparison", frame_table(table, title=f"Comparison on {n} test rows", colsep="   "), f)
        slab = next(iter(self.evaluations.values())).slab
        s.tables.append(
            text_table(
                [
                    f"CI: exact (Clopper-Pearson) {pct} interval of each fit's coverage. Worst-slab coverage: "
                    "slabs with "
                    f"at least {slab.delta:g} of the rows, {slab.n_directions} seeded directions (the same for every "
                    "method). Fidelity error |q(x) - |y - fit|| / |y - fit|, q the half-width. Times in seconds; "
                    "predict time measured here on the test rows."
                    + (
                        " The fits model different responses, so their widths are on different scales and not "
                        "comparable "
                        "across columns (coverage is)."
                        if mixed
                        else ""
                    )
                ]
            )
        )
        return s

    def __repr__(self) -> str:
        return f"<Comparison of {list(self.frame.columns)}>"


def compare_intervals(
    results: tuple,
    test: Any,
    names: list[str] | None,
    *,
    alpha: float | None,
    conf_level: float,
    evaluation: dict[str, Any],
) -> Comparison:
    """Evaluate every regression result on ``test`` (see :func:`confrf.compare`).

    ``evaluation`` holds :func:`confrf.results.evaluation.evaluate`'s other settings (``oracle``,
    ``delta``, ``n_directions``, ``random_state``), the same for every result.
    """
    bad = [type(r).__name__ for r in results if not isinstance(r, ConformalResult)]
    if bad:
        unpack = (
            ("; pass them as separate arguments, cf.compare(a, b, test=test) (or cf.compare(*results, test=test))")
            if any(isinstance(r, (list, tuple, dict)) for r in results)
            else ""
        )
        raise InputError(f"compare() takes fitted results (ConformalResult), got {bad}{unpack}.")
    names = column_names(results, names)
    evaluations: dict[str, Evaluation] = {}
    columns: dict[str, pd.Series] = {}
    for name, res in zip(names, cast(tuple[ConformalResult, ...], results)):  # checked just above
        ev = evaluate(res, test, alpha=alpha, conf_level=conf_level, **evaluation)
        evaluations[name] = ev
        g = res.guarantee
        est = res.estimator
        col = {"method": res.method, "response": res.design.response_name, "alpha": ev.alpha, **ev.metrics.to_dict()}
        if ev.oracle is not None:
            col.update(ev.oracle.to_dict())
        col.update(
            {
                "fit_time": getattr(est, "fit_time_", float("nan")),
                "conformalize_time": getattr(est, "conformalize_time_", float("nan")),
                "guarantee": g.kind,
                "certified": g.certified,
            }
        )
        columns[name] = pd.Series(col, dtype=object)
    return Comparison(pd.DataFrame(columns), evaluations, conf_level)


def column_names(results: tuple, names: list[str] | None) -> list[str]:
    """Column names: given, or the method names, told apart by what differs when a method repeats."""
    names = default_names(results) if names is None else [str(n) for n in names]
    if len(names) != len(results) or len(set(names)) != len(names):
        raise InputError(f"names must give one distinct name per result ({len(results)}), got {names}.")
    return names


def _model_label(res: Any) -> str:
    est = res.estimator
    model = getattr(est, "model", None)
    label = model if isinstance(model, str) else model_name(model)
    return f"prefit {label}" if getattr(est, "prefit", False) else label


def _facts(res: Any) -> list[tuple[str, str]]:
    """What can tell fits of one method apart, most telling first: (key, how it reads in a name)."""
    facts = [
        ("model", _model_label(res)),
        ("response", str(getattr(res.design, "response_name", ""))),
        ("alpha", f"alpha={format_number(res.alpha)}"),
        ("guarantee", res.guarantee.kind),
        ("formula", res.formula),
    ]
    options = getattr(res, "options", None) or {}
    facts += [(f"option {k}", f"{k}={format_value(v)}") for k, v in options.items() if k not in ("n_jobs",)]
    facts.append(("random_state", f"random_state={format_value(res.random_state)}"))
    return facts


def default_names(results: tuple) -> list[str]:
    """The method names; a method that repeats is followed by what differs among its fits.

    ``compare(split_gbm, lcp_gbm, split_ols, lcp_ols)`` gives ``split (gbm)``,
    ``lcp-rf (gbm)``, ``split (ols)``, ``lcp-rf (ols)``; fits that differ in
    nothing shown are numbered ``#1``, ``#2``.
    """
    methods = [r.method for r in results]
    names = list(methods)
    for method in set(methods):
        same = [i for i, m in enumerate(methods) if m == method]
        if len(same) == 1:
            continue
        facts = [dict(_facts(results[i])) for i in same]
        every = list(dict.fromkeys(k for f in facts for k in f))  # an option may be given to one fit only
        keys = [k for k in every if len({f.get(k) for f in facts}) > 1]
        if "formula" in keys and max(len(f["formula"]) for f in facts) > 30:
            keys.remove("formula")  # too long for a column name
        # the fewest facts, most telling first, that tell the fits apart: a fact joins when it splits a tie
        chosen: list[str] = []
        for k in keys:
            before = len({tuple(f.get(c) for c in chosen) for f in facts})
            if len({tuple(f.get(c) for c in [*chosen, k]) for f in facts}) > before:
                chosen.append(k)
            if len({tuple(f.get(c) for c in chosen) for f in facts}) == len(facts):
                break
        for i, f in zip(same, facts):
            shown = [f.get(k, f"{k.removeprefix('option ')} not set") for k in chosen]
            names[i] = f"{method} ({', '.join(shown)})" if shown else method
    # still the same name (fits that differ in nothing shown): number them
    for name in set(names):
        dup = [i for i, n in enumerate(names) if n == name]
        if len(dup) > 1:
            for number, i in enumerate(dup, 1):
                names[i] = f"{name} #{number}"
    return names

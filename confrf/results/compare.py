"""Side-by-side comparison of fitted results on one test set: ``confrf.compare``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from ..exceptions import InputError
from .evaluation import Evaluation, evaluate
from .result import ConformalResult
from .summary import Summary, _fmt, frame_table, text_table

if TYPE_CHECKING:  # classification imports results
    from ..classification import ClassificationResult
    from ..classification.compare import ClassComparison


class Comparison:
    """Methods side by side (one column each), as linearmodels' ``compare``.

    Attributes
    ----------
    frame : DataFrame
        Rows: metrics (numbers only); columns: the results' names.
    evaluations : dict
        Name -> :class:`confrf.results.evaluation.Evaluation` (per-row facts, tables).
    """

    def __init__(self, frame: pd.DataFrame, evaluations: dict[str, Evaluation], level: float) -> None:
        self.frame = frame
        self.evaluations = evaluations
        self.level = level

    def summary(self) -> Summary:
        f = self.frame
        pct = f"{self.level:.0%}"
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
                    f"[{c['ci_lower']:.3f}, {c['ci_upper']:.3f}]",
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
        stubs += ["Fit time (s)", "Conformalize time (s)", "Predict time (s)", "Guarantee"]
        table = pd.DataFrame(shown, index=stubs)
        s = Summary()
        n = int(f.loc["n"].iloc[0])
        s.add_section("comparison", frame_table(table, title=f"Comparison on {n} test rows"), f)
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

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return f"<Comparison of {list(self.frame.columns)}>"

    def _repr_html_(self) -> str:
        return self.summary().as_html()

    def as_latex(self) -> str:
        return self.summary().as_latex()


def compare(
    *results: ConformalResult | ClassificationResult,
    test: Any,
    names: list[str] | None = None,
    oracle: Any = None,
    level: float = 0.95,
    delta: float = 0.1,
    n_directions: int = 1000,
    random_state: int | None = 0,
) -> Comparison | ClassComparison:
    """Compare fitted results on the same held-out data, side by side.

    Parameters
    ----------
    *results : ConformalResult
        Fitted results (any methods), e.g. from :func:`confrf.lcp_rf` and
        :func:`confrf.split_cp` on the same data.
    test : DataFrame
        Held-out rows with the response.
    names : list of str, optional
        Column names; by default the method names (numbered when repeated).
    oracle : SimulatedData, optional
        The simulated sample ``test`` comes from: adds the oracle rows.
    level, delta, n_directions, random_state
        As in :meth:`confrf.ConformalResult.evaluate` (the same slab
        directions for every result).

    Returns
    -------
    Comparison
        Printable; ``.frame`` holds the numbers.

    Examples
    --------
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(1200, random_state=0)
    >>> test = cf.datasets.make_sim(400, random_state=1)
    >>> a = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    >>> b = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=30)
    >>> cmp = cf.compare(a, b, test=test.frame, n_directions=50)
    >>> list(cmp.frame.columns)
    ['split', 'lcp-rf']
    """
    if not results:
        raise InputError("give at least one fitted result to compare.")
    from ..classification import ClassificationResult  # not at the top: classification imports results

    if any(isinstance(r, ClassificationResult) for r in results):  # prediction sets: their own metrics
        from ..classification.compare import compare_sets

        return compare_sets(results, test, _names(results, names), level)
    bad = [type(r).__name__ for r in results if not isinstance(r, ConformalResult)]
    if bad:
        unpack = (
            ("; pass them as separate arguments, cf.compare(a, b, test=test) (or cf.compare(*results, test=test))")
            if any(isinstance(r, (list, tuple, dict)) for r in results)
            else ""
        )
        raise InputError(f"compare() takes fitted results (ConformalResult), got {bad}{unpack}.")
    names = _names(results, names)
    evaluations: dict[str, Evaluation] = {}
    columns: dict[str, pd.Series] = {}
    for name, res in zip(names, cast(tuple[ConformalResult, ...], results)):  # checked just above
        ev = evaluate(
            res, test, oracle=oracle, level=level, delta=delta, n_directions=n_directions, random_state=random_state
        )
        evaluations[name] = ev
        g = res.guarantee
        est = res.estimator
        col = {"method": res.method, "response": res.design.response_name, "alpha": res.alpha, **ev.metrics.to_dict()}
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
    return Comparison(pd.DataFrame(columns), evaluations, level)


def _names(results: tuple, names: list[str] | None) -> list[str]:
    """Column names: given, or the method names (numbered when repeated)."""
    if names is None:
        methods = [r.method for r in results]
        names = [m if methods.count(m) == 1 else f"{m} ({methods[: i + 1].count(m)})" for i, m in enumerate(methods)]
    names = [str(n) for n in names]
    if len(names) != len(results) or len(set(names)) != len(names):
        raise InputError(f"names must give one distinct name per result ({len(results)}), got {names}.")
    return names

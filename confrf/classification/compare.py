"""Classification results side by side on one test set (``confrf.compare`` routes here)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._docstrings import fill
from .._format import format_interval
from .._report import Report
from .._tables import Summary, _fmt, frame_table, text_table
from ..exceptions import InputError
from .evaluation import MIN_STRATUM, ClassEvaluation
from .result import ClassificationResult

_ROWS = [
    ("method", "Method"),
    ("alpha", "alpha"),
    ("coverage", "Coverage"),
    ("ci", "CI (exact)"),
    ("mean_size", "Mean set size"),
    ("share_singleton", "Share singletons"),
    ("share_empty", "Share empty"),
    ("share_full", "Share full"),
    ("worst_size_coverage", "Worst size-stratified cov."),
    ("worst_class_coverage", "Worst class coverage"),
    ("fit_time", "Fit time (s)"),
    ("conformalize_time", "Conformalize time (s)"),
    ("guarantee", "Guarantee"),
]


@fill
class ClassComparison(Report):
    """Classification methods side by side.

    Attributes
    ----------
    frame : DataFrame
        Rows: metrics; columns: the results' names.
    evaluations : dict
        Name -> :class:`confrf.classification.evaluation.ClassEvaluation`.

    Examples
    --------
    >>> import numpy as np
    {{wine}}
    >>> test = np.random.default_rng(0).random(len(df)) < 0.3
    >>> kw = dict(data=df[~test], model="rf", random_state=0)
    >>> cmp = cf.compare(cf.conformal("target ~ .", method="split", **kw),
    ...                  cf.conformal("target ~ .", method="split-g", **kw), test=df[test])
    >>> cmp.frame.columns.tolist()
    ['split', 'split-g']
    >>> cmp.frame.loc[["method", "guarantee"], "split-g"].tolist()
    ['split-g', 'class-conditional']
    """

    def __init__(self, frame: pd.DataFrame, evaluations: dict[str, ClassEvaluation], conf_level: float) -> None:
        self.frame = frame
        self.evaluations = evaluations
        self.conf_level = conf_level

    def summary(self) -> Summary:
        f = self.frame
        shown = {}
        for name in f.columns:
            c = f[name]
            vals = {k: _fmt(c[k]) for k, _ in _ROWS if k in c.index}
            vals["ci"] = format_interval(c["ci_lower"], c["ci_upper"], digits=3)
            vals["guarantee"] = f"{c['guarantee']}{'' if c['certified'] else ' (NOT cert.)'}"
            shown[name] = [vals[k] for k, _ in _ROWS]
        table = pd.DataFrame(shown, index=[label for _, label in _ROWS])
        s = Summary()
        s.add_section("comparison", frame_table(table, title=f"Comparison on {int(f.loc['n'].iloc[0])} test rows"), f)
        s.tables.append(
            text_table(
                [
                    f"CI: exact (Clopper-Pearson) {self.conf_level:.0%} interval of each fit's coverage. Worst "
                    "size-stratified "
                    f"coverage: over non-empty set sizes with at least {MIN_STRATUM} rows. Times in seconds."
                ]
            )
        )
        return s

    def __repr__(self) -> str:
        return f"<ClassComparison of {list(self.frame.columns)}>"


def compare_sets(
    results: tuple, test: Any, names: list[str], conf_level: float, alpha: float | None = None
) -> ClassComparison:
    """Evaluate every classification result on ``test`` (see :func:`confrf.compare`)."""
    bad = [type(r).__name__ for r in results if not isinstance(r, ClassificationResult)]
    if bad:
        raise InputError(
            f"compare() takes results of one kind, but {bad} are not classification results: prediction "
            "sets and prediction intervals have different metrics (set size vs width). Compare the "
            "classification results and the regression results in two calls."
        )
    evaluations, columns = {}, {}
    for name, res in zip(names, results):
        ev = res.evaluate(test, alpha=alpha, conf_level=conf_level)
        evaluations[name] = ev
        g = res.guarantee
        est = res.estimator
        columns[name] = pd.Series(
            {
                "method": res.method,
                "alpha": ev.alpha,
                **ev.metrics.to_dict(),
                "fit_time": est.fit_time_,
                "conformalize_time": est.conformalize_time_,
                "guarantee": g.kind,
                "certified": g.certified,
            },
            dtype=object,
        )
    return ClassComparison(pd.DataFrame(columns), evaluations, conf_level)

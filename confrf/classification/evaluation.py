"""Held-out diagnostics of prediction sets: coverage with its exact CI, set sizes,
size-stratified and class-conditional coverage (``ClassificationResult.evaluate``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._docstrings import fill
from .._format import format_interval, format_number
from .._report import Report
from .._tables import Summary, frame_table, text_table, two_column_table
from .._validation import check_alpha
from ..exceptions import InputError
from ..formula import as_frame
from ..metrics import clopper_pearson

if TYPE_CHECKING:  # pragma: no cover
    from .result import ClassificationResult


#: fewest rows of a set-size stratum counted in the worst size-stratified coverage
MIN_STRATUM = 20


def set_facts(sets: np.ndarray) -> dict[str, float]:
    """Mean set size and the shares of empty, singleton and full sets of boolean (n, K) sets."""
    size = sets.sum(axis=1)
    n, K = sets.shape
    if n == 0:
        return {
            "mean_size": float("nan"),
            "share_empty": float("nan"),
            "share_singleton": float("nan"),
            "share_full": float("nan"),
        }
    return {
        "mean_size": float(size.mean()),
        "share_empty": float(np.mean(size == 0)),
        "share_singleton": float(np.mean(size == 1)),
        "share_full": float(np.mean(size == K)),
    }


def worst_size_coverage(size: np.ndarray, covered: np.ndarray, min_rows: int = MIN_STRATUM) -> float:
    """Lowest coverage over the set sizes (size-stratified coverage); NaN when no stratum qualifies.

    Empty sets never cover and strata of a few rows are noise, so only
    non-empty sizes with at least ``min_rows`` rows count.

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.classification.evaluation import worst_size_coverage
    >>> size = np.repeat([1, 2], 20); covered = np.r_[np.ones(18), np.zeros(2), np.ones(20)].astype(bool)
    >>> worst_size_coverage(size, covered)
    0.9
    """
    size, covered = np.asarray(size), np.asarray(covered, dtype=bool)
    vals = [covered[size == v].mean() for v in np.unique(size) if v > 0 and np.sum(size == v) >= min_rows]
    return float(min(vals)) if vals else float("nan")


def _coverage_rows(covered: np.ndarray, keys: np.ndarray, names: list, level: float, size: np.ndarray) -> pd.DataFrame:
    rows = {}
    for code, name in enumerate(names):
        mask = keys == code
        n = int(mask.sum())
        if n == 0:
            continue
        k = int(covered[mask].sum())
        lo, hi = clopper_pearson(k, n, level)
        rows[name] = {
            "n": n,
            "coverage": k / n,
            "ci_lower": float(lo),
            "ci_upper": float(hi),
            "mean_size": float(size[mask].mean()),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


@fill
class ClassEvaluation(Report):
    """Held-out facts of one classification result.

    Attributes
    ----------
    metrics : pandas.Series
        n, coverage, ci_lower, ci_upper, mean_size, share_empty,
        share_singleton, share_full, worst_size_coverage (over non-empty set
        sizes with at least ``MIN_STRATUM`` rows), worst_class_coverage.
    by_size : DataFrame
        Coverage (exact CI) and rows of every set size (size-stratified coverage).
    by_class : DataFrame
        Coverage (exact CI) and mean set size given the true class.
    rows : DataFrame
        Per row: y (true label), pred, size, covered.
    frames : dict
        The tables above by name.

    Examples
    --------
    >>> import numpy as np
    {{wine}}
    >>> test = np.random.default_rng(0).random(len(df)) < 0.3
    >>> res = cf.conformal("target ~ .", data=df[~test], method="split", model="rf", random_state=0)
    >>> ev = res.evaluate(df[test])
    >>> int(ev.metrics["n"]) == int(test.sum()), bool(0 <= ev.metrics["coverage"] <= 1)
    (True, True)
    >>> ev.by_class.columns.tolist()
    ['n', 'coverage', 'ci_lower', 'ci_upper', 'mean_size']
    >>> sorted(ev.frames)
    ['by_class', 'by_size', 'metrics']
    """

    def __init__(
        self,
        result: ClassificationResult,
        rows: pd.DataFrame,
        sets: np.ndarray,
        codes: np.ndarray,
        conf_level: float,
        alpha: float,
    ) -> None:
        self.result = result
        self.rows = rows
        self.conf_level = conf_level
        self.alpha = alpha
        covered = rows["covered"].to_numpy()
        size = rows["size"].to_numpy()
        n, k = covered.shape[0], int(covered.sum())
        lo, hi = clopper_pearson(k, n, conf_level)
        K = sets.shape[1]
        self.by_size = _coverage_rows(covered, size, list(range(K + 1)), conf_level, size)
        self.by_size.index.name = "size"
        self.by_class = _coverage_rows(covered, codes, list(result.levels), conf_level, size)
        self.by_class.index.name = "class"
        self.metrics = pd.Series(
            {
                "n": n,
                "coverage": k / n,
                "ci_lower": float(lo),
                "ci_upper": float(hi),
                **set_facts(sets),
                "worst_size_coverage": worst_size_coverage(size, covered),
                "worst_class_coverage": float(self.by_class["coverage"].min()),
            }
        )
        self.frames = {"metrics": self.metrics.to_frame("value"), "by_size": self.by_size, "by_class": self.by_class}

    def summary(self) -> Summary:
        m = self.metrics
        pct = f"{self.conf_level:.0%}"
        s = Summary()
        items = [
            ("Method", self.result.method),
            ("alpha", self.alpha),
            ("Test rows", int(m["n"])),
            ("Target coverage", 1 - self.alpha),
            ("Coverage", m["coverage"]),
            (f"{pct} CI (exact)", format_interval(m["ci_lower"], m["ci_upper"])),
            ("Mean set size", m["mean_size"]),
            ("Share singletons", m["share_singleton"]),
            ("Share empty", m["share_empty"]),
            ("Share full", m["share_full"]),
        ]
        s.add_section(
            "metrics",
            two_column_table(items, title=f"Held-out evaluation: {self.result.formula}"),
            self.frames["metrics"],
        )
        s.add_section(
            "by_size", frame_table(self.by_size, title="Coverage by set size (size-stratified)"), self.by_size
        )
        s.add_section(
            "by_class", frame_table(self.by_class, title="Coverage by true class (class-conditional)"), self.by_class
        )
        s.tables.append(
            text_table(
                [
                    f"CI: exact (Clopper-Pearson) {pct} intervals. Worst size-stratified coverage (non-empty "
                    "sizes with at "
                    f"least {MIN_STRATUM} rows): "
                    f"{format_number(m['worst_size_coverage'])}; worst class coverage: "
                    f"{format_number(m['worst_class_coverage'])}. "
                    "The guarantee "
                    "is marginal unless the method is class-conditional; strata with few rows vary a lot."
                ]
            )
        )
        return s


def evaluate_sets(
    result: ClassificationResult, test: Any, *, alpha: float | None = None, conf_level: float = 0.95
) -> ClassEvaluation:
    """Coverage, set sizes, size-stratified and class-conditional coverage of ``result`` on ``test``."""
    test = as_frame(test, "test")
    if len(test) == 0:
        raise InputError("the test data has no rows.")
    if not 0 < conf_level < 1:
        raise InputError(f"conf_level must lie in (0, 1), got {conf_level!r}.")
    if alpha is not None:
        alpha = check_alpha(alpha)  # one level: the evaluation is of one set per row
    codes = result.design.codes(test)  # unseen labels raise here, before any prediction
    pred = result.predict(test, alpha)
    # by position: a list of bool levels ([False, True]) would be read by pandas as a row mask
    sets = pred.iloc[:, pred.columns.get_indexer(result.level_columns)].to_numpy(dtype=bool)
    covered = sets[np.arange(sets.shape[0]), codes]
    rows = pd.DataFrame(
        {
            "y": np.asarray(result.levels, dtype=object)[codes],
            "pred": pred["pred"].to_numpy(),
            "size": pred["size"].to_numpy(),
            "covered": covered,
        },
        index=pred.index,
    )
    return ClassEvaluation(result, rows, sets, codes, conf_level, result.alpha if alpha is None else float(alpha))

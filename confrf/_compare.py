"""``confrf.compare``: fitted results side by side, routed to their family's comparison.

It sits above both families (regression in :mod:`confrf.results.compare`,
classification in :mod:`confrf.classification.compare`), so that neither
imports the other.
"""

from __future__ import annotations

from typing import Any

from ._levels import resolve_alpha, warns_level_once
from .classification.compare import ClassComparison, compare_sets
from .classification.result import ClassificationResult
from .exceptions import InputError
from .results.compare import Comparison, column_names, compare_intervals
from .results.result import ConformalResult


@warns_level_once
def compare(
    *results: ConformalResult | ClassificationResult,
    test: Any,
    names: list[str] | None = None,
    alpha: float | None = None,
    level: float | None = None,
    oracle: Any = None,
    conf_level: float = 0.95,
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
        Column names; by default the method names, and where a method
        repeats, what tells its fits apart (the base model, the response,
        alpha, the guarantee, an option: ``split (gbm)``, ``split (ols)``).
    alpha, level : float, optional
        Evaluate every result at this miscoverage (or R's ``level``, 1 -
        alpha; one or the other) instead of each fit's own.
    oracle : SimulatedData, optional
        The simulated sample ``test`` comes from: adds the oracle rows.
    conf_level, delta, n_directions, random_state
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
    alpha = resolve_alpha(alpha, level)
    if any(isinstance(r, ClassificationResult) for r in results):  # prediction sets: their own metrics
        return compare_sets(results, test, column_names(results, names), conf_level, alpha)
    # the evaluation's settings, as ConformalResult.evaluate takes them
    settings = {"oracle": oracle, "delta": delta, "n_directions": n_directions, "random_state": random_state}
    return compare_intervals(results, test, names, alpha=alpha, conf_level=conf_level, evaluation=settings)

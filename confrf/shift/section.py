"""The "Covariate shift" section of ``ConformalResult.summary()`` and the facts of the last predict.

How the likelihood ratio was obtained, the effective sample size (sum w)^2 / sum w^2
of the conformal points' ratios, the largest weight share, the largest test
ratio that can still get a finite interval, the share of target rows outside
the calibration rows' design range, and a warning when the effective sample
size is too small for finite intervals at the fitted alpha.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._tables import Summary, _fmt, text_table, two_column_table
from .setup import outside_range
from .value import ShiftRatio
from .weighted import too_small_ess_message

#: a fitted result of either family (``ConformalResult``, ``ClassificationResult``): read for ``estimator``,
#: ``alpha``, ``shift`` (the :class:`confrf.shift.setup.ShiftSetup`) and ``_last_predict``. Not typed as
#: ``confrf.results.base.ResultBase``: results/ imports this package, which sits below it.
Result = Any


def finite_ratio_limit(total: float, alpha: float) -> float:
    """The largest w(x) that can get a finite interval: alpha / (1 - alpha) times the calibration points' total ratio.

    Beyond it the test point's own weight p_{n+1} = w(x) / (sum_j w_j + w(x)) exceeds alpha, and
    the weighted (1 - alpha)-quantile is +inf whatever the scores.
    """
    return alpha / (1.0 - alpha) * total


def predict_shift_facts(result: Result, X: np.ndarray, ratios: ShiftRatio) -> dict[str, Any]:
    """Of the rows just predicted: how many lie outside the calibration range, how many ratios force +inf."""
    shift = getattr(result.estimator.calibrator_, "shift_", None)
    forced = None
    if shift is not None and getattr(result.estimator.calibrator_, "group_shift_", None) is None:
        forced = int(np.count_nonzero(ratios.values > finite_ratio_limit(shift.total, result.alpha)))
    return {
        "outside_range": int(np.count_nonzero(outside_range(X, result.shift.range_lo, result.shift.range_hi))),
        "forced_infinite": forced,
    }


def _share(count: int | None, n: int) -> float | None:
    return None if count is None or not n else count / n


def add_shift_section(s: Summary, result: Result) -> None:
    """Section "shift": the ratio's source and the weights' facts, with a warning when too few points carry weight."""
    setup = result.shift
    shift = getattr(result.estimator.calibrator_, "shift_", None)
    facts: dict[str, Any] = {"likelihood ratio": setup.describe()}
    items: list[tuple[str, Any]] = []
    if shift is not None:
        mean = shift.total / shift.n if shift.n else float("nan")
        limit = finite_ratio_limit(shift.total, result.alpha) / mean
        facts.update(
            {
                "conformal points weighted": shift.n,
                "ESS (sum w)^2 / sum w^2": shift.ess,
                "largest weight share": shift.max_share,
                "largest finite w(x) / mean w": limit,
            }
        )
        items += [
            ("Weighted points", shift.n),
            ("ESS", shift.ess),
            ("Largest weight share", shift.max_share),
            ("Finite w(x) up to", f"{_fmt(limit)} x mean"),
        ]
    last = result._last_predict or {}
    if setup.estimated:
        t = setup.target
        facts.update(
            {
                "target rows (shift=)": t["rows"],
                "target share outside calibration range": t["outside_range"],
                "target share at the probability clip": t["at_clip"],
            }
        )
        items += [
            ("Target rows", t["rows"]),
            ("Outside calib. range", t["outside_range"]),
            ("At prob. clip", t["at_clip"]),
        ]
    elif "shift" in last:
        outside = _share(last["shift"]["outside_range"], last["n"])
        forced = _share(last["shift"]["forced_infinite"], last["n"])
        facts.update({"last predict rows": last["n"], "last predict share outside calibration range": outside})
        items += [("Last predict rows", last["n"]), ("Outside calib. range", outside)]
        if forced is not None:
            facts["last predict share with w(x) forcing +inf"] = forced
            items.append(("w(x) forcing +inf", forced))
    s.add_section("shift", two_column_table(items, title="Covariate shift"), pd.DataFrame({"value": facts}))
    notes = [
        f"Likelihood ratio w(x) = dP_target / dP_calibration: {setup.describe()}.",
        "The conformal points are weighted by their ratios; a row whose own ratio exceeds the largest finite w(x) "
        "gets an infinite threshold (an infinite interval; for prediction sets, every class) whatever the "
        "scores. ESS: Kish's effective number of conformal points. "
        "'Outside calib. range': a design column beyond the calibration rows' range (extrapolation)"
        + (", among the shift= rows" if setup.estimated else ", among the last predict's rows")
        + (
            "; 'At prob. clip': shift= rows the classifier calls target with probability >= 1 - clip."
            if setup.estimated
            else "."
        ),
    ]
    message = None if shift is None else too_small_ess_message(shift.ess, result.alpha)
    if message:
        notes.append("WARNING: " + message)
    s.tables.append(text_table(notes))

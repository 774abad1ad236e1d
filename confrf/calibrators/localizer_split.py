"""How LCP-RF splits its calibration rows between the forest and the conformal points, and its options' checks.

Every rule here reads sizes and settings only, never a score: the split is then independent of the
conformal points' scores, which keeps the guarantee exact (docs/theory.md, "What the forest learns from").
``lcp_rf.py`` reads the gate and the split through this module (not copies of the names), so a benchmark or a
test that patches them here changes what the calibrator does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np

from .._validation import alpha_fraction
from ..exceptions import InputError

#: a tuned honest LCP-RF localizes only from MIN_LOCALIZER_ALPHA / alpha localizer points on (100 at alpha = 0.1)
MIN_LOCALIZER_ALPHA = 10


def min_localizer_points(alpha: float) -> int:
    """Smallest localizer part with which a tuned honest LCP-RF tries to localize: ceil(10 / alpha).

    Below it the localizer part is too small for a forest to beat split conformal (benchmarks/bench_small.py
    before the rule: with 48-92 localizer points, LCP-RF's median width was 2-7 % above split conformal's on four
    of seven small data sets, most of it the cost of calibrating on half the points, and measurably narrower on
    none). The rule
    reads the sizes only, never a score, so using every calibration point for split conformal keeps the guarantee
    exact.
    """
    return math.ceil(MIN_LOCALIZER_ALPHA / alpha_fraction(alpha))


def localizer_rows_with_training(n: int, n_training: int, localizer_size: float, alpha: float) -> int:
    """Localizer rows of ``n`` calibration rows when ``n_training`` training rows can also teach the forest.

    ``localizer_size * n`` scaled by n / (n + n_training), the calibration rows' share of all the rows that can
    teach the forest: the training rows carry the learning at small n, so more calibration rows become conformal
    points; at least min(localizer_size * n, 3 ceil(10 / alpha)) rows, so the sources can be compared. Read from
    sizes only, never a score, so the split keeps the guarantee exact.
    """
    full = int(round(localizer_size * n))
    share = int(round(localizer_size * n * n / (n + n_training)))
    return max(1, min(full, max(share, 3 * min_localizer_points(alpha))))


#: the localizer part when the training check rejects (or does not run): "calibration" (the default) gives it at
#: least the rows the calibration rows alone would give (gated_localizer_rows): training rows that do not look like
#: the calibration rows should not shrink the part the forest can learn from (under the paper's hole, the fitted
#: LCP-RF then equals the prefit one; docs/benchmarks/peers.md). "training" keeps the smaller part sized for the
#: training rows (localizer_rows_with_training), the rule before. Either is read from sizes and the verdict only.
REJECTED_LOCALIZER = "calibration"


def rejected_localizer_rows(n_loc: int, n: int, localizer_size: float, max_localizer_size: int | None) -> int:
    """Localizer rows of ``training_split`` when the training check does not pass (``REJECTED_LOCALIZER``)."""
    if REJECTED_LOCALIZER == "training":
        return n_loc
    return max(n_loc, gated_localizer_rows(n, localizer_size, max_localizer_size))


def training_split(
    n: int,
    n_loc: int,
    n_ref: int,
    alpha: float,
    rng: np.random.Generator,
    check: Callable[[np.ndarray], str | None],
    n_loc_rejected: int,
) -> tuple[np.ndarray, np.ndarray, str | None]:
    """The localizer part, the conformal points and the training check's verdict, for "auto" with a training part.

    One random permutation of the calibration rows; its first ceil(10 / alpha) rows (at most ``n_loc``) are the
    *check part*: while they are fewer than the ``n_ref`` training rows, ``check`` (given their indices; the
    calibrator's call of :func:`confrf.localizers.sources.training_check`) compares them with the training part's
    out-of-fold scores. If the check passes (a reason string), the forest grows on the training part and the check
    part is the localizer part: every other row is a conformal point. Otherwise the first ``n_loc_rejected`` rows of
    the same permutation (:func:`rejected_localizer_rows`: the calibration rows' own part by default) are the
    localizer part and the sources are compared on them. The verdict reads
    the check part and the training part only, and the rows added to the localizer part are fixed positions of the
    permutation, drawn before any score is read: given the training part and the localizer part, the conformal
    points are i.i.d. with a test point, so Guan's guarantee stays exact (docs/theory.md, "What the forest learns
    from").
    """
    perm = rng.permutation(n)
    n_check = min(min_localizer_points(alpha), n_loc)
    passed = check(np.sort(perm[:n_check])) if n_check < n_ref else None
    n_first = n_check if passed is not None else n_loc_rejected
    if n_first < 2:
        raise InputError(
            f"the localizer part has {n_first} point(s); give more calibration data or a larger localizer_size."
        )
    return np.sort(perm[:n_first]), np.sort(perm[n_first:]), passed


#: ``localizer_data="auto"`` (the default) lets the training rows compete only while the localizer part that the
#: calibration rows alone would give (``localizer_size * n``, capped) is below this many rows. Below it the training
#: rows helped on the exact conditional-coverage benchmark (docs/benchmarks/condcov.md: n_cal 500-4,000, localizer
#: parts of 250-2,000 rows); with 8,000 localizer rows the calibration rows alone were best, and at the real data
#: sets' sizes (California, diamonds: 5,000-13,000 localizer rows) the out-of-fold fits and three source tunings
#: made the fit 3-5 times slower. Read from sizes only, never a score: the gate keeps the guarantee exact.
TRAINING_GATE = 2_500


def gated_localizer_rows(n: int, localizer_size: float, max_localizer_size: int | None) -> int:
    """The localizer part the calibration rows alone give (``localizer_size * n``, capped): what the gate reads."""
    rows = int(round(localizer_size * n))
    return rows if max_localizer_size is None else min(rows, max_localizer_size)


#: ``max_localizer_size="auto"``: the forest grows on at most this many rows (its growing cost is bounded; the
#: other rows become conformal points). At the peer benchmark's sizes and up to 100,000 calibration rows with
#: ``localizer_size=0.5`` it does not bind.
MAX_LOCALIZER_POINTS = 50_000


def check_max_localizer_size(value: Any) -> int | None:
    """``max_localizer_size``: "auto" (MAX_LOCALIZER_POINTS), None (no cap) or an integer >= 2."""
    if isinstance(value, str) and value == "auto":
        return MAX_LOCALIZER_POINTS
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)) or value < 2:
        raise InputError(
            f"max_localizer_size must be 'auto' ({MAX_LOCALIZER_POINTS:,} rows), None (no cap) or an integer >= 2, "
            f"got {value!r}: it caps the rows that grow the forest (the rest are conformal points)."
        )
    return int(value)


#: which population LCP-RF's forest tuning scores candidates for under covariate shift
SHIFT_TUNING = ("calibration", "target")


def check_shift_tuning(value: Any) -> str:
    """``shift_tuning``: "calibration" or "target", with an error that names both."""
    if not isinstance(value, str) or value not in SHIFT_TUNING:
        raise InputError(
            f"shift_tuning must be 'calibration' (the forest's tuning ignores the likelihood ratios) or 'target' "
            f"(it scores candidate forests by the target population's loss), got {value!r}."
        )
    return value


#: where the forest is grown: "auto" (chosen from data among the next two and both pooled: localizers/sources.py),
#: "calibration" (a localizer share of it) or "training" (out-of-fold scores)
LOCALIZER_DATA = ("auto", "calibration", "training")


def check_localizer_data(value: Any) -> str:
    """``localizer_data``: one of LOCALIZER_DATA, with an error that names them."""
    if not isinstance(value, str) or value not in LOCALIZER_DATA:
        raise InputError(f"localizer_data must be one of {list(LOCALIZER_DATA)}, got {value!r}.")
    return value

"""Leaf size, max_features and score scale of the forest localizer chosen from data (``"tune"``).

Candidates (leaf sizes ceil(sqrt(n)), half of it, ... down to ``MIN_LEAF``,
times max_features in ``FEATURE_SHARES``, times the score scales: the raw
scores and the scores divided by the forest's own prediction; then the two
leaf sizes a factor sqrt(2) either side of the first choice, with its
max_features and scale; then "screened" at the leaf chosen so far and at the
sqrt rule's, with every scale: every split tries the columns a first forest
of the growing fold finds relevant, :mod:`confrf.localizers.screening`) are
compared by a simulated honest
LCP-RF calibration run inside the data the forest is grown on (the
*localizer part*) and nowhere else: a forest of ``TUNE_TREES`` trees is grown
on a third of it, each of the other two thirds is indexed as the conformal
points in turn and the other one is predicted as test points with the exact
LCP-RF thresholds (the same Cython kernels as the real calibration;
``TUNE_FOLDS`` other than 3: one fold grows, each other fold is the test fold
once with the rest as conformal points). A
candidate's score is the mean over those test points of the half interval
score in score units (a scaled candidate's thresholds are multiplied back by
its sigma(x)),

    t(x) + (1/alpha) (V - t(x))_+,

the proper scoring rule of the conditional (1 - alpha)-quantile of the score
(for ``|y - mu|`` it is half of Gneiting and Raftery's interval score);
infinite thresholds count as twice the largest tuning score and candidates
with more than ``MAX_INFINITE`` infinite intervals are set aside when another
one has fewer. A candidate replaces the sqrt rule (with the first max_features)
only when it beats it by more than one standard error of the paired
per-point differences. The conformal points never enter, so Guan's finite-sample
guarantee is exact whatever is chosen: the forest is a fixed function of data
independent of the conformal and test points. Below ``ROTATE_BELOW`` tuning
points, where one random split decides noisily, a choice that leaves the
sqrt rule (after the grid, or else after the screened stage) is checked:
every candidate is simulated again with each of the other two thirds
growing the tuning forest, a point's loss becomes its mean
over the two simulations it is a test point in, and the choice is made again
(three times the cost of a tuning that is cheap there, and only when it would
move the forest away from the sqrt rule).

A tuning fold is as large as the growing third, so a tuning leaf of ``m``
growing points holds about ``m`` conformal points; a candidate leaf size is
simulated with the leaf size that gives its leaves the conformal mass they
will have in the final forest (``conformal_ratio``: 1 with the default
``localizer_size=0.5``), the mass that decides how often LCP's interval is
infinite. At large n the tuning runs on a random subsample of
``MAX_TUNE_POINTS`` points, which bounds its cost.

Under covariate shift (``ratio``: the likelihood ratios w(x) of the localizer
points, docs/theory.md "Covariate shift") the simulation is the weighted
calibration the forest will serve: the conformal folds carry their ratios,
the thresholds are the weighted LCP-RF ones (with each test point's own
w(x)), and each test point's loss and infinite interval count w(x) / mean(w)
times, an importance-weighted estimate of the target population's loss.
The ratios are read at localizer points only, so the forest stays a function
of data disjoint from the conformal points. Equal ratios are the unweighted
tuning exactly.

*No localization* (``pooled=True``, LCP-RF's default, where the leaf size is
tuned) is one more candidate: every localizer point in one leaf, so the LCP
weights are uniform and LCP-RF's threshold is split conformal's on the
conformal points. It needs no forest; in the simulation its threshold on each
conformal fold is the ceil((1 - alpha)(n + 1))-th smallest score. The
localized choice above is kept only if its mean loss is lower
(``NO_LOCALIZATION_SE``: zero paired standard errors; at most ``MAX_INFINITE``
infinite intervals); otherwise, and when the localizer part is too small to
simulate a calibration, no localization is chosen. Zero, not the two used
until issue 36: judged by exact conditional coverage
(``benchmarks/bench_condcov.py``, docs/benchmarks/condcov.md "Choosing the
rule"), a margin kept split conformal's intervals where the noise depends on x
(a heavy-tailed model with 500 calibration rows: mean |CC - 0.9| 0.065 with
two, 0.052 with zero on the calibration rows alone), while on a model whose
noise does not depend on x no margin cost nothing: a forest chosen there by
chance has large leaves and thresholds close to split conformal's. Like
every other choice it reads the localizer part only, so the guarantee is
unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._parallel import kernel_threads
from .._validation import min_calibration_size, required_count
from ..shift.weighted import weighted_requirement
from . import screening
from .screening import SCREENED
from .tuning_result import ForestTuning
from .weighted import ForestShiftIndex, weighted_forest_thresholds

#: the value of ``min_samples_leaf`` that asks for tuning
TUNE = "tune"
#: most localizer points used for tuning (a random subsample above): bounds its cost at large n
MAX_TUNE_POINTS = 12_000
#: trees of each tuning forest (the final forest has ``n_estimators``)
TUNE_TREES = 15
#: candidates above this share of infinite intervals are set aside if another has fewer
MAX_INFINITE = 0.01
#: smallest candidate leaf size
MIN_LEAF = 3
#: a candidate replaces the baseline only if it beats it by this many paired standard errors
SE_RULE = 1.0
#: the localized choice replaces no localization only if it beats it by this many paired standard errors. Two until
#: issue 36 (the choice is the best of many candidates: on noise that does not depend on x one standard error was
#: reached by chance in 11 of 44 fits); judged by exact conditional coverage (benchmarks/bench_condcov.py,
#: docs/benchmarks/condcov.md "Choosing the rule") any margin kept split conformal where the noise depends on x, and
#: none cost nothing where it does not: the lower mean held-out loss decides
NO_LOCALIZATION_SE = 0.0
#: below this many tuning points, a choice that leaves the sqrt rule is made again with every third growing in turn
ROTATE_BELOW = 3000
#: equal folds of the tuning points: one grows a tuning forest, the others are conformal and test folds in turn
TUNE_FOLDS = 3
#: max_features tried when it is "tune": all features, and a third of them (the usual regression-forest choice)
FEATURE_SHARES = (1.0, 1.0 / 3.0)


def leaf_candidates(n_grow: int, top: int) -> list[int]:
    """Geometric grid top, top/2, top/4, ... down to MIN_LEAF (``top``: the sqrt rule)."""
    out, m = [], float(top)
    while m >= MIN_LEAF:
        out.append(int(round(m)))
        m /= 2.0
    return sorted(set(min(c, max(1, n_grow)) for c in out or [top]))


def feature_candidates(p: int) -> list[float | str]:
    """FEATURE_SHARES without those that try the same number of features on p columns, then "screened".

    "screened" (:mod:`confrf.localizers.screening`) is tried from
    ``SCREEN_MIN_FEATURES`` columns on.
    """
    seen, out = set(), []
    for share in FEATURE_SHARES:
        k = max(1, int(share * p))
        if k not in seen:
            seen.add(k)
            out.append(share)
    return out + ([SCREENED] if p >= screening.SCREEN_MIN_FEATURES else [])


def half_interval_score(t: np.ndarray, v: np.ndarray, alpha: float, cap: float) -> np.ndarray:
    """t + (1/alpha)(v - t)_+ per point, an infinite t counted as ``cap``."""
    t = np.where(np.isinf(t), cap, t)
    return t + np.maximum(v - t, 0.0) / alpha


def tune_forest(
    X: np.ndarray,
    V: np.ndarray,
    *,
    alpha: float,
    leaves: list[int],
    max_features: list[Any],
    forest_kwargs: dict[str, Any],
    random_state: int | None,
    n_jobs: int | None,
    conformal_ratio: float = 1.0,
    scales: list[str] | None = None,
    make_localizer: Callable[..., Any],
    ratio: np.ndarray | None = None,
    pooled: bool = False,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    source: str = "calibration",
    n_splits: int | None = None,
    baseline: int | None = None,
) -> ForestTuning:
    """Choose (min_samples_leaf, max_features, scale) for a forest grown on (X, V) by simulated LCP-RF calibrations.

    Every triple of ``leaves`` x ``max_features`` x ``scales`` (default
    ``["none"]``) is a candidate, and then (when ``leaves`` has several sizes)
    the :func:`refined_leaves` of the triple chosen among them, with its
    max_features and scale; the choice is made again over all. "screened"
    among several ``max_features`` is not in that grid but a last stage (from
    ``SCREEN_MIN_POINTS`` growing points on): the leaf chosen so far and the
    largest leaf, with every scale, each simulation screening its own
    growing fold. Below ``ROTATE_BELOW`` points, a choice that leaves the
    largest leaf is rechecked over every split into folds, once. The triple of
    the largest leaf and the first ``max_features`` and scale is kept when
    the data are too few to simulate a calibration. The scales of one
    (leaf, max_features) share one tuning forest.
    ``forest_kwargs``: the other settings of the final forest (max_depth,
    bootstrap). ``conformal_ratio``: conformal points per growing point of
    the final forest (1 for ``localizer_size=0.5``); a candidate leaf ``m``
    is simulated with ``m * conformal_ratio / (TUNE_FOLDS - 2)`` growing points per leaf (the
    conformal folds are TUNE_FOLDS - 2 times as large as the growing one), so its
    tuning leaves hold as many conformal points as the final ones will.
    ``ratio``: likelihood ratios of the rows of X (covariate shift): the
    simulations are weighted calibrations and the losses the target
    population's (module docstring); None or equal ratios: unweighted.
    ``pooled``: also compare no localization at all (every point in one
    leaf: split conformal's threshold), which the localized choice must
    beat by the same rule; it is also the choice when the data are too few
    to simulate a calibration.
    Deterministic given ``random_state``; ``n_jobs`` only parallelizes.
    ``make_localizer``: the localizer class (keyword settings in, ``grow``,
    ``index``, ``thresholds`` and a settable ``scale_``), passed in by
    :class:`confrf.localizers.forest.ForestLocalizer` so that this module
    does not import it back.
    ``reference`` (rows disjoint from the conformal points, e.g. the training
    part's out-of-fold scores) and ``source``: the simulated forests grow on
    the growing fold ("calibration"), on ``reference`` ("training") or on
    both ("pooled"); the conformal and test folds stay X's, so tunings of one
    X with the same ``random_state`` score the same test points
    (``ForestTuning.losses``) whatever they grew on.
    ``conformal_ratio`` is then conformal points per growing point of the
    final forest grown on that source. ``n_splits`` (1 or TUNE_FOLDS): simulate
    over that many splits into folds from the start, even a single candidate
    (to score a setting chosen elsewhere on the same test points).
    ``baseline``: the leaf size the others must beat (default: the largest of
    ``leaves``); larger leaves are then challengers like the smaller ones.
    """
    if source not in ("calibration", "training", "pooled") or (source != "calibration") != (reference is not None):
        raise ValueError(f"source {source!r} needs reference rows exactly when it is not 'calibration'")
    scales = ["none"] if scales is None else list(scales)
    # "screened" among other max_features is a later stage (below), not part of the grid
    grid_mf = [f for f in max_features if f != SCREENED] or [SCREENED]
    screen_later = SCREENED in max_features and grid_mf != [SCREENED]
    # the baseline leaf first (the fallback; by default the largest); then the others from large to small, so that
    # among equal scores the choice closest to the sqrt rule wins
    base = max(leaves) if baseline is None or baseline not in leaves else int(baseline)
    order = [base] + [m for m in sorted(leaves, reverse=True) if m != base]
    cands = [(int(m), f, sc) for f in grid_mf for m in order for sc in scales]
    n = X.shape[0]
    rng = np.random.default_rng(random_state)
    use = rng.permutation(n)[: min(n, MAX_TUNE_POINTS)]
    n_t = use.shape[0]
    Xu, Vu = X[use], V[use]
    wu = _tuning_ratios(ratio, n, use)
    # each test point's loss counts w(x) / mean(w) times: the target population's mean loss (1 when unweighted)
    lw = np.ones(n_t) if wu is None else wu / float(np.mean(wu))
    k = TUNE_FOLDS
    folds = [np.arange(n_t)[r * n_t // k : (r + 1) * n_t // k] for r in range(k)]
    # (growing fold, [(conformal folds, test fold), ...]): the first split, then at small n the others (ROTATE_BELOW)
    plans = [_plan(folds, r) for r in range(k)]
    n_conf = min(conf.shape[0] for conf, _ in plans[0][1])
    no_loc = (n, grid_mf[0], "none") if pooled else None  # every localizer point in one leaf; nothing to scale
    too_few = n_conf < max(min_calibration_size(alpha), 2 * math.ceil(1 / alpha))
    if too_few and no_loc is not None:
        reason = f"{n} localizer points are too few to simulate a calibration at alpha={alpha:g}: no localization"
        return ForestTuning(
            (no_loc,),
            (float("nan"),),
            (float("nan"),),
            no_loc,
            n_t,
            reason=reason,
            weighted=wu is not None,
            pooled=no_loc,
            source=source,
        )
    if too_few or (len(cands) == 1 and no_loc is None and n_splits is None):
        reason = (
            f"{n} localizer points are too few to simulate a calibration at alpha={alpha:g}"
            if too_few
            else "a single candidate"
        )
        return ForestTuning(
            (cands[0],),
            (float("nan"),),
            (float("nan"),),
            cands[0],
            n_t,
            reason=reason,
            weighted=wu is not None,
            source=source,
        )
    cap = 2.0 * float(np.max(Vu))
    seed = int(rng.integers(0, 2**31 - 1))
    n_ref = 0 if reference is None else int(reference[0].shape[0])

    def growing_rows(grow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # what the simulated forest grows on: the growing fold, the reference rows, or both
        if reference is None:
            return Xu[grow], Vu[grow]
        if source == "training":
            return reference
        return np.vstack([Xu[grow], reference[0]]), np.concatenate([Vu[grow], reference[1]])

    # candidate -> [sum of its per-point losses, simulations per point, infinite thresholds]
    acc: dict[tuple[int, Any, str], list[Any]] = {}
    screened: dict[int, np.ndarray] = {}  # the screened columns of each growing fold, by its first point

    def simulate(m: int, mf: Any, scs: list[str], splits: list[tuple[np.ndarray, list[Any]]]) -> None:
        # conformal points per tuning leaf as in the final forest: k - 2 conformal folds per growing fold; a
        # reference source grows on other rows, so its leaves are scaled by its growing rows per conformal point
        grown = folds[0].shape[0] if reference is None else n_ref + (folds[0].shape[0] if source == "pooled" else 0)
        m_t = max(1, int(round(m * conformal_ratio * (1 / (k - 2) if reference is None else grown / n_conf))))
        for sc in scs:
            acc.setdefault((m, mf, sc), [np.zeros(n_t), np.zeros(n_t), 0])
        for grow, roles in splits:
            # screening is part of the candidate's procedure: it sees the growing fold only, as the final
            # forest's screening sees the localizer part only (one screening per growing fold, whatever the leaf)
            fold = int(grow[0])  # the folds are consecutive ranges of the tuning points
            Xg, Vg = growing_rows(grow)
            if mf == SCREENED and fold not in screened:
                screened[fold] = screening.screen_features(Xg, Vg, seed, n_jobs)
            cols = screened[fold] if mf == SCREENED else np.arange(Xu.shape[1])
            Xc = Xu[:, cols]
            # one forest for every scale: "forest" only adds the leaf means that give sigma(x)
            loc = make_localizer(
                n_estimators=TUNE_TREES,
                min_samples_leaf=m_t,
                max_features=1.0 if mf == SCREENED else mf,
                random_state=seed,
                n_jobs=n_jobs,
                scale="forest" if "forest" in scs else "none",
                **forest_kwargs,
            )
            loc.grow(Xg[:, cols], Vg)
            for conf, test in roles:
                for sc in scs:
                    loc.scale_ = sc
                    loc.index(Xc[conf], Vu[conf])
                    t = _simulated_thresholds(loc, Xc[test], alpha, conf, test, wu, n_jobs)
                    a = acc[(m, mf, sc)]
                    a[0][test] += half_interval_score(t, Vu[test], alpha, cap) * lw[test]
                    a[1][test] += 1
                    a[2] += float(np.sum(np.isinf(t) * lw[test]))

    def choice() -> tuple[list[np.ndarray], list[float], int]:
        # per point: the mean over the simulations it was a test point in (position order, the same for all)
        losses = [acc[c][0][acc[c][1] > 0] / acc[c][1][acc[c][1] > 0] for c in cands]
        infinite = [acc[c][2] / float(np.sum(acc[c][1] * lw)) for c in cands]
        return losses, infinite, _choose(losses, infinite)

    def simulate_all(splits: list[tuple[np.ndarray, list[Any]]]) -> None:
        by_forest: dict[tuple[int, Any], list[str]] = {}
        for m, mf, sc in cands:
            by_forest.setdefault((m, mf), []).append(sc)
        for (m, mf), scs in by_forest.items():
            simulate(m, mf, scs, splits)

    def recheck(splits: list[tuple[np.ndarray, list[Any]]]) -> list[tuple[np.ndarray, list[Any]]]:
        # leaving the sqrt rule must hold up when every third grows in turn (small n only, and only once)
        if len(splits) == 1 and n_t < ROTATE_BELOW and choice()[2] != 0:
            simulate_all(plans[1:])
            return plans
        return splits

    if n_splits is not None:  # scored over the splits another tuning used: no recheck
        splits = plans[: max(1, min(k, n_splits))]
        simulate_all(splits)
    else:
        simulate_all(plans[:1])
        splits = recheck(plans[:1])
    if len(leaves) > 1 and n_splits is None:
        # coarse to fine: the halving grid's choice, then its neighbours at a factor sqrt(2) (same features, scale)
        m0, mf0, sc0 = cands[choice()[2]]
        for m in refined_leaves(m0, leaves):
            if (m, mf0, sc0) not in cands:
                cands.append((m, mf0, sc0))
                simulate(m, mf0, [sc0], splits)
    if screen_later and folds[0].shape[0] >= screening.SCREEN_MIN_POINTS and n_splits is None:
        # the screened columns at the leaf chosen so far and at the sqrt rule's, with every scale
        for m in sorted({cands[choice()[2]][0], cands[0][0]}, reverse=True):
            cands.extend((m, SCREENED, sc) for sc in scales)
            simulate(m, SCREENED, scales, splits)
        splits = recheck(splits)
    losses, infinite, chosen = choice()
    best = cands[chosen]
    if no_loc is not None:
        # no localization: split conformal's threshold on each conformal fold; the localized choice must beat it
        a = acc.setdefault(no_loc, [np.zeros(n_t), np.zeros(n_t), 0])
        for _, roles in splits:
            for conf, test in roles:
                t = _split_thresholds(Vu, alpha, conf, test, wu)
                a[0][test] += half_interval_score(t, Vu[test], alpha, cap) * lw[test]
                a[1][test] += 1
                a[2] += float(np.sum(np.isinf(t) * lw[test]))
        seen = a[1] > 0
        losses.append(a[0][seen] / a[1][seen])
        infinite.append(a[2] / float(np.sum(a[1] * lw)))
        cands.append(no_loc)
        if _choose([losses[-1], losses[chosen]], [infinite[-1], infinite[chosen]], NO_LOCALIZATION_SE) == 0:
            best = no_loc
    scores = tuple(float(np.mean(x)) for x in losses)
    point_losses = {c: np.where(acc[c][1] > 0, acc[c][0] / np.maximum(acc[c][1], 1), np.nan) for c in cands}
    return ForestTuning(
        tuple(cands),
        scores,
        tuple(infinite),
        best,
        n_t,
        n_splits=len(splits),
        weighted=wu is not None,
        pooled=no_loc,
        source=source,
        losses=point_losses,
    )


def _tuning_ratios(ratio: np.ndarray | None, n: int, use: np.ndarray) -> np.ndarray | None:
    """The tuning points' likelihood ratios, or None when there are none or all are equal (the unweighted rule)."""
    if ratio is None:
        return None
    w = np.asarray(ratio, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError(f"ratio must hold {n} finite non-negative numbers, not all 0 (checked by the calibrator)")
    wu = w[use]
    return None if bool(np.all(wu == wu[0])) else wu


def _simulated_thresholds(
    loc: Any, X_test: np.ndarray, alpha: float, conf: np.ndarray, test: np.ndarray, wu: np.ndarray | None, n_jobs: Any
) -> np.ndarray:
    """The exact LCP-RF thresholds of a simulated calibration; the weighted rule when ``wu`` holds ratios."""
    threads = kernel_threads(n_jobs)
    if wu is None:
        return loc.thresholds(X_test, required_count(alpha, conf.shape[0]), n_threads=threads)[0]
    w_conf = wu[conf]
    shift_index = ForestShiftIndex.build(loc.index_, w_conf)
    req = weighted_requirement(alpha, float(np.sum(w_conf)), conf.shape[0], wu[test])
    return weighted_forest_thresholds(loc, shift_index, X_test, req, threads)[0]


def _plan(folds: list[np.ndarray], r: int) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Fold r grows the tuning forest; each other fold is the test fold once, the others its conformal points."""
    others = [folds[(r + j) % len(folds)] for j in range(1, len(folds))]
    return folds[r], [(np.concatenate([f for f in others if f is not t]), t) for t in others]


def refined_leaves(m: int, leaves: list[int]) -> list[int]:
    """Leaf sizes m / sqrt(2) and m * sqrt(2), kept within [min(leaves), max(leaves)] (the halving grid's range).

    The halving grid is too coarse where the interval score is flat-bottomed
    (peer benchmark: California, diamonds, bike sharing chose 9 where 6 was
    better); refining around its choice costs two simulations instead of
    doubling the grid.
    """
    lo, hi = min(leaves), max(leaves)
    out = [int(round(m / math.sqrt(2.0))), int(round(m * math.sqrt(2.0)))]
    return sorted({c for c in out if lo <= c <= hi and c != m})


def _choose(losses: list[np.ndarray], infinite: list[float], se_rule: float = SE_RULE) -> int:
    """Index of the chosen candidate; candidate 0 (the largest leaf, the first max_features and scale) is the baseline.

    Candidates with more than MAX_INFINITE infinite intervals are set aside
    (all but those with the fewest, if none is below). A candidate replaces
    the baseline only if its mean loss beats the baseline's by more than
    ``se_rule`` (one) standard errors of the paired per-point differences, so that noise at small
    n does not move the forest away from the sqrt rule; among those, the
    lowest mean loss wins (ties: the earlier candidate).
    """
    ok = [i for i, s in enumerate(infinite) if s <= MAX_INFINITE]
    if not ok:
        ok = [i for i, s in enumerate(infinite) if s == min(infinite)]
    if 0 in ok:

        def beats_baseline(i: int) -> bool:
            d = losses[i] - losses[0]
            return i == 0 or float(np.mean(d)) + se_rule * float(np.std(d, ddof=1)) / math.sqrt(d.shape[0]) < 0.0

        ok = [i for i in ok if beats_baseline(i)]
    return min(ok, key=lambda i: (float(np.mean(losses[i])), i))


def _split_thresholds(
    Vu: np.ndarray, alpha: float, conf: np.ndarray, test: np.ndarray, wu: np.ndarray | None
) -> np.ndarray:
    """Split conformal's threshold on the conformal fold for each test point (no localization); weighted with ``wu``."""
    ordered = np.sort(Vu[conf])
    if wu is None:
        need = required_count(alpha, conf.shape[0])
        return np.full(test.shape[0], ordered[need - 1] if need <= ordered.shape[0] else np.inf)
    by_score = np.argsort(Vu[conf], kind="stable")
    cum = np.cumsum(wu[conf][by_score])
    req = weighted_requirement(alpha, float(cum[-1]) if cum.size else 0.0, conf.shape[0], wu[test])
    j = np.searchsorted(cum, req, side="left")
    # the smallest score whose weight at or below it reaches the requirement; ties share the last cumulative weight
    t = np.full(test.shape[0], np.inf)
    found = j < cum.shape[0]
    t[found] = ordered[j[found]]
    return t

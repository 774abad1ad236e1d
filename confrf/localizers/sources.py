"""What LCP-RF's forest learns from, chosen from data: the localizer part, the training part, or both.

When the estimator was fitted on training rows (``localizer_data="auto"``,
the default), the training part's out-of-fold scores can teach the forest
as well as the localizer part of the calibration set: they are drawn from
the same population whenever the rows were split at random, and they are
many more than the localizer part at small n. They may also be unlike the
calibration rows (a training set with a hole, a ``calib=`` from elsewhere),
so the source is chosen by the same simulated calibrations that tune the
forest (:mod:`confrf.localizers.tuning`):

- "calibration": the simulated forest grows on a third of the localizer part
  (today's tuning);
- "training": it grows on the training part's out-of-fold scores;
- "pooled": on both.

First a check (:func:`training_check`, called by
``calibrators.localizer_split.training_split`` on the first ceil(10/alpha) rows of the
calibration set's permutation): while those rows are fewer than the training rows and their
scores look like the training part's out-of-fold scores (neither a two-sample
Kolmogorov-Smirnov test, nor the one-sided Mann-Whitney test that they are larger, nor the
one-sided Mann-Whitney test that their losses under a forest of the training part are larger
rejects at ``TRAINING_CHECK_LEVEL``), the forest grows on the training part, tuned on it alone, and every
other calibration row is a conformal point: no calibration row is spent comparing sources,
which at 500-1,000 calibration rows cost more than it found (docs/benchmarks/condcov.md,
"The training check"). Otherwise the localizer part is the usual one and:

Each source is tuned on its own rows (leaf size, max_features, scale and no
localization); then each source's choice is scored by simulated calibrations
on the same held-out localizer points (the localizer part's tuning folds; the
simulated forest grows on the growing fold, the training rows or both), and
the losses are compared point by point: the baseline (read from the sizes:
the training part while the localizer part is smaller than it, else
"calibration") is replaced only by a source that beats it by more than
``SOURCE_SE`` paired standard errors (then the lowest mean loss wins). A
training part unlike the calibration rows predicts the held-out localizer
points' scores badly and is left out.

Exactness. The forest and every choice read the training part (disjoint from
the calibration set) and the localizer part of the calibration set only; the
conformal points are the other calibration rows, never seen before they are
indexed. Given the training and localizer rows the forest is a fixed
partition, so the conformal points and a test point are exchangeable and
Guan's finite-sample guarantee holds exactly (docs/theory.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._validation import seed_entropy
from ._float32 import RankColumns
from .sigma_leaf import choose_sigma_leaf
from .tuning import (
    TUNE,
    TUNE_TREES,
    ForestTuning,
    feature_candidates,
    half_interval_score,
    leaf_candidates,
    tune_forest,
)

#: where the forest may grow
SOURCES = ("calibration", "training", "pooled")
#: another source replaces the baseline only if it beats it by this many paired standard errors
SOURCE_SE = 1.0
#: the training part is taken without comparing sources when the check part is the smaller and none of
#: :func:`training_check`'s three tests rejects at this level (None: always compare the sources on held-out
#: localizer rows)
TRAINING_CHECK_LEVEL: float | None = 0.01
#: normalized split conformal replaces the localized forest when the tuned leaves would hold fewer conformal
#: points than this many times 1/alpha (:func:`normalizes`; docs/benchmarks/condcov.md, "Seventh round")
NORMALIZED_LEAF_MASS = 5.0
#: the baseline while the localizer part is smaller than the training part (else "calibration"): the training part
#: alone (docs/benchmarks/condcov.md, "Choosing the rule": rule ``bt0`` against ``nl0``, whose baseline was "pooled")
SMALL_PART_BASELINE = "training"


@dataclass(frozen=True)
class SourceChoice:
    """The sources compared and the one the forest grew on.

    Attributes
    ----------
    chosen : str
        "calibration", "training" or "pooled"; what the final forest grew on.
    rows : dict
        Rows each source would grow the final forest on.
    scores : dict
        Mean held-out loss of each source's tuned choice over the localizer points scored by all
        (lower is better); NaN when the tunings could not simulate.
    localizes : dict
        Whether each source's tuning chose a localizing forest (else no localization).
    reason : str
        Why the chosen source won.
    """

    chosen: str
    rows: dict[str, int]
    scores: dict[str, float]
    localizes: dict[str, bool]
    reason: str

    def text(self) -> str:
        """One line for the summary: the rows, the source and why."""
        if not self.scores:
            return f"{self.chosen} ({self.rows[self.chosen]:,} rows): {self.reason}"
        parts = ", ".join(
            f"{s}{'*' if s == self.chosen else ''} ({self.rows[s]:,} rows): {self.scores[s]:.4g}"
            + ("" if self.localizes[s] else " [no localization]")
            for s in SOURCES
            if s in self.scores
        )
        return f"{self.chosen} ({self.rows[self.chosen]:,} rows): {self.reason}; held-out loss {parts}"


def _paired_beats(a: np.ndarray, b: np.ndarray, se_rule: float) -> bool:
    """Whether losses ``a`` beat ``b`` by more than ``se_rule`` standard errors of the paired differences."""
    d = a - b
    return float(np.mean(d)) + se_rule * float(np.std(d, ddof=1)) / math.sqrt(d.shape[0]) < 0.0


def choose(held_out: dict[str, np.ndarray | None], localizes: dict[str, bool], rows: dict[str, int]) -> SourceChoice:
    """The source to grow on, from each source's held-out losses on the localizer part (None: not simulated).

    The baseline is read from the sizes: ``SMALL_PART_BASELINE`` ("training") while the localizer part is
    smaller than the training part (the training rows carry the learning; the few held-out localizer rows
    rarely separate the sources by much, and pooling them in added little), else "calibration" (the simulated
    forests grow on a third of the localizer part, fewer rows than the final one, so the simulation understates
    it most). Another source replaces the baseline only if it beats it by more than SOURCE_SE paired standard
    errors, then the lowest mean loss wins.
    """
    if any(v is None for v in held_out.values()):
        reason = "the localizer part is too small to compare sources on held-out rows; the localizer part's rule"
        return SourceChoice("calibration", rows, dict.fromkeys(held_out, math.nan), localizes, reason)
    losses = {s: v for s, v in held_out.items() if v is not None}
    common = np.all([np.isfinite(v) for v in losses.values()], axis=0)
    scores = {s: float(np.mean(v[common])) for s, v in losses.items()}
    base = SMALL_PART_BASELINE if rows["calibration"] < rows["training"] else "calibration"
    better = [s for s in losses if s != base and _paired_beats(losses[s][common], losses[base][common], SOURCE_SE)]
    if not better:
        reason = (
            f"the baseline (read from the sizes); no other source beat it by {SOURCE_SE:g} paired s.e. on "
            "held-out localizer rows"
        )
        return SourceChoice(base, rows, scores, localizes, reason)
    best = min(better, key=lambda s: (scores[s], SOURCES.index(s)))
    reason = f"beat the baseline ({base}) by more than {SOURCE_SE:g} paired s.e. on held-out localizer rows"
    return SourceChoice(best, rows, scores, localizes, reason)


def grow_from_sources(
    loc: Any,
    X: np.ndarray,
    V: np.ndarray,
    X_ref: np.ndarray,
    V_ref: np.ndarray,
    n_conformal: int,
    checked: str | None = None,
) -> Any:
    """Tune ``loc`` (a ForestLocalizer) once per source and grow it on the chosen source's rows.

    ``X, V``: the localizer part of the calibration set; ``X_ref, V_ref``: the
    training part's out-of-fold scores; ``n_conformal``: the conformal points
    the forest will index (their leaf mass sets each source's simulated leaf
    sizes). The conformal points are not passed: nothing here can read them.

    Each source is tuned on its own rows (leaf size, max_features, scale and
    no localization, by :func:`confrf.localizers.tuning.tune_forest`); then
    each source's choice is scored on the same held-out localizer points
    (the calibration source's tuning folds: the simulated forests grow on the
    growing fold, on the training rows, or on both) and :func:`choose` picks.
    ``checked``: the training check's reason when it passed (``X, V`` are then the check part): only
    the training part is tuned, and the forest grows on it.
    """
    from .forest import SCALES, ForestLocalizer, auto_min_samples_leaf, check_scale

    t0 = time.perf_counter()
    if X.shape[1] != X_ref.shape[1]:
        raise ValueError("the localizer and training rows must have the same columns")
    pooled_X, pooled_V = np.vstack([X, X_ref]), np.concatenate([V, V_ref])
    growing = {"calibration": (X, V), "training": (X_ref, V_ref), "pooled": (pooled_X, pooled_V)}
    loc.rank_columns_ = RankColumns.learn(pooled_X)  # from rows disjoint from the conformal points
    loc.columns_, loc.n_columns_, loc.skipped_ = None, int(X.shape[1]), None
    tree_X = {s: loc._tree_input(Xs) for s, (Xs, _) in growing.items()}
    msl, mf, scale = loc.min_samples_leaf, loc.max_features, check_scale(loc.scale)
    # None: one seed from numpy's global generator for every draw below (np.random.seed reproduces it)
    seed = seed_entropy(loc.random_state)
    common = {
        "alpha": loc.alpha,
        "random_state": seed,  # the same folds of the localizer part for every simulation
        "n_jobs": loc.n_jobs,
        "forest_kwargs": {
            "max_depth": loc.max_depth,
            "bootstrap": loc.bootstrap,
            "max_samples": loc.max_samples,
            "forest_backend": loc.forest_backend,
        },
        "make_localizer": ForestLocalizer,
    }
    rows = {s: int(Xs.shape[0]) for s, (Xs, _) in growing.items()}
    check = checked  # the training check passed (localizer_split.training_split): only the training part is tuned
    tunings: dict[str, ForestTuning] = {}
    for source, (Xs, Vs) in growing.items():  # each source tuned on its own rows
        if check is not None and source != "training":
            continue
        n_s = Xs.shape[0]
        top = auto_min_samples_leaf(n_s) if isinstance(msl, str) else int(msl)
        tunings[source] = tune_forest(
            tree_X[source],
            Vs,
            leaves=leaf_candidates(n_s, top) if msl == TUNE else [top],
            baseline=top,
            max_features=feature_candidates(X.shape[1]) if mf == TUNE else [mf],
            scales=list(SCALES) if scale == TUNE else [scale],
            conformal_ratio=n_conformal / n_s,
            pooled=msl == TUNE,
            **common,
        )
    if check is not None:
        choice = SourceChoice("training", rows, {}, {"training": tunings["training"].localizes}, check)
        why = normalizes(loc, tunings["training"], n_conformal, rows["training"])
        return _grow_choice(loc, tunings["training"], choice, growing, X, V, seed, t0, normalized=why)
    base = tunings["calibration"]
    held_out: dict[str, np.ndarray | None] = {}
    if base.reason or base.losses is None:
        held_out = dict.fromkeys(growing)
    else:
        no_loc = base.losses[base.pooled] if base.pooled is not None else None
        held_out["calibration"] = base.losses[base.chosen]
        for source in ("training", "pooled"):
            t = tunings[source]
            if not t.localizes or t.reason:
                held_out[source] = no_loc if not t.localizes else None
                continue
            m, f, sc = t.chosen
            ev = tune_forest(
                tree_X["calibration"],
                V,
                leaves=[m],
                max_features=[f],
                scales=[sc],
                conformal_ratio=n_conformal / growing[source][0].shape[0],
                reference=(tree_X["training"], V_ref),
                source=source,
                n_splits=base.n_splits,
                **common,
            )
            held_out[source] = None if ev.losses is None else ev.losses[t.chosen]
    choice = choose(held_out, {s: t.localizes for s, t in tunings.items()}, rows)
    return _grow_choice(loc, tunings[choice.chosen], choice, growing, X, V, seed, t0)


def normalizes(loc: Any, tuning: ForestTuning, n_conformal: int, n_grow: int) -> str | None:
    """Why the forest grown on the training part should give sigma(x) only (None: localize as tuned).

    With the leaf size and the scale tuned (the defaults) and a tuning that chose to localize, the chosen leaves
    hold about ``leaf * n_conformal / n_grow`` conformal points. Below ``NORMALIZED_LEAF_MASS / alpha`` (fewer
    than five expected scores above a leaf's 1 - alpha quantile) each leaf's quantile is too noisy, and
    normalized split conformal does better: every conformal point weighs the same, on V / sigma(x), sigma a
    forest of the training part's scores (leaves of the sqrt rule, every column). Exact conditional coverage
    of both on 5 models at 500-16,000 calibration rows: docs/benchmarks/condcov.md, "Seventh round". Reads
    sizes and the training part's tuning only, so the conformal points stay unseen.
    """
    if loc.min_samples_leaf != TUNE or loc.scale != TUNE or not tuning.localizes or tuning.reason:
        return None
    mass = tuning.chosen[0] * n_conformal / max(n_grow, 1)
    need = NORMALIZED_LEAF_MASS / loc.alpha
    if mass >= need:
        return None
    return (
        f"the tuned leaves ({tuning.chosen[0]} training rows) would hold about {mass:.0f} of the {n_conformal:,} "
        f"conformal points, below {NORMALIZED_LEAF_MASS:g}/alpha = {need:.0f}: too few for a leaf's own quantile"
    )


def training_check(
    X: np.ndarray,
    V: np.ndarray,
    X_ref: np.ndarray,
    V_ref: np.ndarray,
    alpha: float,
    random_state: Any = None,
    n_jobs: Any = None,
) -> str | None:
    """Why the training part is taken without comparing sources (None: compare them).

    ``X, V``: the check part of the calibration set; ``X_ref, V_ref``: the training part with its out-of-fold
    scores. Passes (a reason string) while the check part is the smaller, ``TRAINING_CHECK_LEVEL`` is set and no
    test rejects at that level: the two-sample Kolmogorov-Smirnov test of the check part's scores against the
    training part's; the one-sided Mann-Whitney test that they are larger (a training part with a hole: the base
    model has not seen rows like some calibration rows, whose scores are larger); and the one-sided Mann-Whitney
    test that, in an LCP-RF calibration simulated on the training part alone (a forest grown on a third of it, the
    next third its conformal points), the check part's losses are larger than the last third's (scores that depend
    on x otherwise than the training part's: the same marginal law, another conditional one). Reads the check part
    and the training part only.
    """
    if TRAINING_CHECK_LEVEL is None or V.shape[0] >= V_ref.shape[0]:
        return None
    from scipy.stats import ks_2samp, mannwhitneyu

    p_ks = float(ks_2samp(V, V_ref).pvalue)
    p_mw = float(mannwhitneyu(V, V_ref, alternative="greater").pvalue)
    if min(p_ks, p_mw) < TRAINING_CHECK_LEVEL:
        return None
    p_x = _conditional_check(X, V, X_ref, V_ref, alpha, random_state, n_jobs)
    if p_x < TRAINING_CHECK_LEVEL:
        return None
    return (
        f"the check part's {V.shape[0]:,} rows look like the training part (scores: Kolmogorov-Smirnov p = "
        f"{p_ks:.2g}, Mann-Whitney p = {p_mw:.2g} that they are larger; losses of a forest of the training part: "
        f"p = {p_x:.2g} that they are larger; all >= {TRAINING_CHECK_LEVEL:g}): sources not compared"
    )


def _conditional_check(
    X: np.ndarray, V: np.ndarray, X_ref: np.ndarray, V_ref: np.ndarray, alpha: float, random_state: Any, n_jobs: Any
) -> float:
    """One-sided Mann-Whitney p-value that the check rows' losses exceed held-out training rows' (training_check)."""
    from scipy.stats import mannwhitneyu

    from .._validation import required_count
    from .forest import ForestLocalizer, auto_min_samples_leaf

    seed = seed_entropy(random_state)
    perm = np.random.default_rng(seed).permutation(V_ref.shape[0])
    grow, conf, test = np.array_split(perm, 3)
    loc = ForestLocalizer(
        n_estimators=TUNE_TREES,
        min_samples_leaf=auto_min_samples_leaf(grow.shape[0]),
        max_features=1.0,
        random_state=seed,
        n_jobs=n_jobs,
        scale="none",
    )
    loc.grow(X_ref[grow], V_ref[grow])
    loc.index(X_ref[conf], V_ref[conf])
    need = required_count(alpha, conf.shape[0])
    cap = 2.0 * float(max(np.max(V_ref), np.max(V)))
    own = half_interval_score(loc.thresholds(X_ref[test], need)[0], V_ref[test], alpha, cap)
    check = half_interval_score(loc.thresholds(X, need)[0], V, alpha, cap)
    return float(mannwhitneyu(check, own, alternative="greater").pvalue)


def _grow_choice(
    loc: Any,
    tuning: ForestTuning,
    choice: SourceChoice,
    growing: dict,
    X: np.ndarray,
    V: np.ndarray,
    seed: Any,
    t0: float,
    normalized: str | None = None,
) -> Any:
    """Grow ``loc`` on the chosen source with its tuning's settings (no localization: one leaf of L;
    ``normalized``, why: a forest for sigma(x) only, with every feature unless given, and the leaf
    :func:`confrf.localizers.sigma_leaf.choose_sigma_leaf` picks on the growing rows)."""
    from .forest import auto_min_samples_leaf

    loc.tuning_ = replace(tuning, losses=None)  # the per-point losses are not kept in the fitted object
    loc.source_choice_ = choice
    loc.tune_seconds_ = time.perf_counter() - t0
    if normalized is not None:
        Xs, Vs = growing[choice.chosen]
        mf = 1.0 if loc.max_features == TUNE else loc.max_features
        # out of bag on the growing rows alone (the training part): the conformal points stay unseen
        sigma = choose_sigma_leaf(loc._tree_input(Xs), Vs, auto_min_samples_leaf(Xs.shape[0]), mf, seed, loc.n_jobs)
        loc.grow_chosen(Xs, Vs, sigma.chosen, mf, "forest", seed, normalized)
        loc.sigma_leaf_ = sigma
        return loc
    if not tuning.localizes:
        # no localization: every localizer point in one leaf (the forest reads nothing; split conformal's thresholds)
        return loc.grow_chosen(X, V, X.shape[0], tuning.chosen[1], "none", seed)
    Xs, Vs = growing[choice.chosen]
    m, f, sc = tuning.chosen
    return loc.grow_chosen(Xs, Vs, m, f, sc, seed)

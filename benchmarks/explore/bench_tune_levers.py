#!/usr/bin/env python
"""Fast loop for the forest-tuning levers of LCP-RF (issue 12): LCP-RF variants next to the best peer.

Usage (from the repository root)::

    python benchmarks/explore/bench_tune_levers.py --datasets california diamonds toy --seeds 3
    python benchmarks/explore/bench_tune_levers.py --variants default argmin --max-rows 4000

Same protocol, data and metrics as ``bench_peers.py`` (its ``peerbench``
helpers), but only LCP-RF variants and the QRF normalized split peer. A
variant patches the tuning rule's module settings (``confrf.localizers.tuning``)
or the localizer's methods, and/or passes estimator settings; every variant keeps the conformal points
out of every choice (the patches act on the tuning, which only sees the
localizer part). Prints one line per (data, seed, variant) and a table of the
means over seeds.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: confrf
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: peerbench

from peerbench.data import DATASETS, make_split  # noqa: E402
from peerbench.methods import Interval, Shared, clock, run_qrf_normalized  # noqa: E402
from peerbench.report import evaluate  # noqa: E402

import confrf as cf  # noqa: E402
from confrf import _kernels  # noqa: E402
from confrf.localizers import forest, screening, tuning  # noqa: E402


def _few_infinite(infinite: list[float]) -> list[int]:
    """Candidates with at most MAX_INFINITE infinite intervals, or those with the fewest if none is below."""
    ok = [i for i, s in enumerate(infinite) if s <= tuning.MAX_INFINITE]
    return ok or [i for i, s in enumerate(infinite) if s == min(infinite)]


def _choose_argmin(losses: list[np.ndarray], infinite: list[float]) -> int:
    """Lowest mean loss among the candidates with at most MAX_INFINITE infinite intervals (no SE rule)."""
    ok = _few_infinite(infinite)
    return min(ok, key=lambda i: (float(np.mean(losses[i])), i))


def _choose_median(losses: list[np.ndarray], infinite: list[float]) -> int:
    """As _choose_argmin with the median loss (for a fidelity-like loss, whose benchmark metric is a median)."""
    ok = _few_infinite(infinite)
    return min(ok, key=lambda i: (float(np.median(losses[i])), i))


def _choose_one_se_larger(losses: list[np.ndarray], infinite: list[float]) -> int:
    """Breiman's one-standard-error rule: the largest leaf whose mean loss is within one paired SE of the best's."""
    ok = _few_infinite(infinite)
    best = min(ok, key=lambda i: (float(np.mean(losses[i])), i))

    def close(i: int) -> bool:
        d = losses[i] - losses[best]
        return float(np.mean(d)) <= tuning.SE_RULE * float(np.std(d, ddof=1)) / math.sqrt(d.shape[0])

    near = [i for i in ok if i == best or close(i)]
    # the candidates (leaf, max_features, scale) of tune_forest's choice(), the caller
    cands = sys._getframe(1).f_locals["cands"]
    # the largest leaf, then the earliest (the baseline's features and scale first)
    return min(near, key=lambda i: (-cands[i][0], i))


def _tuning_trees_like_auto():
    """forest.ForestLocalizer whose tuning forests get TUNE_TREES times the final "auto" rule's factor for their leaf.

    The final forest grows auto_n_estimators(n, leaf) / 100 times as many trees as 100 when its leaves are small; a
    tuning forest of 15 trees judges small leaves on coarser weights than they will get.
    """

    class Localizer(forest.ForestLocalizer):
        def grow(self, X: np.ndarray, scores: np.ndarray) -> Any:
            if self.n_estimators == tuning.TUNE_TREES and isinstance(self.min_samples_leaf, int):
                factor = forest.auto_n_estimators(X.shape[0], self.min_samples_leaf) / forest.AUTO_TREES_MIN
                self.n_estimators = int(round(tuning.TUNE_TREES * factor))
            return super().grow(X, scores)

    return Localizer


def _fidelity_loss(t: np.ndarray, v: np.ndarray, alpha: float, cap: float) -> np.ndarray:
    """|t - v| / v per point (the benchmark's fidelity error in score units), an infinite t counted as ``cap``."""
    t = np.where(np.isinf(t), cap, t)
    return np.abs(t - v) / np.maximum(v, 1e-12 * cap)


def _log_interval_score(rel: float):
    """The half interval score of log(V + eps) (eps = rel x the test fold's median V).

    Still a consistent scoring rule for the (1 - alpha)-quantile (a monotone
    transform of the score, Gneiting 2011), but it weighs relative errors alike
    across the range of V, as the fidelity and oracle errors do.
    """

    def score(t: np.ndarray, v: np.ndarray, alpha: float, cap: float) -> np.ndarray:
        eps = rel * float(np.median(v)) + 1e-12 * cap
        lt = np.log(np.where(np.isinf(t), cap, t) + eps)
        lv = np.log(v + eps)
        return lt + np.maximum(lv - lt, 0.0) / alpha

    return score


def _leaf_grid(factor: float):
    def leaf_candidates(n_grow: int, top: int) -> list[int]:
        out, m = [], float(top)
        while m >= tuning.MIN_LEAF:
            out.append(int(round(m)))
            m /= factor
        return sorted(set(min(c, max(1, n_grow)) for c in out or [top]))

    return leaf_candidates


def _subsampled_forest(share: float):
    """scikit-learn's forest with each tree grown on a bootstrap sample of ``share`` of the growing points."""
    from functools import partial

    from sklearn.ensemble import RandomForestRegressor

    return partial(RandomForestRegressor, max_samples=share)


def _forest_without_bootstrap(**kwargs: Any) -> Any:
    """scikit-learn's forest with every tree on all growing points (diversity only from max_features)."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(**{**kwargs, "bootstrap": False})


_grow_mean_scale = forest.ForestLocalizer.grow


def _grow_with_median_index(self: Any, X: np.ndarray, scores: np.ndarray) -> Any:
    """ForestLocalizer.grow, then (scaled forests) a leaf index of the growing points for a QRF-quantile sigma."""
    _grow_mean_scale(self, X, scores)
    if self.scale_ == "forest":  # the tuning's forests too: they are grown scaled whenever "forest" is a candidate
        X = np.asarray(X, dtype=np.float64)
        offsets = self._node_offsets()
        n_leaves = int(offsets[-1] + self.forest_.estimators_[-1].tree_.node_count)
        self.median_index_ = forest.LeafIndex.build(
            self._global_leaves(X, offsets),
            np.asarray(scores, np.float64),
            self.growing_multiplicity(),
            offsets,
            n_leaves,
        )
    return self


def _quantile_scale_of(q: float):
    def scale_of(self: Any, leaves: np.ndarray) -> np.ndarray:
        """sigma(x) = the QRF q-quantile of the growing scores (Meinshausen's weights, in-bag counts), not the mean."""
        gi = self.median_index_
        indptr, indices, data, _ = _kernels.forest_weight_rows(
            leaves, gi.leaf_ptr, gi.members, gi.member_mult, gi.leaf_pop, gi.n, False
        )
        sigma = _kernels.csr_row_quantiles(
            indptr.astype(np.int64), indices.astype(np.int32), data, gi.scores, np.array([q])
        )[:, 0]
        return np.maximum(sigma, self.scale_floor_)

    return scale_of


_median_scale_of = _quantile_scale_of(0.5)


#: name -> (patches of confrf.localizers.tuning, forest.py or ForestLocalizer; estimator settings).
#: Every variant includes today's sqrt(2) refinement of the leaf grid unless it says "norefine" (the default
#: before it); the rows of benchmarks/explore/tuning_levers.md above the "new default" were run before the
#: refinement existed.
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "default": ({}, {}),
    # the base model's prediction mu(x) as one more localizer column (MU_COLUMN below), leaf and scale tuned
    "mu-column": ({}, {}),
    # the screened candidate keeps the columns that mu(x) is sensitive to (MU_SCREEN below) instead of the
    # screening forest's; "forced": that screening is the forest's max_features, leaf and scale tuned
    "mu-screen": ({}, {}),
    "mu-screen-forced": ({}, {"max_features": "screened"}),
    # the screened candidate keeps the union of both screenings
    "mu-union": ({}, {}),
    "raw-scores": ({}, {"options": {"scale": "none"}}),
    "scale-median": (
        {"ForestLocalizer.grow": _grow_with_median_index, "ForestLocalizer._scale_of": _median_scale_of},
        {},
    ),
    # sigma(x) = the forest's QRF 0.9-quantile of the growing scores
    # (the QRF normalized split peer's scale, alpha = 0.1)
    "scale-q90": (
        {"ForestLocalizer.grow": _grow_with_median_index, "ForestLocalizer._scale_of": _quantile_scale_of(0.9)},
        {},
    ),
    "scaled-scores": ({}, {"options": {"scale": "forest"}}),
    "trees50": ({"TUNE_TREES": 50}, {}),
    "2se": ({"SE_RULE": 2.0}, {}),
    "no-rotation": ({"ROTATE_BELOW": 0}, {}),
    "sqrt-n": ({}, {"min_samples_leaf": "auto", "max_features": 1.0, "n_estimators": 100}),
    "argmin": ({"_choose": _choose_argmin}, {}),
    "argmin-leaf1": ({"_choose": _choose_argmin, "MIN_LEAF": 1}, {}),
    "argmin-trees40": ({"_choose": _choose_argmin, "TUNE_TREES": 40}, {}),
    "argmin-leaf1-trees40": ({"_choose": _choose_argmin, "MIN_LEAF": 1, "TUNE_TREES": 40}, {}),
    "fid": ({"_choose": _choose_median, "half_interval_score": _fidelity_loss}, {}),
    "fid-trees40": ({"_choose": _choose_median, "half_interval_score": _fidelity_loss, "TUNE_TREES": 40}, {}),
    "log0.05": ({"half_interval_score": _log_interval_score(0.05)}, {}),
    "log0.2": ({"half_interval_score": _log_interval_score(0.2)}, {}),
    "argmin-grid1.41": ({"_choose": _choose_argmin, "forest.leaf_candidates": _leaf_grid(2**0.5)}, {}),
    "argmin-grid1.41-trees40": (
        {"_choose": _choose_argmin, "forest.leaf_candidates": _leaf_grid(2**0.5), "TUNE_TREES": 40},
        {},
    ),
    "grid1.41": ({"forest.leaf_candidates": _leaf_grid(2**0.5)}, {}),
    "grid1.41-trees30": ({"forest.leaf_candidates": _leaf_grid(2**0.5), "TUNE_TREES": 30}, {}),
    "grid1.41-trees30-mf1": (
        {"forest.leaf_candidates": _leaf_grid(2**0.5), "TUNE_TREES": 30, "FEATURE_SHARES": (1.0,)},
        {},
    ),
    "grid1.41-trees40-mf1": (
        {"forest.leaf_candidates": _leaf_grid(2**0.5), "TUNE_TREES": 40, "FEATURE_SHARES": (1.0,)},
        {},
    ),
    "argmin-grid1.41-trees40-mf1": (
        {
            "_choose": _choose_argmin,
            "forest.leaf_candidates": _leaf_grid(2**0.5),
            "TUNE_TREES": 40,
            "FEATURE_SHARES": (1.0,),
        },
        {},
    ),
    "trees25": ({"TUNE_TREES": 25}, {}),
    "folds4": ({"TUNE_FOLDS": 4}, {}),
    "folds5": ({"TUNE_FOLDS": 5}, {}),
    "1se-larger": ({"_choose": _choose_one_se_larger}, {}),
    "tunetrees": ({"forest.ForestLocalizer": _tuning_trees_like_auto()}, {}),
    "tunetrees-leaf2": ({"forest.ForestLocalizer": _tuning_trees_like_auto(), "MIN_LEAF": 2}, {}),
    "noscreen": ({"screening.SCREEN_MIN_FEATURES": 10**9}, {}),  # the default before "screened" was a candidate
    "screened": ({}, {"max_features": "screened"}),  # screening forced, leaf and scale tuned
    "trees100": ({}, {"n_estimators": 100}),  # the default before n_estimators="auto"
    "trees200": ({}, {"n_estimators": 200}),
    "trees300": ({}, {"n_estimators": 300}),
    "trees500": ({}, {"n_estimators": 500}),
    "norefine": ({"refined_leaves": lambda m, leaves: []}, {}),
    "loc0.3": ({}, {"localizer_size": 0.3}),
    "loc0.4": ({}, {"localizer_size": 0.4}),
    "subsample0.5": ({"forest.RandomForestRegressor": _subsampled_forest(0.5)}, {}),
    "no-bootstrap": ({"forest.RandomForestRegressor": _forest_without_bootstrap}, {}),
    "argmin-loc0.3": ({"_choose": _choose_argmin}, {"localizer_size": 0.3}),
    "argmin-loc0.7": ({"_choose": _choose_argmin}, {"localizer_size": 0.7}),
}


#: variants whose localizer also sees mu(x) as its last column
MU_COLUMN = {"mu-column"}
#: variants whose screened candidate reads the columns mu(x) is sensitive to
MU_SCREEN = {"mu-screen", "mu-screen-forced", "mu-union"}


def _mu_sensitive_columns(sh: Shared, rows: int = 1000) -> np.ndarray:
    """Columns whose permutation moves mu(x) by at least twice the average column's mean |change|.

    Read on the training rows (the base model's own data, never a calibration point), so the
    guarantee stays exact; the most sensitive column if none reaches the threshold, every column if
    mu(x) is constant.
    """
    X = sh.split.X_tr[:rows]
    base, rng = sh.mu.predict(X), np.random.default_rng(0)
    sens = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        Xp = X.copy()
        Xp[:, j] = rng.permutation(Xp[:, j])
        sens[j] = np.mean(np.abs(sh.mu.predict(Xp) - base))
    if not sens.any():
        return np.arange(X.shape[1])
    cols = np.flatnonzero(sens >= 2.0 * sens.mean())
    return cols if cols.size else np.array([int(np.argmax(sens))])


class _WithoutLastColumn:
    """The shared base model, fed the design without the mu(x) column that the localizer sees."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def fit(self, X: np.ndarray, y: np.ndarray) -> _WithoutLastColumn:
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(np.asarray(X)[:, :-1])


@contextmanager
def patched(patches: dict[str, Any]) -> Iterator[None]:
    def target(key: str) -> tuple[Any, str]:
        # "forest.name": the name forest.py imported; "ForestLocalizer.name": a method of the localizer class
        owner, _, name = key.rpartition(".")
        return {"forest": forest, "ForestLocalizer": forest.ForestLocalizer, "screening": screening, "": tuning}[
            owner
        ], name

    old = {k: getattr(*target(k)) for k in patches}
    try:
        for k, v in patches.items():
            setattr(*target(k), v)
        yield
    finally:
        for k, v in old.items():
            setattr(*target(k), v)


def run_variant(name: str, sh: Shared) -> Interval:
    patches, settings = VARIANTS[name]
    s, model = sh.split, sh.mu
    X_cal, X_te = s.X_cal, s.X_te
    if name in MU_COLUMN:
        X_cal, X_te, model = (
            np.column_stack([X_cal, sh.mu_cal]),
            np.column_stack([X_te, sh.mu_test]),
            _WithoutLastColumn(sh.mu),
        )
    est = cf.ConformalRegressor(
        model=model, prefit=True, method="lcp-rf", alpha=sh.alpha, random_state=sh.seed, n_jobs=sh.n_jobs, **settings
    )
    if name in MU_SCREEN:
        cols = _mu_sensitive_columns(sh)
        print(f"{name}: mu(x) is sensitive to columns {cols.tolist()} of {s.X_tr.shape[1]}", flush=True)
        forest_screen = screening.screen_features

        def screen(X: np.ndarray, V: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
            return np.union1d(cols, forest_screen(X, V, *args, **kwargs)) if name == "mu-union" else cols

        patches = {**patches, "screening.screen_features": screen, "forest.screen_features": screen}
    with patched(patches):  # predict too: a patched scale is read again at predict time
        _, sec = clock(lambda: est.conformalize(X_cal, s.y_cal))
        loc = est.calibrator_.localizer
        tuning = loc.tuning_
        extra = {
            "leaf": loc.min_samples_leaf_,
            "mf": loc.max_features_,
            "scale": loc.scale_,
            # the chosen candidate's mean tuning loss: the same folds for every variant of one seed
            "tune_loss": tuning.scores[tuning.candidates.index(tuning.chosen)] if tuning else float("nan"),
        }
        iv, psec = clock(lambda: est.predict_interval(X_te))
    return Interval(iv[:, 0], iv[:, 1], sec, psec, sh.mu_seconds, extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["california", "diamonds", "toy"], choices=DATASETS)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sim", type=int, default=3000)
    ap.add_argument("--max-rows", type=int, default=6000)
    ap.add_argument("--no-peer", action="store_true", help="skip the QRF normalized split row")
    ap.add_argument(
        "--pick-by-tuning",
        nargs=2,
        metavar=("A", "B"),
        help="add a row 'A|B' that takes, per data set and seed, the variant whose chosen candidate had "
        "the lower tuning loss (what a tuning candidate 'B instead of A' would choose)",
    )
    args = ap.parse_args(argv)
    # what peerbench's make_split / evaluate read
    args.alpha, args.no_hole, args.wsc_delta, args.wsc_directions, args.n_jobs = 0.1, False, 0.1, 200, 1
    from threadpoolctl import threadpool_limits

    rows, cache = [], {}
    with threadpool_limits(limits=1, user_api="openmp"):
        for data in args.datasets:
            for seed in range(args.seed, args.seed + args.seeds):
                sh = Shared(make_split(data, seed, args, cache), seed, args.alpha, 1)
                sh.fit_base()
                runs = [(v, lambda sh=sh, v=v: run_variant(v, sh)) for v in args.variants]
                if not args.no_peer:
                    runs.append(("qrf-normalized", lambda sh=sh: run_qrf_normalized(sh)))
                for v, fn in runs:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        iv = fn()
                    r = evaluate(sh, iv, args)
                    row = {
                        "data": data,
                        "seed": seed,
                        "variant": v,
                        "cov": r["coverage"],
                        "wsc": r["worst_slab_coverage"],
                        "inf": r["share_infinite"],
                        "err_hat": r["fidelity_error"],
                        "err_star": r["oracle_error"],
                        "med_w": r["median_width"],
                        "sec": iv.calib_seconds,
                        "leaf": iv.extra.get("leaf"),
                        "mf": iv.extra.get("mf"),
                        "scale": iv.extra.get("scale"),
                        "tune_loss": iv.extra.get("tune_loss"),
                    }
                    rows.append(row)
                    print(
                        " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                        flush=True,
                    )
    df = pd.DataFrame(rows)
    if args.pick_by_tuning:
        df = pd.concat([df, _picked_by_tuning(df, *args.pick_by_tuning)], ignore_index=True)
    df["err_star"] = df["err_star"].astype(float)
    tab = df.groupby(["data", "variant"], sort=False)[
        ["cov", "wsc", "inf", "err_hat", "err_star", "med_w", "sec"]
    ].mean()
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(tab.round(3))
        print(df.groupby("variant", sort=False)["err_hat"].mean().round(3).rename("err_hat averaged over data"))
        print(_paired_differences(df).round(3))
    return 0 if not math.isnan(df["err_hat"].mean()) else 1


def _paired_differences(df: pd.DataFrame) -> pd.DataFrame:
    """Each variant minus the first one, paired by (data, seed): mean and standard error over seeds."""
    first = df["variant"].iloc[0]
    wide = df.pivot_table(index=["data", "seed"], columns="variant", values=["err_hat", "err_star", "wsc"])
    out = []
    for v in df["variant"].unique()[1:]:
        d = (wide.xs(v, axis=1, level="variant") - wide.xs(first, axis=1, level="variant")).groupby("data", sort=False)
        m, se = d.mean(), d.std(ddof=1) / np.sqrt(d.count())
        out.append(pd.concat({"mean": m, "s.e.": se}, axis=1))
    return (
        pd.concat(out, keys=[f"{v} - {first}" for v in df["variant"].unique()[1:]], names=["variant"])
        if out
        else pd.DataFrame()
    )


def _picked_by_tuning(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Rows 'a|b': per (data, seed), b's row where its tuning loss is below a's, else a's."""
    rows = df.set_index(["data", "seed", "variant"])
    ra = rows.xs(a, level="variant")
    rb = rows.xs(b, level="variant").loc[ra.index]
    take_b = (rb["tune_loss"] < ra["tune_loss"]).to_numpy()
    out = ra.copy()
    out.loc[take_b] = rb.loc[take_b].to_numpy()
    print(f"{a}|{b}: {b} chosen on {int(take_b.sum())} of {len(ra)} fits")
    return out.reset_index().assign(variant=f"{a}|{b}")


if __name__ == "__main__":
    raise SystemExit(main())

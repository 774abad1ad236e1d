"""Covariate shift: weighted SPLIT and LCP-RF against the unweighted methods and the peers, on target coverage.

Protocol (Tibshirani, Barber, Candès and Ramdas, 2019): a source sample is split
50/50 into a training part (one shared gradient-boosting model mu per seed) and a
calibration part; the rows to predict come from a target population whose
covariates are tilted by a known likelihood ratio w(x):

* sim: x1 drawn with density proportional to exp(3 x1) on [0, 1] (the noise grows with x1);
* toy: x1 / 7 drawn from Beta(3, 1), w = (x1 / 7)^2;
* california: w = exp(z / 2), z the standardized median income;
* diamonds: the same with the standardized carat;
* star: a discrete shift in a factor: free-lunch pupils four times as likely (w = 4 or 1).

Simulated targets are drawn exactly (rejection sampling). For a real data set, a random half of
the source size is the training part; the other rows R are the population: the calibration rows
are drawn uniformly from R with replacement, the target rows from R with probability
proportional to w(x), with replacement. Calibration points are then i.i.d. from the uniform law
on R and target points i.i.d. from its tilt by w, so w is the exact likelihood ratio, and the
model never saw a row of R. A second, independent target sample without responses is what
``shift=`` sees (the estimated ratio: logistic regression of it against the training part).

Methods: SPLIT and LCP-RF unweighted (what shift costs), weighted SPLIT and weighted LCP-RF
with the known ratio, weighted SPLIT and LCP-RF with the estimated ratio, MAPIE's split
conformal (unweighted peer), and conditionalconformal (Gibbs, Cherian and Candès) with the
function class Phi(x) = (1, w(x)), which contains the known shift (its guarantee covers it); it
solves one linear program per test point, so it runs on the first ``--cc-seeds`` seeds and
``--cc-points`` target rows only.

Run: ``python benchmarks/bench_shift.py --seeds 10 --out docs/benchmarks/shift.md``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import confrf as cf
from confrf import ConformalRegressor
from confrf.metrics import worst_slab_coverage
from confrf.shift import RatioEstimator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerbench.data import base_model, load_real  # noqa: E402

ALPHA = 0.1
SETTINGS = ("sim", "toy", "california", "diamonds", "star")
SHIFT_TEXT = {
    "sim": "x1 ~ density ∝ exp(3 x1)",
    "toy": "x1/7 ~ Beta(3, 1)",
    "california": "∝ exp(z MedInc / 2)",
    "diamonds": "∝ exp(z carat / 2)",
    "star": "free lunch x4 (factor)",
}
METHODS = {
    "split": "SPLIT (unweighted)",
    "lcp-rf": "LCP-RF (unweighted)",
    "mapie": "MAPIE split (unweighted)",
    "w-split": "weighted SPLIT (known w)",
    "w-lcp-rf": "weighted LCP-RF (known w)",
    "w-split-est": "weighted SPLIT (estimated w)",
    "w-lcp-rf-est": "weighted LCP-RF (estimated w)",
    "cc": "conditionalconformal, Phi = (1, w)",
}
WEIGHTED_KNOWN = ("w-split", "w-lcp-rf", "cc")


@dataclass
class Problem:
    X_tr: np.ndarray
    y_tr: np.ndarray
    X_cal: np.ndarray
    y_cal: np.ndarray
    X_te: np.ndarray  # target rows with responses (evaluation)
    y_te: np.ndarray
    X_unlabeled: np.ndarray  # other target rows, without responses (what shift= sees)
    ratio: Any  # the known w(x) of design rows


# ------------------------------------------------------------------ data ----
def _simulated(name: str, n_src: int, n_target: int, rng: np.random.Generator) -> Problem:
    def draw(n: int, target: bool) -> tuple[np.ndarray, np.ndarray]:
        parts_X, parts_y, got = [], [], 0
        while got < n:
            sim = cf.datasets.simulate(name, 4 * n, random_state=int(rng.integers(2**31)))
            X, y = sim.X.to_numpy(dtype=np.float64), sim.y.to_numpy(dtype=np.float64)
            if target:  # rejection sampling: accept with probability w(x) / max w
                keep = rng.random(X.shape[0]) < ratio(X) / ratio_max
                X, y = X[keep], y[keep]
            parts_X.append(X)
            parts_y.append(y)
            got += X.shape[0]
        return np.vstack(parts_X)[:n], np.concatenate(parts_y)[:n]

    if name == "sim":

        def ratio(X: np.ndarray) -> np.ndarray:
            return np.exp(3.0 * X[:, 0])

        ratio_max = np.exp(3.0)
    else:  # toy: x1 in [0, 7], target x1 / 7 ~ Beta(3, 1)

        def ratio(X: np.ndarray) -> np.ndarray:
            return (X[:, 0] / 7.0) ** 2

        ratio_max = 1.0
    X, y = draw(n_src, False)
    Xt, yt = draw(2 * n_target, True)
    h = n_src // 2
    return Problem(X[:h], y[:h], X[h:], y[h:], Xt[:n_target], yt[:n_target], Xt[n_target:], ratio)


def _star_frame() -> tuple[np.ndarray, np.ndarray, list[str]]:
    # the design of peerbench's star_design, with its column names
    df = cf.datasets.load_star(complete_first_grade=True)
    y = df["score1"].to_numpy(dtype=np.float64)
    X = df.drop(columns=["score1", "read1", "math1"])
    for c in [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype) and X[c].cat.ordered]:
        X[c] = X[c].cat.codes.astype(np.float64)
    X = pd.get_dummies(X, dtype=np.float64)
    return X.to_numpy(dtype=np.float64), y, list(X.columns)


def _real(name: str, n_src: int, n_target: int, rng: np.random.Generator, cache: dict) -> Problem:
    if name not in cache:
        if name == "star":
            X, y, cols = _star_frame()
            j = cols.index("lunch1_free")

            def ratio(Z: np.ndarray, j: int = j) -> np.ndarray:
                return np.where(Z[:, j] > 0.5, 4.0, 1.0)

        else:
            X, y = load_real(name)
            j = 0  # california: MedInc; diamonds: carat (the first column of each design)
            mean, sd = float(X[:, j].mean()), float(X[:, j].std())

            def ratio(Z: np.ndarray, j: int = j, mean: float = mean, sd: float = sd) -> np.ndarray:
                return np.exp(0.5 * (Z[:, j] - mean) / sd)

        cache[name] = (X, y, ratio)
    X, y, ratio = cache[name]
    h = n_src // 2
    perm = rng.permutation(X.shape[0])
    tr, pop = perm[:h], perm[h:]  # the training part, and the population R the other rows form
    cal = rng.choice(pop, size=n_src - h, replace=True)
    p = ratio(X[pop])
    p = p / p.sum()
    te = rng.choice(pop, size=n_target, replace=True, p=p)
    un = rng.choice(pop, size=n_target, replace=True, p=p)
    return Problem(X[tr], y[tr], X[cal], y[cal], X[te], y[te], X[un], ratio)


def make_problem(name: str, seed: int, args: argparse.Namespace, cache: dict) -> Problem:
    rng = np.random.default_rng(1000 * seed + 7)
    if name in ("sim", "toy"):
        return _simulated(name, args.n_source, args.n_target, rng)
    return _real(name, args.n_source, args.n_target, rng, cache)


# --------------------------------------------------------------- methods ----
def _metrics(pb: Problem, mu_te: np.ndarray, t: np.ndarray, closed: np.ndarray | None = None) -> dict[str, float]:
    r = np.abs(pb.y_te - mu_te)
    cov = r <= t if closed is None else np.where(closed, r <= t, r < t)
    slab = worst_slab_coverage(pb.X_te, cov, delta=0.2, n_directions=200, random_state=0)
    return {
        "coverage": float(cov.mean()),
        "worst_slab": float(slab.coverage),
        "median_width": float(np.median(2 * t)),
        "infinite": float(np.mean(~np.isfinite(t))),
    }


def run_seed(name: str, seed: int, args: argparse.Namespace, cache: dict) -> list[dict[str, Any]]:
    pb = make_problem(name, seed, args, cache)
    mu = base_model(seed).fit(pb.X_tr, pb.y_tr)
    mu_te = mu.predict(pb.X_te)
    w_cal, w_te = pb.ratio(pb.X_cal), pb.ratio(pb.X_te)
    est = RatioEstimator("logit", random_state=seed).fit(pb.X_tr, pb.X_unlabeled)
    west_cal, west_te = est(pb.X_cal), est(pb.X_te)
    rows: list[dict[str, Any]] = []

    def add(method: str, t: np.ndarray, closed: np.ndarray | None, ess: float | None, seconds: float) -> None:
        rows.append(
            {"data": name, "seed": seed, "method": method, **_metrics(pb, mu_te, t, closed), "ess": ess, "s": seconds}
        )

    def confrf(method: str, ratio_cal: Any, ratio_te: Any) -> tuple[Any, float]:
        t0 = time.perf_counter()
        reg = ConformalRegressor(model=mu, prefit=True, method=method, random_state=seed)
        reg.conformalize(pb.X_cal, pb.y_cal, likelihood_ratio=ratio_cal)
        d = reg.predict_details(pb.X_te, likelihood_ratio=ratio_te, progress=False)
        return (reg, d), time.perf_counter() - t0

    for key, ratio_cal, ratio_te in (
        ("split", None, None),
        ("w-split", w_cal, w_te),
        ("w-split-est", west_cal, west_te),
    ):
        (reg, d), sec = confrf("split", ratio_cal, ratio_te)
        shift = reg.calibrator_.shift_
        add(key, d["t"], d["closed"], None if shift is None else shift.ess, sec)
    # LCP-RF: one forest; the weighted versions reuse it (the forest never sees the ratios)
    (reg, d), sec = confrf("lcp-rf", None, None)
    add("lcp-rf", d["t"], d["closed"], None, sec)
    leaves_cal = reg.calibrator_
    for key, ratio_cal, ratio_te in (("w-lcp-rf", w_cal, w_te), ("w-lcp-rf-est", west_cal, west_te)):
        t0 = time.perf_counter()
        cal = leaves_cal.reweighted(ratio_cal)
        th = cal.thresholds(pb.X_te, ALPHA, likelihood_ratio=ratio_te)
        add(key, th.t, th.closed, cal.shift_.ess, sec + time.perf_counter() - t0)
    # MAPIE split conformal, unweighted
    from mapie.regression import SplitConformalRegressor

    t0 = time.perf_counter()
    mp = SplitConformalRegressor(estimator=mu, confidence_level=1 - ALPHA, prefit=True).conformalize(pb.X_cal, pb.y_cal)
    iv = mp.predict_interval(pb.X_te)[1]
    add("mapie", (iv[:, 1, 0] - iv[:, 0, 0]) / 2, None, None, time.perf_counter() - t0)
    if seed < args.cc_seeds and importlib.util.find_spec("conditionalconformal") is not None:
        rows.append(run_cc(pb, mu, mu_te, name, seed, args.cc_points))  # pip install conditionalconformal
    return rows


def run_cc(pb: Problem, mu: Any, mu_te: np.ndarray, name: str, seed: int, points: int) -> dict[str, Any]:
    """conditionalconformal with Phi(x) = (1, w(x)), on the first ``points`` target rows."""
    from conditionalconformal import CondConf

    t0 = time.perf_counter()
    cc = CondConf(
        score_fn=lambda x, y: np.abs(y - mu.predict(x)),
        Phi_fn=lambda x: np.column_stack([np.ones(x.shape[0]), pb.ratio(x)]),
    )
    cc.setup_problem(pb.X_cal, pb.y_cal)
    top = float(np.abs(pb.y_cal - mu.predict(pb.X_cal)).max())
    t = np.empty(points)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(points):
            # exact=True fails with this numpy; the binary search is the package's other documented mode
            cut = cc.predict(1 - ALPHA, pb.X_te[i : i + 1], lambda s, x: s, exact=False, S_min=0.0, S_max=top)
            t[i] = float(np.asarray(cut).ravel()[0])
    sub = Problem(pb.X_tr, pb.y_tr, pb.X_cal, pb.y_cal, pb.X_te[:points], pb.y_te[:points], pb.X_unlabeled, pb.ratio)
    out = {"data": name, "seed": seed, "method": "cc", **_metrics(sub, mu_te[:points], t), "ess": None}
    out["s"] = time.perf_counter() - t0
    return out


# ---------------------------------------------------------------- report ----
def _mean_se(x: pd.Series) -> tuple[float, float]:
    x = x.dropna()
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")


def report(df: pd.DataFrame, args: argparse.Namespace, meta: dict[str, Any]) -> str:
    seconds, load = meta["seconds"], meta["load"]
    lines = [
        "## Covariate shift: weighted conformal on a target population",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}, {seconds / 60:.1f} min on a shared 2-core machine "
        f"(load average before the run: {load}). α = {ALPHA}, {args.seeds} seeds; source sample of "
        f"{args.n_source} rows split 50/50 into training (one gradient-boosting model per seed, shared by every "
        f"method) and calibration; {args.n_target} target rows per seed. The protocol and the shifts are in "
        'the script\'s docstring; the theory in [docs/theory.md](../theory.md) ("Covariate shift").',
        "",
        "Columns: target coverage (mean over seeds ± its standard error), worst-slab coverage on the target "
        "(slabs of at least 20 % of the target rows, 200 directions), median width, share of infinite "
        "intervals, Kish effective sample size of the calibration ratios (conformal points), seconds per "
        f"seed. conditionalconformal runs on the first {args.cc_seeds} seeds and {args.cc_points} target rows "
        "(one linear program per row), so its coverage is measured on few rows: its standard error comes from "
        f"{args.cc_seeds} seeds and its worst-slab coverage from slabs of {max(1, args.cc_points // 5)} rows. It runs "
        "in its binary-search mode (`exact=False`, the package's other documented mode): `exact=True` raises a "
        "ValueError here (conditionalconformal 0.0.5 with numpy 2.4). Its guarantee covers the shift because w is in "
        "its function class; it needs no likelihood-ratio weighting but solves a program per test point.",
        "",
    ]
    checks = []
    for name in df["data"].unique():
        sub = df[df["data"] == name]
        lines += [f"### {name}: {SHIFT_TEXT[name]}", ""]
        lines += [
            "| method | coverage | worst slab | median width | infinite | ESS | s |",
            "|---|---|---|---|---|---|---|",
        ]
        for m in METHODS:
            r = sub[sub["method"] == m]
            if r.empty:
                continue
            cov, se = _mean_se(r["coverage"])
            slab, slab_se = _mean_se(r["worst_slab"])
            ess = r["ess"].dropna()
            lines.append(
                f"| {METHODS[m]} | {cov:.3f} ± {se:.3f} | {slab:.3f} ± {slab_se:.3f} | "
                f"{r['median_width'].median():.4g} | {r['infinite'].mean():.1%} | "
                f"{ess.mean():.0f} | {r['s'].mean():.2f} |"
                if len(ess)
                else f"| {METHODS[m]} | {cov:.3f} ± {se:.3f} | {slab:.3f} ± {slab_se:.3f} | "
                f"{r['median_width'].median():.4g} | {r['infinite'].mean():.1%} | - | {r['s'].mean():.2f} |"
            )
            if m in WEIGHTED_KNOWN:
                checks.append((name, m, "known", cov, se, cov >= 1 - ALPHA - 3 * se))
            if m.endswith("-est"):
                checks.append((name, m, "estimated", cov, se, cov >= 0.88))
        paired = _paired(sub, "w-lcp-rf", "w-split")
        lines += [
            "",
            "Paired differences over seeds, weighted LCP-RF (known w) minus weighted SPLIT (known w): " + paired,
        ]
        lines += [
            "",
            "Weighted minus unweighted, target coverage: "
            + _paired(sub, "w-lcp-rf", "lcp-rf", "coverage")
            + " (LCP-RF); "
            + _paired(sub, "w-split", "split", "coverage")
            + " (SPLIT).",
            "",
        ]
    lines += ["### Targets", ""]
    known = [c for c in checks if c[2] == "known"]
    est = [c for c in checks if c[2] == "estimated"]
    lines.append(
        f"* Known ratio, target coverage ≥ 1 − α − 3 s.e. for every weighted method: {sum(c[5] for c in known)} of "
        f"{len(known)} (data set, method) pairs"
        + (
            ""
            if all(c[5] for c in known)
            else ": not met for "
            + ", ".join(f"{c[0]} {METHODS[c[1]]} ({c[3]:.3f} ± {c[4]:.3f})" for c in known if not c[5])
        )
        + "."
    )
    lines.append(
        f"* Estimated ratio, target coverage ≥ 0.88: {sum(c[5] for c in est)} of {len(est)}"
        + (
            ""
            if all(c[5] for c in est)
            else ": not met for " + ", ".join(f"{c[0]} {METHODS[c[1]]} ({c[3]:.3f})" for c in est if not c[5])
        )
        + "."
    )
    narrower = []
    for name in df["data"].unique():
        sub = df[df["data"] == name]
        a = sub[sub["method"] == "w-lcp-rf"].set_index("seed")["median_width"]
        b = sub[sub["method"] == "w-split"].set_index("seed")["median_width"]
        d = (a - b).dropna()
        if len(d) > 1 and d.mean() + 2 * d.std(ddof=1) / np.sqrt(len(d)) < 0:
            narrower.append(name)
    lines.append(
        f"* Weighted LCP-RF narrower (median width, paired mean difference more than 2 s.e. below 0) than weighted "
        f"SPLIT on {len(narrower)} of {df['data'].nunique()} data sets ({', '.join(narrower) or 'none'}); both "
        "covering the target (first target)."
    )
    return "\n".join(lines) + "\n"


def _paired(sub: pd.DataFrame, a: str, b: str, col: str = "median_width") -> str:
    x = sub[sub["method"] == a].set_index("seed")[col]
    y = sub[sub["method"] == b].set_index("seed")[col]
    d = (x - y).dropna()
    if len(d) < 2:
        return "n/a"
    return f"{col.replace('_', ' ')} {d.mean():+.4g} ± {d.std(ddof=1) / np.sqrt(len(d)):.2g} ({len(d)} seeds)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--data", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    p.add_argument("--n-source", type=int, default=3000)
    p.add_argument("--n-target", type=int, default=1000)
    p.add_argument("--cc-seeds", type=int, default=3)
    p.add_argument("--cc-points", type=int, default=50)
    p.add_argument("--out", default=None, help="markdown table (default: print)")
    p.add_argument("--csv", default=None, help="raw rows (and CSV.meta.json: command, date, load, minutes)")
    p.add_argument("--report-only", metavar="CSV", help="rewrite the tables from a run's raw rows, without running")
    args = p.parse_args()
    if args.report_only:
        df = pd.read_csv(args.report_only)
        with open(args.report_only + ".meta.json") as fh:
            meta = json.load(fh)
    else:
        meta = {
            "command": "python benchmarks/bench_shift.py " + " ".join(sys.argv[1:]),
            "date": datetime.date.today().isoformat(),
            "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        }
        t0 = time.perf_counter()
        cache: dict = {}
        rows = []
        for name in args.data:
            for seed in range(args.seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rows += run_seed(name, seed, args, cache)
                print(f"{name} seed {seed}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        df = pd.DataFrame(rows)
        meta["seconds"] = time.perf_counter() - t0
        if args.csv:
            df.to_csv(args.csv, index=False)
            with open(args.csv + ".meta.json", "w") as fh:
                json.dump(meta, fh)
    text = report(df, args, meta)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()

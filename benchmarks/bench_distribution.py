"""Predictive distributions and conformal p-values against crepes, quantile-forest and MAPIE (issue 39).

Three suites (``--suite``):

* ``quantiles``: on sim, toy and the real data sets of the peer benchmark (same 40/40/20 split with the
  training "hole", same shared gradient-boosting model; ``benchmarks/peerbench``), the quantiles at 99
  levels of confrf's split and LCP-RF distributions, crepes' conformal predictive systems (normalized by
  its k-NN difficulty, and Mondrian on difficulty bins), quantile-forest's quantiles (no guarantee) and
  MAPIE's CQR at four levels (its two-sided intervals at confidence 1 - 2 tau: the lower end is the tau
  quantile below 0.5, the upper end above). Reported: the quantile-grid CRPS, (2/99) sum over tau of the
  pinball loss at tau = 0.01 .. 0.99 (an infinite quantile is replaced by the row's largest finite one, and
  counted), the mean pinball loss at the four MAPIE levels, one-sided coverage P(Y <= Q_tau) at
  tau in {0.05, 0.25, 0.5, 0.75, 0.95} and the rows whose quantiles cross.
* ``pvalues``: P(p <= a) for a in {0.01, 0.05, 0.1, 0.2, 0.5} on 20,000 held-out points of sim (4 seeds x
  5,000, each seed its own calibration, so the estimate is marginal), for split, LCP-RF and weighted
  LCP-RF under a known covariate shift (target rows drawn with weight exp(3 x1)); and the count of rows,
  out of 10,000, where "y inside the interval" and "p > alpha" disagree at alpha in {0.05, 0.1, 0.2}.
* ``timing``: 99 quantiles for 10,000 points against one interval's prediction (LCP-RF, sim, one thread),
  back to back in one process, ``--reps`` times (median, min, max of the times and of their ratio).

Usage: ``python benchmarks/bench_distribution.py --suite quantiles pvalues timing`` (``--seeds``, ``--n-sim``,
``--max-rows``); the tables go to ``--out`` (a markdown file).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

try:  # run from a checkout without installing: put the repository root on the path
    import confrf as cf
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf as cf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peerbench.data import DATASETS, make_split, quantile_model  # noqa: E402
from peerbench.methods import Shared  # noqa: E402

TAUS = np.arange(1, 100) / 100
ONE_SIDED = (0.05, 0.25, 0.5, 0.75, 0.95)
MAPIE_TAUS = (0.05, 0.25, 0.75, 0.95)
PV_LEVELS = (0.01, 0.05, 0.1, 0.2, 0.5)


def pinball(y: np.ndarray, Q: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """(rows, levels) pinball losses; infinite quantiles replaced by the row's largest finite one."""
    Q = Q.copy()
    fin = np.isfinite(Q)
    top = np.where(fin, Q, -np.inf).max(axis=1, keepdims=True)
    Q = np.where(fin, Q, np.where(np.isfinite(top), top, y[:, None]))
    d = y[:, None] - Q
    return np.maximum(taus * d, (taus - 1) * d)


def confrf_quantiles(method: str, sh: Shared, taus: np.ndarray) -> np.ndarray:
    s = sh.split
    est = cf.ConformalRegressor(model=sh.mu, prefit=True, method=method, random_state=sh.seed, n_jobs=sh.n_jobs)
    est.conformalize(s.X_cal, s.y_cal)
    return est.predict_quantiles(s.X_te, taus)


def crepes_quantiles(sh: Shared, mondrian: bool, taus: np.ndarray) -> np.ndarray:
    from crepes import ConformalPredictiveSystem
    from crepes.extras import binning

    s = sh.split
    sig_cal, sig_te, _, _ = sh.difficulty()
    resid = s.y_cal - sh.mu_cal
    pct = list(taus * 100)
    if mondrian:
        bins_cal, edges = binning(sig_cal, bins=10)
        cps = ConformalPredictiveSystem().fit(residuals=resid, bins=bins_cal)
        out = cps.predict(y_hat=sh.mu_test, bins=binning(sig_te, bins=edges), higher_percentiles=pct)
    else:
        cps = ConformalPredictiveSystem().fit(residuals=resid, sigmas=sig_cal)
        out = cps.predict(y_hat=sh.mu_test, sigmas=sig_te, higher_percentiles=pct)
    return np.asarray(out, dtype=np.float64).reshape(len(s.y_te), len(taus))


def qrf_quantiles(sh: Shared, taus: np.ndarray) -> np.ndarray:
    from quantile_forest import RandomForestQuantileRegressor

    s = sh.split
    qrf = RandomForestQuantileRegressor(min_samples_leaf=5, random_state=sh.seed, n_jobs=sh.n_jobs)
    qrf.fit(s.X_tr, s.y_tr)
    return np.asarray(qrf.predict(s.X_te, quantiles=list(taus)), dtype=np.float64)


def mapie_quantiles(sh: Shared, taus: tuple[float, ...]) -> np.ndarray:
    from mapie.regression import ConformalizedQuantileRegressor

    s = sh.split
    out = np.empty((len(s.y_te), len(taus)))
    for j, tau in enumerate(taus):
        a = 2 * min(tau, 1 - tau)  # the (1 - a) interval's ends are the tau and 1 - tau quantiles
        models = [quantile_model(sh.seed, q).fit(s.X_tr, s.y_tr) for q in (a / 2, 1 - a / 2, 0.5)]
        reg = ConformalizedQuantileRegressor(estimator=models, confidence_level=1 - a, prefit=True)
        reg.conformalize(s.X_cal, s.y_cal)
        _, iv = reg.predict_interval(s.X_te, symmetric_correction=True)
        out[:, j] = iv[:, 0, 0] if tau < 0.5 else iv[:, 1, 0]
    return out


def quantile_suite(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    cache: dict[str, Any] = {}
    for name in args.datasets:
        for seed in range(args.seeds):
            split = make_split(name, seed, args, cache)
            sh = Shared(split, seed, 0.1, args.n_jobs)
            sh.fit_base()
            y = split.y_te
            methods = {
                "confrf split": lambda sh=sh: confrf_quantiles("split", sh, TAUS),
                "confrf lcp-rf": lambda sh=sh: confrf_quantiles("lcp-rf", sh, TAUS),
                "crepes CPS normalized": lambda sh=sh: crepes_quantiles(sh, False, TAUS),
                "crepes CPS Mondrian": lambda sh=sh: crepes_quantiles(sh, True, TAUS),
                "quantile-forest (no guarantee)": lambda sh=sh: qrf_quantiles(sh, TAUS),
            }
            if not args.no_mapie:
                methods["MAPIE CQR (4 levels)"] = lambda sh=sh: mapie_quantiles(sh, MAPIE_TAUS)
            for method, run in methods.items():
                t0 = time.perf_counter()
                Q = run()
                sec = time.perf_counter() - t0
                taus = np.array(MAPIE_TAUS) if Q.shape[1] == len(MAPIE_TAUS) else TAUS
                loss = pinball(y, Q, taus)
                row: dict[str, Any] = {"data": name, "seed": seed, "method": method, "seconds": sec}
                row["crps_grid"] = float(2 * loss.mean()) if taus is TAUS else np.nan
                cols = [int(np.argmin(np.abs(taus - t))) for t in MAPIE_TAUS]
                row["pinball_4"] = float(loss[:, cols].mean())
                for t in ONE_SIDED:
                    j = np.flatnonzero(np.isclose(taus, t))
                    row[f"P(Y<=Q_{t:g})"] = float(np.mean(y <= Q[:, j[0]])) if j.size else np.nan
                row["share_inf"] = float(np.mean(~np.isfinite(Q)))
                row["rows_crossing"] = int(np.sum(np.any(Q[:, 1:] < Q[:, :-1], axis=1)))
                row["n_test"] = int(y.shape[0])
                rows.append(row)
                print(pd.Series(row).to_dict(), flush=True)
    return pd.DataFrame(rows)


def pvalue_suite(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.DataFrame]:
    counts: dict[str, list[np.ndarray]] = {"split": [], "lcp-rf": [], "lcp-rf weighted (known shift)": []}
    mismatch = []
    for seed in range(4):
        sim = cf.datasets.make_sim(args.n_sim, random_state=100 + seed)
        test = cf.datasets.make_sim(5000, random_state=200 + seed).frame
        pool = cf.datasets.make_sim(40000, random_state=300 + seed).frame
        target = pool.sample(5000, weights=np.exp(3 * pool.x1), random_state=seed)
        df = sim.frame.assign(w=np.exp(3 * sim.frame.x1))
        fits = {
            "split": (cf.split_cp(sim.formula, data=sim.frame, random_state=seed), test),
            "lcp-rf": (cf.lcp_rf(sim.formula, data=sim.frame, random_state=seed), test),
            "lcp-rf weighted (known shift)": (
                cf.lcp_rf(sim.formula, data=df, random_state=seed, likelihood_ratio="w"),
                target.assign(w=np.exp(3 * target.x1)),
            ),
        }
        for name, (res, new) in fits.items():
            p = res.pvalue(new).to_numpy()
            counts[name].append(p)
            if seed < 2:  # 2 x 5,000 = 10,000 rows for the consistency count
                y = new["y"].to_numpy()
                for a in (0.05, 0.1, 0.2):
                    pr = res.predict(new, alpha=a)
                    inside = (y >= pr["lwr"].to_numpy()) & (y <= pr["upr"].to_numpy())
                    mismatch.append(
                        {"method": name, "alpha": a, "seed": seed, "disagree": int(np.sum(inside != (p > a)))}
                    )
        print(f"p-values: seed {seed} done", flush=True)
    rows = []
    for name, ps in counts.items():
        p = np.concatenate(ps)
        for a in PV_LEVELS:
            share = float(np.mean(p <= a))
            se = float(np.sqrt(a * (1 - a) / p.shape[0]))
            rows.append(
                {"method": name, "a": a, "P(p<=a)": share, "se": se, "z": (share - a) / se, "n": int(p.shape[0])}
            )
    mm = pd.DataFrame(mismatch).groupby(["method", "alpha"], as_index=False)["disagree"].sum()
    return pd.DataFrame(rows), mm


def timing_suite(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Interval then 99 quantiles, back to back in this process, ``--reps`` times (one thread each)."""
    sim = cf.datasets.make_sim(args.n_sim, random_state=7)
    test = cf.datasets.make_sim(10000, random_state=8).frame
    res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_jobs=1)
    X = res.design.transform(test)
    est = res.estimator
    est.predict_quantiles(X[:10], TAUS)  # builds and keeps the signed index, as the first call of a session would
    out = []
    for rep in range(args.reps):
        t0 = time.perf_counter()
        est.predict_details(X, 0.1, progress=False, n_jobs=1)
        t1 = time.perf_counter()
        est.predict_quantiles(X, TAUS)
        t2 = time.perf_counter()
        out.append({"rep": rep, "interval_s": t1 - t0, "quantiles99_s": t2 - t1, "ratio": (t2 - t1) / (t1 - t0)})
    tm = pd.DataFrame(out)
    summary = tm.drop(columns="rep").agg(["median", "min", "max"])
    return tm, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", nargs="+", default=["quantiles", "pvalues", "timing"])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--n-sim", type=int, default=6000, help="points per seed for sim/toy (the p-value suite too)")
    ap.add_argument("--max-rows", type=int, default=10000, help="subsample of each real data set")
    ap.add_argument("--no-hole", action="store_true")
    ap.add_argument("--no-mapie", action="store_true", help="skip MAPIE's CQR (it fits 2 models per level)")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the timing suite")
    ap.add_argument("--out", type=Path, default=Path("bench_distribution.md"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    parts = [f"# bench_distribution ({time.strftime('%Y-%m-%d %H:%M')}, {' '.join(sys.argv[1:])})\n"]
    if "quantiles" in args.suite:
        q = quantile_suite(args)
        agg = q.groupby(["data", "method"], sort=False).mean(numeric_only=True).drop(columns="seed")
        parts += ["## Quantiles (mean over seeds)\n", agg.round(4).to_markdown(), ""]
    if "pvalues" in args.suite:
        pv, mm = pvalue_suite(args)
        parts += ["## p-values: P(p <= a) on 20,000 held-out rows\n", pv.round(4).to_markdown(index=False), ""]
        parts += ["## 'inside the interval' vs 'p > alpha' on 10,000 rows\n", mm.to_markdown(index=False), ""]
    if "timing" in args.suite:
        tm, summary = timing_suite(args)
        parts += ["## 99 quantiles vs one interval, 10,000 rows (LCP-RF, sim)\n", tm.round(3).to_markdown(index=False)]
        parts += ["", summary.round(3).to_markdown()]
    args.out.write_text("\n".join(parts) + "\n")
    print("\n".join(parts))


if __name__ == "__main__":
    main()

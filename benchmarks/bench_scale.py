#!/usr/bin/env python
"""Scale benchmark: LCP-RF's whole default job from 10,000 to 10,000,000 calibration rows.

Usage (from the repository root)::

    python benchmarks/bench_scale.py                 # every table of docs/benchmarks/scale.md (see --suite)
    python benchmarks/bench_scale.py --quick         # the same tables at a hundredth of the sizes (smoke run)
    python benchmarks/bench_scale.py --suite jobs    # one part only: jobs, quality, multi, big

Every configuration runs in its own process under ``/usr/bin/time -v`` (when
present), so the peak memory is the whole job's maximum resident set size and
the wall time includes imports and data generation. Inside, each step is
timed with ``time.perf_counter``: data, base-model fit (gradient boosting on
the training part), the forest's tuning (simulated calibrations on the
localizer part), its growing (scikit-learn), the index (leaf lookups of every
conformal point in chunks, leaf index, p2), the rest of ``conformalize``,
prediction of every test row, and the summary's calibration diagnostics. Also:
the pickled size of the fitted estimator (bytes per conformal point), the
threshold kernel alone on 2,000 test rows with 1 thread, the tuning's choice,
and coverage, median width, the paper's fidelity error and the exact
conditional coverage (the data are simulated with known noise).

Suites (``--suite all`` runs them in this order):

- ``jobs``: the paper's sim model (50 features, the noise driven by x1),
  100k x 100k and 1M x 1M, the default settings (``max_localizer_size="auto"``).
- ``multi``: the noise driven by 5 of 20 features (``make_multi``): 100k x 100k
  and 1M x 1M, default settings.
- ``quality``: 100k calibration rows, 20k test rows, seeds 0-2, sim and multi:
  the exhaustive forest (``max_localizer_size=None``: 50,000 localizer rows)
  against forests grown on at most 20,000 and 10,000 rows (the rest conformal).
- ``big``: 10M calibration rows of ``multi``, 100k test rows.

Targets (issue 32; printed PASS/FAIL, never asserted): 1M x 1M whole job under
10 minutes and 6 GB on 2 cores; per-point predict cost growing less than 2x
from 100k to 1M calibration rows; 10M calibration rows within 24 GB; the pickled
estimator at 1M under 250 MB; at most 2% median width cost against the
exhaustive forest at 100k.
Results go to ``--out`` (markdown + JSON) and to ``docs/benchmarks/scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET_SECONDS = 600.0
TARGET_RSS_GB = 6.0
TARGET_GROWTH = 2.0
TARGET_BIG_RSS_GB = 24.0
TARGET_PICKLE_MB = 250.0
TARGET_WIDTH_COST = 0.02
MB = 1024**2


# ------------------------------------------------------------------- data ----
def make_data(kind: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """X, y, true mean, true noise sd of ``n`` rows, generated in blocks (bounded temporaries).

    ``sim``: the paper's model (50 U(0,1) features, Y = x1 + eps x1 / (1 + x1)).
    ``multi``: 20 U(0,1) features, Y = x1 + x6 / 2 + eps (0.1 + (x1 + ... + x5) / 10): the noise is driven by 5
    features, so no single screened column describes it.
    """
    p = 50 if kind == "sim" else 20
    rng = np.random.default_rng(seed)
    X = np.empty((n, p))
    y, mean, sd = np.empty(n), np.empty(n), np.empty(n)
    step = 1_000_000
    for s in range(0, n, step):
        e = min(n, s + step)
        X[s:e] = rng.uniform(size=(e - s, p))
        x = X[s:e]
        if kind == "sim":
            mean[s:e], sd[s:e] = x[:, 0], x[:, 0] / (1.0 + x[:, 0])
        else:
            mean[s:e], sd[s:e] = x[:, 0] + 0.5 * x[:, 5], 0.1 + x[:, :5].sum(axis=1) / 10.0
        y[s:e] = mean[s:e] + sd[s:e] * rng.standard_normal(e - s)
    return X, y, mean, sd


# ------------------------------------------------------------------ child ----
def child(args: argparse.Namespace) -> dict[str, Any]:
    """One configuration, in this process; returns the measurements."""
    try:
        import confrf  # noqa: F401
    except ImportError:  # run from a checkout without installing
        sys.path.insert(0, str(ROOT))
    import pandas as pd

    from confrf import ConformalRegressor
    from confrf._validation import required_count
    from confrf.datasets import SimulatedData
    from confrf.localizers._compact_trees import pack_forest
    from confrf.metrics import fidelity_error
    from confrf.results.diagnostics import calibration_diagnostics

    T: dict[str, Any] = {}
    t = time.perf_counter()
    n_all = args.n_train + args.n_cal + args.n_test
    X, y, mean, sd = make_data(args.data, n_all, args.seed)
    tr, cal, te = (
        slice(0, args.n_train),
        slice(args.n_train, args.n_train + args.n_cal),
        slice(n_all - args.n_test, n_all),
    )
    T["data"] = time.perf_counter() - t
    cap = None if args.cap == "none" else (args.cap if args.cap == "auto" else int(args.cap))
    est = ConformalRegressor(
        method="lcp-rf",
        model="gbm",
        n_estimators=args.trees,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        options={"max_localizer_size": cap},
    )
    t = time.perf_counter()
    est.fit(X[tr], y[tr])
    T["fit_model"] = time.perf_counter() - t
    t = time.perf_counter()
    est.conformalize(X[cal], y[cal])
    T["conformalize"] = time.perf_counter() - t
    loc = est.localizer_
    T["tune"] = loc.tune_seconds_ or 0.0
    T["grow"] = loc.grow_seconds_
    T["index"] = loc.index_seconds_
    T["conformalize_rest"] = T["conformalize"] - T["tune"] - T["grow"] - T["index"]
    t = time.perf_counter()
    pi = est.predict_interval(X[te], progress=False)
    T["predict"] = time.perf_counter() - t
    t = time.perf_counter()
    calibration_diagnostics(est, est.alpha)
    T["summary_diagnostics"] = time.perf_counter() - t
    T["whole_in_process"] = sum(T[k] for k in ("data", "fit_model", "conformalize", "predict", "summary_diagnostics"))
    rows = X[te][: min(2000, args.n_test)]
    m_req = required_count(est.alpha, loc.index_.n)
    t, c = time.perf_counter(), time.process_time()
    loc.thresholds(rows, m_req, n_threads=1)
    # CPU time too: on a shared machine it moves less than wall time
    T["kernel_2000_1thr"], T["kernel_2000_1thr_cpu"] = time.perf_counter() - t, time.process_time() - c
    W = loc.weights(rows[:200])
    t = time.perf_counter()
    blob = pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)
    T["pickle"] = time.perf_counter() - t
    sizes = {
        "estimator": len(blob),
        "forest (compact trees, as pickled with the localizer)": len(
            pickle.dumps(pack_forest(loc.forest_), protocol=pickle.HIGHEST_PROTOCOL)
        ),
        "leaf index": len(pickle.dumps(loc.index_, protocol=pickle.HIGHEST_PROTOCOL)),
        "calibration design kept for the summary": int(est.calib_X_.nbytes),
        "calibration scores kept for the summary": int(est.calib_scores_.nbytes),
    }
    del blob
    yt, fit = y[te], est.predict(X[te])
    lwr, upr = pi[:, 0], pi[:, 1]
    width = upr - lwr
    p = X.shape[1]
    cols = [f"x{j}" for j in range(1, p + 1)]
    oracle = SimulatedData(
        name=args.data,
        frame=pd.DataFrame(X[te], columns=cols).assign(y=yt),
        formula="y ~ " + " + ".join(cols),
        mean=mean[te],
        noise_sd=sd[te],
    )
    cond = oracle.conditional_coverage(None, lwr, upr)
    tun = loc.tuning_
    return {
        "config": vars(args),
        "times": T,
        "n_localizer": int(est.calibrator_.n_grow_),
        "n_conformal": int(loc.index_.n),
        "n_trees": int(loc.n_trees),
        "min_samples_leaf": loc.min_samples_leaf_,
        "max_features": loc.max_features_,
        "n_columns": int(loc.forest_.n_features_in_),  # fewer than p when screened
        "scale": loc.scale_,
        "tuning_points": None if tun is None else int(tun.n_points),
        "neighbours_per_point": float(np.diff(W.indptr).mean()),
        "pickle_bytes": sizes,
        "pickle_bytes_per_conformal_point": sizes["estimator"] / loc.index_.n,
        "coverage": float(np.mean((yt >= lwr) & (yt <= upr))),
        "median_width": float(np.median(width)),
        "share_infinite": float(np.mean(~np.isfinite(width))),
        "fidelity": float(np.mean(fidelity_error(yt, fit, width / 2.0)[np.isfinite(width)])),
        "fidelity_median": float(np.median(fidelity_error(yt, fit, width / 2.0)[np.isfinite(width)])),
        "cond_coverage_mean": float(cond.mean()),
        "share_cond_below_0.8": float(np.mean(cond < 0.8)),
    }


# ----------------------------------------------------------------- parent ----
def run_config(cfg: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    name = "_".join(str(cfg[k]) for k in ("data", "n_cal", "n_test", "cap", "seed"))
    out = Path(args.out) / f"scale_{name}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out)]
    for k in ("data", "n_train", "n_cal", "n_test", "cap", "seed"):
        cmd += [f"--{k.replace('_', '-')}", str(cfg[k])]
    cmd += ["--trees", str(args.trees), "--n-jobs", str(args.n_jobs)]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if timer:
        cmd = [timer, "-v"] + cmd
    load = os.getloadavg()
    print(f"  {name} (load {load[0]:.2f}) ...", flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"configuration failed:\n{proc.stdout}\n{proc.stderr}")
    res = json.loads(out.read_text())
    res["suite"] = cfg["suite"]
    res["wall_seconds"] = wall
    res["loadavg_before"] = load[0]
    res["loadavg_after"] = os.getloadavg()[0]
    res["time_v"] = parse_time_v(proc.stderr) if timer else {}
    print(f"    {wall:.0f} s, peak {rss_gb(res):.2f} GB", flush=True)
    return res


def parse_time_v(text: str) -> dict[str, Any]:
    """The /usr/bin/time -v figures we report."""
    keys = {
        "Maximum resident set size (kbytes)": "max_rss_kb",
        "Elapsed (wall clock) time (h:mm:ss or m:ss)": "elapsed",
        "User time (seconds)": "user_s",
        "System time (seconds)": "sys_s",
        "Percent of CPU this job got": "cpu_pct",
    }
    out: dict[str, Any] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(.+?):\s+(.+)$", line)
        if m and m.group(1) in keys:
            out[keys[m.group(1)]] = m.group(2).strip()
    return out


def cpu_seconds(r: dict[str, Any]) -> float:
    """User + system CPU seconds of the whole job (/usr/bin/time -v): less distorted by a loaded machine."""
    tv = r["time_v"]
    return float(tv.get("user_s", "nan")) + float(tv.get("sys_s", "nan"))


def rss_gb(r: dict[str, Any]) -> float:
    kb = r["time_v"].get("max_rss_kb")
    return int(kb) / 1024**2 if kb else float("nan")


def configs(suite: str, scale: float, seeds: int = 3) -> list[dict[str, Any]]:
    """Configurations of a suite; ``scale`` multiplies every size (--quick: 0.01)."""

    def c(suite: str, data: str, n_cal: int, n_test: int, cap: str = "auto", seed: int = 0) -> dict[str, Any]:
        s = lambda v: max(200, int(v * scale))  # noqa: E731
        cap = cap if cap in ("auto", "none") else str(s(int(cap)))
        return dict(suite=suite, data=data, n_train=s(20_000), n_cal=s(n_cal), n_test=s(n_test), cap=cap, seed=seed)

    out = []
    if suite in ("jobs", "all"):
        out += [c("jobs", "sim", 100_000, 100_000), c("jobs", "sim", 1_000_000, 1_000_000)]
    if suite in ("multi", "all"):
        out += [c("multi", "multi", 100_000, 100_000), c("multi", "multi", 1_000_000, 1_000_000)]
    if suite in ("quality", "all"):
        out += [
            c("quality", data, 100_000, 20_000, cap, seed)
            for data in ("sim", "multi")
            for seed in range(seeds)
            for cap in ("none", "20000", "10000")
        ]
    if suite in ("big", "all"):
        out += [c("big", "multi", 10_000_000, 100_000)]
    return out


def _features(r: dict[str, Any]) -> str:
    # a share, a count, or "screened" (then the number of columns the forest was grown on)
    mf = r.get("max_features", 1.0)
    return f"{mf:.3g}" if isinstance(mf, (int, float)) else f"{mf} ({r.get('n_columns', '?')} col.)"


def choice(r: dict[str, Any]) -> str:
    return f"leaf {r['min_samples_leaf']}, {_features(r)}, {r.get('scale') or 'none'}"


def job_table(rs: list[dict[str, Any]]) -> list[str]:
    L = [
        "| data | calibration | test | localizer / conformal | tuning's choice (leaf, max_features, scale) | "
        "load before / after | wall (whole job) | CPU (user + sys) | data | model fit | tuning | growing | index | "
        "predict all | "
        "summary diagnostics | predict per point | kernel per point, 1 thread (CPU) | neighbours per point | "
        "peak RSS | pickled estimator (bytes per conformal point) | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rs:
        c, T = r["config"], r["times"]
        n_k = min(2000, c["n_test"])
        L.append(
            f"| {c['data']} | {c['n_cal']:,} | {c['n_test']:,} | {r['n_localizer']:,} / {r['n_conformal']:,} | "
            f"{choice(r)} | {r['loadavg_before']:.1f} / {r['loadavg_after']:.1f} | {r['wall_seconds']:.0f} | "
            f"{cpu_seconds(r):.0f} | "
            f"{T['data']:.1f} | {T['fit_model']:.1f} | {T['tune']:.1f} | {T['grow']:.1f} | {T['index']:.1f} | "
            f"{T['predict']:.1f} | {T['summary_diagnostics']:.1f} | {1e6 * T['predict'] / c['n_test']:.0f} µs | "
            f"{1e6 * T['kernel_2000_1thr'] / n_k:.0f} µs ({1e6 * T['kernel_2000_1thr_cpu'] / n_k:.0f} µs) | "
            f"{r['neighbours_per_point']:,.0f} | {rss_gb(r):.2f} GB | "
            f"{r['pickle_bytes']['estimator'] / MB:.1f} MiB ({r['pickle_bytes_per_conformal_point']:.0f} B) | "
            f"{r['coverage']:.3f} |"
        )
    return L


def quality_table(rs: list[dict[str, Any]]) -> list[str]:
    metrics = [
        ("coverage", 3),
        ("median_width", 4),
        ("share_infinite", 4),
        ("fidelity", 3),
        *([("fidelity_median", 3)] if all("fidelity_median" in r for r in rs) else []),
        ("cond_coverage_mean", 3),
        ("share_cond_below_0.8", 3),
    ]
    L = [
        "| data | max_localizer_size | localizer / conformal | seeds | "
        + " | ".join(m for m, _ in metrics)
        + " | median width vs exhaustive (paired) | tuning's choices | conformalize s |",
        "|---|---|---|---|" + "---|" * (len(metrics) + 3),
    ]
    for data in sorted({r["config"]["data"] for r in rs}):
        base = {r["config"]["seed"]: r for r in rs if r["config"]["data"] == data and r["config"]["cap"] == "none"}
        for cap in ("none",) + tuple(sorted({r["config"]["cap"] for r in rs} - {"none"}, key=int, reverse=True)):
            g = [r for r in rs if r["config"]["data"] == data and r["config"]["cap"] == cap]
            if not g:
                continue
            vals = [f"{np.mean([r[m] for r in g]):.{d}f}" for m, d in metrics]
            rel = [
                r["median_width"] / base[r["config"]["seed"]]["median_width"] - 1
                for r in g
                if r["config"]["seed"] in base
            ]
            rel_s = (
                "-"
                if cap == "none" or not rel
                else f"{100 * np.mean(rel):+.2f}% ({', '.join(f'{100 * x:+.1f}' for x in rel)})"
            )
            L.append(
                f"| {data} | {'None (exhaustive)' if cap == 'none' else cap} | {g[0]['n_localizer']:,} / "
                f"{g[0]['n_conformal']:,} | {len(g)} | "
                + " | ".join(vals)
                + f" | {rel_s} | "
                + "; ".join(choice(r) for r in g)
                + f" | {np.mean([r['times']['conformalize'] for r in g]):.1f} |"
            )
    return L


def markdown(results: list[dict[str, Any]], machine: dict[str, Any], command: str, wall: float) -> str:
    L = [
        "## Scaling",
        "",
        f"Command: `{command}`"
        + (f" ({wall / 60:.0f} minutes in all)" if wall else "")
        + f". Machine: {machine.get('cpu_model')}, "
        f"{machine.get('cpus_usable')} usable cores, Python {machine.get('python')}, numpy {machine.get('numpy')}, "
        f"scikit-learn {machine.get('scikit-learn')}; run {time.strftime('%Y-%m-%d')}. The machine was shared: the "
        "load average (1 minute) before and after every row is in the table; timings under load are inflated. "
        "Honest LCP-RF with the defaults (tuned forest, `n_estimators='auto'`, `max_localizer_size='auto'`: the "
        "forest grows on min(half the calibration rows, 50,000), every other calibration row is a conformal point), "
        f"gradient-boosting base model on 20,000 training rows, alpha = 0.1, n_jobs = "
        f"{results[0]['config']['n_jobs']}, seed 0 unless stated. Each row is one process under "
        "`/usr/bin/time -v`; times in seconds. Data: `sim` is the paper's model (50 features, the noise driven by "
        "x1); `multi` has 20 features and noise sd 0.1 + (x1 + ... + x5) / 10 (five features drive it).",
        "",
    ]
    jobs = [r for r in results if r["suite"] in ("jobs", "multi", "big")]
    if jobs:
        L += ["### Whole jobs", ""] + job_table(jobs) + [""]
    qual = [r for r in results if r["suite"] == "quality"]
    if qual:
        L += (
            [
                "### Quality: the exhaustive forest against a forest grown on fewer rows",
                "",
                f"{qual[0]['config']['n_cal']:,} calibration rows (the exhaustive forest grows on "
                f"{qual[0]['config']['n_cal'] // 2:,}), {qual[0]['config']['n_test']:,} test rows, means over the "
                "seeds. Capping the localizer part moves the rows it does not take to the conformal part. "
                "fidelity: the mean (and, where recorded, the median) of the paper's |q(x) - |y - fit|| / |y - fit| "
                "on finite intervals; "
                "cond_coverage: the exact "
                "conditional coverage of each test interval (known noise), its mean and the share below 0.8.",
                "",
            ]
            + quality_table(qual)
            + [""]
        )
    missing = [name for name in ("jobs", "multi", "quality", "big") if not any(r["suite"] == name for r in results)]
    if missing:
        L += [f"Not in this run: suite(s) {', '.join(missing)} (`--suite NAME` runs one).", ""]
    L += ["### Targets", ""]
    by = {(r["config"]["data"], r["config"]["n_cal"], r["suite"]): r for r in jobs}
    for (data, n, suite), r in sorted(by.items()):
        if suite == "big":
            ok = rss_gb(r) < TARGET_BIG_RSS_GB
            L.append(
                f"- {data}, {n:,} calibration rows: peak RSS {rss_gb(r):.2f} GB (target < {TARGET_BIG_RSS_GB:.0f} "
                f"GB), whole job {r['wall_seconds']:.0f} s (load {r['loadavg_before']:.1f}): "
                f"**{'PASS' if ok else 'FAIL'}**"
            )
            continue
        if n < max(k[1] for k in by if k[2] == suite):
            continue
        ok = r["wall_seconds"] < TARGET_SECONDS and rss_gb(r) < TARGET_RSS_GB
        L.append(
            f"- {data}, {n:,} x {r['config']['n_test']:,}: whole job {r['wall_seconds']:.0f} s (target < "
            f"{TARGET_SECONDS:.0f} s), peak RSS {rss_gb(r):.2f} GB (target < {TARGET_RSS_GB:.0f} GB), load "
            f"{r['loadavg_before']:.1f} / {r['loadavg_after']:.1f}: **{'PASS' if ok else 'FAIL'}**; "
            f"CPU time {cpu_seconds(r):.0f} s (user + sys: what the job itself consumed)"
        )
        size = r["pickle_bytes"]["estimator"]
        L.append(
            f"  - pickled estimator {size / 1e6:.1f} MB ({size / MB:.1f} MiB), "
            f"{r['pickle_bytes_per_conformal_point']:.0f} bytes per conformal point (target < "
            f"{TARGET_PICKLE_MB:.0f} MB): **{'PASS' if size / 1e6 < TARGET_PICKLE_MB else 'FAIL'}**"
        )
        small = [v for (d, m, s), v in by.items() if d == data and s == suite and m < n]
        if small:
            a = min(small, key=lambda v: v["config"]["n_cal"])
            per = lambda v: v["times"]["predict"] / v["config"]["n_test"]  # noqa: E731
            ker = lambda v: v["times"]["kernel_2000_1thr_cpu"]  # noqa: E731
            g = per(r) / per(a)
            L.append(
                f"  - per-point predict cost from {a['config']['n_cal']:,} to {n:,} calibration rows: {g:.2f}x "
                f"(kernel CPU time {ker(r) / ker(a):.2f}x, neighbours per point "
                f"{a['neighbours_per_point']:,.0f} -> {r['neighbours_per_point']:,.0f}; target < "
                f"{TARGET_GROWTH:.0f}x): **{'PASS' if g < TARGET_GROWTH else 'FAIL'}**"
            )
    for data in sorted({r["config"]["data"] for r in qual}):
        base = {r["config"]["seed"]: r for r in qual if r["config"]["data"] == data and r["config"]["cap"] == "none"}
        for cap in sorted({r["config"]["cap"] for r in qual} - {"none"}, key=int, reverse=True):
            rel = [
                r["median_width"] / base[r["config"]["seed"]]["median_width"] - 1
                for r in qual
                if r["config"]["data"] == data and r["config"]["cap"] == cap and r["config"]["seed"] in base
            ]
            if rel:
                m = float(np.mean(rel))
                L.append(
                    f"- {data}, forest grown on {int(cap):,} rows instead of {qual[0]['config']['n_cal'] // 2:,} at "
                    f"{qual[0]['config']['n_cal']:,} calibration rows: median width "
                    f"{100 * m:+.2f}% (target <= +{100 * TARGET_WIDTH_COST:.0f}%): "
                    f"**{'PASS' if m <= TARGET_WIDTH_COST else 'FAIL'}**"
                )
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="every size divided by 100 (a smoke run of the same code)")
    p.add_argument("--suite", default="all", choices=["all", "jobs", "multi", "quality", "big"])
    p.add_argument("--factor", type=float, default=1.0, help="multiply every size (row counts, caps) by this")
    p.add_argument("--seeds", type=int, default=3, help="seeds of the quality suite")
    p.add_argument("--trees", type=lambda v: v if v == "auto" else int(v), default="auto")
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument(
        "--docs",
        default=str(ROOT / "docs" / "benchmarks" / "scale.md"),
        help="also write the markdown here ('' to skip; --quick never writes it)",
    )
    p.add_argument(
        "--report",
        nargs="+",
        metavar="JSON",
        help="only rebuild the markdown from the bench_scale.json of earlier runs (several are merged)",
    )
    # internal: run one configuration
    p.add_argument("--child")
    p.add_argument("--data", default="sim")
    p.add_argument("--n-train", type=int, default=20_000)
    p.add_argument("--n-cal", type=int)
    p.add_argument("--n-test", type=int)
    p.add_argument("--cap", default="auto")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.child:
        res = child(args)
        Path(args.child).write_text(json.dumps(res, indent=1, default=str))
        return 0

    sys.path.insert(0, str(HERE))
    from bench_predict import machine_info

    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.report:
        runs = [json.loads(Path(f).read_text()) for f in args.report]
        results = [r for run in runs for r in run["results"]]
        md = markdown(results, runs[0]["machine"], " and ".join(run.get("command", "?") for run in runs), 0.0)
        print(md)
        Path(args.out, "bench_scale.md").write_text(md)
        if args.docs:
            Path(args.docs).write_text(md)
        return 0
    factor = 0.01 if args.quick else args.factor
    cfgs = configs(args.suite, factor, args.seeds)
    print(f"bench_scale: {len(cfgs)} configurations", flush=True)
    t0 = time.perf_counter()
    results = [run_config(cfg, args) for cfg in cfgs]
    wall = time.perf_counter() - t0
    command = "python benchmarks/bench_scale.py" + (" --quick" if args.quick else "")
    command += "" if args.suite == "all" else f" --suite {args.suite}"
    command += "" if factor in (1.0, 0.01) else f" --factor {factor:g}"
    command += "" if args.seeds == 3 else f" --seeds {args.seeds}"
    md = markdown(results, machine_info(), command, wall)
    print(md)
    Path(args.out, "bench_scale.md").write_text(md)
    Path(args.out, "bench_scale.json").write_text(
        json.dumps(
            {"machine": machine_info(), "command": command, "wall_seconds": wall, "results": results},
            indent=1,
            default=str,
        )
    )
    if args.docs and not args.quick and factor == 1.0:
        Path(args.docs).write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

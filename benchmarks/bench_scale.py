#!/usr/bin/env python
"""Scale benchmark: LCP-RF fit + predict from 10,000 to 100,000 calibration points.

Usage (from the repository root)::

    python benchmarks/bench_scale.py            # 10k and 100k calibration points: tuned (default), auto, fixed leaves
    python benchmarks/bench_scale.py --quick    # 2k and 20k: a smoke run of the same code

Every configuration runs in its own process under ``/usr/bin/time -v`` (when
present), so the peak memory is the whole job's maximum resident set size and
the wall time includes imports and data generation. Inside, each step is
timed once with ``time.perf_counter``:

- base-model fit (gradient boosting on the training part);
- conformalize, split into tuning the forest (``"tune"``: simulated
  calibrations on the localizer part), growing it (scikit-learn), the O(n k)
  precomputation (leaf lookup of the conformal points, leaf index, p2), and
  the rest (calibration scores, the random split);
- predict of every test row (``predict_interval``, chunked, ``n_jobs`` threads);
- the threshold kernel alone on 2,000 test rows with 1 thread (the cleanest
  per-point cost, for the growth ratio);
- the pickled size of the fitted estimator and of its parts.

Targets (issue 8; printed PASS/FAIL, never asserted): 100k calibration and 100k
test points with 100 trees in under 2 minutes and 4 GB on 2 cores; per-point
predict cost growing less than 3x when the calibration set grows 10x; issue 12:
the tuned default fit (model fit + conformalize) at most 2x the previous
default's ("auto" leaves, every feature at each split, raw scores) at 10k and 100k.
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
TARGET_SECONDS = 120.0
TARGET_RSS_GB = 4.0
TARGET_GROWTH = 3.0


# ------------------------------------------------------------------ child ----
def child(args: argparse.Namespace) -> dict[str, Any]:
    """One configuration, in this process; returns the measurements."""
    try:
        import confrf  # noqa: F401
    except ImportError:  # run from a checkout without installing
        sys.path.insert(0, str(ROOT))
    from confrf import ConformalRegressor
    from confrf._validation import required_count
    from confrf.datasets import make_sim

    T: dict[str, Any] = {}
    t = time.perf_counter()
    n_all = args.n_train + args.n_cal + args.n_test
    sim = make_sim(n_all, random_state=args.seed)
    X, y = np.asarray(sim.X), np.asarray(sim.y)
    tr, cal, te = (
        slice(0, args.n_train),
        slice(args.n_train, args.n_train + args.n_cal),
        slice(n_all - args.n_test, n_all),
    )
    T["data"] = time.perf_counter() - t
    leaf = args.leaf if args.leaf in ("auto", "tune") else int(args.leaf)
    # a given or "auto" leaf keeps the previous defaults max_features=1.0 and raw scores; "tune" tunes all three
    # (the new default)
    est = ConformalRegressor(
        method="lcp-rf",
        model="gbm",
        n_estimators=args.trees,
        min_samples_leaf=leaf,
        max_features="tune" if leaf == "tune" else 1.0,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        options={"scale": "tune" if leaf == "tune" else "none"},
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
    T["default_fit"] = T["fit_model"] + T["conformalize"]
    t = time.perf_counter()
    pi = est.predict_interval(X[te], progress=False)
    T["predict"] = time.perf_counter() - t
    # kernel alone, 1 thread, on a fixed number of rows
    rows = X[te][: min(2000, args.n_test)]
    leaves_t = time.perf_counter()
    loc.leaves(rows)
    T["leaves_2000"] = time.perf_counter() - leaves_t
    m_req = required_count(est.alpha, loc.index_.n)
    t, c = time.perf_counter(), time.process_time()
    loc.thresholds(rows, m_req, n_threads=1)
    # CPU time too: on a shared machine it moves less than wall time
    T["kernel_2000_1thr"], T["kernel_2000_1thr_cpu"] = time.perf_counter() - t, time.process_time() - c
    W = loc.weights(rows[:200])
    idx = loc.index_
    sizes = {
        "estimator": len(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)),
        "forest (scikit-learn trees)": len(pickle.dumps(loc.forest_, protocol=pickle.HIGHEST_PROTOCOL)),
        "leaf index": len(pickle.dumps(idx, protocol=pickle.HIGHEST_PROTOCOL)),
        "calibration design kept for the summary": int(est.calib_X_.nbytes),
    }
    yt = y[te]
    return {
        "config": vars(args),
        "times": T,
        "n_conformal": idx.n,
        "min_samples_leaf": loc.min_samples_leaf_,
        "max_features": loc.max_features_,
        "n_columns": int(loc.forest_.n_features_in_),  # fewer than 50 when screened
        "scale": loc.scale_,
        "neighbours_per_point": float(np.diff(W.indptr).mean()),
        "leaf_entries_per_point": float(idx.leaf_pop[loc.leaves(rows[:200])].sum(axis=1).mean()),
        "index_bytes_in_memory": int(
            sum(
                getattr(idx, f).nbytes
                for f in (
                    "leaf_ptr",
                    "members",
                    "member_mult",
                    "below",
                    "leaf_pop",
                    "scores",
                    "p2",
                    "sorted_p2",
                    "member_rank",
                    "scores_r",
                    "p2_r",
                )
            )
        ),
        "pickle_bytes": sizes,
        "coverage": float(np.mean((yt >= pi[:, 0]) & (yt <= pi[:, 1]))),
        "mean_width": float(np.mean(pi[:, 1] - pi[:, 0])),
    }


# ----------------------------------------------------------------- parent ----
def run_config(n_train: int, n_cal: int, n_test: int, leaf: str, args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out) / f"scale_{n_cal}_{leaf}.json"
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(out),
        "--n-train",
        str(n_train),
        "--n-cal",
        str(n_cal),
        "--n-test",
        str(n_test),
        "--leaf",
        leaf,
        "--trees",
        str(args.trees),
        "--n-jobs",
        str(args.n_jobs),
        "--seed",
        str(args.seed),
    ]
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if timer:
        cmd = [timer, "-v"] + cmd
    print(f"  n_cal={n_cal:,} n_test={n_test:,} leaf={leaf} ...", flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"configuration failed:\n{proc.stdout}\n{proc.stderr}")
    res = json.loads(out.read_text())
    res["wall_seconds"] = wall
    res["time_v"] = parse_time_v(proc.stderr) if timer else {}
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


def _features(r: dict[str, Any]) -> str:
    # a share, a count, or "screened" (then the number of columns the forest was grown on)
    mf = r.get("max_features", 1.0)
    return f"{mf:.3g}" if isinstance(mf, (int, float)) else f"{mf} ({r.get('n_columns', '?')} columns)"


def markdown(results: list[dict[str, Any]], machine: dict[str, Any], load: tuple[float, ...], command: str) -> str:
    mb = 1024**2
    L = [
        "## Scaling",
        "",
        f"Command: `{command}`. Machine: {machine.get('cpu_model')}, {machine.get('cpus_usable')} usable cores, "
        f"Python {machine.get('python')}, numpy {machine.get('numpy')}, scikit-learn {machine.get('scikit-learn')}; "
        f"load average before the run {load[0]:.2f}. Paper's sim model (50 features), 100 trees unless stated, "
        "honest LCP-RF (half of the calibration set grows the forest, half are conformal points), "
        f"gradient-boosting base model, alpha = 0.1, n_jobs = {results[0]['config']['n_jobs']}. "
        "Each row is one process under `/usr/bin/time -v`; times in seconds.",
        "",
        "| calibration | test | leaf size (max_features, score scale) | wall (whole job) | model fit | tuning "
        "| forest growing | "
        "O(nk) index | fit (model + conformalize) | predict all | "
        "predict per point | kernel per point, 1 thread (CPU) | neighbours per point | peak RSS | pickled "
        "estimator | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c, T = r["config"], r["times"]
        rss = int(r["time_v"]["max_rss_kb"]) * 1024 / mb if r["time_v"].get("max_rss_kb") else float("nan")
        L.append(
            f"| {c['n_cal']:,} | {c['n_test']:,} | {c['leaf']} ({r['min_samples_leaf']}, "
            f"{_features(r)}, {r.get('scale') or 'none'}) | {r['wall_seconds']:.1f} | "
            f"{T['fit_model']:.1f} | {T.get('tune', 0.0):.1f} | {T['grow']:.1f} | {T['index']:.2f} | "
            f"{T.get('default_fit', T['fit_model'] + T['conformalize']):.1f} | {T['predict']:.1f} | "
            f"{1e6 * T['predict'] / c['n_test']:.0f} µs | "
            f"{1e6 * T['kernel_2000_1thr'] / min(2000, c['n_test']):.0f} µs "
            f"({1e6 * T['kernel_2000_1thr_cpu'] / min(2000, c['n_test']):.0f} µs) | "
            f"{r['neighbours_per_point']:,.0f} | {rss:,.0f} MB | {r['pickle_bytes']['estimator'] / mb:.1f} MB | "
            f"{r['coverage']:.3f} |"
        )
    L += ["", "### Targets", ""]
    big = [r for r in results if r["config"]["n_cal"] == max(x["config"]["n_cal"] for x in results)]
    for r in big:
        rss_gb = int(r["time_v"].get("max_rss_kb", 0)) / 1024**2
        ok = r["wall_seconds"] < TARGET_SECONDS and 0 < rss_gb < TARGET_RSS_GB
        L.append(
            f"- {r['config']['n_cal']:,} calibration + {r['config']['n_test']:,} test points, leaf "
            f"{r['config']['leaf']}: whole job {r['wall_seconds']:.1f} s (target < {TARGET_SECONDS:.0f} s), "
            f"peak RSS {rss_gb:.2f} GB (target < {TARGET_RSS_GB:.0f} GB): **{'PASS' if ok else 'FAIL'}**"
        )
    for leaf in sorted({r["config"]["leaf"] for r in results}):
        rs = sorted((r for r in results if r["config"]["leaf"] == leaf), key=lambda r: r["config"]["n_cal"])
        if len(rs) < 2:
            continue
        a, b = rs[0], rs[-1]
        factor = b["config"]["n_cal"] / a["config"]["n_cal"]
        per = lambda r: r["times"]["predict"] / r["config"]["n_test"]  # noqa: E731
        ker = lambda r: r["times"]["kernel_2000_1thr_cpu"]  # noqa: E731
        g_pred, g_ker = per(b) / per(a), ker(b) / ker(a)
        L.append(
            f"- per-point cost growth for {factor:.0f}x calibration points, leaf {leaf}: whole predict "
            f"{g_pred:.2f}x, threshold kernel (CPU time) {g_ker:.2f}x; neighbours per point grew "
            f"{b['neighbours_per_point'] / a['neighbours_per_point']:.2f}x (target < {TARGET_GROWTH:.0f}x): "
            f"**{'PASS' if g_pred < TARGET_GROWTH else 'FAIL'}**"
        )
    for n in sorted({r["config"]["n_cal"] for r in results}):
        by = {r["config"]["leaf"]: r for r in results if r["config"]["n_cal"] == n}
        if "tune" in by and "auto" in by:
            fit = lambda r: r["times"]["fit_model"] + r["times"]["conformalize"]  # noqa: E731
            ratio = fit(by["tune"]) / fit(by["auto"])
            L.append(
                f"- {n:,} calibration points: tuned default fit {fit(by['tune']):.1f} s vs the previous default "
                f"(auto leaves, all features, raw scores) {fit(by['auto']):.1f} s: {ratio:.2f}x (target <= 2x): "
                f"**{'PASS' if ratio <= 2 else 'FAIL'}**"
            )
        if "tune" in by:
            # within one process, so less exposed to the load of a shared machine than the ratio of two runs
            T = by["tune"]["times"]
            fit_t = T["fit_model"] + T["conformalize"]
            L.append(
                f"  - same run: the tuning took {T['tune']:.1f} s of the {fit_t:.1f} s fit, i.e. the fit without "
                f"it would take {fit_t - T['tune']:.1f} s: {fit_t / (fit_t - T['tune']):.2f}x; chosen leaf "
                f"{by['tune']['min_samples_leaf']}, max_features {_features(by['tune'])}, "
                f"score scale {by['tune'].get('scale') or 'none'}"
            )
    L += [
        "",
        "Pickled size of the largest fit, by part (the leaf index stores one int32 member id per point "
        "and tree and rebuilds its derived arrays on load):",
        "",
    ]
    r = results[-1]
    for part, size in r["pickle_bytes"].items():
        L.append(f"- {part}: {size / mb:.1f} MB")
    L.append(f"- leaf index in memory (with the derived arrays): {r['index_bytes_in_memory'] / mb:.1f} MB")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2k and 20k calibration points instead of 10k and 100k")
    p.add_argument(
        "--leaves",
        default="tune,auto,20",
        help="comma-separated leaf sizes ('tune' = the default, 'auto' = ceil(sqrt(n)))",
    )
    # "auto" is 100 trees from 5,000 localizer points on, i.e. at every size this script runs by default
    p.add_argument("--trees", type=lambda v: v if v == "auto" else int(v), default="auto")
    p.add_argument("--n-train", type=int, default=20_000)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument(
        "--docs",
        default=str(ROOT / "docs" / "benchmarks" / "scale.md"),
        help="also write the markdown here ('' to skip)",
    )
    # internal: run one configuration
    p.add_argument("--child")
    p.add_argument("--n-cal", type=int)
    p.add_argument("--n-test", type=int)
    p.add_argument("--leaf")
    args = p.parse_args(argv)
    if args.child:
        res = child(args)
        Path(args.child).write_text(json.dumps(res, indent=1, default=str))
        return 0

    sys.path.insert(0, str(HERE))
    from bench_predict import machine_info

    Path(args.out).mkdir(parents=True, exist_ok=True)
    sizes = [2_000, 20_000] if args.quick else [10_000, 100_000]
    n_train = min(args.n_train, 4_000) if args.quick else args.n_train
    load = os.getloadavg()
    print(f"bench_scale: calibration sizes {sizes}, leaves {args.leaves}", flush=True)
    results = [run_config(n_train, n, n, leaf, args) for leaf in args.leaves.split(",") for n in sizes]
    command = "python benchmarks/bench_scale.py" + (" --quick" if args.quick else "")
    md = markdown(results, machine_info(), load, command)
    print(md)
    Path(args.out, "bench_scale.md").write_text(md)
    Path(args.out, "bench_scale.json").write_text(
        json.dumps({"machine": machine_info(), "loadavg_before": load, "results": results}, indent=1, default=str)
    )
    if args.docs:
        Path(args.docs).write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
localizer part), its growing (the screening forest included), the index (leaf lookups of every
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
- ``levers``: 100k calibration rows, 20k test rows, seeds 0-2, sim and multi: how
  the forest grows (the default; ``max_samples`` 0.5 and 0.25; ``forest_backend="lightgbm"``).
- ``cap``: 300k calibration rows, seeds 0-2, sim and multi: the default cap (50,000
  localizer rows) against the exhaustive forest on half of the rows.
- ``big``: 10M calibration rows of ``multi``, 100k test rows.
- ``kernel`` (not in ``all``): the threshold kernel alone on one forest indexing 50,000 and 950,000 conformal
  points, CPU ns per neighbour of each gather, 1 thread (``kernel_scale.py``; issue 40's target: at most 1.3x).

Targets (issue 32; printed PASS/FAIL, never asserted): 1M x 1M whole job under
10 minutes and 6 GB on 2 cores; per-point predict cost growing less than 2x
from 100k to 1M calibration rows; 10M calibration rows within 24 GB; the pickled
estimator at 1M under 250 MB; at most 2% median width cost against the
exhaustive forest at 100k.
Results go to ``--out`` (markdown + JSON) and to ``docs/benchmarks/scale.md``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

#: ``--help``'s epilog: the final timing runs, for an idle machine
FINAL_RUNS = """\
final timing runs (on an idle machine: `uptime` load average below 1; one at a time):

  1M x 1M whole job (and 100k x 100k for the per-point growth), sim data, 2 threads:
      python benchmarks/bench_scale.py --suite jobs --docs ''
    expected: about 3-6 minutes for the 1M job on 2 idle cores (297 CPU-seconds measured at load 13,
    before the kernel changes of the follow-up), peak about 3.4 GB.

  several-features data (noise driven by 5 of 20 features), 100k and 1M:
      python benchmarks/bench_scale.py --suite multi --docs ''

  10M calibration rows (multi data, 100k test rows), with the memory guard:
      python benchmarks/bench_scale.py --suite big --max-rss-gb 22 --docs ''
    the guard: a watchdog thread in the job reads its resident set every 0.2 s and stops the job
    (exit status 3, "memory guard" on stderr) above --max-rss-gb, before the 24 GB machine swaps;
    run --suite big --factor 0.2 and --factor 0.4 (2M, 4M rows) first and extrapolate the peak.

  then merge the JSON of every run into docs/benchmarks/scale.md:
      python benchmarks/bench_scale.py --report benchmarks/results/bench_scale.json [more.json ...]
"""

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET_SECONDS = 600.0
TARGET_RSS_GB = 6.0
TARGET_GROWTH = 2.0
TARGET_BIG_RSS_GB = 24.0
TARGET_PICKLE_MB = 250.0
TARGET_WIDTH_COST = 0.02
MB = 1024**2
#: the growth levers of the ``levers`` suite: (forest_backend, max_samples)
LEVERS = (("sklearn", None), ("sklearn", 0.5), ("sklearn", 0.25), ("lightgbm", None))
#: calibration rows of the ``cap`` suite: the cap (50,000 localizer rows) binds, the exhaustive forest grows on half
CAP_N_CAL = 300_000


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
class StepClock:
    """Wall and CPU seconds of named steps; CPU counts every thread of this process (``time.process_time``).

    On a shared machine the CPU seconds move much less than the wall time. :meth:`wrap` times the outermost call of
    a function (the tuning grows and indexes small forests of its own inside the real ones).
    """

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._depth: dict[str, int] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        outer = self._depth.get(name, 0) == 0
        self._depth[name] = self._depth.get(name, 0) + 1
        w, c = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self._depth[name] -= 1
            if outer:
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - w
                self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        func = getattr(owner, attr)

        @functools.wraps(func)
        def timed(*a: Any, **kw: Any) -> Any:
            with self(name):
                return func(*a, **kw)

        setattr(owner, attr, timed)


def memory_guard(limit_gb: float, period: float = 0.2) -> None:
    """Stop this process (exit status 3) as soon as its resident set exceeds ``limit_gb``.

    A daemon thread polls /proc/self/statm: the kernels and scikit-learn release the GIL while they
    allocate, so it runs during every step. os._exit, not an exception: the step in progress may
    hold the GIL for no more than one of its Python-level calls, and nothing must be written.
    """
    import threading

    page = os.sysconf("SC_PAGE_SIZE")
    limit = int(limit_gb * 1024**3)

    def watch() -> None:
        while True:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * page
            if rss > limit:
                sys.stderr.write(f"memory guard: resident set {rss / 1024**3:.1f} GB > {limit_gb:g} GB, stopped\n")
                sys.stderr.flush()
                os._exit(3)
            time.sleep(period)

    if os.path.exists("/proc/self/statm"):
        threading.Thread(target=watch, daemon=True, name="memory-guard").start()


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One configuration, in this process; returns the measurements."""
    if args.max_rss_gb:
        memory_guard(args.max_rss_gb)
    # the code of this checkout, not an installed confrf (which may be another worktree's)
    sys.path.insert(0, str(ROOT))
    import pandas as pd

    import confrf.localizers.forest as forest_module
    from confrf import ConformalRegressor
    from confrf._validation import required_count
    from confrf.calibrators.lcp_rf import LCPForestCalibrator
    from confrf.datasets import SimulatedData
    from confrf.localizers._compact_trees import pack_forest
    from confrf.metrics import fidelity_error
    from confrf.results.diagnostics import calibration_diagnostics

    clock = StepClock()
    clock.wrap(forest_module, "tune_forest", "tune")
    clock.wrap(forest_module.ForestLocalizer, "grow", "tune_and_grow")
    clock.wrap(LCPForestCalibrator, "calibrate_rows", "calibrate")
    with clock("data"):
        n_all = args.n_train + args.n_cal + args.n_test
        X, y, mean, sd = make_data(args.data, n_all, args.seed)
        tr, cal, te = (
            slice(0, args.n_train),
            slice(args.n_train, args.n_train + args.n_cal),
            slice(n_all - args.n_test, n_all),
        )
    cap = None if args.cap == "none" else (args.cap if args.cap == "auto" else int(args.cap))
    options: dict[str, Any] = {"max_localizer_size": cap}
    if args.forest_backend != "sklearn":
        options["forest_backend"] = args.forest_backend
    if args.max_samples is not None:
        options["max_samples"] = args.max_samples
    est = ConformalRegressor(
        method="lcp-rf",
        model="gbm",
        n_estimators=args.trees,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        options=options,
    )
    with clock("fit_model"):
        est.fit(X[tr], y[tr])
    with clock("conformalize"):
        est.conformalize(X[cal], y[cal])
    loc = est.localizer_
    with clock("predict"):
        pi = est.predict_interval(X[te], progress=False)
    with clock("summary_diagnostics"):
        calibration_diagnostics(est, est._alpha())
    T: dict[str, Any] = {}
    C: dict[str, Any] = {}
    for out, src in ((T, clock.wall), (C, clock.cpu)):
        out.update({k: src[k] for k in ("data", "fit_model", "conformalize", "predict", "summary_diagnostics")})
        out["tune"] = src.get("tune", 0.0)
        out["grow"] = src["tune_and_grow"] - out["tune"]  # the screening forest included
        out["index"] = src["calibrate"] - src["tune_and_grow"]  # lookups of the conformal points and the index
        out["conformalize_rest"] = src["conformalize"] - src["calibrate"]
        out["whole_in_process"] = sum(
            out[k] for k in ("data", "fit_model", "conformalize", "predict", "summary_diagnostics")
        )
    rows = X[te][: min(2000, args.n_test)]
    m_req = required_count(est._alpha(), loc.index_.n)
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
        # the tuning may choose no localization (split conformal's threshold): then there is no forest
        "forest (compact trees, as pickled with the localizer)": 0
        if loc.forest_ is None
        else len(pickle.dumps(pack_forest(loc.forest_), protocol=pickle.HIGHEST_PROTOCOL)),
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
        "cpu": C,
        "n_localizer": int(est.calibrator_.n_grow_),
        "n_conformal": int(loc.index_.n),
        "n_trees": int(loc.n_trees),
        "min_samples_leaf": loc.min_samples_leaf_,
        "max_features": loc.max_features_,
        "n_columns": 0 if loc.forest_ is None else int(loc.forest_.n_features_in_),  # fewer than p when screened
        "scale": loc.scale_,
        "tuning_points": None if tun is None else int(tun.n_points),
        "neighbours_per_point": float(np.diff(W.indptr).mean()),
        # what the kernel costs per neighbour (CPU time, 1 thread): flat in n when the pass stays cache-local
        "kernel_ns_per_neighbour": 1e9
        * T["kernel_2000_1thr_cpu"]
        / rows.shape[0]
        / max(1.0, float(np.diff(W.indptr).mean())),
        "pickle_bytes": sizes,
        "pickle_bytes_per_conformal_point": sizes["estimator"] / loc.index_.n,
        "coverage": float(np.mean((yt >= lwr) & (yt <= upr))),
        "median_width": float(np.median(width)),
        "share_infinite": float(np.mean(~np.isfinite(width))),
        "fidelity": float(np.mean(fidelity_error(yt, fit, width / 2.0)[np.isfinite(width)])),
        "fidelity_median": float(np.median(fidelity_error(yt, fit, width / 2.0)[np.isfinite(width)])),
        "cond_coverage_mean": float(cond.mean()),
        "cond_coverage_sd": float(cond.std()),
        "share_cond_below_0.8": float(np.mean(cond < 0.8)),
    }


# ----------------------------------------------------------------- parent ----
def run_config(cfg: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    name = "_".join(str(cfg[k]) for k in ("data", "n_cal", "n_test", "cap", "seed"))
    name += "" if lever(cfg) == "default" else "_" + lever(cfg).replace(" ", "").replace("=", "")
    out = Path(args.out) / f"scale_{name}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out)]
    for k in ("data", "n_train", "n_cal", "n_test", "cap", "seed", "forest_backend", "max_samples"):
        if cfg.get(k) is not None:
            cmd += [f"--{k.replace('_', '-')}", str(cfg[k])]
    cmd += ["--trees", str(args.trees), "--n-jobs", str(args.n_jobs), "--max-rss-gb", str(args.max_rss_gb)]
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

    def c(
        suite: str,
        data: str,
        n_cal: int,
        n_test: int,
        cap: str = "auto",
        seed: int = 0,
        forest_backend: str = "sklearn",
        max_samples: float | None = None,
    ) -> dict[str, Any]:
        s = lambda v: max(200, int(v * scale))  # noqa: E731
        cap = cap if cap in ("auto", "none") else str(s(int(cap)))
        return dict(
            suite=suite,
            data=data,
            n_train=s(20_000),
            n_cal=s(n_cal),
            n_test=s(n_test),
            cap=cap,
            seed=seed,
            forest_backend=forest_backend,
            max_samples=max_samples,
        )

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
    if suite in ("levers", "all"):
        out += [
            c("levers", data, 100_000, 20_000, "auto", seed, backend, ms)
            for data in ("sim", "multi")
            for seed in range(seeds)
            for backend, ms in LEVERS
        ]
    if suite in ("cap", "all"):
        out += [
            c("cap", data, CAP_N_CAL, 20_000, cap, seed)
            for data in ("sim", "multi")
            for seed in range(seeds)
            for cap in ("none", "auto")
        ]
    if suite in ("big", "all"):
        out += [c("big", "multi", 10_000_000, 100_000)]
    return out


def _cap_label(r: dict[str, Any]) -> str:
    cap = r["config"]["cap"]
    return "exhaustive" if cap == "none" else ("capped (auto)" if cap == "auto" else f"capped at {int(cap):,}")


def lever(cfg: dict[str, Any]) -> str:
    """How the forest grew: "default", "max_samples=0.5", "lightgbm", ..."""
    parts = [] if cfg.get("forest_backend", "sklearn") == "sklearn" else [cfg["forest_backend"]]
    parts += [] if cfg.get("max_samples") is None else [f"max_samples={cfg['max_samples']:g}"]
    return ", ".join(parts) or "default"


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
        "kernel CPU per neighbour | "
        "peak RSS | pickled estimator (bytes per conformal point) | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
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
            f"{r['neighbours_per_point']:,.0f} | {_ns_per_neighbour(r)} | {rss_gb(r):.2f} GB | "
            f"{r['pickle_bytes']['estimator'] / MB:.1f} MiB ({r['pickle_bytes_per_conformal_point']:.0f} B) | "
            f"{r['coverage']:.3f} |"
        )
    return L


def _ns_per_neighbour(r: dict[str, Any]) -> str:
    v = r.get("kernel_ns_per_neighbour")  # absent from results of earlier versions
    return "-" if v is None else f"{v:.0f} ns"


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


def compare_table(rs: list[dict[str, Any]], variant: Any, base: str) -> list[str]:
    """Means over seeds per data set and variant (``variant(r)`` a label), widths paired with the ``base`` label's."""
    metrics = [
        ("coverage", 3),
        ("median_width", 4),
        ("share_infinite", 4),
        ("fidelity_median", 3),
        ("cond_coverage_mean", 3),
        ("cond_coverage_sd", 4),
        ("share_cond_below_0.8", 4),
    ]
    L = [
        "| data | variant | localizer / conformal | seeds | "
        + " | ".join(m for m, _ in metrics)
        + " | median width vs "
        + base
        + " (paired: mean, per seed) | tuning's choices | CPU s: tuning / growing / index | predict CPU per point "
        "| neighbours per point |",
        "|---|---|---|---|" + "---|" * (len(metrics) + 5),
    ]
    labels = list(dict.fromkeys(variant(r) for r in rs))
    for data in sorted({r["config"]["data"] for r in rs}):
        ref = {r["config"]["seed"]: r for r in rs if r["config"]["data"] == data and variant(r) == base}
        for label in labels:
            g = [r for r in rs if r["config"]["data"] == data and variant(r) == label]
            if not g:
                continue
            vals = [f"{np.mean([r.get(m, np.nan) for r in g]):.{d}f}" for m, d in metrics]
            rel = [
                r["median_width"] / ref[r["config"]["seed"]]["median_width"] - 1
                for r in g
                if r["config"]["seed"] in ref
            ]
            rel_s = (
                "-"
                if label == base or not rel
                else f"{100 * np.mean(rel):+.2f}% ({', '.join(f'{100 * x:+.1f}' for x in rel)})"
            )
            cpu = {k: np.mean([r.get("cpu", r["times"])[k] for r in g]) for k in ("tune", "grow", "index")}
            per = np.mean([1e6 * r.get("cpu", r["times"])["predict"] / r["config"]["n_test"] for r in g])
            L.append(
                f"| {data} | {label} | {g[0]['n_localizer']:,} / {g[0]['n_conformal']:,} | {len(g)} | "
                + " | ".join(vals)
                + f" | {rel_s} | "
                + "; ".join(choice(r) for r in g)
                + f" | {cpu['tune']:.1f} / {cpu['grow']:.1f} / {cpu['index']:.1f} | {per:.0f} µs | "
                f"{np.mean([r['neighbours_per_point'] for r in g]):,.0f} |"
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
    levers = [r for r in results if r["suite"] == "levers"]
    if levers:
        L += (
            [
                "### Levers measured: how the forest grows",
                "",
                f"{levers[0]['config']['n_cal']:,} calibration rows (the forest grows on "
                f"{levers[0]['n_localizer']:,}), {levers[0]['config']['n_test']:,} test rows, every other setting "
                "the default (tuned leaves, features and scale; the tuning simulates each variant's own growth). "
                "`max_samples=s`: each scikit-learn tree draws a bootstrap sample of s times the localizer rows; "
                "`lightgbm`: LightGBM's random-forest mode (`forest_backend='lightgbm'`, histogram splits, a 63.2% "
                "subsample per tree). CPU seconds count every thread of the process. cond_coverage: the exact "
                "conditional coverage of each test interval (known noise): mean, standard deviation over the test "
                "points, share below 0.8; fidelity_median: the median of |q(x) - |y - fit|| / |y - fit|.",
                "",
            ]
            + compare_table(levers, lambda r: lever(r["config"]), "default")
            + [""]
        )
    caps = [r for r in results if r["suite"] == "cap"]
    if caps:
        L += (
            [
                "### Quality where the cap binds",
                "",
                f"{caps[0]['config']['n_cal']:,} calibration rows, {caps[0]['config']['n_test']:,} test rows: the "
                "exhaustive forest (`max_localizer_size=None`, grown on half the rows) against the default cap "
                "(`max_localizer_size='auto'`: 50,000 localizer rows, every other row conformal). Metrics as "
                "above.",
                "",
            ]
            + compare_table(caps, _cap_label, "exhaustive")
            + [""]
        )
    missing = [
        name
        for name in ("jobs", "multi", "quality", "levers", "cap", "big")
        if not any(r["suite"] == name for r in results)
    ]
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
                f"(kernel CPU time {ker(r) / ker(a):.2f}x, per neighbour {_ns_per_neighbour(a)} -> "
                f"{_ns_per_neighbour(r)}, neighbours per point "
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
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog=FINAL_RUNS, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="every size divided by 100 (a smoke run of the same code)")
    p.add_argument(
        "--suite", default="all", choices=["all", "jobs", "multi", "quality", "levers", "cap", "big", "kernel"]
    )
    p.add_argument("--factor", type=float, default=1.0, help="multiply every size (row counts, caps) by this")
    p.add_argument("--seeds", type=int, default=3, help="seeds of the quality suite")
    p.add_argument("--trees", type=lambda v: v if v == "auto" else int(v), default="auto")
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument(
        "--max-rss-gb",
        type=float,
        default=22.0,
        help="memory guard: stop a configuration whose resident set exceeds this (GB; 0: no guard)",
    )
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
    p.add_argument("--forest-backend", default="sklearn", choices=["sklearn", "lightgbm"])
    p.add_argument("--max-samples", type=float, default=None)
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
    if args.suite == "kernel":  # in this process: the kernel alone, on one forest (kernel_scale.py)
        from kernel_scale import main as kernel_scale

        sizes = [str(max(1000, int(v * factor))) for v in (50_000, 950_000)]
        grow = str(max(1000, int(50_000 * factor)))
        L = kernel_scale(["--n-conf", *sizes, "--n-grow", grow, "--leaf", str(max(5, int(200 * factor)))])
        Path(args.out, "bench_scale_kernel.md").write_text("\n".join(L) + "\n")
        return 0
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

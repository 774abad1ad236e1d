#!/usr/bin/env python
"""The paper's baselines against LCP-RF: kernel LCP (Guan), SLCP (Han et al.), SPLIT, CQR.

Usage (from the repository root)::

    python benchmarks/bench_baselines.py
    python benchmarks/bench_baselines.py --n-train 1000 --n-cal 1000 --n-test 1000 --repeats 3 \
        --data toy sim --out benchmarks/results

Data: the paper's toy model (X in [0, 7]^21, one active feature,
y = sin(x1)^2 + 0.1 + 0.6 eps sin(2 x1)) and its sim model (X in [0, 1]^50,
y = x1 + eps x1 / (1 + x1)). Every repeat draws fresh training, calibration
and test sets (seeds seed + 10 r, + 1, + 2).

For every configuration (method, score, base model) and test point:

* coverage: share of test responses inside the interval;
* conditional coverage: P(Y in interval | x) exactly, from the model
  (``SimulatedData.conditional_coverage``); reported as its mean and the share
  of test points covered with probability below 1 - 2 alpha;
* width: upr - lwr (an empty CQR interval counts as 0), mean over finite ones, and the share of infinite ones;
* oracle width: 2 q*(x), q*(x) the exact (1 - alpha)-quantile of
  |Y - c(x)| given x around the method's own center c(x)
  (``SimulatedData.oracle_score_quantile``); reported as the Pearson correlation
  of width and oracle width over the finite widths ("n/a" for a constant
  width) and the median relative error |w - w*| / w* (the paper's err_{n+1});
* time: ``fit`` + ``conformalize``, and ``predict_interval`` of the test set.

OpenMP is limited to one thread (HistGradientBoosting busy-waits badly on a
shared machine) and every estimator runs with n_jobs=1.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

try:  # run from a checkout without installing
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf  # noqa: F401

import confrf as cf

#: (label, method, score, model)
CONFIGS = [
    ("SPLIT", "split", "absolute", "rf"),
    ("LCP (kernel)", "lcp", "absolute", "rf"),
    ("SLCP", "slcp", "absolute", "rf"),
    ("LCP-RF", "lcp-rf", "absolute", "rf"),
    ("CQR (SPLIT, quantile)", "split", "quantile", "qgbm"),
    ("LCP (kernel), quantile", "lcp", "quantile", "qgbm"),
    ("SLCP, quantile", "slcp", "quantile", "qgbm"),
    ("LCP-RF, quantile", "lcp-rf", "quantile", "qgbm"),
]


def evaluate(
    data: Any, test: Any, label: str, method: str, score: str, model: str, alpha: float, seed: int, n_train: int
) -> dict[str, Any]:
    X, y = np.asarray(data.X), data.y.to_numpy()
    Xte, yte = np.asarray(test.X), test.y.to_numpy()
    t0 = time.perf_counter()
    reg = cf.ConformalRegressor(model=model, method=method, score=score, alpha=alpha, random_state=seed, n_jobs=1)
    reg.fit(X[:n_train], y[:n_train]).conformalize(X[n_train:], y[n_train:])
    t1 = time.perf_counter()
    d = reg.predict_details(Xte)
    t2 = time.perf_counter()
    lwr, upr, center = d["lwr"], d["upr"], d["fit"]
    width = np.maximum(upr - lwr, 0.0)
    finite = np.isfinite(width)
    oracle = 2.0 * test.oracle_score_quantile(center, 1.0 - alpha)
    cond = test.conditional_coverage(None, lwr, upr)
    w, o = width[finite], oracle[finite]
    constant = np.ptp(w) <= 1e-9 * max(1.0, float(np.abs(w).max())) if w.size else True  # SPLIT: rounding only
    corr = None if constant or w.size < 3 else float(np.corrcoef(w, o)[0, 1])
    return {
        "label": label,
        "method": method,
        "score": score,
        "model": model,
        "coverage": float(np.mean((yte >= lwr) & (yte <= upr))),
        "cond_coverage_mean": float(cond.mean()),
        "share_cond_below": float(np.mean(cond < 1 - 2 * alpha)),
        "mean_width": float(w.mean()) if finite.any() else float("inf"),
        "share_infinite": float(np.mean(~finite)),
        "share_empty": float(np.mean(upr < lwr)),
        "corr_oracle_width": corr,
        "median_rel_err": float(np.median(np.abs(w - o) / o)) if finite.any() else float("inf"),
        "mean_oracle_width": float(oracle.mean()),
        "fit_seconds": t1 - t0,
        "predict_seconds": t2 - t1,
        "describe": {k: v for k, v in reg.calibrator_.describe().items() if isinstance(v, (int, float, str))},
    }


def configs(args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    return [c for c in CONFIGS if c[1] in args.methods and c[2] in args.scores]


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "numpy": np.__version__,
            "confrf": cf.__version__,
        },
        "rows": [],
    }
    for name in args.data:
        for r in range(args.repeats):
            s = args.seed + 10 * r
            data = cf.datasets.simulate(name, args.n_train + args.n_cal, random_state=s + 1)
            test = cf.datasets.simulate(name, args.n_test, random_state=s + 2)
            for label, method, score, model in configs(args):
                row = evaluate(data, test, label, method, score, model, args.alpha, s, args.n_train)
                row.update(data=name, repeat=r)
                out["rows"].append(row)
                print(
                    f"{name} r{r} {label:24s} cov {row['coverage']:.3f} width {row['mean_width']:.3f} "
                    f"inf {row['share_infinite']:.3f} corr {row['corr_oracle_width']} "
                    f"err {row['median_rel_err']:.3f} fit {row['fit_seconds']:.1f}s "
                    f"predict {row['predict_seconds']:.2f}s",
                    flush=True,
                )
    return out


def _fmt(values: list[Any], digits: int = 3) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "n/a"
    m = float(np.mean(vals))
    if len(vals) > 1:
        return f"{m:.{digits}f} ± {float(np.std(vals, ddof=1)):.{digits}f}"
    return f"{m:.{digits}f}"


def markdown(res: dict[str, Any]) -> str:
    a = res["args"]
    L = [
        "# bench_baselines: LCP (kernel), SLCP, SPLIT, CQR and LCP-RF on the paper's simulated models",
        "",
        f"n_train={a['n_train']}, n_cal={a['n_cal']}, n_test={a['n_test']}, alpha={a['alpha']}, "
        f"repeats={a['repeats']} (mean ± sd over repeats), seed={a['seed']}. "
        f"Command: `python benchmarks/bench_baselines.py {' '.join(sys.argv[1:])}`".rstrip(),
        "",
        "Columns: empirical coverage; mean exact conditional coverage; share of test points whose conditional "
        "coverage is below 1 - 2 alpha; mean finite width; share of infinite intervals; Pearson correlation of "
        "the width with the oracle width 2 q*(x) around the method's center; median |w - w*| / w*; "
        "fit + conformalize and predict seconds (one thread).",
        "",
    ]
    for name in a["data"]:
        rows = [r for r in res["rows"] if r["data"] == name]
        L += [
            f"## {name}",
            "",
            "| configuration | coverage | cond. cov. | share cond. < 1-2α | mean width | share inf | "
            "corr(width, oracle) | median rel. err | fit s | predict s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for label, *_ in configs(argparse.Namespace(**a)):
            rr = [r for r in rows if r["label"] == label]
            col = lambda k, dg=3, rr=rr: _fmt([r[k] for r in rr], dg)
            L.append(
                f"| {label} | {col('coverage')} | {col('cond_coverage_mean')} | {col('share_cond_below')} | "
                f"{col('mean_width')} | {col('share_infinite')} | {col('corr_oracle_width', 2)} | "
                f"{col('median_rel_err')} | {col('fit_seconds', 1)} | {col('predict_seconds', 2)} |"
            )
        L.append(
            f"\nMean oracle width (absolute score, RF center): "
            f"{_fmt([r['mean_oracle_width'] for r in rows if r['label'] == 'SPLIT'])}."
        )
        bws = [r["describe"].get("bandwidth") for r in rows if r["method"] in ("lcp", "slcp")]
        if bws:
            L.append(
                "Kernel bandwidths chosen (standardized units): "
                + ", ".join(
                    f"{r['label']}: {r['describe'].get('bandwidth'):.3g}"
                    for r in rows
                    if r["method"] in ("lcp", "slcp") and r["repeat"] == 0
                )
                + " (repeat 0)."
            )
        L.append("")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--n-cal", type=int, default=1000)
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", nargs="+", default=["toy", "sim"], choices=["toy", "sim"])
    ap.add_argument(
        "--methods", nargs="+", default=["split", "lcp", "slcp", "lcp-rf"], choices=["split", "lcp", "slcp", "lcp-rf"]
    )
    ap.add_argument("--scores", nargs="+", default=["absolute", "quantile"], choices=["absolute", "quantile"])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        res = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_baselines.json").write_text(json.dumps(res, indent=2, default=str))
    (args.out / "bench_baselines.md").write_text(markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

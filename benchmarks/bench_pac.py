#!/usr/bin/env python
"""Training-conditional (PAC) methods next to SPLIT and marginal LCP-RF on the paper's "sim" model.

Usage (from the repository root)::

    python benchmarks/bench_pac.py
    python benchmarks/bench_pac.py --n-cal 2000 --n-test 1000 --n-train 2000 --draws 10 \
        --repeats 3 --n-jobs 2 --delta 0.1 --out benchmarks/results

One base model (HistGradientBoostingRegressor) is fitted on the training set and
shared by every method (``prefit=True``), so the rows differ only in
calibration. For each method:

* **calibrate**: ``conformalize`` on the calibration set (scores, split, forest
  growth, indexing and, for the PAC methods, the correction on D2), best and
  median of ``--repeats`` runs on the first calibration draw;
* **predict**: ``predict_interval`` of the test set (one untimed warm-up);
* **coverage**: the empirical coverage of the test labels and the exact
  coverage (the sim model's conditional coverage averaged over the test
  points), and the mean width of the finite intervals, on the first draw;
* over ``--draws`` independent calibration draws (same model, same test
  points): mean and minimum exact coverage and the share of draws with exact
  coverage >= 1 - alpha, which the PAC methods guarantee with probability
  >= 1 - delta and the marginal methods only on average.

Timings use ``timed`` from ``bench_predict.py`` (perf_counter, GC disabled
during the call). Nothing asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

try:  # run from a checkout without installing: put the repository root on the path
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_predict import background_cpu_busy, machine_info, timed  # noqa: E402

from confrf import ConformalRegressor  # noqa: E402
from confrf.datasets import make_sim  # noqa: E402
from confrf.models import make_model  # noqa: E402

METHODS = {  # label -> (method, options, takes the PAC options)
    "SPLIT": ("split", {}, False),
    "LCP-RF (marginal)": ("lcp-rf", {}, False),
    "QRF-TC": ("qrf-tc", {}, True),
    "LCP-RF-PAC": ("lcp-rf", {"guarantee": "pac"}, True),
}


def run(args: argparse.Namespace) -> dict[str, Any]:
    R, alpha = args.repeats, args.alpha
    tr = make_sim(args.n_train, random_state=args.seed)
    te = make_sim(args.n_test, random_state=args.seed + 2)
    Xt, yt = te.X.to_numpy(), te.y.to_numpy()
    fit_stats, model = timed(lambda: make_model("gbm", random_state=0).fit(tr.X.to_numpy(), tr.y.to_numpy()), R)
    cals = [make_sim(args.n_cal, random_state=args.seed + 1 + 1000 * d) for d in range(args.draws)]
    rows: dict[str, dict[str, Any]] = {}
    for label, (method, opts, pac_opts) in METHODS.items():
        if pac_opts:
            opts = {**opts, "delta": args.delta, "grid_size": args.grid_size}

        def make(seed: int = 0) -> ConformalRegressor:
            return ConformalRegressor(model=model, prefit=True, method=method, alpha=alpha, random_state=seed,
                                      n_jobs=args.n_jobs, options=opts or None)

        Xc, yc = cals[0].X.to_numpy(), cals[0].y.to_numpy()
        cal_stats, reg = timed(lambda: make().conformalize(Xc, yc), R)
        pred_stats, I = timed(lambda: reg.predict_interval(Xt), R, warmup=True)
        lwr, upr = I[:, 0], I[:, 1]
        finite = np.isfinite(upr)
        row: dict[str, Any] = {
            "method": method, "options": opts or {}, "calibrate": cal_stats, "predict": pred_stats,
            "sizes": reg.calibrator_.sizes(),
            "coverage_test_labels": float(np.mean((yt >= lwr) & (yt <= upr))),
            "coverage_exact": float(te.conditional_coverage(None, lwr, upr).mean()),
            "mean_width": float(np.mean(upr[finite] - lwr[finite])) if finite.any() else float("inf"),
            "share_infinite": float(np.mean(~finite)),
        }
        pac = getattr(reg.calibrator_, "pac_report", None)
        if pac is not None:
            rep = pac(alpha)
            row["pac"] = {k: getattr(rep, k) for k in ("epsilon", "K", "n2", "target", "a_hat", "d2_coverage", "reached")}
        covs, widths = [], []
        for d, cal in enumerate(cals):
            r = make(seed=d).conformalize(cal.X.to_numpy(), cal.y.to_numpy())
            lo, hi = r.predict_interval(Xt).T
            covs.append(float(te.conditional_coverage(None, lo, hi).mean()))
            widths.append(float(np.mean((hi - lo)[np.isfinite(hi)])))
        row["draws"] = {"coverage_exact": covs, "mean_width": widths,
                        "share_at_least_target": float(np.mean(np.asarray(covs) >= 1 - alpha))}
        rows[label] = row
    return {"config": vars(args) | {"out": str(args.out)}, "base_model_fit": fit_stats, "rows": rows,
            "machine": machine_info()}


def render(res: dict[str, Any]) -> str:
    c = res["config"]
    L = [f"# PAC benchmark: sim model, {c['n_train']} train / {c['n_cal']} calibration / {c['n_test']} test, "
         f"alpha={c['alpha']}, delta={c['delta']}, grid_size={c['grid_size']}, n_jobs={c['n_jobs']}", "",
         f"Base model (HistGradientBoostingRegressor) fit, shared by all rows: best "
         f"{res['base_model_fit']['best']:.3f} s.", "",
         "| method | parts | calibrate best / median (s) | predict best / median (s) | coverage (test labels) | "
         "coverage (exact) | mean width | share inf | "
         f"over {c['draws']} draws: mean / min exact coverage, share >= {1 - c['alpha']:g}, mean width |",
         "|---|---|---|---|---|---|---|---|---|"]
    for label, r in res["rows"].items():
        d = r["draws"]
        parts = ", ".join(f"{k} {v}" for k, v in r["sizes"].items())
        L.append(
            f"| {label} | {parts} | {r['calibrate']['best']:.3f} / {r['calibrate']['median']:.3f} | "
            f"{r['predict']['best']:.3f} / {r['predict']['median']:.3f} | {r['coverage_test_labels']:.4f} | "
            f"{r['coverage_exact']:.4f} | {r['mean_width']:.4f} | {r['share_infinite']:.3f} | "
            f"{np.mean(d['coverage_exact']):.4f} / {np.min(d['coverage_exact']):.4f}, "
            f"{d['share_at_least_target']:.2f}, {np.mean(d['mean_width']):.4f} |")
    L.append("")
    for label, r in res["rows"].items():
        if "pac" in r:
            p = r["pac"]
            L.append(f"- {label}: n2={p['n2']}, K={p['K']}, epsilon={p['epsilon']:.4f}, D2 target {p['target']:.4f}, "
                     f"a_hat={p['a_hat']}, D2 coverage {p['d2_coverage']:.4f}, reached={p['reached']}")
    m = res["machine"]
    L += ["", f"- CPU: {m['cpu_model']}; os.cpu_count()={m['cpu_count']}, usable={m['cpus_usable']}",
          f"- {m['platform']}, Python {m['python']}; numpy {m['numpy']}, scikit-learn {m['scikit-learn']}"]
    bg = res.get("background")
    if bg and bg["cpu_busy_before"] is not None:
        L.append(f"- background CPU busy before: {100 * bg['cpu_busy_before']:.0f}%")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument("--n-cal", type=int, default=2000)
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=10, help="independent calibration draws for the coverage columns")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--grid-size", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="data seed (train=seed, test=seed+2, draw d: seed+1+1000d)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.draws < 1:
        ap.error("--repeats and --draws must be >= 1")
    busy = background_cpu_busy()
    t0 = time.perf_counter()
    res = run(args)
    res["wall_seconds"] = time.perf_counter() - t0
    res["background"] = {"cpu_busy_before": busy, "loadavg_after": os.getloadavg()}
    md = render(res) + f"\nTotal benchmark wall time: {res['wall_seconds']:.1f} s.\n"
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_pac.md").write_text(md)
    (args.out / "bench_pac.json").write_text(json.dumps(res, indent=2, default=str))
    print(f"wrote {args.out / 'bench_pac.md'} and {args.out / 'bench_pac.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Training-conditional (PAC) methods next to SPLIT and marginal LCP-RF on the paper's "sim" model.

Usage (from the repository root)::

    python benchmarks/bench_pac.py                        # 2,000 and 800 calibration points
    python benchmarks/bench_pac.py --n-cal 2000,800 --n-test 2000 --n-train 2000 --draws 10 \
        --n-jobs 1 --delta 0.1 --out benchmarks/results --docs docs/benchmarks/pac.md

One base model (HistGradientBoostingRegressor) is fitted on the training set and
shared by every method (``prefit=True``), so the rows differ only in calibration.
Both PAC bounds run side by side: the exact binomial order statistic (the default)
and the paper's Hoeffding grid (K = ``--grid-size`` values, ``pac_form="inflated"``).
For every calibration size and method, over ``--draws`` independent calibration
draws (same model, same test points):

* the median width of the finite intervals (median over draws of each draw's
  median), and its ratio to marginal LCP-RF's;
* the share of infinite intervals (mean and largest over draws);
* the exact coverage (the sim model's conditional coverage averaged over the
  test points): mean, minimum, and the share of draws with coverage >= 1 - alpha,
  which the PAC methods guarantee with probability >= 1 - delta and the marginal
  methods only on average;
* calibration and prediction seconds of the first draw (one run each; nothing
  asserts on timings).

Targets (issue 13), printed PASS/FAIL: with 2,000 calibration points the PAC
median width within 8% of marginal LCP-RF's, for both PAC methods with the default
bound; with 800 calibration points under 2% infinite intervals for both PAC
methods with the default bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
try:  # run from a checkout without installing: put the repository root on the path
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(ROOT))
    import confrf  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_predict import background_cpu_busy, machine_info  # noqa: E402

from confrf import ConformalRegressor  # noqa: E402
from confrf.datasets import make_sim  # noqa: E402
from confrf.exceptions import ConfrfWarning  # noqa: E402
from confrf.models import make_model  # noqa: E402

MARGINAL = "LCP-RF (marginal)"
METHODS = {  # label -> (method, options); "{K}" is filled with --grid-size
    "SPLIT": ("split", {}),
    MARGINAL: ("lcp-rf", {}),
    "QRF-TC, binomial": ("qrf-tc", {}),
    "QRF-TC, Hoeffding": ("qrf-tc", {"pac_bound": "hoeffding", "grid_size": "{K}"}),
    "LCP-RF PAC, binomial": ("lcp-rf", {"guarantee": "pac"}),
    "LCP-RF PAC, Hoeffding": ("lcp-rf", {"guarantee": "pac", "pac_bound": "hoeffding", "grid_size": "{K}"}),
    "SPLIT-G PAC (leiden)": ("split-g", {"guarantee": "pac"}),
    "LCP-RF-G PAC (leiden)": ("lcp-rf-g", {"guarantee": "pac"}),
}
PAC_DEFAULT_ROWS = ("QRF-TC, binomial", "LCP-RF PAC, binomial")


def _options(method: str, opts: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    out = {k: (args.grid_size if v == "{K}" else v) for k, v in opts.items()}
    if method == "qrf-tc" or out.get("guarantee") == "pac":
        out["delta"] = args.delta
    return out


def run_size(args: argparse.Namespace, n_cal: int, model: Any, te: Any) -> dict[str, dict[str, Any]]:
    Xt = te.X.to_numpy()
    cals = [make_sim(n_cal, random_state=args.seed + 1 + 1000 * d) for d in range(args.draws)]
    rows: dict[str, dict[str, Any]] = {}
    for label, (method, opts) in METHODS.items():
        opts = _options(method, opts, args)
        covs, widths, infs, times, pac = [], [], [], [], None
        for d, cal in enumerate(cals):
            reg = ConformalRegressor(
                model=model,
                prefit=True,
                method=method,
                alpha=args.alpha,
                random_state=d,
                n_jobs=args.n_jobs,
                options=opts or None,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConfrfWarning)
                t0 = time.perf_counter()
                reg.conformalize(cal.X.to_numpy(), cal.y.to_numpy())
                t1 = time.perf_counter()
                lo, hi = reg.predict_interval(Xt).T
                t2 = time.perf_counter()
            times.append((t1 - t0, t2 - t1))
            fin = np.isfinite(hi)
            covs.append(float(te.conditional_coverage(None, lo, hi).mean()))
            widths.append(float(np.median((hi - lo)[fin])) if fin.any() else float("inf"))
            infs.append(float(np.mean(~fin)))
            if d == 0:
                sizes = reg.calibrator_.sizes()
                if hasattr(reg.calibrator_, "pac_report"):
                    rep = reg.calibrator_.pac_report(args.alpha)
                    pac = {
                        k: getattr(rep, k)
                        for k in ("bound", "n2", "k", "epsilon", "target", "a_hat", "d2_coverage", "d2_infinite")
                    }
        rows[label] = {
            "method": method,
            "options": opts,
            "sizes": sizes,
            "pac": pac,
            "coverage_exact": covs,
            "median_width": widths,
            "share_infinite": infs,
            "calibrate_seconds": times[0][0],
            "predict_seconds": times[0][1],
        }
    base = np.median(rows[MARGINAL]["median_width"])
    for r in rows.values():
        r["width_ratio"] = float(np.median(r["median_width"]) / base)
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    tr = make_sim(args.n_train, random_state=args.seed)
    te = make_sim(args.n_test, random_state=args.seed + 2)
    model = make_model("gbm", random_state=0).fit(tr.X.to_numpy(), tr.y.to_numpy())
    sizes = {n: run_size(args, n, model, te) for n in args.n_cal}
    return {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "sizes": sizes,
        "machine": machine_info(),
    }


def targets(res: dict[str, Any]) -> list[str]:
    out = []
    sizes = res["sizes"]
    if 2000 in sizes:
        rows = sizes[2000]
        for label in PAC_DEFAULT_ROWS:
            ratio = rows[label]["width_ratio"]
            out.append(
                f"- 2,000 calibration points, {label}: median width {np.median(rows[label]['median_width']):.4f} "
                f"vs marginal LCP-RF {np.median(rows[MARGINAL]['median_width']):.4f}, ratio {ratio:.3f} "
                f"(target <= 1.08): **{'PASS' if ratio <= 1.08 else 'FAIL'}**"
            )
    if 800 in sizes:
        rows = sizes[800]
        for label in PAC_DEFAULT_ROWS:
            s = rows[label]["share_infinite"]
            out.append(
                f"- 800 calibration points, {label}: infinite intervals {100 * np.mean(s):.2f}% on average, "
                f"{100 * np.max(s):.2f}% at most over the draws (target < 2%): "
                f"**{'PASS' if np.max(s) < 0.02 else 'FAIL'}**"
            )
    return out


def render(res: dict[str, Any]) -> str:
    c = res["config"]
    L = [
        "## Training-conditional (PAC) calibration: binomial and Hoeffding bounds",
        "",
        f"Command: `python benchmarks/bench_pac.py` (calibration sizes {', '.join(map(str, c['n_cal']))}). "
        f"Paper's sim model, {c['n_train']} training points (one HistGradientBoostingRegressor shared by every row), "
        f"{c['n_test']} test points, {c['draws']} independent calibration draws per size, alpha = {c['alpha']}, "
        f'delta = {c["delta"]}, Hoeffding grid K = {c["grid_size"]} (`pac_form="inflated"`), n_jobs = {c["n_jobs"]}, '
        "default forest settings (100 trees, honest, `localizer_size=0.5`, `pac_size=1/3`). "
        "Groupwise rows use Leiden groups. Exact coverage: the model's conditional coverage averaged over the "
        "test points. Widths: median over draws of each draw's median finite width; ratio to marginal LCP-RF.",
        "",
    ]
    for n, rows in res["sizes"].items():
        L += [
            f"### {int(n):,} calibration points",
            "",
            "| method | parts (first draw) | median width | ratio to LCP-RF | infinite: mean / max | "
            f"exact coverage: mean / min | draws with coverage >= {1 - c['alpha']:g} | calibrate / predict (s) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for label, r in rows.items():
            parts = ", ".join(f"{k} {v}" for k, v in r["sizes"].items())
            cov = np.asarray(r["coverage_exact"])
            L.append(
                f"| {label} | {parts} | {np.median(r['median_width']):.4f} | {r['width_ratio']:.3f} | "
                f"{100 * np.mean(r['share_infinite']):.2f}% / {100 * np.max(r['share_infinite']):.2f}% | "
                f"{cov.mean():.4f} / {cov.min():.4f} | {np.mean(cov >= 1 - c['alpha']):.2f} | "
                f"{r['calibrate_seconds']:.2f} / {r['predict_seconds']:.2f} |"
            )
        L.append("")
        for label, r in rows.items():
            p = r["pac"]
            if p and "G PAC" not in label:  # groupwise rows: one correction per group
                a = "none (all infinite)" if p["a_hat"] is None else f"{p['a_hat']:.4g}"
                L.append(
                    f"- {label} (first draw): bound {p['bound']}, n2 = {p['n2']}, k = {p['k']} "
                    f"(D2 target {p['target']:.4f}, epsilon {p['epsilon']:.4f}), a_hat = {a}, "
                    f"D2 coverage {p['d2_coverage']:.4f}, D2 share infinite {p['d2_infinite']:.4f}"
                )
        L.append("")
    L += ["### Targets", ""] + targets(res) + [""]
    m = res["machine"]
    L += [
        f"Machine: {m['cpu_model']}; os.cpu_count()={m['cpu_count']}, usable={m['cpus_usable']}; "
        f"{m['platform']}, Python {m['python']}; numpy {m['numpy']}, scikit-learn {m['scikit-learn']}."
    ]
    bg = res.get("background")
    if bg and bg["cpu_busy_before"] is not None:
        L.append(
            f"Background CPU busy before the run: {100 * bg['cpu_busy_before']:.0f}% (shared machine); "
            f"total wall time {res['wall_seconds']:.0f} s."
        )
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument(
        "--n-cal",
        type=lambda s: [int(v) for v in s.split(",")],
        default=[2000, 800],
        help="comma-separated calibration sizes",
    )
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--draws", type=int, default=10, help="independent calibration draws per size")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--grid-size", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="data seed (train=seed, test=seed+2, draw d: seed+1+1000d)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument(
        "--docs",
        default=str(ROOT / "docs" / "benchmarks" / "pac.md"),
        help="markdown page for the documentation ('' to skip)",
    )
    args = ap.parse_args(argv)
    if args.draws < 1:
        ap.error("--draws must be >= 1")
    busy = background_cpu_busy()
    t0 = time.perf_counter()
    res = run(args)
    res["wall_seconds"] = time.perf_counter() - t0
    res["background"] = {"cpu_busy_before": busy, "loadavg_after": os.getloadavg()}
    md = render(res)
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_pac.md").write_text(md)
    (args.out / "bench_pac.json").write_text(json.dumps(res, indent=2, default=str))
    if args.docs:
        Path(args.docs).write_text(md)
    print(
        f"wrote {args.out / 'bench_pac.md'}, {args.out / 'bench_pac.json'}" + (f" and {args.docs}" if args.docs else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

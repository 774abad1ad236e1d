#!/usr/bin/env python
"""Worst-slab coverage at equal marginal coverage: LCP-RF at several alpha next to the PAC methods (issue 12).

Usage (from the repository root)::

    python benchmarks/bench_slab_at_coverage.py                      # 6 data sets, 10 seeds, ~9 min
    python benchmarks/bench_slab_at_coverage.py --datasets diamonds --seeds 3 --alphas 0.1 0.07

Same protocol, data, base model and worst-slab metric as ``bench_peers.py``
(its ``peerbench`` helpers, 1,000 directions). The PAC methods (QRF-TC, both
forms, at alpha = 0.1) cover 0.91-0.95 on average where an exact marginal
method covers 0.90, and worst-slab coverage rises with marginal coverage. This
script runs LCP-RF with its default options at several alpha and, for each PAC
method and seed, interpolates LCP-RF's worst-slab coverage at that method's
test coverage (linear in coverage between the alpha that bracket it; the
curve is clamped outside the range, which the table flags). The difference
(LCP-RF minus the PAC method) is paired by seed: same split, same test points,
same slab directions. Prints a markdown report and writes it to
``<out>/slab_at_coverage.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peerbench.data import DATASETS, make_split  # noqa: E402
from peerbench.methods import CONFRF_METHODS, Shared, run_confrf  # noqa: E402
from peerbench.report import evaluate  # noqa: E402

PAC_KEYS = ["qrf-tc", "qrf-tc-paper"]


def run_seed(data: str, seed: int, args: argparse.Namespace, cache: dict) -> dict[str, tuple[float, float, float]]:
    """(coverage, worst-slab coverage, infinite share) of LCP-RF at each alpha and of the PAC methods."""
    sh = Shared(make_split(data, seed, args, cache), seed, args.alpha, 1)
    sh.fit_base()
    out = {}
    for a in args.alphas:
        r = evaluate(sh, run_confrf("lcp-rf", dataclasses.replace(sh, alpha=a)), args)
        out[f"lcp-rf@{a:g}"] = (r["coverage"], r["worst_slab_coverage"], r["share_infinite"])
    for key in PAC_KEYS:
        r = evaluate(sh, run_confrf(key, sh), args)
        out[key] = (r["coverage"], r["worst_slab_coverage"], r["share_infinite"])
    return out


def at_coverage(curve: list[tuple[float, float]], cov: float) -> tuple[float, bool]:
    """LCP-RF's worst-slab coverage interpolated at ``cov`` from (coverage, worst-slab) points; inside the range?"""
    pts = sorted(curve)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return float(np.interp(cov, xs, ys)), xs[0] <= cov <= xs[-1]


def report(results: dict[str, list[dict]], args: argparse.Namespace) -> str:
    lines = [
        "## Worst-slab coverage at equal marginal coverage",
        "",
        f"Command: `python benchmarks/bench_slab_at_coverage.py {' '.join(args.argv)}`. "
        f"{args.seeds} seed(s) from {args.seed}; means over seeds (standard error of the paired difference).",
        "",
        "| data | method | coverage | worst-slab | LCP-RF worst-slab at that coverage | difference (s.e.) | "
        "inf. share |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for data, runs in results.items():
        for a in args.alphas:
            k = f"lcp-rf@{a:g}"
            m = np.mean([r[k] for r in runs], axis=0)
            lines.append(f"| {data} | LCP-RF, alpha = {a:g} | {m[0]:.3f} | {m[1]:.3f} | | | {m[2]:.4f} |")
        for key in PAC_KEYS:
            diffs, clamped = [], 0
            for r in runs:
                curve = [(r[f"lcp-rf@{a:g}"][0], r[f"lcp-rf@{a:g}"][1]) for a in args.alphas]
                w, ok = at_coverage(curve, r[key][0])
                diffs.append(w - r[key][1])
                clamped += not ok
            m = np.mean([r[key] for r in runs], axis=0)
            d = np.asarray(diffs)
            se = float(np.std(d, ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
            flag = f" ({clamped} of {len(runs)} seeds outside LCP-RF's range: clamped)" if clamped else ""
            lines.append(
                f"| {data} | {CONFRF_METHODS[key][0]} (alpha = {args.alpha:g}) | {m[0]:.3f} | {m[1]:.3f} | "
                f"{m[1] + d.mean():.3f}{flag} | {d.mean():+.3f} ({se:.3f}) | {m[2]:.4f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alphas", nargs="+", type=float, default=[0.12, 0.1, 0.08, 0.065, 0.05, 0.04])
    ap.add_argument("--n-sim", type=int, default=3000, help="points drawn per seed for sim/toy")
    ap.add_argument("--max-rows", type=int, default=6000, help="rows of a real data set used per seed (0 = all)")
    ap.add_argument("--wsc-directions", type=int, default=1000, help="worst-slab directions")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    # the rest of what peerbench's make_split / evaluate read (bench_peers.py's defaults)
    args.alpha, args.no_hole, args.wsc_delta, args.n_jobs = 0.1, False, 0.1, 1
    from threadpoolctl import threadpool_limits

    results: dict[str, list[dict]] = {}
    with threadpool_limits(limits=1, user_api="openmp"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in args.datasets:
            cache: dict = {}
            results[data] = [run_seed(data, s, args, cache) for s in range(args.seed, args.seed + args.seeds)]
            print(f"{data}: done", flush=True)
    text = report(results, args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "slab_at_coverage.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

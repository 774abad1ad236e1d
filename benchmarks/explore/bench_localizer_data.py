#!/usr/bin/env python
"""Where LCP-RF's forest grows: a share of the calibration set, or out-of-fold training scores.

Usage (from the repository root)::

    python benchmarks/explore/bench_localizer_data.py     # 6 data sets, hole and no hole, 3 seeds
    python benchmarks/explore/bench_localizer_data.py --shares 0.3 0.5 0.7   # localizer_size instead (hole, prefit)

The data, split (40/40/20) and base model are bench_peers' (``peerbench.data``);
LCP-RF runs with default options through ``fit`` + ``conformalize`` (so the
training part is available), once with ``localizer_data="calibration"`` (the
default: half of the calibration set grows the forest) and once with
``"training"`` (the forest grows on the training part's 5-fold out-of-fold
scores and every calibration point is a conformal point). Real data sets run
with the paper's hole (training rows above the 0.7-quantile of y dropped) and
without it; sim and toy have no hole. Prints one line per fit and a table of
means over seeds (coverage, worst-slab coverage with 300 directions, median
fidelity error, median finite width, share infinite).

With ``--shares``, the second question of issue 12 instead: how much of the
calibration set should grow the forest. LCP-RF with default options on the
shared prefit model, ``localizer_size`` set to each share, with the hole.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: peerbench
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: confrf
from peerbench.data import REAL, base_model, make_split, missing_datasets  # noqa: E402

import confrf as cf  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["california", "star", "diamonds", "bikes", "sim", "toy"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-rows", type=int, default=6000)
    ap.add_argument(
        "--shares",
        type=float,
        nargs="+",
        default=None,
        help="compare these localizer_size values (prefit, hole) instead of localizer_data",
    )
    args = ap.parse_args(argv)
    for note in missing_datasets(args.datasets):
        print("NOTE:", note)
    names = [d for d in args.datasets if not missing_datasets([d])]
    rows = []
    if args.shares:
        return compare_shares(names, args)
    with threadpool_limits(1, "openmp"):
        for no_hole in (False, True):
            split_args = argparse.Namespace(max_rows=args.max_rows, no_hole=no_hole, n_sim=3000)
            cache: dict = {}
            for name in names:
                if no_hole and name not in REAL:
                    continue  # simulated data never have a hole
                protocol = "hole" if name in REAL and not no_hole else "no hole"
                for seed in range(args.seeds):
                    sp = make_split(name, seed, split_args, cache)
                    for where in ("calibration", "training"):
                        est = cf.ConformalRegressor(
                            model=base_model(seed), random_state=seed, options={"localizer_data": where}
                        )
                        est.fit(sp.X_tr, sp.y_tr).conformalize(sp.X_cal, sp.y_cal)
                        row = {
                            "data": name,
                            "protocol": protocol,
                            "seed": seed,
                            "localizer_data": where,
                            **evaluate(est, sp, seed),
                        }
                        rows.append(row)
                        print(*row.values(), flush=True)
    print_table(rows, ["data", "protocol", "localizer_data"])
    return 0


def evaluate(est: cf.ConformalRegressor, sp, seed: int) -> dict:
    d = est.predict_details(sp.X_te, progress=False)
    half = (d["upr"] - d["lwr"]) / 2
    finite = np.isfinite(half)
    cov = cf.metrics.covered(sp.y_te, d["lwr"], d["upr"])
    wsc = cf.metrics.worst_slab_coverage(sp.X_te, cov, n_directions=300, random_state=seed)
    return {
        "coverage": cov.mean(),
        "worst_slab": wsc.coverage,
        "fidelity": float(np.median(cf.metrics.fidelity_error(sp.y_te, d["fit"], half))),
        "median_width": float(np.median(2 * half[finite])),
        "inf": 1 - finite.mean(),
    }


def print_table(rows: list[dict], by: list[str]) -> None:
    table = pd.DataFrame(rows).groupby(by)[["coverage", "worst_slab", "fidelity", "median_width", "inf"]].mean()
    print(table.round(3).to_markdown())


def compare_shares(names: list[str], args: argparse.Namespace) -> int:
    rows = []
    split_args = argparse.Namespace(max_rows=args.max_rows, no_hole=False, n_sim=3000)
    cache: dict = {}
    with threadpool_limits(1, "openmp"):
        for name in names:
            for seed in range(args.seeds):
                sp = make_split(name, seed, split_args, cache)
                mu = base_model(seed).fit(sp.X_tr, sp.y_tr)
                for share in args.shares:
                    est = cf.ConformalRegressor(model=mu, prefit=True, random_state=seed, localizer_size=share)
                    est.conformalize(sp.X_cal, sp.y_cal)
                    row = {"data": name, "seed": seed, "localizer_size": share, **evaluate(est, sp, seed)}
                    rows.append(row)
                    print(*row.values(), flush=True)
    print_table(rows, ["data", "localizer_size"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

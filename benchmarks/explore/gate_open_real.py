"""Issue 36, tenth round: LCP-RF's default with the training gate open, on the full California and diamonds data.

The gate (``confrf.calibrators.localizer_split.TRAINING_GATE``) lets the training rows compete for the forest only
while the localizer part is below 2,500 rows. ``cf.lcp_rf``'s even split gives a training part twice the localizer
part, so on large data the gate leaves out twice as many rows as the forest grows on. Each seed holds out 20 % of
the rows, fits ``cf.lcp_rf("y ~ .")`` on the rest twice, as shipped ("gated") and with the gate's constant patched
out ("open"), and records held-out coverage, worst-slab coverage (1,000 directions, delta 0.1), widths, the
forest's source and the fit's CPU seconds (one thread).

Rows: ``gate_open_real.jsonl`` (docs/benchmarks/condcov.md, "Tenth round").

    OMP_NUM_THREADS=1 python benchmarks/explore/gate_open_real.py --data california --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/gate_open_real.py --data diamonds --seeds 2
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import confrf as cf
from confrf.calibrators import localizer_split

HERE = Path(__file__).resolve().parent
DATA = {"california": (cf.datasets.load_california, "MedHouseVal"), "diamonds": (cf.datasets.load_diamonds, "price")}


def cell(name: str, seed: int, mode: str) -> dict[str, Any]:
    load, response = DATA[name]
    df = load()
    perm = np.random.default_rng(seed).permutation(len(df))
    held_out, rest = df.iloc[perm[: len(df) // 5]], df.iloc[perm[len(df) // 5 :]]
    shipped = localizer_split.TRAINING_GATE
    localizer_split.TRAINING_GATE = 10**12 if mode == "open" else shipped
    try:
        t0 = time.process_time()
        fit = cf.lcp_rf(f"{response} ~ .", data=rest, alpha=0.1, random_state=seed, n_jobs=1)
        cpu = time.process_time() - t0
    finally:
        localizer_split.TRAINING_GATE = shipped
    p = fit.predict(held_out)
    y = held_out[response].to_numpy(float)
    covered = (y >= p["lwr"].to_numpy()) & (y <= p["upr"].to_numpy())
    X = held_out.drop(columns=[response]).select_dtypes("number").to_numpy(float)
    wsc = cf.metrics.worst_slab_coverage(X, covered, delta=0.1, n_directions=1000, random_state=seed)
    width = (p["upr"] - p["lwr"]).to_numpy()
    cal = fit.estimator.calibrator_
    row = {
        "data": name,
        "seed": seed,
        "mode": mode,
        "coverage": float(covered.mean()),
        "worst_slab_coverage": float(wsc.coverage),
        "mean_width": float(width.mean()),
        "median_width": float(np.median(width)),
        "source": cal.localizer_source_,
        "n_grow": int(cal.n_grow_),
        "n_conformal": int(cal.n_conformal_),
        "cpu_seconds": cpu,
    }
    print(json.dumps(row), flush=True)
    return row


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["data"], r["mode"])].append(r)
    return "\n".join(
        f"{d} {mode}: coverage {np.mean([r['coverage'] for r in v]):.3f}, worst slab "
        f"{np.mean([r['worst_slab_coverage'] for r in v]):.3f}, "
        f"mean width {np.mean([r['mean_width'] for r in v]):.4g}, "
        f"CPU s {np.mean([r['cpu_seconds'] for r in v]):.1f}, sources {[r['source'] for r in v]} ({len(v)})"
        for (d, mode), v in sorted(by.items())
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=list(DATA), choices=list(DATA))
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=HERE / "gate_open_real.jsonl")
    ap.add_argument("--report", action="store_true", help="only print the comparison")
    args = ap.parse_args()
    if not args.report:
        with args.out.open("a") as f:
            for name in args.data:
                for seed in range(args.seeds):
                    for mode in ("gated", "open"):
                        f.write(json.dumps(cell(name, seed, mode)) + "\n")
    print(report(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

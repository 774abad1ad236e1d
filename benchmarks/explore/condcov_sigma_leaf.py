"""Issue 36, eighth round: does sigma(x)'s out-of-bag error pick the leaf that exact conditional coverage prefers?

Normalized split conformal as in ``condcov_normalized_split.py`` (sigma: a random forest of the training part's
out-of-fold absolute residuals; every calibration row conformal), on ``bench_condcov.py``'s cells (same models,
draws, seeds and shared base model), for each leaf in ``LEAVES``: the exact mean |CC - 0.9| and q10(CC), and three
losses of the forest's out-of-bag prediction of the residual on the training part (squared error "mse"; the
exponential deviance "gam", r / s + log s; the pinball loss at 0.9 of r against c s, c the 0.9 quantile of r / s).
The losses read the training part only, so a leaf chosen by one of them keeps split conformal's exact guarantee.
``--report`` prints, per cell, the mean |CC - 0.9| x 1000 of each fixed leaf and of the leaf each loss picks from
several grids. Rows: ``condcov_sigma_leaf.jsonl`` (docs/benchmarks/condcov.md, "Eighth round").

    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_sigma_leaf.py --models sim toy multi bias homo \\
        --n-cal 500 1000 --seeds 3
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestRegressor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import bench_condcov as bc  # noqa: E402
from condcov_normalized_split import training_residuals  # noqa: E402

#: around the sqrt rule of the 2,000 training rows (45)
LEAVES = (16, 23, 32, 45, 64, 90, 128)
#: the candidate grids the report compares (the package's: 32-128, sqrt rule x 2^(k/2), k = -1..3)
GRIDS = {
    "16-128": LEAVES,
    "23-128": LEAVES[1:],
    "23-90": LEAVES[1:6],
    "32-128": LEAVES[2:],
    "45-128": LEAVES[3:],
    "45 only": (45,),
}


def cell(model: bc.Model, n_cal: int, seed: int, n_eval: int) -> list[dict]:
    sh = bc.shared_cell(model, n_cal, seed, n_eval)
    X_tr, X_cal, y_cal, X_ev = sh.split.X_tr, sh.split.X_cal, sh.split.y_cal, sh.split.X_te
    r = training_residuals(sh)
    floor = 1e-3 * float(r.mean())
    mu_cal, mu_ev = sh.mu.predict(X_cal), sh.mu.predict(X_ev)
    rows = []
    for leaf in LEAVES:
        f = RandomForestRegressor(
            n_estimators=200, min_samples_leaf=leaf, max_features=1.0, random_state=seed, n_jobs=1, oob_score=True
        ).fit(X_tr, r)
        o = np.maximum(f.oob_prediction_, floor)
        c = np.quantile(r / o, 0.9)
        s_cal, s_ev = (np.maximum(f.predict(Z), floor) for Z in (X_cal, X_ev))
        v = np.sort(np.abs(y_cal - mu_cal) / s_cal)
        q = v[math.ceil((1 - bc.ALPHA) * (n_cal + 1)) - 1]
        cc = model.coverage(X_ev, mu_ev - q * s_ev, mu_ev + q * s_ev)
        rows.append(
            {
                "model": model.name,
                "n_cal": n_cal,
                "seed": seed,
                "leaf": leaf,
                "mse": float(np.mean((r - o) ** 2)),
                "gam": float(np.mean(r / o + np.log(o))),
                "pin": float(np.mean(np.maximum(0.9 * (r - c * o), -0.1 * (r - c * o)))),
                "dev": float(np.mean(np.abs(cc - (1 - bc.ALPHA)))),
                "q10": float(np.quantile(cc, 0.1)),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    fits: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        fits[(r["model"], r["n_cal"], r["seed"])].append(r)
    out = []
    for loss in ("mse", "gam", "pin"):
        for name, grid in GRIDS.items():
            cells: dict[tuple, list[float]] = defaultdict(list)
            for key, rs in fits.items():
                pool = [r for r in rs if r["leaf"] in grid]
                cells[key[:2]].append(min(pool, key=lambda r: r[loss])["dev"])
            parts = [f"{m} {n}: {1000 * np.mean(v):.1f}" for (m, n), v in sorted(cells.items())]
            mean = 1000 * np.mean([np.mean(v) for v in cells.values()])
            out.append(f"{loss} {name}: " + "; ".join(parts) + f"; mean {mean:.2f}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["sim", "toy", "multi", "bias", "homo"])
    ap.add_argument("--n-cal", nargs="+", type=int, default=[500, 1000])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-eval", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=HERE / "condcov_sigma_leaf.jsonl")
    ap.add_argument("--report", action="store_true", help="only print the comparison")
    args = ap.parse_args()
    if not args.report:
        with args.out.open("a") as f:
            for name in args.models:
                for n_cal in args.n_cal:
                    for seed in range(args.seeds):
                        for r in cell(bc.MODEL_SPECS[name], n_cal, seed, args.n_eval):
                            f.write(json.dumps(r) + "\n")
    print(report(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

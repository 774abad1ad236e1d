"""Issue 36, sixth round: a lead for small calibration sets, measured outside the package.

Normalized split conformal whose scale sigma(x) is a random forest of the training part's out-of-fold absolute
residuals, on the exact conditional-coverage cells of ``benchmarks/bench_condcov.py`` (same models, draws, seeds,
shared base model and metrics). sigma is a fixed function of the training rows, so the scores |y - mu(x)| / sigma(x)
of the calibration rows are exchangeable with a test point's and split conformal's guarantee is exact; every
calibration row is a conformal point. It is not LCP-RF's default (docs/benchmarks/condcov.md, "Sixth round"); a
user gets it with ``method="split"`` and ``score=ScaledScore(sigma_model=RandomForestRegressor(...))``, run here as
"explore[ScaledScore split-45]" through confrf's API (its own 5 folds for the out-of-fold residuals). Rows go to
``--out`` in bench_condcov's row format (methods "explore[normsplit-LEAF]": the same computed directly);
``--report`` prints them next to the stored LCP-RF default, MAPIE CQR and conditionalconformal rows.

    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_normalized_split.py --n-cal 500 1000 4000 16000 --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_normalized_split.py --n-cal 500 1000 --seeds 3 --api \\
        --out benchmarks/explore/condcov_normalized_split_api.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import KFold, cross_val_predict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import bench_condcov as bc  # noqa: E402
from peerbench.data import base_model  # noqa: E402
from peerbench.methods import Shared  # noqa: E402

import confrf as cf  # noqa: E402
from confrf.scores import ScaledScore  # noqa: E402

#: sigma forest: leaf sizes ceil(sqrt(2,000)) = 45 (the sqrt rule on the training rows) and twice that
LEAVES = (45, 90)
TREES = 200


def training_residuals(sh: Shared) -> np.ndarray:
    """The training part's 5-fold out-of-fold absolute residuals of the cell's base model (sigma's target)."""
    X_tr, y_tr, seed = sh.split.X_tr, sh.split.y_tr, sh.seed
    oof = cross_val_predict(base_model(seed), X_tr, y_tr, cv=KFold(5, shuffle=True, random_state=seed))
    return np.abs(y_tr - oof)


def cell(model: bc.Model, n_cal: int, seed: int, n_eval: int, api: bool) -> list[dict]:
    """The rows of one (model, n_cal, seed), with bench_condcov's draws and shared base model."""
    sh = bc.shared_cell(model, n_cal, seed, n_eval)
    X_tr, y_tr, X_cal, y_cal, X_ev = sh.split.X_tr, sh.split.y_tr, sh.split.X_cal, sh.split.y_cal, sh.split.X_te
    resid = training_residuals(sh)
    floor = 1e-3 * float(resid.mean())
    mu_cal, mu_ev = sh.mu.predict(X_cal), sh.mu.predict(X_ev)
    rows = []
    intervals = {}
    for leaf in LEAVES:
        rf = RandomForestRegressor(
            n_estimators=TREES, min_samples_leaf=leaf, max_features=1.0, random_state=seed, n_jobs=1
        )
        fitted = clone(rf).fit(X_tr, resid)
        s_cal, s_ev = (np.maximum(fitted.predict(Z), floor) for Z in (X_cal, X_ev))
        v = np.sort(np.abs(y_cal - mu_cal) / s_cal)
        k = math.ceil((1 - bc.ALPHA) * (n_cal + 1))
        q = v[k - 1] if k <= n_cal else math.inf
        intervals[f"normsplit-{leaf}"] = (mu_ev - q * s_ev, mu_ev + q * s_ev)
        if api and leaf == LEAVES[0]:  # the same through confrf's API, as a user writes it
            score = ScaledScore(sigma_model=rf)
            est = cf.ConformalRegressor(
                model=base_model(seed), method="split", score=score, alpha=bc.ALPHA, random_state=seed
            )
            iv = est.fit(X_tr, y_tr).conformalize(X_cal, y_cal).predict_interval(X_ev)
            intervals[f"ScaledScore split-{leaf}"] = (iv[:, 0], iv[:, 1])
    for name, (lwr, upr) in intervals.items():
        cc = model.coverage(X_ev, lwr, upr)
        rows.append(
            {
                "model": model.name,
                "n_cal": n_cal,
                "seed": seed,
                "method": f"explore[{name}]",
                "dev": float(np.mean(np.abs(cc - (1 - bc.ALPHA)))),
                "q10": float(np.quantile(cc, 0.1)),
                "below08": float(np.mean(cc < 0.8)),
                "coverage": float(np.mean(cc)),
                "width_ratio": float(np.mean(upr - lwr) / np.mean(model.oracle_width(X_ev))),
                "points": n_eval,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def report(paths: list[Path]) -> str:
    """Mean |CC - 0.9| x 1000 (and q10) per cell: the explored rows, LCP-RF's default and MAPIE CQR."""
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    cells: dict[tuple[str, int], dict[str, list[dict]]] = {}
    for r in rows:
        cells.setdefault((r["model"], r["n_cal"]), {}).setdefault(r["method"], []).append(r)
    keep = ("LCP-RF default", "MAPIE CQR", "conditionalconformal")
    out = []
    for (m, n), by in sorted(cells.items()):
        if not any(k.startswith("explore[") for k in by):
            continue
        parts = [
            f"{k} {1000 * np.mean([r['dev'] for r in v]):.1f} / {np.mean([r['q10'] for r in v]):.3f} ({len(v)})"
            for k, v in sorted(by.items())
            if k in keep or k.startswith("explore[")
        ]
        out.append(f"{m} {n:,}: " + "; ".join(parts))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["sim", "toy", "multi", "bias", "homo"])
    ap.add_argument("--n-cal", nargs="+", type=int, default=[500, 1000])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-eval", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=HERE / "condcov_normalized_split.jsonl")
    ap.add_argument("--api", action="store_true", help="also the ScaledScore row through confrf's API")
    ap.add_argument("--report", action="store_true", help="only print the comparison")
    args = ap.parse_args()
    stored = [HERE.parent / "condcov_results.jsonl"]
    if not args.report:
        with args.out.open("a") as f:
            for name in args.models:
                for n_cal in args.n_cal:
                    for seed in range(args.seeds):
                        for r in cell(bc.MODEL_SPECS[name], n_cal, seed, args.n_eval, args.api):
                            f.write(json.dumps(r) + "\n")
    print(report([*stored, args.out]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

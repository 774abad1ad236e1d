"""Issue 36, tenth round: how high q10(CC) can go for an interval that knows the noise but not the base model's error.

On ``bench_condcov.py``'s cells (same models, draws, seeds and shared base model mu; exact CC at the evaluation
points), the *noise-scale oracle* is the interval mu(x) +- c s(x): s(x) the model's true noise scale, c the one
constant for which the mean of CC over the evaluation points is exactly 0.9 (solved with the true law, so it is
an oracle twice over: it knows s everywhere and it is calibrated without sampling noise). It is what a perfect
localizer of the noise would give; what it cannot know is mu's own error b(x) = mu(x) - m(x), which moves CC(x)
at fixed width: CC(x) = F(c - d) - F(-c - d) with d = b(x) / s(x).

With ``--default`` each cell also fits LCP-RF as a user calls it (``fit`` on the training rows, then
``conformalize``; bit for bit the benchmark's "LCP-RF default") and records how far mu is off at the x where its
CC is in the lowest tenth, against the other x: the median |b| / s and the share of x with |b| / s > 0.5.

Rows: ``condcov_noise_oracle.jsonl`` (docs/benchmarks/condcov.md, "Tenth round").

    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_noise_oracle.py --n-cal 1000 4000 16000 --seeds 3 --default
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import bench_condcov as bc  # noqa: E402
from peerbench.data import base_model  # noqa: E402

import confrf as cf  # noqa: E402


def noise_scale_oracle(model: bc.Model, X: np.ndarray, mu: np.ndarray) -> tuple[float, np.ndarray]:
    """c and CC(x) of mu(x) +- c s(x), c the constant that makes the mean CC over the rows of X exactly 0.9."""
    s = model.scale(X)

    def marginal_gap(c: float) -> float:
        return float(np.mean(model.coverage(X, mu - c * s, mu + c * s))) - (1 - bc.ALPHA)

    c = optimize.brentq(marginal_gap, 1e-3, 1e3, xtol=1e-10)
    return c, model.coverage(X, mu - c * s, mu + c * s)


def _summary(cc: np.ndarray, width: np.ndarray, oracle_width: np.ndarray) -> dict[str, float]:
    return {
        "dev": float(np.mean(np.abs(cc - (1 - bc.ALPHA)))),
        "q10": float(np.quantile(cc, 0.1)),
        "below80": float(np.mean(cc < 0.8)),
        "width_ratio": float(np.mean(width) / np.mean(oracle_width)),
    }


def _off(d: np.ndarray) -> dict[str, float]:
    """How far mu is off, in noise units, on a set of x (a zero noise scale counts as far off)."""
    return {"median_d": float(np.median(d)), "share_d_above_half": float(np.mean(d > 0.5))}


def cell(model: bc.Model, n_cal: int, seed: int, with_default: bool) -> list[dict[str, Any]]:
    sh = bc.shared_cell(model, n_cal, seed, 2000)
    X = sh.split.X_te
    mu, s = sh.mu.predict(X), model.scale(X)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(s > 0, np.abs(mu - model.mean(X)) / s, np.inf)
    head = {"model": model.name, "n_cal": n_cal, "seed": seed}
    ow = model.oracle_width(X)
    c, cc = noise_scale_oracle(model, X, mu)
    rows = [{**head, "method": "noise-scale oracle", "c": c, **_summary(cc, 2 * c * s, ow), **_off(d)}]
    if with_default:
        est = cf.ConformalRegressor(model=base_model(seed), alpha=bc.ALPHA, random_state=seed, n_jobs=1)
        iv = est.fit(sh.split.X_tr, sh.split.y_tr).conformalize(sh.split.X_cal, sh.split.y_cal).predict_interval(X)
        cc = model.coverage(X, iv[:, 0], iv[:, 1])
        low = cc <= np.quantile(cc, 0.1)
        lowest = {f"lowest_{k}": v for k, v in _off(d[low]).items()}
        rest = {f"rest_{k}": v for k, v in _off(d[~low]).items()}
        rows.append({**head, "method": "LCP-RF default", **_summary(cc, iv[:, 1] - iv[:, 0], ow), **lowest, **rest})
    for r in rows:
        print(json.dumps(r), flush=True)
    return rows


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["model"], r["n_cal"], r["method"])].append(r)
    out = []
    for (m, n, method), v in sorted(by.items()):

        def mean(key: str, v: list[dict] = v) -> float:
            return float(np.mean([r[key] for r in v]))

        line = (
            f"{m} {n} {method}: |CC - 0.9| x 1000 {1000 * np.mean([r['dev'] for r in v]):.1f}, "
            f"q10 {np.mean([r['q10'] for r in v]):.3f}, CC < 0.8 {np.mean([r['below80'] for r in v]):.3f}, "
            f"width/oracle {np.mean([r['width_ratio'] for r in v]):.3f}"
        )
        if "lowest_median_d" in v[0]:
            line += (
                f"; |b|/s median lowest tenth {mean('lowest_median_d'):.2f} "
                f"(> 0.5: {mean('lowest_share_d_above_half'):.2f}), rest "
                f"{mean('rest_median_d'):.2f} (> 0.5: {mean('rest_share_d_above_half'):.2f})"
            )
        out.append(f"{line} ({len(v)})")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["sim", "toy", "multi", "bias"])
    ap.add_argument("--n-cal", nargs="+", type=int, default=[16000])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--default", action="store_true", help="also fit LCP-RF's default and locate its lowest tenth")
    ap.add_argument("--out", type=Path, default=HERE / "condcov_noise_oracle.jsonl")
    ap.add_argument("--report", action="store_true", help="only print the comparison")
    args = ap.parse_args()
    if not args.report:
        with args.out.open("a") as f:
            for name in args.models:
                for n_cal in args.n_cal:
                    for seed in range(args.seeds):
                        for r in cell(bc.MODEL_SPECS[name], n_cal, seed, args.default):
                            f.write(json.dumps(r) + "\n")
    print(report(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

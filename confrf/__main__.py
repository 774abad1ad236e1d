"""Command line: ``python -m confrf demo`` and ``python -m confrf fit ...``."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

import numpy as np
import pandas as pd


def _step(msg: str):
    """Print a progress line to stderr and return a callback that closes it."""
    t0 = time.perf_counter()
    print(f"  {msg} ...", end="", file=sys.stderr, flush=True)
    return lambda: print(f" done ({time.perf_counter() - t0:.1f}s)", file=sys.stderr, flush=True)


def _held_out(res, test: pd.DataFrame) -> dict[str, float]:
    p = res.predict(test)
    y = res.design.response(test)
    width = (p["upr"] - p["lwr"]).to_numpy()
    finite = np.isfinite(width)
    return {
        "coverage": float(np.mean((y >= p["lwr"]) & (y <= p["upr"]))),
        "mean width": float(width[finite].mean()) if finite.any() else float("inf"),
        "sd width": float(width[finite].std()) if finite.any() else float("nan"),
        "width q10": float(np.quantile(width, 0.1)),
        "width q90": float(np.quantile(width, 0.9)),
        "infinite": int((~finite).sum()),
    }


def demo(args: argparse.Namespace) -> int:
    import confrf as cf

    print("confrf demo: California housing (embedded), 80% fit / 20% held out, alpha = 0.1", file=sys.stderr)
    df = cf.datasets.load_california()
    rng = np.random.default_rng(args.random_state)
    is_test = rng.random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    formula = "MedHouseVal ~ ."
    results = {}
    for method in ("split", "lcp-rf"):
        done = _step(f"fitting {method} on {len(train)} rows")
        results[method] = cf.conformal(formula, data=train, method=method, alpha=args.alpha,
                                       random_state=args.random_state, n_jobs=args.n_jobs)
        done()
    rows = {}
    for method, res in results.items():
        done = _step(f"predicting {method} on {len(test)} held-out rows")
        rows[method] = _held_out(res, test)
        done()
    for res in results.values():
        print(res.summary())
        print()
    table = pd.DataFrame(rows).T.astype({"infinite": int})
    print(f"Held-out comparison ({len(test)} rows, target coverage {1 - args.alpha:g}):")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def fit(args: argparse.Namespace) -> int:
    import confrf as cf

    data = pd.read_csv(args.data)
    calib = pd.read_csv(args.calib) if args.calib else None
    newdata = pd.read_csv(args.newdata)
    done = _step(f"fitting {args.method} on {len(data)} rows")
    res = cf.conformal(args.formula, data=data, method=args.method, alpha=args.alpha, model=args.model,
                       calib=calib, random_state=args.random_state, n_jobs=args.n_jobs,
                       **({"score": args.score} if args.score else {}))
    done()
    done = _step(f"predicting {len(newdata)} rows")
    pred = res.predict(newdata)
    done()
    if args.out:
        pred.to_csv(args.out, index_label="row")
        print(f"wrote {len(pred)} rows to {args.out}", file=sys.stderr)
    else:
        pred.to_csv(sys.stdout, index_label="row")
    if args.summary:
        print(res.summary(), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="confrf", description="Adaptive conformal prediction intervals (LCP-RF).")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="SPLIT and LCP-RF on embedded California housing")
    d.add_argument("--alpha", type=float, default=0.1)
    d.add_argument("--random-state", type=int, default=0)
    d.add_argument("--n-jobs", type=int, default=None)
    d.set_defaults(func=demo)
    f = sub.add_parser("fit", help="fit on a CSV file and write intervals for new rows")
    f.add_argument("formula", help='e.g. "y ~ x1 + C(group)"')
    f.add_argument("--data", required=True, help="training CSV")
    f.add_argument("--newdata", required=True, help="CSV of rows to predict")
    f.add_argument("--calib", help="calibration CSV (otherwise --data is split)")
    from .calibrators import METHODS

    f.add_argument("--method", default="lcp-rf", choices=sorted(METHODS))
    f.add_argument("--model", default="gbm", choices=["gbm", "rf", "ols", "qr", "qgbm", "logit"])
    # a class-label response (string column or C(y)) gives prediction sets: pred, size, one column per class
    f.add_argument("--score", default=None, choices=["absolute", "quantile", "scaled", "lac", "aps", "raps"],
                   help="default: absolute (numeric response), lac (class-label response)")
    f.add_argument("--alpha", type=float, default=0.1)
    f.add_argument("--random-state", type=int, default=None)
    f.add_argument("--n-jobs", type=int, default=None)
    f.add_argument("--out", help="output CSV (default: stdout)")
    f.add_argument("--summary", action="store_true", help="print the summary to stderr")
    f.set_defaults(func=fit)
    args = parser.parse_args(argv)
    from .exceptions import ConfrfError

    try:
        return args.func(args)
    except ConfrfError as exc:
        print(f"confrf: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Prediction sets of many rows: time and peak memory with and without row chunks.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/bench_class_predict.py --n-test 200000

A 3-class LCP-RF fit on 4,000 rows (rf base model, 100 trees) predicts
``--n-test`` rows once per chunk size: the default (10,000 rows) and one chunk
holding every row. Peak memory is ``tracemalloc``'s peak of Python-allocated
memory (numpy arrays included) during the call. The sets must be identical.
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

try:  # run from a checkout without installing
    import confrf as cf
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf as cf


def frame(m: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.normal(size=m) for j in (1, 2, 3)})
    df["y"] = np.where(df.x1 + rng.normal(size=m) > 0.5, "c", np.where(df.x2 > 0, "a", "b"))
    return df


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-test", type=int, default=200_000)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", cf.exceptions.InfiniteIntervalWarning)
    res = cf.conformal("y ~ x1 + x2 + x3", data=frame(4000, 0), method="lcp-rf", model="rf", random_state=0)
    big = frame(args.n_test, 1)
    outs = []
    for chunk in (None, args.n_test):
        tracemalloc.start()
        t0 = time.perf_counter()
        out = res.predict(big, chunk_size=chunk, n_jobs=args.n_jobs, progress=False)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        outs.append(out)
        label = "default (10,000)" if chunk is None else f"{chunk:,} (one chunk)"
        print(f"chunk_size {label:>22}: {seconds:6.1f} s, peak {peak:6.0f} MB, mean set size {out['size'].mean():.3f}")
    print("identical sets:", outs[0].equals(outs[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

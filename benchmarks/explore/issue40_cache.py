"""Per-neighbour cost of the threshold kernel as the conformal points grow on one forest (issue 40).

One forest (100 trees, leaf 200, 5 features tried per split) grown on 50,000 rows of the ``multi`` data indexes
more and more conformal points; the kernel runs on the same test rows with every gather mode, interleaved
(mode A, B, A, B, ...; the best of the repeats), one thread, CPU time. The indexes are cached in --cache.

    OMP_NUM_THREADS=1 python benchmarks/explore/issue40_cache.py --n-conf 50000 950000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_scale import make_data  # noqa: E402

from confrf import _kernels  # noqa: E402
from confrf._kernels._forest import unit_multiplicities  # noqa: E402
from confrf._validation import required_count  # noqa: E402
from confrf.localizers import ForestLocalizer  # noqa: E402

FIELDS = ("leaf_ptr", "member_rank", "below", "leaf_pop", "scores_r", "p2_r", "sorted_p2")


def load(a: argparse.Namespace, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    path = Path(a.cache) / f"idx_{a.data}_{a.leaf}_{a.max_features}_{a.columns}_{a.n_grow}_{n}_{a.n_test}.npz"
    if not path.exists():
        # the same forest at every n: growing and test rows from seed 0, conformal rows from seed 1
        X, y, mean, _ = make_data(a.data, a.n_grow + a.n_test, 0)
        X, V = X[:, : a.columns], np.abs(y - mean)
        g, t = slice(0, a.n_grow), slice(a.n_grow, a.n_grow + a.n_test)
        loc = ForestLocalizer(
            n_estimators=100, min_samples_leaf=a.leaf, max_features=a.max_features, random_state=0, n_jobs=1
        )
        loc.grow(X[g], V[g])
        Xc, yc, meanc, _ = make_data(a.data, n, 1)
        loc.index(Xc[:, : a.columns], np.abs(yc - meanc))
        idx = loc.index_
        np.savez(path, leafx=loc.leaves(X[t]), **{f: getattr(idx, f) for f in FIELDS})
    z = np.load(path)
    return {f: z[f] for f in FIELDS}, z["leafx"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-conf", type=int, nargs="+", default=[50_000, 950_000])
    ap.add_argument("--n-grow", type=int, default=50_000)
    ap.add_argument("--n-test", type=int, default=400)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", nargs="+", default=["bitmap", "sort"])
    ap.add_argument("--cache", default="/tmp/i40c")
    ap.add_argument("--data", default="multi", choices=["multi", "sim"])
    ap.add_argument("--leaf", type=int, default=200, help="min_samples_leaf")
    ap.add_argument("--max-features", type=int, default=5)
    ap.add_argument("--columns", type=int, default=20, help="the forest sees the first COLUMNS features")
    a = ap.parse_args()
    for n in a.n_conf:
        idx, lx = load(a, n)
        lx = np.ascontiguousarray(lx[: a.rows])
        m_req = required_count(0.1, idx["scores_r"].shape[0])
        args = (
            lx,
            idx["leaf_ptr"],
            idx["member_rank"],
            unit_multiplicities(idx["member_rank"].shape[0]),
            idx["below"],
            idx["leaf_pop"],
            idx["scores_r"],
            idx["p2_r"],
            idx["sorted_p2"],
            m_req,
        )
        best = {mode: np.inf for mode in a.modes}
        out = {}
        for _ in range(a.reps):
            for mode in a.modes:
                t0 = time.process_time()
                out[mode] = _kernels.lcp_rf_thresholds_ranked(*args, n_threads=1, unit_mult=True, gather=mode)
                best[mode] = min(best[mode], time.process_time() - t0)
        ref = out[a.modes[0]]
        same = all(all(np.array_equal(p, q) for p, q in zip(ref, o)) for o in out.values())
        entries = float(idx["leaf_pop"][lx].sum(axis=1).mean())
        W = _kernels.forest_weight_rows(
            lx[:50], idx["leaf_ptr"], idx["member_rank"], args[3], idx["leaf_pop"], idx["scores_r"].shape[0], False
        )
        m = float(np.diff(W[0]).mean())
        mt = lx.shape[0]
        line = "  ".join(f"{k} {v / mt * 1e6:.0f} us/pt {v / mt / m * 1e9:.1f} ns/nb" for k, v in best.items())
        print(
            f"conformal={n} entries/pt={entries:.0f} neighbours/pt={m:.0f} identical={same} "
            f"load={os.getloadavg()[0]:.1f}"
        )
        print("   " + line, flush=True)


if __name__ == "__main__":
    main()

"""The threshold kernel's cost per neighbour as the conformal points grow on one forest (issue 40).

One forest (100 trees, leaf 200, 5 features tried per split, as issue 40's measurement) grows on 50,000 rows of
the ``multi`` data (seed 0) and indexes more and more conformal points (seed 1); the kernel runs on the same test
rows with each gather, interleaved (blocked, bitmap, sort, blocked, ...; the best of the repeats), one thread,
CPU time. "auto" is the blocked gather; before issue 40 it took the bitmap below 250,000 conformal points and the
sort from there. The thresholds of every gather are compared (identical, bit for bit).

    OMP_NUM_THREADS=1 python benchmarks/kernel_scale.py --n-conf 50000 950000
    python benchmarks/bench_scale.py --suite kernel       # the same, the table into --out

Used by ``bench_scale.py --suite kernel``; the indexes are cached in ``--cache`` (a few hundred MB at 950,000).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import make_data  # noqa: E402

from confrf import _kernels  # noqa: E402
from confrf._kernels._forest import unit_multiplicities  # noqa: E402
from confrf._validation import required_count  # noqa: E402
from confrf.localizers import ForestLocalizer  # noqa: E402

FIELDS = ("leaf_ptr", "member_rank", "below", "leaf_pop", "scores_r", "p2_r", "sorted_p2")
MODES = ("blocked", "bitmap", "sort")
#: issue 40's target: the cost per neighbour grows at most this much from the smallest to the largest size
TARGET_GROWTH = 1.3
#: the old "auto": the bitmap below this many conformal points, the sort from there
OLD_SORT_FROM = 250_000


def index_of(a: argparse.Namespace, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The index of ``n`` conformal points on the one forest, and the test rows' leaves (built once, cached)."""
    name = f"idx_{a.data}_{a.leaf}_{a.max_features}_{a.columns}_{a.n_grow}_{n}_{a.n_test}.npz"
    path = Path(a.cache) / name
    if not path.exists():
        Path(a.cache).mkdir(parents=True, exist_ok=True)
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


def measure(a: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for n in a.n_conf:
        idx, lx = index_of(a, n)
        lx = np.ascontiguousarray(lx[: a.rows])
        ones = unit_multiplicities(idx["member_rank"].shape[0])
        args = (lx, idx["leaf_ptr"], idx["member_rank"], ones, idx["below"], idx["leaf_pop"], idx["scores_r"])
        args += (idx["p2_r"], idx["sorted_p2"], required_count(0.1, n))
        best = {mode: np.inf for mode in MODES}
        out = {}
        load = os.getloadavg()[0]
        for _ in range(a.reps):
            for mode in MODES:
                t0 = time.process_time()
                out[mode] = _kernels.lcp_rf_thresholds_ranked(*args, n_threads=1, unit_mult=True, gather=mode)
                best[mode] = min(best[mode], time.process_time() - t0)
        same = all(all(np.array_equal(p, q) for p, q in zip(out["bitmap"], o)) for o in out.values())
        W = _kernels.forest_weight_rows(lx[:50], idx["leaf_ptr"], idx["member_rank"], ones, idx["leaf_pop"], n, False)
        nb = float(np.diff(W[0]).mean())
        rows.append(
            {
                "n_conformal": n,
                "entries_per_point": float(idx["leaf_pop"][lx].sum(axis=1).mean()),
                "neighbours_per_point": nb,
                "ns_per_neighbour": {m: 1e9 * v / lx.shape[0] / nb for m, v in best.items()},
                "old_auto": "sort" if n >= OLD_SORT_FROM else "bitmap",
                "identical": same,
                "load": (load, os.getloadavg()[0]),
            }
        )
        print(rows[-1], flush=True)
    return rows


def table(rows: list[dict[str, Any]], a: argparse.Namespace) -> list[str]:
    L = [
        "### The threshold kernel per neighbour on one forest",
        "",
        f"One forest (100 trees, min_samples_leaf {a.leaf}, max_features {a.max_features}, the first {a.columns} "
        f"columns of `{a.data}`) grown on {a.n_grow:,} rows indexes each number of conformal points; the kernel "
        f"alone on the same {a.rows} test rows, 1 thread, CPU ns per neighbour (the best of {a.reps} interleaved "
        'runs). new = the blocked gather ("auto" now); old = "auto" before: the bitmap below 250,000 points, the '
        "sort from there. `python benchmarks/kernel_scale.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in (("leaf", a.leaf), ("max_features", a.max_features)))
        + f" --columns {a.columns} --data {a.data} --n-conf {' '.join(map(str, a.n_conf))}`.",
        "",
        "| conformal points | entries / neighbours per point | new (blocked) | bitmap | sort | old auto | "
        "new / old | thresholds identical | load before / after |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        ns = r["ns_per_neighbour"]
        old = ns[r["old_auto"]]
        L.append(
            f"| {r['n_conformal']:,} | {r['entries_per_point']:,.0f} / {r['neighbours_per_point']:,.0f} | "
            f"{ns['blocked']:.1f} | {ns['bitmap']:.1f} | {ns['sort']:.1f} | {old:.1f} ({r['old_auto']}) | "
            f"{ns['blocked'] / old:.2f} | {r['identical']} | {r['load'][0]:.1f} / {r['load'][1]:.1f} |"
        )
    if len(rows) > 1:
        a0, a1 = rows[0], rows[-1]
        g_new = a1["ns_per_neighbour"]["blocked"] / a0["ns_per_neighbour"]["blocked"]
        g_old = a1["ns_per_neighbour"][a1["old_auto"]] / a0["ns_per_neighbour"][a0["old_auto"]]
        L += [
            "",
            f"- cost per neighbour from {a0['n_conformal']:,} to {a1['n_conformal']:,} conformal points: new "
            f"{g_new:.2f}x (old {g_old:.2f}x; target <= {TARGET_GROWTH}x): "
            f"**{'PASS' if g_new <= TARGET_GROWTH else 'FAIL'}**",
        ]
    return L


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-conf", type=int, nargs="+", default=[50_000, 950_000])
    ap.add_argument("--n-grow", type=int, default=50_000)
    ap.add_argument("--n-test", type=int, default=400)
    ap.add_argument("--rows", type=int, default=200, help="test rows the kernel runs on")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cache", default="/tmp/confrf_kernel_scale")
    ap.add_argument("--data", default="multi", choices=["multi", "sim"])
    ap.add_argument("--leaf", type=int, default=200, help="min_samples_leaf")
    ap.add_argument("--max-features", type=int, default=5)
    ap.add_argument("--columns", type=int, default=20, help="the forest sees the first COLUMNS features")
    return ap


def main(argv: list[str] | None = None) -> list[str]:
    a = parser().parse_args(argv)
    L = table(measure(a), a)
    print("\n".join(L))
    return L


if __name__ == "__main__":
    main()

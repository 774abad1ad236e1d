#!/usr/bin/env python
"""Peer benchmark: confrf's methods next to MAPIE, crepes and a quantile-forest QRF.

Usage (from the repository root)::

    python benchmarks/bench_peers.py                       # 6 data sets, 3 seeds
    python benchmarks/bench_peers.py --quick               # smoke test: small sizes, 2 seeds, no docs
    python benchmarks/bench_peers.py --datasets sim toy --seeds 3 --methods confrf
    python benchmarks/bench_peers.py --report              # peers.md and plots again from the stored peers.json
    python benchmarks/bench_peers.py --merge DIR1 DIR2     # join runs of other data sets (peers.json) into --out

Protocol (the paper's, section "Experiments"): every seed splits the data at
random into 40 % training, 40 % calibration and 20 % test. On the real data
(California housing, STAR, diamonds, bike sharing from the optional ``ISLP``
package) the training part gets the paper's "hole": its rows
whose response exceeds the 0.7-quantile of the training responses are removed
(calibration and test are untouched), so the model errs most where it saw no
data. The simulated data (the paper's ``sim`` and ``toy`` models) are used as
drawn. alpha = 0.1.

One base model per seed and data set, shared by every method that uses a mean
model: scikit-learn ``HistGradientBoostingRegressor(random_state=seed)``
fitted once on the training part. CQR needs quantile models instead: three
``HistGradientBoostingRegressor(loss="quantile")`` at alpha/2, 1 - alpha/2
and 0.5, also fitted once on the training part.

Methods
    confrf: SPLIT, SPLIT-G, LCP (Guan's kernel), SLCP, LCP-RF, LCP-RF-G, QRF-TC
    (confrf's default PAC form, D2 target 1 - alpha + epsilon) and QRF-TC with
    the paper's form (D2 target 1 - alpha)
    (``cf.ConformalRegressor`` with ``prefit=True`` on the shared model; LCP and
    SLCP learn their bandwidth from out-of-fold training scores, so they run
    ``fit`` on the training part, which refits the same model with the same seed
    plus 5 out-of-fold fits; the script checks that the refit predicts the same).
    "LCP-RF (fit on the training rows)" is LCP-RF as a user calls it, ``fit`` on
    the training part (with its hole) then ``conformalize``: its forest may grow
    on the training part's out-of-fold scores, the localizer part or both
    (``localizer_data="auto"``), chosen on held-out localizer rows; "LCP-RF" is
    the same method on the shared prefit model (calibration rows only).
    MAPIE (v1 API): ``SplitConformalRegressor`` (prefit) and
    ``ConformalizedQuantileRegressor`` (prefit quantile models, symmetric
    correction as in Romano et al.).
    crepes: ``ConformalRegressor`` normalized by a ``DifficultyEstimator``
    (k nearest training neighbours, k = 25, in standardized features, mean
    absolute out-of-fold training residual, min-max scaled) and a Mondrian
    ``ConformalRegressor`` over equal-size bins of that difficulty
    (``crepes.extras.binning`` on the calibration difficulties).
    QRF: ``quantile_forest.RandomForestQuantileRegressor`` fitted on the
    calibration scores |y - mu(x)|; interval mu(x) +/- its (1 - alpha)-quantile
    (Meinshausen weights). No conformal correction: this baseline has no
    coverage guarantee. QRF normalized split: the same forest on half the
    calibration scores, split conformal of |r| / q(x) on the other half.
    LCP-RF (sqrt-n leaves): LCP-RF with the defaults before issue 12
    (sqrt-n leaves, all features, raw scores), for comparison with the tuned
    default.

Metrics per test set (mean and standard error over seeds in the report; raw
per-seed values in the JSON): coverage; worst-slab coverage
(``confrf.metrics.worst_slab_coverage``, delta = 0.1, the same random
directions for every method); mean width of the finite intervals, their
coefficient of variation (sd / mean) and the share of infinite ones; on sim/toy the paper's
distance to the oracle, the median over
test points of |q(x) - q*(x)| / q*(x) with q the interval's half-width and q*
the exact (1 - alpha)-quantile of |Y - c(x)| given x around the interval's
centre c (``SimulatedData.oracle_score_quantile``); on every data set the
paper's fidelity error, the median of |q(x) - |y - c(x)|| / |y - c(x)|
(``confrf.metrics.fidelity_error``); median width of the finite intervals; calibration time (everything after
fitting the shared base model: its predictions of the calibration rows,
conformalize, plus the difficulty estimator, quantile forest or out-of-fold
fits a method needs) and prediction time of the test set (base-model
predictions included). Every timing is one ``time.perf_counter`` span (no repeats); OpenMP runs
on one thread and every estimator with ``--n-jobs`` (default 1).

Peers are optional (``pip install 'confrf[bench]'``): a missing or unusable
peer package skips its rows with a printed note.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

try:  # run from a checkout without installing: put the repository root on the path
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_predict import background_cpu_busy, machine_info  # noqa: E402
from peerbench.data import DATASETS, make_split, missing_datasets  # noqa: E402
from peerbench.methods import (
    ALL_METHODS,
    CONFRF_METHODS,
    PEER_GUARANTEED,
    PEER_METHODS,
    Interval,  # noqa: E402
    Shared,
    available_peers,
    expand_methods,
    groups_option,
    label_of,
    run_confrf,
    run_crepes,
    run_mapie_cqr,
    run_mapie_split,
    run_qrf,
    run_qrf_normalized,
)
from peerbench.report import _jsonable, evaluate, markdown, plots  # noqa: E402

import confrf as cf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "peers"
DEFAULT_DOCS = ROOT / "docs" / "benchmarks"


def run(args: argparse.Namespace) -> dict[str, Any]:
    methods = expand_methods(args.methods)
    peers = [m for m in methods if m in PEER_METHODS]
    versions, notes = available_peers(peers)
    for note in notes:
        print("NOTE:", note, flush=True)
    methods = [m for m in methods if m not in PEER_METHODS or PEER_METHODS[m][1] in versions]
    runners: dict[str, Callable[[Shared], Interval]] = {
        "mapie-split": run_mapie_split,
        "mapie-cqr": run_mapie_cqr,
        "crepes-normalized": lambda sh: run_crepes(sh, False, args.mondrian_bins),
        "crepes-mondrian": lambda sh: run_crepes(sh, True, args.mondrian_bins),
        "qrf": run_qrf,
        "qrf-normalized": run_qrf_normalized,
    }
    data_notes = missing_datasets(args.datasets)
    for note in data_notes:
        print("NOTE:", note, flush=True)
    notes += data_notes
    datasets = [d for d in args.datasets if not any(f"{d!r}" in n for n in data_notes)]
    probe = (lambda: background_cpu_busy(args.load_probe)) if args.load_probe > 0 else (lambda: None)
    load_before = probe()
    rows: list[dict[str, Any]] = []
    splits: dict[str, dict[str, Any]] = {}
    cache: dict[str, Any] = {}
    t_start = time.perf_counter()
    for name in datasets:
        for seed in range(args.seed, args.seed + args.seeds):
            split = make_split(name, seed, args, cache)
            splits.setdefault(name, {})[str(seed)] = split.info
            sh = Shared(split, seed, args.alpha, args.n_jobs)
            sh.fit_base()
            for method in methods:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # peers warn about e.g. prefit settings; not our concern here
                    try:
                        iv = run_confrf(method, sh) if method in CONFRF_METHODS else runners[method](sh)
                    except Exception as exc:
                        if method in CONFRF_METHODS and not isinstance(exc, cf.InputError):
                            raise  # a confrf bug must show; an InputError is a documented limit (e.g. too few points)
                        # a peer failing (e.g. an incompatible version) must not sink the other rows
                        note = f"{label_of(method)} failed on {name} seed {seed}: {type(exc).__name__}: {exc}"
                        print("NOTE:", note, flush=True)
                        notes.append(note)
                        continue
                row = {
                    "dataset": name,
                    "seed": seed,
                    "method": method,
                    "label": label_of(method),
                    "package": "confrf" if method in CONFRF_METHODS else PEER_METHODS[method][1],
                    "certified": iv.extra.get("certified", method in PEER_GUARANTEED),
                    **evaluate(sh, iv, args),
                    "extra": iv.extra,
                }
                rows.append(row)
                oe = row["oracle_error"]
                print(
                    f"{name:10s} seed {seed} {row['label']:20s} cov {row['coverage']:.3f} "
                    f"wsc {row['worst_slab_coverage']:.3f} width {row['mean_width']:.3f} "
                    f"inf {row['share_infinite']:.3f} err* {'-' if oe is None else f'{oe:.3f}'} "
                    f"err^ {row['fidelity_error']:.3f} med.w {row['median_width']:.3f} calib "
                    f"{row['calib_seconds']:.2f}s "
                    f"predict {row['predict_seconds']:.2f}s",
                    flush=True,
                )
    machine = machine_info()
    machine.update(
        pandas=pd.__version__,
        peers=versions,
        groups=groups_option(),
        background_cpu_before=load_before,
        background_cpu_after=probe(),
        wall_seconds=time.perf_counter() - t_start,
    )
    try:
        import matplotlib

        machine["matplotlib"] = matplotlib.__version__
    except ImportError:  # pragma: no cover - the plots are skipped then
        machine["matplotlib"] = None
    return {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "command": "python benchmarks/bench_peers.py " + " ".join(args.argv),
        "methods": methods,
        "datasets": datasets,
        "notes": notes,
        "machine": machine,
        "splits": splits,
        "rows": rows,
    }


#: arguments that may differ between runs joined by --merge (each ran its own data sets and wrote its own files)
PER_RUN = ("datasets", "out", "docs", "no_docs", "report", "merge", "argv")


def merge_runs(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One result of runs of the same settings on different data sets (say, two processes at once).

    Raises ValueError when the runs' settings or methods differ, or when a data set is in two runs.
    """
    first = parts[0]
    same = {k: v for k, v in first["args"].items() if k not in PER_RUN}
    for res in parts[1:]:
        other = {k: v for k, v in res["args"].items() if k not in PER_RUN}
        if other != same or res["methods"] != first["methods"]:
            diff = sorted(k for k in set(same) | set(other) if same.get(k) != other.get(k))
            raise ValueError(f"runs with other settings or methods cannot be merged (differ: {diff or 'methods'})")
    datasets = [d for res in parts for d in res["datasets"]]
    if len(set(datasets)) < len(datasets):
        raise ValueError(f"a data set is in several runs: {datasets}")
    order = [d for d in DATASETS if d in datasets]
    machine = dict(first["machine"])
    # the runs were timed apart: wall time of the longest, load before the first and after the last to finish
    machine["wall_seconds"] = max(r["machine"]["wall_seconds"] for r in parts)
    machine["background_cpu_before"] = first["machine"].get("background_cpu_before")
    machine["background_cpu_after"] = max(parts, key=lambda r: r["machine"]["wall_seconds"])["machine"].get(
        "background_cpu_after"
    )
    return {
        "args": {**first["args"], "datasets": order},
        "command": " + ".join(r["command"].strip() for r in parts) + f" (run as {len(parts)} processes at once, "
        "joined with --merge)",
        "methods": first["methods"],
        "datasets": order,
        "notes": [n for r in parts for n in r["notes"]],
        "machine": machine,
        "splits": {d: s for r in parts for d, s in r["splits"].items()},
        "rows": [row for d in order for r in parts for row in r["rows"] if row["dataset"] == d],
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--seeds", type=int, default=None, help="number of seeds (default 3; 2 with --quick)")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["all"],
        choices=["all", "confrf", "peers"] + ALL_METHODS,
        help="methods or groups 'all', 'confrf', 'peers'",
    )
    ap.add_argument("--n-sim", type=int, default=None, help="points drawn per seed for sim/toy (default 3000)")
    ap.add_argument(
        "--max-rows",
        type=int,
        default=None,
        help="rows of a real data set used per seed, a random subset (default 6000; 0 = all)",
    )
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--no-hole", action="store_true", help="keep the training part whole on real data")
    ap.add_argument("--mondrian-bins", type=int, default=10, help="equal-size difficulty bins of crepes Mondrian")
    ap.add_argument("--wsc-directions", type=int, default=None, help="worst-slab directions (default 1000)")
    ap.add_argument("--wsc-delta", type=float, default=0.1)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument(
        "--load-probe",
        type=float,
        default=1.0,
        help="seconds to sample the background CPU load before and after the run (0: skip)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: sim/toy 2200 points, real data 2200 rows, 2 seeds, 200 directions, no docs",
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--docs",
        type=Path,
        default=None,
        help=f"also write peers.md and the plots here (default {DEFAULT_DOCS.relative_to(ROOT)}, not with --quick)",
    )
    ap.add_argument("--no-docs", action="store_true", help="do not write into the docs")
    ap.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        default=None,
        metavar="DIR",
        help="run nothing: join the peers.json of runs of other data sets (e.g. run at once) into --out, then report",
    )
    ap.add_argument(
        "--report",
        action="store_true",
        help="run nothing: rewrite peers.md and the plots from --out's peers.json (and into --docs)",
    )
    args = ap.parse_args(argv)
    quick = args.quick
    for key, full, small in (
        ("seeds", 3, 2),
        ("n_sim", 3000, 2200),
        ("max_rows", 6000, 2200),
        ("wsc_directions", 1000, 200),
    ):
        if getattr(args, key) is None:
            setattr(args, key, small if quick else full)
    if args.docs is None and not quick:
        args.docs = DEFAULT_DOCS
    if args.no_docs:
        args.docs = None
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write ``peers.md``, ``peers.json`` and the plots to ``--out`` (and ``--docs``)."""
    args = parse_args(argv)
    if args.merge:
        res = merge_runs([json.loads((d / "peers.json").read_text()) for d in args.merge])
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "peers.json").write_text(json.dumps(_jsonable(res), indent=1))
    elif args.report:
        # the stored run's own arguments and rows: only the page and the plots are rendered again
        res = json.loads((args.out / "peers.json").read_text())
    else:
        from threadpoolctl import threadpool_limits

        # HistGradientBoosting's OpenMP busy-waits badly on a shared machine: one thread for everyone
        with threadpool_limits(limits=1, user_api="openmp"):
            res = run(args)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "peers.json").write_text(json.dumps(_jsonable(res), indent=1))
    images = plots(res, args.out)
    text = markdown(res, [str(p) for p in images])
    (args.out / "peers.md").write_text(text)
    if args.docs is not None:
        args.docs.mkdir(parents=True, exist_ok=True)
        (args.docs / "peers.md").write_text(text)
        for p in images:
            (args.docs / p.name).write_bytes(p.read_bytes())
    print(text)
    print(
        f"wrote {args.out / 'peers.md'}, peers.json and {len(images)} plot(s)"
        + (f"; docs: {args.docs / 'peers.md'}" if args.docs is not None else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

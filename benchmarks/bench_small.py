#!/usr/bin/env python
"""Small-data benchmark: split conformal, LCP-RF, CV+, jackknife+ and J+aB (confrf and MAPIE) at 200-3,000 rows.

Usage (from the repository root)::

    python benchmarks/bench_small.py                      # the documented run (docs/benchmarks/small.md)
    python benchmarks/bench_small.py --quick              # smoke test: 2 splits, 2 data sets, no docs
    python benchmarks/bench_small.py --datasets carseats sim-300 --models ols --splits 5

Protocol. Real data sets shipped in PyPI packages (scikit-learn's diabetes;
ISLP's Carseats, Auto, Hitters, Wage and Boston), each split at random per
split seed into a training part (the largest multiple of 10 rows within 75 %)
and a test part (the rest); no training "hole". The paper's sim and toy
models at n = 300, 1,000 and 3,000 training rows, with 1,000 fresh test rows
per split. alpha = 0.1. The design matrix is confrf's formula design, built
once per data set; every method gets the same training rows and base model:
scikit-learn's ``LinearRegression()`` ("ols") or
``HistGradientBoostingRegressor(random_state=seed)`` ("gbm").

Methods. confrf: split conformal and LCP-RF (default options) on a random
half of the training part as calibration set (the same halves for both); CV+
with ``KFold(5, shuffle=True, random_state=seed)``; the jackknife+; J+aB
(``n_bootstrap`` expected models, mean aggregation). MAPIE (v1 API):
``CrossConformalRegressor(method="plus")`` with the same KFold object (the
same folds: the training size is a multiple of 5, so the folds are equal and
confrf's CV+ guarantee is certified) and with ``LeaveOneOut()`` (jackknife+),
``JackknifeAfterBootstrapRegressor(resampling=n_bootstrap)``. The jackknife+
fits n models: it runs with OLS up to ``--jackknife-max`` training rows and
with gradient boosting up to ``--jackknife-gbm-max`` (0 by default: n boosted
fits per split are out of this benchmark's time budget); J+aB with gradient
boosting up to ``--jab-gbm-max`` training rows.

Metrics per split (the report gives mean and standard error over splits):
coverage of the test responses, mean width of the finite intervals, median
width (all intervals), share of infinite intervals, fit seconds (everything
before prediction: the base model's fits included) and predict seconds (the
test rows). Timings are single ``time.perf_counter`` spans, one thread
(n_jobs = 1, OpenMP limited to one thread).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:  # run from a checkout without installing: put the repository root on the path
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_predict import background_cpu_busy, machine_info  # noqa: E402

import confrf as cf  # noqa: E402
from confrf.formula import Design  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "small"
DEFAULT_DOCS = ROOT / "docs" / "benchmarks" / "small.md"
ALPHA = 0.1
K = 5
N_TEST_SIM = 1000

#: real data sets: name -> (loader of the frame, formula)
REAL: dict[str, tuple[Callable[[], Any], str]] = {}


def _islp(name: str) -> Callable[[], Any]:
    def load() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from ISLP import load_data

            return load_data(name)

    return load


def _diabetes() -> Any:
    from sklearn.datasets import load_diabetes

    return load_diabetes(as_frame=True).frame


def _hitters() -> Any:
    return _islp("Hitters")().dropna().reset_index(drop=True)  # 59 players without a salary


REAL["diabetes"] = (_diabetes, "target ~ .")
REAL["carseats"] = (_islp("Carseats"), "Sales ~ .")
REAL["auto"] = (
    _islp("Auto"),
    "mpg ~ cylinders + displacement + horsepower + weight + acceleration + year + C(origin)",
)
REAL["hitters"] = (
    _hitters,
    "np.log(Salary) ~ AtBat + Hits + HmRun + Runs + RBI + Walks + Years + CAtBat + CHits + CHmRun + CRuns + CRBI "
    "+ CWalks + League + Division + PutOuts + Assists + Errors + NewLeague",
)
REAL["boston"] = (_islp("Boston"), "medv ~ .")
REAL["wage"] = (
    _islp("Wage"),
    "wage ~ year + age + maritl + race + education + jobclass + health + health_ins",
)
SIMS = {f"{kind}-{n}": (kind, n) for kind in ("sim", "toy") for n in (300, 1000, 3000)}
DATASETS = list(REAL) + list(SIMS)

#: rows of the report: key -> label
METHODS = {
    "split": "split (confrf)",
    "lcp-rf": "LCP-RF (confrf)",
    "cv+": "CV+ (confrf)",
    "mapie-cv+": "CV+ (MAPIE)",
    "jackknife+": "jackknife+ (confrf)",
    "mapie-jackknife+": "jackknife+ (MAPIE)",
    "jackknife+ab": "J+aB (confrf)",
    "mapie-jackknife+ab": "J+aB (MAPIE)",
}


# ------------------------------------------------------------------ data ----
def load(name: str, split: int, seed: int) -> dict[str, Any]:
    """Training and test arrays of one split (and the data set's facts)."""
    rng = np.random.default_rng([seed, split])
    if name in SIMS:
        kind, n = SIMS[name]
        make = cf.datasets.make_sim if kind == "sim" else cf.datasets.make_toy
        train = make(n, random_state=rng)
        test = make(N_TEST_SIM, random_state=rng)
        X_tr, y_tr, X_te, y_te = np.asarray(train.X, float), train.y, np.asarray(test.X, float), test.y
        return {"X_tr": X_tr, "y_tr": np.asarray(y_tr, float), "X_te": X_te, "y_te": np.asarray(y_te, float)}
    frame, X, y = _real_design(name)
    n = X.shape[0]
    n_train = (int(0.75 * n) // 10) * 10
    perm = rng.permutation(n)
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    return {"X_tr": X[tr], "y_tr": y[tr], "X_te": X[te], "y_te": y[te]}


_DESIGNS: dict[str, tuple[Any, np.ndarray, np.ndarray]] = {}


def _real_design(name: str) -> tuple[Any, np.ndarray, np.ndarray]:
    if name not in _DESIGNS:
        loader, formula = REAL[name]
        frame = loader()
        design, X, y, _ = Design.fit(formula, frame)
        _DESIGNS[name] = (frame, X, y)
    return _DESIGNS[name]


def base_model(kind: str, seed: int) -> Any:
    if kind == "ols":
        from sklearn.linear_model import LinearRegression

        return LinearRegression()
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(random_state=seed)


# --------------------------------------------------------------- methods ----
def run_method(method: str, model: Any, d: dict[str, Any], seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """Fit (timed), predict the test rows (timed): lower, upper and facts."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, LeaveOneOut

    X, y, Xt = d["X_tr"], d["y_tr"], d["X_te"]
    folds = KFold(K, shuffle=True, random_state=seed)
    facts: dict[str, Any] = {}
    t0 = time.perf_counter()
    if method in ("split", "lcp-rf"):
        half = np.random.default_rng([seed, 99]).permutation(X.shape[0])
        a, b = np.sort(half[: X.shape[0] // 2]), np.sort(half[X.shape[0] // 2 :])
        est = cf.ConformalRegressor(model=model, method=method, random_state=seed)
        est.fit(X[a], y[a]).conformalize(X[b], y[b])
        if method == "lcp-rf":
            loc = est.calibrator_.localizer
            # no localization: no forest (split conformal); a normalized forest gives sigma(x) and is not counted
            facts["pooled"] = bool(loc.no_localization)
            facts["normalized"] = bool(loc.normalized)
            facts["size_rule"] = bool(getattr(loc, "skipped_", None))  # no localizer part: too few points
    elif method in ("cv+", "jackknife+", "jackknife+ab"):
        opts = {"cv+": {"cv": folds}, "jackknife+": None, "jackknife+ab": {"n_bootstrap": args.n_bootstrap}}[method]
        est = cf.ConformalRegressor(model=model, method=method, random_state=seed, options=opts).fit(X, y)
        facts["certified"] = bool(est.calibrator_.guarantee(ALPHA).certified)
    else:
        from mapie.regression import CrossConformalRegressor, JackknifeAfterBootstrapRegressor

        if method == "mapie-jackknife+ab":
            est = JackknifeAfterBootstrapRegressor(
                estimator=clone(model), confidence_level=1 - ALPHA, resampling=args.n_bootstrap, random_state=seed
            )
        else:
            cv = folds if method == "mapie-cv+" else LeaveOneOut()
            est = CrossConformalRegressor(
                estimator=clone(model), confidence_level=1 - ALPHA, method="plus", cv=cv, random_state=seed
            )
        est.fit_conformalize(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if method.startswith("mapie"):
        _, iv = est.predict_interval(Xt)
        lo, hi = iv[:, 0, 0], iv[:, 1, 0]
    else:
        lo, hi = est.predict_interval(Xt).T
    predict_s = time.perf_counter() - t0
    return {"lo": lo, "hi": hi, "fit_s": fit_s, "predict_s": predict_s, **facts}


def methods_for(model: str, n_train: int, args: argparse.Namespace, have_mapie: bool) -> list[str]:
    out = ["split", "lcp-rf", "cv+", "mapie-cv+"]
    if n_train <= (args.jackknife_max if model == "ols" else args.jackknife_gbm_max):
        out += ["jackknife+", "mapie-jackknife+"]
    if model == "ols" or n_train <= args.jab_gbm_max:
        out += ["jackknife+ab", "mapie-jackknife+ab"]
    return [m for m in out if (have_mapie or not m.startswith("mapie")) and m in args.methods]


def metrics(r: dict[str, Any], y: np.ndarray) -> dict[str, Any]:
    lo, hi = np.asarray(r["lo"], float), np.asarray(r["hi"], float)
    width = hi - lo
    finite = np.isfinite(width)
    return {
        "coverage": float(np.mean((lo <= y) & (y <= hi))),
        "mean_width": float(width[finite].mean()) if finite.any() else math.inf,
        "median_width": float(np.median(width)),
        "share_infinite": float(np.mean(~finite)),
        "fit_s": r["fit_s"],
        "predict_s": r["predict_s"],
        **{k: r[k] for k in ("pooled", "normalized", "size_rule", "certified") if k in r},
    }


# ------------------------------------------------------------------- run ----
def run(args: argparse.Namespace) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    try:
        import mapie  # noqa: F401

        have_mapie = True
    except ImportError:
        have_mapie = False
    res: dict[str, Any] = {"args": vars(args).copy(), "rows": [], "sizes": {}, "notes": []}
    if not have_mapie:
        res["notes"].append("MAPIE is not installed (pip install 'confrf[bench]'): its rows are skipped.")
    res["machine"] = machine_info()
    res["machine"]["background_cpu_before"] = background_cpu_busy()
    res["machine"]["load_before"] = _loadavg()
    t_start = time.perf_counter()
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MAPIE's and scikit-learn's deprecation chatter
        for name in args.datasets:
            for split in range(args.splits):
                d = load(name, split, args.seed)
                n_train, p = d["X_tr"].shape
                res["sizes"][name] = {"n_train": n_train, "n_test": int(d["X_te"].shape[0]), "p": p}
                for model in args.models:
                    seed = args.seed * 1000 + split
                    for method in methods_for(model, n_train, args, have_mapie):
                        r = run_method(method, base_model(model, seed), d, seed, args)
                        row = {"dataset": name, "split": split, "model": model, "method": method}
                        res["rows"].append({**row, **metrics(r, d["y_te"])})
                print(
                    f"[{time.perf_counter() - t_start:7.1f} s] {name} split {split + 1}/{args.splits} done",
                    flush=True,
                )
    res["machine"]["wall_seconds"] = time.perf_counter() - t_start
    res["machine"]["background_cpu_after"] = background_cpu_busy()
    res["machine"]["load_after"] = _loadavg()
    res["command"] = " ".join(["python", "benchmarks/bench_small.py", *sys.argv[1:]])
    res["date"] = time.strftime("%Y-%m-%d")
    return res


def _loadavg() -> list[float] | None:
    try:
        with open("/proc/loadavg") as fh:
            return [float(x) for x in fh.read().split()[:3]]
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- report ----
def cells(res: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, list[Any]]]:
    out: dict[tuple[str, str, str], dict[str, list[Any]]] = {}
    for r in res["rows"]:
        cell = out.setdefault((r["dataset"], r["model"], r["method"]), {})
        for k, v in r.items():
            if k not in ("dataset", "model", "method"):
                cell.setdefault(k, []).append(v)
    return out


def mean_se(v: list[float]) -> tuple[float, float]:
    a = np.asarray(v, dtype=float)
    if not np.all(np.isfinite(a)):
        return math.inf, math.nan
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan


def fmt(ms: tuple[float, float], digits: int) -> str:
    m, s = ms
    if math.isinf(m):
        return "inf"
    return f"{m:.{digits}f} ± {s:.{digits}f}" if not math.isnan(s) else f"{m:.{digits}f}"


def paired(res: dict[str, Any], name: str, model: str, a: str, b: str, key: str) -> list[float]:
    """Per-split ratios key(a) / key(b)."""
    by = {(r["method"], r["split"]): r[key] for r in res["rows"] if r["dataset"] == name and r["model"] == model}
    return [by[(a, s)] / by[(b, s)] for (m, s) in by if m == a and (b, s) in by]


def targets(res: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    c = cells(res)
    names, models = res["args"]["datasets"], res["args"]["models"]
    L = ["### Targets", ""]
    # 1. fidelity and speed next to MAPIE
    L += [
        "**confrf's CV+ and jackknife+ next to MAPIE's, on the same base model and folds**: mean over splits of the "
        "per-split ratio of mean widths (confrf / MAPIE), and of the total time (fit + predict).",
        "",
        "| data | model | CV+ width ratio | CV+ time ratio | jackknife+ width ratio | jackknife+ time ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    worst_width, slower = 0.0, []
    for name in names:
        for model in models:
            parts = []
            for m in ("cv+", "jackknife+"):
                w = paired(res, name, model, m, f"mapie-{m}", "mean_width")
                tc = c.get((name, model, m))
                tm = c.get((name, model, f"mapie-{m}"))
                if not w or tc is None or tm is None:
                    parts += ["–", "–"]
                    continue
                worst_width = max(worst_width, max(abs(x - 1) for x in w))
                tt = (np.sum(tc["fit_s"]) + np.sum(tc["predict_s"])) / (np.sum(tm["fit_s"]) + np.sum(tm["predict_s"]))
                if tt > 1:
                    slower.append(f"{m} {name}/{model} ({tt:.2f})")
                parts += [f"{np.mean(w):.4f}", f"{tt:.2f}"]
            L.append(f"| {name} | {model} | " + " | ".join(parts) + " |")
    fid = worst_width <= 0.01
    L += [
        "",
        f"- widths within 1 % of MAPIE's in every split: largest deviation {100 * worst_width:.3f} % — "
        + ("**met**" if fid else "**not met**"),
        "- at least as fast as MAPIE (total time): "
        + ("**met** everywhere" if not slower else f"**not met** for {', '.join(slower)}"),
        "",
    ]
    # 2. LCP-RF against split conformal
    L += [
        "**LCP-RF (default) against split conformal with the same model and calibration half**: mean over splits "
        "of the per-split ratio of median widths (± s.e.) and of mean widths, and in how many splits LCP-RF did "
        "not localize: by the size rule (fewer than ceil(10/alpha) = 100 localizer points: no localizer part, "
        "split conformal on every calibration point, so the ratio is exactly 1) or by the tuning (no forest beat "
        "the no-localization candidate: split conformal on the conformal half), and in how many it used "
        "normalized split conformal (the forest gives only a scale sigma(x), every conformal point weighs the same; "
        "docs/theory.md).",
        "",
        "| data | model | median width ratio | mean width ratio | no localization: size rule / tuning | normalized "
        "| verdict |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    over, helped, skewed = [], [], []
    for name in names:
        for model in models:
            ratio = paired(res, name, model, "lcp-rf", "split", "median_width")
            cell = c.get((name, model, "lcp-rf"))
            if not ratio or cell is None:
                continue
            m, s = mean_se(ratio)
            mean_ratio = mean_se(paired(res, name, model, "lcp-rf", "split", "mean_width"))
            size_rule = cell.get("size_rule", _size_rule_guess(res, name, len(cell["pooled"])))
            by_rule = int(np.sum(size_rule))
            by_tuning = int(np.sum(cell["pooled"])) - by_rule
            verdict = "≤ 1.02" if m <= 1.02 else "**above 1.02**"
            if m > 1.02:
                over.append(f"{name}/{model}")
            if m + 2 * s < 1.0 or mean_ratio[0] + 2 * mean_ratio[1] < 1.0:
                verdict += "; narrower (> 2 s.e.)" + ("" if m + 2 * s < 1.0 else " in mean width")
                helped.append(f"{name}/{model}")
            if m > 1.02 and mean_ratio[0] + 2 * mean_ratio[1] < 1.0:
                skewed.append(f"{name}/{model}")
            # runs stored before the fact was recorded have no "normalized" key
            normalized = f"{int(np.sum(cell['normalized']))}" if "normalized" in cell else "–"
            L.append(
                f"| {name} | {model} | {m:.3f} ± {s:.3f} | {fmt(mean_ratio, 3)} | {by_rule} / {by_tuning} of "
                f"{len(cell['pooled'])} | {normalized} | {verdict} |"
            )
    L += [
        "",
        "- LCP-RF's median width at most 2 % above split conformal's on every data set: "
        + ("**met**" if not over else f"**not met** on {', '.join(over)}"),
        f"- measurably narrower (ratio + 2 s.e. < 1, median or mean width) on: {', '.join(helped) or 'none'}",
    ]
    if skewed:
        L.append(
            f"- on {', '.join(skewed)} the forest is always chosen and the mean width is measurably below split "
            "conformal's, while the median is above it: adaptive widths are right-skewed (narrow where the noise is "
            "small, wide where it is large), so the median of adaptive widths can exceed the constant width."
        )
    L.append("")
    # 3. coverage
    low = []
    for (name, model, method), cell in sorted(c.items()):
        m, s = mean_se(cell["coverage"])
        if m < 1 - ALPHA - 3 * s:
            low.append(f"{METHODS[method]} on {name}/{model} ({m:.3f} ± {s:.3f})")
    L += [
        f"- coverage ≥ 1 − alpha − 3 s.e. for every method: {len(c) - len(low)} of {len(c)} — "
        + ("**met**" if not low else "**not met**: " + "; ".join(low)),
        "",
    ]
    return L, {"fidelity": fid, "slower": slower, "lcp_over": over, "lcp_helped": helped, "low_coverage": low}


def _size_rule_guess(res: dict[str, Any], name: str, n_splits: int) -> list[bool]:
    """For results saved before ``size_rule`` was recorded: the rule reads sizes only, so it follows from them."""
    n_train = res["sizes"][name]["n_train"]
    n_cal = n_train - n_train // 2
    return [round(0.5 * n_cal) < math.ceil(10 / ALPHA)] * n_splits


def markdown(res: dict[str, Any]) -> str:
    a, mach = res["args"], res["machine"]
    c = cells(res)
    load_b, load_a = mach.get("load_before"), mach.get("load_after")
    L = [
        "## Small data: split conformal, LCP-RF, CV+, jackknife+ and J+aB next to MAPIE",
        "",
        f"Command: `{res['command'].strip()}` (`benchmarks/bench_small.py`), run on {res['date']}. "
        f"{a['splits']} random splits per data set; cells are the mean ± standard error over splits; "
        f"alpha = {ALPHA}.",
        "",
        "Protocol: real data sets from PyPI packages (scikit-learn's diabetes; ISLP's Carseats, Auto, Hitters "
        "(the 263 players with a salary, log salary), Boston and Wage), split at random per split into a training "
        "part (the largest multiple of 10 rows within 75 %) and a test part (the rest), without a training hole; "
        f"the paper's sim and toy models with n = 300, 1,000 and 3,000 training rows and {N_TEST_SIM} fresh test "
        "rows per split. One design matrix per data set (confrf's formula design); the same training rows and base "
        "model for every method: `LinearRegression()` (ols) or `HistGradientBoostingRegressor(random_state=seed)` "
        "(gbm). Split conformal and LCP-RF (default options) train on a random half of the training part and "
        "calibrate on the other half (the same halves for both); the cross-conformal methods train and calibrate "
        f"on all of it: CV+ with `KFold({K}, shuffle=True, random_state=seed)` for confrf and MAPIE (the same "
        f"folds, equal since the training size is a multiple of {K}), the jackknife+ (`LeaveOneOut()` for MAPIE), "
        f"J+aB with {a['n_bootstrap']} expected bootstrap models for confrf (their number is random, as Kim, Xu "
        f"and Barber's guarantee needs) and `resampling={a['n_bootstrap']}` for MAPIE, both aggregating by the "
        "mean.",
        "",
        "Left out for the time budget (and said here): the jackknife+ fits n models per split, so it runs with "
        f"OLS up to {a['jackknife_max']} training rows and "
        + (
            f"with gradient boosting up to {a['jackknife_gbm_max']}"
            if a["jackknife_gbm_max"]
            else "not with gradient boosting (n boosted fits per split)"
        )
        + f"; J+aB with gradient boosting runs up to {a['jab_gbm_max']} training rows.",
        "",
        "Columns: coverage of the test responses; mean width of the finite intervals; median width of all "
        "intervals; share of infinite intervals; fit seconds (everything before prediction, base-model fits "
        "included: one for split/LCP-RF, K + 1 for CV+, n + 1 for the jackknife+, B + 1 for J+aB) and predict "
        "seconds for the test rows. Single measurements, one thread (OpenMP and BLAS limited to 1, n_jobs = 1).",
        "",
        f"Machine: {mach.get('cpu_model') or 'unknown CPU'}, {mach.get('cpus_usable')} usable cpu(s), Python "
        f"{mach['python']}; numpy {mach['numpy']}, scikit-learn {mach['scikit-learn']}, confrf {mach['confrf']}. "
        f"The machine is shared: load average {load_b} before and {load_a} after the run (1, 5, 15 minutes), "
        f"background CPU {_pct(mach.get('background_cpu_before'))} before; timings compare methods run under the "
        f"same load, not absolute speeds. Run time {mach['wall_seconds']:.0f} s.",
        "",
    ]
    L += [f"- {n}" for n in res["notes"]] + ([""] if res["notes"] else [])
    keys = [
        ("coverage", "coverage", 3),
        ("mean_width", "mean width", 3),
        ("median_width", "median width", 3),
        ("share_infinite", "inf. share", 3),
        ("fit_s", "fit s", 2),
        ("predict_s", "predict s", 3),
    ]
    for name in a["datasets"]:
        size = res["sizes"].get(name)
        if size is None:
            continue
        L += [
            f"### {name}",
            "",
            f"n_train = {size['n_train']}, n_test = {size['n_test']}, p = {size['p']} design columns.",
            "",
            "| model | method | " + " | ".join(t for _, t, _ in keys) + " |",
            "|---|---|" + "---:|" * len(keys),
        ]
        for model in a["models"]:
            for method, label in METHODS.items():
                cell = c.get((name, model, method))
                if cell is None:
                    continue
                L.append(f"| {model} | {label} | " + " | ".join(fmt(mean_se(cell[k]), d) for k, _, d in keys) + " |")
        L.append("")
    lines, _ = targets(res)
    return "\n".join(L + lines)


def _pct(x: float | None) -> str:
    return "unknown" if x is None else f"{100 * x:.0f} %"


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, (np.integer, np.bool_)):
        return x.item()
    if isinstance(x, Path):
        return str(x)
    return x


# ------------------------------------------------------------------ main ----
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--models", nargs="+", default=["ols", "gbm"], choices=["ols", "gbm"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--splits", type=int, default=20, help="random splits per data set (20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-bootstrap", type=int, default=20, help="J+aB's expected models (confrf), MAPIE's resampling")
    ap.add_argument("--jackknife-max", type=int, default=500, help="largest training part for the OLS jackknife+")
    ap.add_argument("--jackknife-gbm-max", type=int, default=0, help="... for the gradient-boosting jackknife+")
    ap.add_argument("--jab-gbm-max", type=int, default=400, help="largest training part for J+aB with boosting")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="raw results (JSON) and the report")
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the docs page to overwrite ('' for none)")
    ap.add_argument("--quick", action="store_true", help="2 splits of carseats and sim-300, no docs")
    ap.add_argument("--from-json", type=Path, default=None, help="rewrite the report of a saved run's JSON")
    args = ap.parse_args(argv)
    if args.quick:
        args.splits, args.datasets, args.docs = 2, ["carseats", "sim-300"], Path("")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json is not None:  # rewrite the report of a saved run (no fitting)
        res = json.loads(args.from_json.read_text())
        args.out = args.from_json.parent
    else:
        res = run(args)
    text = markdown(res)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_small.md").write_text(text + "\n")
    (args.out / "bench_small.json").write_text(json.dumps(_jsonable(res), indent=1))
    if str(args.docs) not in ("", "."):
        args.docs.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Classification benchmark: confrf's prediction sets next to MAPIE and crepes.

Usage (from the repository root)::

    python benchmarks/bench_classification.py            # 4 data sets, 3 seeds, writes the docs page
    python benchmarks/bench_classification.py --quick    # smoke test: 1 seed, 2 data sets, no docs

Data (all shipped inside PyPI packages, no download): scikit-learn's bundled
``load_digits`` (10 classes, 1797 rows), ``load_wine`` (3 classes, 178 rows),
``load_breast_cancer`` (2 classes, 569 rows), and confrf's diamonds with the
response ``cut`` (5 classes; a seeded sample of 8000 rows; predictors carat,
depth, table, price).

Protocol: every seed splits the rows at random into 40 % training, 40 %
calibration and 20 % test; alpha = 0.1. One base model per seed and data set,
shared by every method: scikit-learn ``HistGradientBoostingClassifier``
(``random_state=seed``) on digits, wine and breast cancer, and a logistic
regression (``LogisticRegression`` on standardized features) on diamonds,
fitted once on the training part on integer class codes.

Methods
    confrf (``ConformalClassifier(prefit=True)`` on the shared model): split
    with LAC and randomized APS, LCP-RF (honest forest, 100 trees) with LAC
    and randomized APS, class-conditional split (``split-g``) and LCP-RF
    (``lcp-rf-g``) with LAC.
    MAPIE 1.x: ``SplitConformalClassifier(prefit=True)`` with
    ``conformity_score="lac"`` and ``"aps"`` (its default APS prediction,
    ``include_last_label=True``; MAPIE offers only LAC for two classes).
    crepes: ``WrapClassifier`` on the fitted model, ``calibrate(class_cond=False)``
    (standard) and ``class_cond=True`` (Mondrian by class), hinge score 1 - p_y,
    ``predict_set(labels=False, confidence=0.9, smoothing=False)``.

Metrics per test set (mean and standard error over seeds): coverage, mean set
size, worst size-stratified coverage (lowest coverage over the non-empty set
sizes with at least 20 test rows; ``confrf.classification.evaluation.
worst_size_coverage``), worst class coverage, seconds (conformalize +
predict). The page docs/benchmarks/classification.md is rewritten with the
table and the three targets checked.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import confrf as cf
from confrf.classification import APSScore, ConformalClassifier
from confrf.classification.evaluation import worst_size_coverage

ROOT = Path(__file__).resolve().parent.parent
ALPHA = 0.1


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "wine":
        return load_wine(return_X_y=True)
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    if name == "diamonds_cut":
        d = cf.datasets.load_diamonds().sample(8000, random_state=0)
        return d[["carat", "depth", "table", "price"]].to_numpy(float), d["cut"].cat.codes.to_numpy()
    raise ValueError(name)


def base_model(name: str, seed: int):
    if name == "diamonds_cut":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return HistGradientBoostingClassifier(random_state=seed)


CONFRF = {
    "confrf split LAC": ("split", "lac"),
    "confrf split APS-r": ("split", "aps-r"),
    "confrf LCP-RF LAC": ("lcp-rf", "lac"),
    "confrf LCP-RF APS-r": ("lcp-rf", "aps-r"),
    "confrf split-g LAC (class-cond.)": ("split-g", "lac"),
    "confrf LCP-RF-G LAC (class-cond.)": ("lcp-rf-g", "lac"),
}


def run_confrf(method: str, score: str, model, K: int, seed: int, Xc, yc, Xt) -> np.ndarray:
    s = APSScore(randomized=True, random_state=seed) if score == "aps-r" else score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.exceptions.InfiniteIntervalWarning)
        clf = ConformalClassifier(
            model, method=method, alpha=ALPHA, score=s, prefit=True, random_state=seed, n_jobs=1
        ).conformalize(Xc, yc, classes=list(range(K)))
    return clf.predict_sets(Xt)


def run_mapie(score: str, model, K: int, Xc, yc, Xt) -> np.ndarray:
    from mapie.classification import SplitConformalClassifier

    m = SplitConformalClassifier(model, confidence_level=1 - ALPHA, conformity_score=score, prefit=True)
    m.conformalize(Xc, yc)
    _, sets = m.predict_set(Xt)
    out = np.zeros((Xt.shape[0], K), dtype=bool)
    out[:, np.asarray(model.classes_, dtype=int)] = sets[:, :, 0]
    return out


def run_crepes(class_cond: bool, model, K: int, seed: int, Xc, yc, Xt) -> np.ndarray:
    from crepes import WrapClassifier

    w = WrapClassifier(model)
    w.calibrate(Xc, yc, class_cond=class_cond, seed=seed)
    sets = np.asarray(w.predict_set(Xt, labels=False, confidence=1 - ALPHA, smoothing=False), dtype=bool)
    out = np.zeros((Xt.shape[0], K), dtype=bool)
    out[:, np.asarray(model.classes_, dtype=int)] = sets
    return out


def metrics(sets: np.ndarray, yt: np.ndarray) -> dict[str, float]:
    covered = sets[np.arange(sets.shape[0]), yt]
    size = sets.sum(axis=1)
    by_class = [covered[yt == k].mean() for k in np.unique(yt)]
    return {
        "coverage": float(covered.mean()),
        "mean_size": float(size.mean()),
        "worst_size_coverage": worst_size_coverage(size, covered),
        "worst_class_coverage": float(min(by_class)),
    }


def one_seed(name: str, seed: int) -> list[dict]:
    X, y = load(name)
    K = int(y.max()) + 1
    perm = np.random.default_rng(seed).permutation(len(y))
    a, b = int(0.4 * len(y)), int(0.8 * len(y))
    tr, ca, te = perm[:a], perm[a:b], perm[b:]
    model = base_model(name, seed).fit(X[tr], y[tr])
    Xc, yc, Xt, yt = X[ca], y[ca], X[te], y[te]
    runs = {label: (lambda m=m, s=s: run_confrf(m, s, model, K, seed, Xc, yc, Xt)) for label, (m, s) in CONFRF.items()}
    runs["MAPIE LAC"] = lambda: run_mapie("lac", model, K, Xc, yc, Xt)
    if K > 2:  # MAPIE refuses APS for a binary target
        runs["MAPIE APS"] = lambda: run_mapie("aps", model, K, Xc, yc, Xt)
    runs["crepes standard"] = lambda: run_crepes(False, model, K, seed, Xc, yc, Xt)
    runs["crepes Mondrian (class-cond.)"] = lambda: run_crepes(True, model, K, seed, Xc, yc, Xt)
    rows = []
    for label, fn in runs.items():
        t0 = time.perf_counter()
        sets = fn()
        rows.append(
            {
                "data": name,
                "seed": seed,
                "method": label,
                **metrics(sets, yt),
                "seconds": time.perf_counter() - t0,
                "n_test": int(len(te)),
            }
        )
    return rows


def report(df: pd.DataFrame) -> str:
    g = df.groupby(["data", "method"], sort=False)
    mean, se = g.mean(numeric_only=True), g.std(numeric_only=True) / np.sqrt(g.size()).to_numpy()[:, None]
    lines = []
    checks = []
    for data in df["data"].unique():
        lines += [
            f"\n**{data}** ({int(df[df.data == data].n_test.iloc[0])} test rows per seed)\n",
            "| method | coverage | mean size | worst size-strat. cov. | worst class cov. | seconds |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for method in df[df.data == data]["method"].unique():
            m, s = mean.loc[(data, method)], se.loc[(data, method)]
            cells = [
                f"{m[c]:.3f} ± {s[c]:.3f}"
                for c in ("coverage", "mean_size", "worst_size_coverage", "worst_class_coverage")
            ]
            lines.append(f"| {method} | " + " | ".join(cells) + f" | {m['seconds']:.2f} |")
        ours = [k for k in CONFRF]
        cov_ok = all(mean.loc[(data, k), "coverage"] >= 1 - ALPHA - 3 * se.loc[(data, k), "coverage"] for k in ours)
        best = min(mean.loc[(data, k), "mean_size"] for k in ours)
        lac = mean.loc[(data, "MAPIE LAC")]
        best_ssc = max(mean.loc[(data, k), "worst_size_coverage"] for k in ours)
        checks.append(
            f"| {data} | {'yes' if cov_ok else 'NO'} | {best:.3f} vs {lac['mean_size'] * 1.02:.3f} "
            f"({'yes' if best <= lac['mean_size'] * 1.02 else 'NO'}) | {best_ssc:.3f} vs "
            f"{lac['worst_size_coverage']:.3f} ({'yes' if best_ssc > lac['worst_size_coverage'] else 'NO'}) |"
        )
    head = [
        "## Classification: prediction sets next to MAPIE and crepes",
        "",
        f"Command: `python benchmarks/bench_classification.py` ({df.seed.nunique()} seeds, alpha = {ALPHA}; "
        "protocol in the script's docstring). Mean ± standard error over seeds. Worst size-stratified "
        "coverage: lowest coverage over non-empty set sizes with at least 20 test rows (NaN when none).",
        "",
        "Targets: coverage ≥ 1 − α − 3 s.e. for every confrf method; the best confrf mean set size ≤ MAPIE "
        "LAC's + 2 %; the best confrf worst size-stratified coverage above MAPIE LAC's.",
        "",
        "confrf split LAC computes the same order statistic as MAPIE LAC and crepes standard, and confrf "
        "split-g the same per-class one as crepes Mondrian, except that crepes keeps a label when its p-value "
        "is >= 1 - confidence: when (n + 1) alpha is an integer that admits one more label than the exact "
        "rule, so its sets can be slightly larger. LCP-RF-G's sets are "
        "large when the classes are separated in x (docs/guide/classification.md, 'When localization costs').",
        "",
        "| data | every confrf coverage ≥ 1 − α − 3 s.e. | best confrf size vs LAC + 2 % | best confrf "
        "worst size-strat. cov. vs MAPIE LAC |",
        "| --- | --- | --- | --- |",
        *checks,
    ]
    return "\n".join(head + lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--datasets", nargs="+", default=["digits", "wine", "breast_cancer", "diamonds_cut"])
    args = p.parse_args()
    seeds = 1 if args.quick else args.seeds
    datasets = args.datasets[:2] if args.quick else args.datasets
    rows = [r for name in datasets for seed in range(seeds) for r in one_seed(name, seed)]
    df = pd.DataFrame(rows)
    text = report(df)
    print(text)
    if not args.quick:
        out = ROOT / "benchmarks" / "results"
        out.mkdir(exist_ok=True)
        df.to_json(out / "classification.json", orient="records", indent=1)
        (ROOT / "docs" / "benchmarks" / "classification.md").write_text(text)


if __name__ == "__main__":
    main()

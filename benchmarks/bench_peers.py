#!/usr/bin/env python
"""Peer benchmark: confrf's methods next to MAPIE, crepes and a quantile-forest QRF.

Usage (from the repository root)::

    python benchmarks/bench_peers.py                       # 4 data sets, 5 seeds (~8-10 min on 2 busy cores)
    python benchmarks/bench_peers.py --quick               # smoke test: small sizes, 2 seeds, no docs
    python benchmarks/bench_peers.py --datasets sim toy --seeds 3 --methods confrf

Protocol (the paper's, section "Experiments"): every seed splits the data at
random into 40 % training, 40 % calibration and 20 % test. On the real data
(California housing, STAR) the training part gets the paper's "hole": its rows
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
    coverage guarantee.

Metrics per test set (mean and standard error over seeds in the report; raw
per-seed values in the JSON): coverage; worst-slab coverage
(``confrf.metrics.worst_slab_coverage``, delta = 0.1, the same random
directions for every method); mean width of the finite intervals, their
coefficient of variation (sd / mean) and the share of infinite ones; on sim/toy the paper's distance to the oracle, the median over
test points of |q(x) - q*(x)| / q*(x) with q the interval's half-width and q*
the exact (1 - alpha)-quantile of |Y - c(x)| given x around the interval's
centre c (``SimulatedData.oracle_score_quantile``); on every data set the
paper's fidelity error, the median of |q(x) - |y - c(x)|| / |y - c(x)|
(``confrf.metrics.fidelity_error``); calibration time (everything after
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
import gc
import importlib
import inspect
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

try:  # run from a checkout without installing: put the repository root on the path
    import confrf  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the script is launched
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import confrf  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_predict import background_cpu_busy, machine_info  # noqa: E402

import confrf as cf  # noqa: E402
from confrf.calibrators import get_method  # noqa: E402
from confrf.datasets import SimulatedData  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "peers"
DEFAULT_DOCS = ROOT / "docs" / "benchmarks"
DATASETS = ("sim", "toy", "california", "star")
REAL = ("california", "star")

#: confrf rows: key -> (label, method, method options)
CONFRF_METHODS = {
    "split": ("SPLIT", "split", {}),
    "split-g": ("SPLIT-G", "split-g", {}),
    "lcp": ("LCP", "lcp", {}),
    "slcp": ("SLCP", "slcp", {}),
    "lcp-rf": ("LCP-RF", "lcp-rf", {}),
    "lcp-rf-g": ("LCP-RF-G", "lcp-rf-g", {}),
    "qrf-tc": ("QRF-TC", "qrf-tc", {}),
    # the paper's form of the PAC correction: D2 target 1 - alpha (guarantee 1 - alpha - epsilon);
    # confrf's default ("inflated") targets 1 - alpha + epsilon on D2 for a guarantee of 1 - alpha
    "qrf-tc-paper": ("QRF-TC (paper form)", "qrf-tc", {"pac_form": "paper"}),
}
#: peer rows: key -> (label, module that must import)
PEER_METHODS = {
    "mapie-split": ("MAPIE split", "mapie"),
    "mapie-cqr": ("MAPIE CQR", "mapie"),
    "crepes-normalized": ("crepes normalized", "crepes"),
    "crepes-mondrian": ("crepes Mondrian", "crepes"),
    "qrf": ("QRF (no guarantee)", "quantile_forest"),
}
PIP_NAMES = {"mapie": "mapie", "crepes": "crepes", "quantile_forest": "quantile-forest"}
ALL_METHODS = list(CONFRF_METHODS) + list(PEER_METHODS)


# ------------------------------------------------------------------ data ----
@dataclass
class Split:
    """One seed's training / calibration / test parts of a data set."""

    name: str
    X_tr: np.ndarray
    y_tr: np.ndarray
    X_cal: np.ndarray
    y_cal: np.ndarray
    X_te: np.ndarray
    y_te: np.ndarray
    oracle: SimulatedData | None = None  # the test part of a simulated data set, with its exact oracles
    info: dict[str, Any] = field(default_factory=dict)


def star_design() -> tuple[np.ndarray, np.ndarray]:
    """STAR first grade: ``score1 = read1 + math1`` from the other first-grade columns.

    ``read1``/``math1`` are the target's parts and are left out. The ordered
    ``birth`` quarter becomes its rank; the other categoricals are one-hot
    encoded (trees do not need a reference level dropped).
    """
    df = cf.datasets.load_star(complete_first_grade=True)
    y = df["score1"].to_numpy(dtype=np.float64)
    X = df.drop(columns=["score1", "read1", "math1"])
    ordered = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype) and X[c].cat.ordered]
    for c in ordered:
        X[c] = X[c].cat.codes.astype(np.float64)
    X = pd.get_dummies(X, dtype=np.float64)
    return X.to_numpy(dtype=np.float64), y


def load_real(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of an embedded real data set."""
    if name == "california":
        df = cf.datasets.load_california()
        return df.drop(columns="MedHouseVal").to_numpy(dtype=np.float64), df["MedHouseVal"].to_numpy(dtype=np.float64)
    if name == "star":
        return star_design()
    raise ValueError(f"unknown real data set {name!r}")


def make_split(name: str, seed: int, args: argparse.Namespace, cache: dict[str, Any]) -> Split:
    """Draw (simulated) or subsample (real) the data of one seed and split it 40/40/20.

    Seeds: the simulated sample uses ``1000 * seed + 1``, the subsample and the
    split ``1000 * seed + 2``; the models use ``seed`` itself.
    """
    rng = np.random.default_rng(1000 * seed + 2)
    sim = None
    if name in REAL:
        if name not in cache:
            cache[name] = load_real(name)
        X, y = cache[name]
        n_all = X.shape[0]
        if args.max_rows and n_all > args.max_rows:
            keep = np.sort(rng.choice(n_all, size=args.max_rows, replace=False))
            X, y = X[keep], y[keep]
    else:
        sim = cf.datasets.simulate(name, args.n_sim, random_state=1000 * seed + 1)
        X, y = sim.X.to_numpy(dtype=np.float64), sim.y.to_numpy(dtype=np.float64)
        n_all = X.shape[0]
    n = X.shape[0]
    perm = rng.permutation(n)
    n_tr = n_cal = round(0.4 * n)
    tr, cal, te = perm[:n_tr], perm[n_tr:n_tr + n_cal], perm[n_tr + n_cal:]
    info: dict[str, Any] = {"n_available": int(n_all), "n_used": int(n), "p": int(X.shape[1])}
    if name in REAL and not args.no_hole:
        # the paper's hole: the model never sees the upper 30 % of the training responses
        cut = float(np.quantile(y[tr], 0.7))
        info["hole_cut"] = cut
        info["hole_removed"] = int(np.sum(y[tr] > cut))
        tr = tr[y[tr] <= cut]
    oracle = None
    if sim is not None:
        oracle = SimulatedData(name=sim.name, frame=sim.frame.iloc[te].reset_index(drop=True), formula=sim.formula,
                               mean=sim.mean[te], noise_sd=sim.noise_sd[te])
    info.update(n_train=int(tr.size), n_cal=int(cal.size), n_test=int(te.size))
    return Split(name, X[tr], y[tr], X[cal], y[cal], X[te], y[te], oracle, info)


# ---------------------------------------------------------------- models ----
def base_model(seed: int) -> Any:
    """The shared mean model (unfitted).

    ``early_stopping=False`` states the default explicitly (scikit-learn turns it
    on above 10,000 rows), so every method sees the same deterministic fit.
    """
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(random_state=seed, early_stopping=False)


def quantile_model(seed: int, q: float) -> Any:
    """CQR's quantile model at level ``q`` (unfitted)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(loss="quantile", quantile=q, random_state=seed, early_stopping=False)


def clock(fn: Callable[[], Any]) -> tuple[Any, float]:
    """(fn(), seconds) from one perf_counter span.

    The young generations are collected before and the collector is off
    during the call, so no method pays for another's garbage (a full
    collection costs ~0.1 s here, too much for every call).
    """
    gc.collect(1)
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0
    finally:
        gc.enable()


@dataclass
class Shared:
    """What several methods of one seed share, fitted (and timed) once on first use."""

    split: Split
    seed: int
    alpha: float
    n_jobs: int
    mu: Any = None
    mu_seconds: float = 0.0
    mu_cal: np.ndarray | None = None
    mu_test: np.ndarray | None = None
    # base-model predictions of the calibration / test rows: part of calibrating / predicting for the
    # methods that reuse mu_cal / mu_test (crepes, QRF), as the others compute them inside their calls
    mu_cal_seconds: float = 0.0
    mu_test_seconds: float = 0.0
    _quantile: tuple[list[Any], float] | None = None
    _difficulty: tuple[np.ndarray, np.ndarray, float, float] | None = None

    def fit_base(self) -> None:
        s = self.split
        self.mu, self.mu_seconds = clock(lambda: base_model(self.seed).fit(s.X_tr, s.y_tr))
        self.mu_cal, self.mu_cal_seconds = clock(lambda: self.mu.predict(s.X_cal))
        self.mu_test, self.mu_test_seconds = clock(lambda: self.mu.predict(s.X_te))

    def quantile_models(self) -> tuple[list[Any], float]:
        """[q_lo, q_hi, median] fitted on the training part (MAPIE's prefit order), and the seconds."""
        if self._quantile is None:
            s, a = self.split, self.alpha

            def fit() -> list[Any]:
                return [quantile_model(self.seed, q).fit(s.X_tr, s.y_tr) for q in (a / 2, 1 - a / 2, 0.5)]

            self._quantile = clock(fit)
        return self._quantile

    def difficulty(self) -> tuple[np.ndarray, np.ndarray, float, float]:
        """crepes difficulty estimates of the calibration and test rows, and the seconds to get each.

        The first time covers the estimator's fit and the calibration rows, the
        second the test rows (a prediction cost).

        The k-NN difficulty is the mean absolute residual of the 25 nearest
        training rows. In-sample residuals of a boosted model are too small,
        so they are 5-fold out-of-fold residuals (the same shared model
        settings); features are standardized on the training part because the
        raw scales differ by orders of magnitude (California's population vs
        latitude).
        """
        if self._difficulty is None:
            from crepes.extras import DifficultyEstimator
            from sklearn.model_selection import KFold
            from sklearn.preprocessing import StandardScaler

            s = self.split

            def fit() -> tuple[Any, Any, np.ndarray]:
                resid = np.empty_like(s.y_tr)
                for tr, te in KFold(5, shuffle=True, random_state=self.seed).split(s.X_tr):
                    m = base_model(self.seed).fit(s.X_tr[tr], s.y_tr[tr])
                    resid[te] = s.y_tr[te] - m.predict(s.X_tr[te])
                scaler = StandardScaler().fit(s.X_tr)
                de = DifficultyEstimator().fit(X=scaler.transform(s.X_tr), residuals=resid, k=25, scaler=True)
                return scaler, de, de.apply(scaler.transform(s.X_cal))

            (scaler, de, sig_cal), sec = clock(fit)
            sig_te, test_sec = clock(lambda: de.apply(scaler.transform(s.X_te)))
            self._difficulty = (sig_cal, sig_te, sec, test_sec)
        return self._difficulty


@dataclass
class Interval:
    """One method's test intervals and the time it took."""

    lwr: np.ndarray
    upr: np.ndarray
    calib_seconds: float
    predict_seconds: float
    base_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def groups_option() -> str:
    """SPLIT-G/LCP-RF-G groups: the paper's Leiden communities, or connected components without igraph."""
    try:
        importlib.import_module("igraph")
        return "leiden"
    except ImportError:
        return "components"


def run_confrf(key: str, sh: Shared) -> Interval:
    s = sh.split
    _, method, options = CONFRF_METHODS[key]
    options = dict(options)
    if method in ("split-g", "lcp-rf-g"):
        options["groups"] = groups_option()
    extra: dict[str, Any] = {"options": options}
    if get_method(method).needs_training:
        # LCP/SLCP learn their bandwidth from out-of-fold training scores: fit() refits the same
        # model (same seed) and adds the out-of-fold fits, all counted as calibration time
        est = cf.ConformalRegressor(model=base_model(sh.seed), method=method, alpha=sh.alpha,
                                    random_state=sh.seed, n_jobs=sh.n_jobs, options=options)
        _, sec = clock(lambda: est.fit(s.X_tr, s.y_tr).conformalize(s.X_cal, s.y_cal))
        extra["same_base_model"] = bool(np.allclose(est.predict(s.X_te), sh.mu_test))
    else:
        est = cf.ConformalRegressor(model=sh.mu, prefit=True, method=method, alpha=sh.alpha,
                                    random_state=sh.seed, n_jobs=sh.n_jobs, options=options)
        _, sec = clock(lambda: est.conformalize(s.X_cal, s.y_cal))
    I, psec = clock(lambda: est.predict_interval(s.X_te))
    return Interval(I[:, 0], I[:, 1], sec, psec, sh.mu_seconds, extra)


def run_mapie_split(sh: Shared) -> Interval:
    from mapie.regression import SplitConformalRegressor

    s = sh.split
    reg = SplitConformalRegressor(estimator=sh.mu, confidence_level=1 - sh.alpha, prefit=True)
    _, sec = clock(lambda: reg.conformalize(s.X_cal, s.y_cal))
    (_, I), psec = clock(lambda: reg.predict_interval(s.X_te))
    return Interval(I[:, 0, 0], I[:, 1, 0], sec, psec, sh.mu_seconds)


def run_mapie_cqr(sh: Shared) -> Interval:
    from mapie.regression import ConformalizedQuantileRegressor

    s = sh.split
    models, base = sh.quantile_models()
    reg = ConformalizedQuantileRegressor(estimator=models, confidence_level=1 - sh.alpha, prefit=True)
    _, sec = clock(lambda: reg.conformalize(s.X_cal, s.y_cal))
    # symmetric correction: one constant for both ends, Romano et al.'s CQR (and confrf's quantile score)
    (_, I), psec = clock(lambda: reg.predict_interval(s.X_te, symmetric_correction=True))
    return Interval(I[:, 0, 0], I[:, 1, 0], sec, psec, base)


def run_crepes(sh: Shared, mondrian: bool, n_bins: int) -> Interval:
    from crepes import ConformalRegressor
    from crepes.extras import binning

    s = sh.split
    sig_cal, sig_te, de_sec, de_test_sec = sh.difficulty()
    resid = s.y_cal - sh.mu_cal
    extra: dict[str, Any] = {"difficulty_seconds": de_sec, "difficulty_test_seconds": de_test_sec}
    if mondrian:
        def fit() -> tuple[Any, np.ndarray]:
            # it jitters ties at random: seed it where the installed crepes allows
            seeded = {"seed": sh.seed} if "seed" in inspect.signature(binning).parameters else {}
            bins_cal, edges = binning(sig_cal, bins=n_bins, **seeded)
            return ConformalRegressor().fit(residuals=resid, bins=bins_cal), edges

        (cr, edges), sec = clock(fit)
        extra["n_bins"] = n_bins
        I, psec = clock(lambda: cr.predict_int(y_hat=sh.mu_test, bins=binning(sig_te, bins=edges),
                                               confidence=1 - sh.alpha))
    else:
        cr, sec = clock(lambda: ConformalRegressor().fit(residuals=resid, sigmas=sig_cal))
        I, psec = clock(lambda: cr.predict_int(y_hat=sh.mu_test, sigmas=sig_te, confidence=1 - sh.alpha))
    return Interval(I[:, 0], I[:, 1], sh.mu_cal_seconds + de_sec + sec, sh.mu_test_seconds + de_test_sec + psec,
                    sh.mu_seconds, extra)


def run_qrf(sh: Shared) -> Interval:
    """QRF of the calibration scores as a localizer, without conformal correction (no guarantee).

    Forest settings follow confrf's localizer (100 trees, max_features 1.0,
    bootstrap, min_samples_leaf = max(5, ceil(sqrt(n)))) with every calibration
    row used for both growing and weighting; ``max_samples_leaf=None`` keeps all
    leaf samples and ``weighted_leaves=True`` gives Meinshausen's weights.
    """
    from quantile_forest import RandomForestQuantileRegressor

    s = sh.split
    V = np.abs(s.y_cal - sh.mu_cal)
    msl = max(5, math.ceil(math.sqrt(s.X_cal.shape[0])))
    qrf = RandomForestQuantileRegressor(n_estimators=100, min_samples_leaf=msl, max_features=1.0,
                                        max_samples_leaf=None, random_state=sh.seed, n_jobs=sh.n_jobs)
    _, sec = clock(lambda: qrf.fit(s.X_cal, V))

    def predict() -> np.ndarray:
        return np.asarray(qrf.predict(s.X_te, quantiles=1 - sh.alpha, weighted_leaves=True), dtype=np.float64)

    q, psec = clock(predict)
    return Interval(sh.mu_test - q, sh.mu_test + q, sh.mu_cal_seconds + sec, sh.mu_test_seconds + psec,
                    sh.mu_seconds, {"min_samples_leaf": msl})


# --------------------------------------------------------------- metrics ----
def evaluate(sh: Shared, I: Interval, args: argparse.Namespace) -> dict[str, Any]:
    s = sh.split
    lwr, upr = np.asarray(I.lwr, dtype=np.float64), np.asarray(I.upr, dtype=np.float64)
    covered = cf.metrics.covered(s.y_te, lwr, upr)
    width = cf.metrics.interval_width(lwr, upr)
    finite = np.isfinite(width)
    half = np.maximum(upr - lwr, 0.0) / 2.0  # an empty interval (crossed quantiles) has width 0
    with np.errstate(invalid="ignore"):  # -inf + inf
        center = np.where(np.isfinite(lwr + upr), (lwr + upr) / 2.0, sh.mu_test)  # infinite: centre on mu
    wsc = cf.metrics.worst_slab_coverage(s.X_te, covered, delta=args.wsc_delta, n_directions=args.wsc_directions,
                                         random_state=sh.seed)
    row: dict[str, Any] = {
        "coverage": float(covered.mean()),
        "worst_slab_coverage": float(wsc.coverage),
        "mean_width": float(width[finite].mean()) if finite.any() else math.inf,
        "sd_width": float(width[finite].std()) if finite.any() else math.nan,
        # spread of the widths relative to their mean: 0 for a constant width (SPLIT), large when adaptive
        "width_cv": float(width[finite].std() / width[finite].mean()) if finite.any() and width[finite].mean() > 0
        else math.nan,
        "share_infinite": float(np.mean(~finite)),
        "fidelity_error": float(np.median(cf.metrics.fidelity_error(s.y_te, center, half))),
        "oracle_error": None,
        "cond_coverage_mean": None,
        "share_cond_below_0.8": None,
        "calib_seconds": I.calib_seconds,
        "predict_seconds": I.predict_seconds,
        "base_fit_seconds": I.base_seconds,
    }
    if s.oracle is not None:
        q_star = s.oracle.oracle_score_quantile(center, 1.0 - sh.alpha)
        row["oracle_error"] = float(np.median(cf.metrics.oracle_width_error(2 * half, 2 * q_star)))
        cond = s.oracle.conditional_coverage(None, lwr, upr)
        row["cond_coverage_mean"] = float(cond.mean())
        row["share_cond_below_0.8"] = float(np.mean(cond < 1 - 2 * sh.alpha))
    return row


# ------------------------------------------------------------------- run ----
def available_peers(wanted: list[str]) -> tuple[dict[str, str], list[str]]:
    """Version of each importable peer module among ``wanted`` and notes on the others."""
    versions: dict[str, str] = {}
    notes: list[str] = []
    for module in sorted({PEER_METHODS[k][1] for k in wanted}):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            notes.append(f"{module} is not installed ({exc}); its rows are skipped "
                         f"(pip install {PIP_NAMES[module]}, or pip install 'confrf[bench]').")
            continue
        from importlib.metadata import PackageNotFoundError, version

        try:
            versions[module] = version(PIP_NAMES[module])
        except PackageNotFoundError:
            versions[module] = str(getattr(mod, "__version__", "unknown"))
        if module == "mapie":
            try:  # the v1 API; MAPIE 0.x has MapieRegressor instead
                importlib.import_module("mapie.regression").SplitConformalRegressor  # noqa: B018
            except AttributeError:
                notes.append(f"mapie {versions.pop(module)} lacks the v1 API (SplitConformalRegressor); "
                             "its rows are skipped (pip install 'mapie>=1').")
    return versions, notes


def expand_methods(names: list[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        group = {"all": ALL_METHODS, "confrf": list(CONFRF_METHODS), "peers": list(PEER_METHODS)}.get(n, [n])
        out += [m for m in group if m not in out]
    return out


def label_of(method: str) -> str:
    return (CONFRF_METHODS.get(method) or PEER_METHODS[method])[0]


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
    }
    probe = (lambda: background_cpu_busy(args.load_probe)) if args.load_probe > 0 else (lambda: None)
    load_before = probe()
    rows: list[dict[str, Any]] = []
    splits: dict[str, dict[str, Any]] = {}
    cache: dict[str, Any] = {}
    t_start = time.perf_counter()
    for name in args.datasets:
        for seed in range(args.seed, args.seed + args.seeds):
            split = make_split(name, seed, args, cache)
            splits.setdefault(name, {})[str(seed)] = split.info
            sh = Shared(split, seed, args.alpha, args.n_jobs)
            sh.fit_base()
            for method in methods:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # peers warn about e.g. prefit settings; not our concern here
                    try:
                        I = run_confrf(method, sh) if method in CONFRF_METHODS else runners[method](sh)
                    except Exception as exc:
                        if method in CONFRF_METHODS and not isinstance(exc, cf.InputError):
                            raise  # a confrf bug must show; an InputError is a documented limit (e.g. too few points)
                        # a peer failing (e.g. an incompatible version) must not sink the other rows
                        note = f"{label_of(method)} failed on {name} seed {seed}: {type(exc).__name__}: {exc}"
                        print("NOTE:", note, flush=True)
                        notes.append(note)
                        continue
                row = {"dataset": name, "seed": seed, "method": method, "label": label_of(method),
                       "package": "confrf" if method in CONFRF_METHODS else PEER_METHODS[method][1],
                       **evaluate(sh, I, args), "extra": I.extra}
                rows.append(row)
                oe = row["oracle_error"]
                print(f"{name:10s} seed {seed} {row['label']:20s} cov {row['coverage']:.3f} "
                      f"wsc {row['worst_slab_coverage']:.3f} width {row['mean_width']:.3f} "
                      f"inf {row['share_infinite']:.3f} err* {'-' if oe is None else f'{oe:.3f}'} "
                      f"err^ {row['fidelity_error']:.3f} calib {row['calib_seconds']:.2f}s "
                      f"predict {row['predict_seconds']:.2f}s", flush=True)
    machine = machine_info()
    machine.update(pandas=pd.__version__, peers=versions, groups=groups_option(),
                   background_cpu_before=load_before, background_cpu_after=probe(),
                   wall_seconds=time.perf_counter() - t_start)
    try:
        import matplotlib

        machine["matplotlib"] = matplotlib.__version__
    except ImportError:  # pragma: no cover - the plots are skipped then
        machine["matplotlib"] = None
    return {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "command": "python benchmarks/bench_peers.py " + " ".join(args.argv),
            "methods": methods, "notes": notes, "machine": machine, "splits": splits, "rows": rows}


# ---------------------------------------------------------------- report ----
METRICS = [  # key, column title, digits
    ("coverage", "coverage", 3),
    ("worst_slab_coverage", "worst-slab cov.", 3),
    ("mean_width", "mean width", 3),
    ("width_cv", "width CV", 2),
    ("share_infinite", "inf. share", 3),
    ("oracle_error", "err* (oracle)", 3),
    ("fidelity_error", "err^ (fidelity)", 3),
    ("calib_seconds", "calib. s", 2),
    ("predict_seconds", "predict s", 3),
]


def mean_se(values: list[Any]) -> tuple[float, float] | None:
    """Mean and standard error over seeds (None if no value; se NaN with one seed)."""
    v = np.array([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return None
    if not np.all(np.isfinite(v)):
        return (math.inf if np.any(v == math.inf) else math.nan), math.nan
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se


def summarize(res: dict[str, Any]) -> dict[str, dict[str, dict[str, tuple[float, float] | None]]]:
    """dataset -> method -> metric -> (mean, se) over seeds."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name in res["args"]["datasets"]:
        out[name] = {}
        for method in res["methods"]:
            rr = [r for r in res["rows"] if r["dataset"] == name and r["method"] == method]
            if rr:
                out[name][method] = {k: mean_se([r[k] for r in rr]) for k, _, _ in METRICS}
    return out


def fmt(ms: tuple[float, float] | None, digits: int) -> str:
    if ms is None:
        return "–"
    m, se = ms
    if not math.isfinite(m):
        return "inf" if m == math.inf else "n/a"
    return f"{m:.{digits}f}" + (f" ± {se:.{digits}f}" if math.isfinite(se) else "")


def markdown(res: dict[str, Any], images: list[str]) -> str:
    a, mach = res["args"], res["machine"]
    summ = summarize(res)
    peers = ", ".join(f"{k} {v}" for k, v in sorted(mach["peers"].items())) or "none"
    L = [
        "## Peer benchmarks: confrf next to MAPIE, crepes and quantile-forest",
        "",
        f"Command: `{res['command'].strip()}` (`benchmarks/bench_peers.py`). "
        f"{a['seeds']} seed(s) from {a['seed']}; table cells are the mean ± standard error over seeds.",
        "",
        "Protocol (the paper's): 40 % training / 40 % calibration / 20 % test at random per seed; "
        f"alpha = {a['alpha']}; on California and STAR the training rows with a response above the "
        "0.7-quantile of the training responses are removed (the paper's \"hole\""
        + (", **disabled** in this run" if a["no_hole"] else "") + "). "
        f"sim and toy: {a['n_sim']} points drawn per seed; real data: at most "
        f"{a['max_rows'] or 'all'} rows per seed (a random subset, the same for every method). "
        "One `HistGradientBoostingRegressor(random_state=seed)` per seed, fitted once on the training part, is "
        "the mean model of every method except MAPIE CQR (three quantile-loss HistGradientBoosting models). "
        f"SPLIT-G and LCP-RF-G use groups = `{mach['groups']}`.",
        "",
        "Columns: coverage of the test responses; worst-slab coverage (delta = "
        f"{a['wsc_delta']}, {a['wsc_directions']} random directions, the same for every method; a minimum over "
        "slabs, so it is biased low on small test sets); mean width of the finite intervals; width CV: standard "
        "deviation / mean of the finite widths (0 for a constant width: how much the intervals vary); share of "
        "infinite intervals; **err\\*** (sim/toy only): median over test points of |q(x) − q\\*(x)| / q\\*(x), q the "
        "half-width and q\\* the exact (1 − alpha)-quantile of |Y − c(x)| given x around the interval's centre c "
        "(the paper's distance to the oracle interval); **err^**: median of |q(x) − |y − c(x)|| / |y − c(x)| (the "
        "paper's fidelity error on real data); calibration seconds (everything after fitting the shared base "
        "model: its calibration predictions and the method's calibration, plus LCP/SLCP's refit and out-of-fold "
        "fits, crepes' difficulty estimator with its out-of-fold fits, the quantile forest); prediction seconds "
        "for the whole test set (base-model predictions included, and crepes' test difficulties).",
        "",
        "**QRF (no guarantee)** is `quantile_forest.RandomForestQuantileRegressor` fitted on the calibration "
        "scores |y − mu(x)| and used as mu(x) ± its (1 − alpha)-quantile, without any conformal correction: "
        "it has no coverage guarantee, marginal or conditional.",
        "",
        "**Timings**: each time is a single measurement with OpenMP on one thread and "
        f"n_jobs = {a['n_jobs']}; background CPU load from other processes was "
        f"{_pct(mach.get('background_cpu_before'))} before and {_pct(mach.get('background_cpu_after'))} "
        "after the run (a busy machine inflates OpenMP timings many times over: compare orders of "
        "magnitude only when it was not near 0 %).",
        "",
        f"Machine: {mach.get('cpu_model') or 'unknown CPU'}, {mach.get('cpus_usable')} usable cpu(s), "
        f"Python {mach['python']}; numpy {mach['numpy']}, scikit-learn {mach['scikit-learn']}, "
        f"confrf {mach['confrf']}; peers: {peers}. Run time {mach['wall_seconds']:.0f} s.",
        "",
    ]
    if res["notes"]:
        L += ["Notes from the run:", ""] + [f"- {n}" for n in res["notes"]] + [""]
    for name in a["datasets"]:
        info = next(iter(res["splits"].get(name, {}).values()), None)
        if info is None:
            continue
        sizes = f"n_train = {info['n_train']}, n_cal = {info['n_cal']}, n_test = {info['n_test']}, p = {info['p']}"
        if "hole_removed" in info:
            sizes += f" (first seed; {info['hole_removed']} training rows removed by the hole)"
        rows = [r for r in res["rows"] if r["dataset"] == name]
        base = {r["seed"]: r["base_fit_seconds"] for r in rows if r["method"] != "mapie-cqr"}
        cqr = [r["base_fit_seconds"] for r in rows if r["method"] == "mapie-cqr"]
        if base:
            sizes += f". Base model fit, not in the table: {np.mean(list(base.values())):.2f} s"
            sizes += f" (CQR's three quantile models: {np.mean(cqr):.2f} s)" if cqr else ""
        keys = [m for m in METRICS if not (m[0] == "oracle_error" and name in REAL)]
        L += [f"### {name}", "", sizes + ".", "",
              "| method | " + " | ".join(t for _, t, _ in keys) + " |",
              "|---|" + "---:|" * len(keys)]
        for method in res["methods"]:
            cell = summ[name].get(method)
            if cell is None:
                continue
            L.append(f"| {label_of(method)} | " + " | ".join(fmt(cell[k], d) for k, _, d in keys) + " |")
        L.append("")
    if images:
        L += ["### Plots", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in images] + [""]
    return "\n".join(L)


def _pct(x: float | None) -> str:
    return "unknown" if x is None else f"{100 * x:.0f} %"


def plots(res: dict[str, Any], out: Path) -> list[Path]:
    """Coverage, width, errors and time per method, one panel per data set; the PNG paths."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("NOTE: matplotlib is not installed; no plots.", flush=True)
        return []
    summ = summarize(res)
    alpha = res["args"]["alpha"]
    figs = [  # file, [(metric, legend, marker)], x label, log scale, data sets it applies to
        ("peers_coverage.png", [("coverage", "coverage", "o"), ("worst_slab_coverage", "worst-slab coverage", "s")],
         "coverage (dashed: 1 − alpha)", False, DATASETS),
        ("peers_width.png", [("mean_width", "mean width", "o")], "mean width of the finite intervals", False, DATASETS),
        ("peers_oracle_error.png", [("oracle_error", "err*", "o")],
         "err*: median |q − q*| / q*, distance to the oracle interval (lower is better)", False, ("sim", "toy")),
        ("peers_fidelity.png", [("fidelity_error", "err^", "o")],
         "err^: median |q − |y − c|| / |y − c|, fidelity error (lower is better)", False, DATASETS),
        ("peers_time.png", [("calib_seconds", "calibration", "o"), ("predict_seconds", "prediction", "s")],
         "seconds (log scale; noisy: shared cores)", True, DATASETS),
    ]
    paths: list[Path] = []
    for fname, series, xlabel, logx, applies in figs:
        names = [n for n in res["args"]["datasets"] if summ.get(n) and n in applies]
        if not names:
            continue
        fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names) + 1.4, 0.32 * len(res["methods"]) + 1.7),
                                 sharey=True, squeeze=False)
        for ax, name in zip(axes[0], names):
            methods = [m for m in res["methods"] if m in summ[name]]
            ypos = np.arange(len(methods))[::-1]
            for j, (key, lab, marker) in enumerate(series):
                vals = [summ[name][m][key] for m in methods]
                y = ypos + (j - (len(series) - 1) / 2) * 0.22
                mean = np.array([v[0] if v is not None and math.isfinite(v[0]) else np.nan for v in vals])
                se = np.array([v[1] if v is not None and math.isfinite(v[1]) else 0.0 for v in vals])
                ax.errorbar(mean, y, xerr=se, fmt=marker, ms=4, capsize=2, color=("k", "C1")[j],
                            label=lab if name == names[0] else None)
            if fname == "peers_coverage.png":
                ax.axvline(1 - alpha, ls="--", color="grey", lw=1)
            if logx:
                ax.set_xscale("log")
            ax.set_yticks(ypos)
            ax.set_yticklabels([label_of(m) for m in methods])
            for tick, m in zip(ax.get_yticklabels(), methods):
                tick.set_color("C0" if m in CONFRF_METHODS else "C3")
            ax.set_title(name)
            ax.grid(axis="x", alpha=0.3)
        if len(series) > 1:
            fig.legend(loc="upper right", fontsize=8, ncol=len(series))
        fig.supxlabel(xlabel + ";  blue labels: confrf, red: peers", fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.95 if len(series) > 1 else 1))
        path = out / fname
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def _jsonable(x: Any) -> Any:
    """Floats inf/nan as strings: standard JSON has no such numbers."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return _jsonable(x.item())
    return x


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--seeds", type=int, default=None, help="number of seeds (default 5; 2 with --quick)")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--methods", nargs="+", default=["all"], choices=["all", "confrf", "peers"] + ALL_METHODS,
                    help="methods or groups 'all', 'confrf', 'peers'")
    ap.add_argument("--n-sim", type=int, default=None, help="points drawn per seed for sim/toy (default 3000)")
    ap.add_argument("--max-rows", type=int, default=None,
                    help="rows of a real data set used per seed, a random subset (default 6000; 0 = all)")
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--no-hole", action="store_true", help="keep the training part whole on real data")
    ap.add_argument("--mondrian-bins", type=int, default=10, help="equal-size difficulty bins of crepes Mondrian")
    ap.add_argument("--wsc-directions", type=int, default=None, help="worst-slab directions (default 1000)")
    ap.add_argument("--wsc-delta", type=float, default=0.1)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--load-probe", type=float, default=1.0,
                    help="seconds to sample the background CPU load before and after the run (0: skip)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: sim/toy 2200 points, real data 2200 rows, 2 seeds, 200 directions, no docs")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--docs", type=Path, default=None,
                    help=f"also write peers.md and the plots here (default {DEFAULT_DOCS.relative_to(ROOT)}, "
                         "not with --quick)")
    ap.add_argument("--no-docs", action="store_true", help="do not write into the docs")
    args = ap.parse_args(argv)
    quick = args.quick
    for key, full, small in (("seeds", 5, 2), ("n_sim", 3000, 2200), ("max_rows", 6000, 2200),
                             ("wsc_directions", 1000, 200)):
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
    print(f"wrote {args.out / 'peers.md'}, peers.json and {len(images)} plot(s)"
          + (f"; docs: {args.docs / 'peers.md'}" if args.docs is not None else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

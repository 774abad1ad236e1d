"""The methods of the peer benchmark: confrf's and its peers', on shared fitted models."""

from __future__ import annotations

import gc
import importlib
import inspect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import confrf as cf
from confrf.calibrators import get_method, method_options
from confrf.localizers import ForestLocalizer

from .data import Split, base_model, quantile_model

#: confrf rows: key -> (label, method, method options)
CONFRF_METHODS = {
    "split": ("SPLIT", "split", {}),
    "split-g": ("SPLIT-G", "split-g", {}),
    "lcp": ("LCP", "lcp", {}),
    "slcp": ("SLCP", "slcp", {}),
    # on the shared prefit model: the calibration rows are all it learns from
    "lcp-rf": ("LCP-RF", "lcp-rf", {"localizer_data": "calibration"}),
    # as a user calls it: fit on the training rows (with their hole on the real data), then conformalize; its
    # forest may learn from the training rows' out-of-fold scores (localizer_data="auto", issue 36)
    "lcp-rf-fit": ("LCP-RF (fit on the training rows)", "lcp-rf", {"localizer_data": "auto"}),
    # the default before issue 12: leaves of ceil(sqrt(n_localizer)), every feature at each split, raw scores, 100 trees
    "lcp-rf-auto": ("LCP-RF (sqrt-n leaves)", "lcp-rf", {"scale": "none", "localizer_data": "calibration"}),
    "lcp-rf-g": ("LCP-RF-G", "lcp-rf-g", {}),
    "qrf-tc": ("QRF-TC", "qrf-tc", {}),
    # the paper's form of the PAC correction: D2 target 1 - alpha (guarantee 1 - alpha - epsilon);
    # confrf's default ("inflated") targets 1 - alpha + epsilon on D2 for a guarantee of 1 - alpha
    "qrf-tc-paper": ("QRF-TC (paper form)", "qrf-tc", {"pac_form": "paper"}),
}
#: forest settings of confrf rows that differ from ConformalRegressor's defaults
CONFRF_SETTINGS = {"lcp-rf-auto": {"min_samples_leaf": "auto", "max_features": 1.0, "n_estimators": 100}}
#: peer rows: key -> (label, module that must import)
PEER_METHODS = {
    "mapie-split": ("MAPIE split", "mapie"),
    "mapie-cqr": ("MAPIE CQR", "mapie"),
    "crepes-normalized": ("crepes normalized", "crepes"),
    "crepes-mondrian": ("crepes Mondrian", "crepes"),
    "qrf": ("QRF (no guarantee)", "quantile_forest"),
    "qrf-normalized": ("QRF normalized split", "quantile_forest"),
}
#: peer rows with a finite-sample coverage guarantee (every confrf row has one: see its calibrator's guarantee)
PEER_GUARANTEED = {"mapie-split", "mapie-cqr", "crepes-normalized", "crepes-mondrian", "qrf-normalized"}
PIP_NAMES = {"mapie": "mapie", "crepes": "crepes", "quantile_forest": "quantile-forest"}
ALL_METHODS = list(CONFRF_METHODS) + list(PEER_METHODS)


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
    settings = CONFRF_SETTINGS.get(key, {})
    if get_method(method).uses_training(method_options(method, options)):
        # LCP/SLCP learn their bandwidth from out-of-fold training scores: fit() refits the same
        # model (same seed) and adds the out-of-fold fits, all counted as calibration time
        est = cf.ConformalRegressor(
            model=base_model(sh.seed),
            method=method,
            alpha=sh.alpha,
            random_state=sh.seed,
            n_jobs=sh.n_jobs,
            options=options,
        )
        _, sec = clock(lambda: est.fit(s.X_tr, s.y_tr).conformalize(s.X_cal, s.y_cal))
        extra["same_base_model"] = bool(np.allclose(est.predict(s.X_te), sh.mu_test))
    else:
        est = cf.ConformalRegressor(
            model=sh.mu,
            prefit=True,
            method=method,
            alpha=sh.alpha,
            random_state=sh.seed,
            n_jobs=sh.n_jobs,
            options=options,
            **settings,
        )
        _, sec = clock(lambda: est.conformalize(s.X_cal, s.y_cal))
    g = est.calibrator_.guarantee(sh.alpha)
    extra["certified"], extra["guarantee"] = bool(g.certified), g.kind
    loc = getattr(est.calibrator_, "localizer", None)
    if isinstance(loc, ForestLocalizer) and loc.tuning_ is not None:
        extra["tuned"] = {
            "min_samples_leaf": loc.min_samples_leaf_,
            "max_features": loc.max_features_,
            "table": loc.tuning_.text(),
        }
    verdict = training_verdict(est.calibrator_)
    if verdict is not None:
        extra["training_check"], extra["forest_source"] = verdict
    iv, psec = clock(lambda: est.predict_interval(s.X_te))
    return Interval(iv[:, 0], iv[:, 1], sec, psec, sh.mu_seconds, extra)


def training_verdict(calibrator: Any) -> tuple[str, str] | None:
    """(training check, forest source) of an LCP-RF calibrator that had training rows; None without them.

    The check is "passed" (the forest grew on the training part, sources not compared), "rejected" (the
    sources were compared on the localizer part) or "not run" (the sizes alone kept the training rows out,
    ``training_note_``). The source is what the forest grew on: "calibration", "training" or "pooled", or
    "no localization" when the chosen forest localizes nothing, or "normalized (training)" when it gives
    sigma(x) only (uniform weights).
    """
    choice = getattr(getattr(calibrator, "localizer", None), "source_choice_", None)
    if choice is not None:
        # the training check passing is the only way a source choice has no held-out scores
        # (confrf.localizers.sources.grow_from_sources; choose() always scores the sources it compares)
        # the calibrator names a forest that chose no localization "calibration" (split conformal's threshold);
        # a normalized one (sigma(x) from the forest, uniform weights) grew on the training part
        loc = calibrator.localizer
        source = (
            f"normalized ({calibrator.localizer_source_})"
            if getattr(loc, "normalized", False)
            else "no localization"
            if loc.pooled
            else str(calibrator.localizer_source_)
        )
        return ("passed" if not choice.scores else "rejected"), source
    if getattr(calibrator, "training_note_", None) is not None:
        return "not run", str(calibrator.localizer_source_)
    return None


def run_mapie_split(sh: Shared) -> Interval:
    from mapie.regression import SplitConformalRegressor

    s = sh.split
    reg = SplitConformalRegressor(estimator=sh.mu, confidence_level=1 - sh.alpha, prefit=True)
    _, sec = clock(lambda: reg.conformalize(s.X_cal, s.y_cal))
    (_, iv), psec = clock(lambda: reg.predict_interval(s.X_te))
    return Interval(iv[:, 0, 0], iv[:, 1, 0], sec, psec, sh.mu_seconds)


def run_mapie_cqr(sh: Shared) -> Interval:
    from mapie.regression import ConformalizedQuantileRegressor

    s = sh.split
    models, base = sh.quantile_models()
    reg = ConformalizedQuantileRegressor(estimator=models, confidence_level=1 - sh.alpha, prefit=True)
    _, sec = clock(lambda: reg.conformalize(s.X_cal, s.y_cal))
    # symmetric correction: one constant for both ends, Romano et al.'s CQR (and confrf's quantile score)
    (_, iv), psec = clock(lambda: reg.predict_interval(s.X_te, symmetric_correction=True))
    return Interval(iv[:, 0, 0], iv[:, 1, 0], sec, psec, base)


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
        iv, psec = clock(
            lambda: cr.predict_int(y_hat=sh.mu_test, bins=binning(sig_te, bins=edges), confidence=1 - sh.alpha)
        )
    else:
        cr, sec = clock(lambda: ConformalRegressor().fit(residuals=resid, sigmas=sig_cal))
        iv, psec = clock(lambda: cr.predict_int(y_hat=sh.mu_test, sigmas=sig_te, confidence=1 - sh.alpha))
    return Interval(
        iv[:, 0],
        iv[:, 1],
        sh.mu_cal_seconds + de_sec + sec,
        sh.mu_test_seconds + de_test_sec + psec,
        sh.mu_seconds,
        extra,
    )


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
    qrf = RandomForestQuantileRegressor(
        n_estimators=100,
        min_samples_leaf=msl,
        max_features=1.0,
        max_samples_leaf=None,
        random_state=sh.seed,
        n_jobs=sh.n_jobs,
    )
    _, sec = clock(lambda: qrf.fit(s.X_cal, V))

    def predict() -> np.ndarray:
        return np.asarray(qrf.predict(s.X_te, quantiles=1 - sh.alpha, weighted_leaves=True), dtype=np.float64)

    q, psec = clock(predict)
    return Interval(
        sh.mu_test - q,
        sh.mu_test + q,
        sh.mu_cal_seconds + sec,
        sh.mu_test_seconds + psec,
        sh.mu_seconds,
        {"min_samples_leaf": msl},
    )


def available_peers(wanted: list[str]) -> tuple[dict[str, str], list[str]]:
    """Version of each importable peer module among ``wanted`` and notes on the others."""
    versions: dict[str, str] = {}
    notes: list[str] = []
    for module in sorted({PEER_METHODS[k][1] for k in wanted}):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            notes.append(
                f"{module} is not installed ({exc}); its rows are skipped "
                f"(pip install {PIP_NAMES[module]}, or pip install 'confrf[bench]')."
            )
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
                notes.append(
                    f"mapie {versions.pop(module)} lacks the v1 API (SplitConformalRegressor); "
                    "its rows are skipped (pip install 'mapie>=1')."
                )
    return versions, notes


def expand_methods(names: list[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        group = {"all": ALL_METHODS, "confrf": list(CONFRF_METHODS), "peers": list(PEER_METHODS)}.get(n, [n])
        out += [m for m in group if m not in out]
    return out


def label_of(method: str) -> str:
    return (CONFRF_METHODS.get(method) or PEER_METHODS[method])[0]


def run_qrf_normalized(sh: Shared) -> Interval:
    """Calibrated normalized QRF: split conformal of |r| / q(x), q a quantile forest's (1 - alpha)-quantile of |r|.

    The calibration rows are halved at random (seeded): quantile-forest's
    ``RandomForestQuantileRegressor`` (its defaults, 100 trees) is fitted on
    the first half's scores |y - mu(x)|; the second half's normalized scores
    |r| / q(x) give the split conformal quantile Q (the ceil((1 - alpha)(n + 1))-th
    smallest); the interval is mu(x) +/- Q q(x). Exact marginal coverage, as
    for any normalized split conformal method.
    """
    from quantile_forest import RandomForestQuantileRegressor

    s = sh.split
    n = s.X_cal.shape[0]

    def fit() -> tuple[Any, float, float]:
        perm = np.random.default_rng(sh.seed).permutation(n)
        a, b = perm[: n // 2], perm[n // 2 :]
        V = np.abs(s.y_cal - sh.mu_cal)
        qrf = RandomForestQuantileRegressor(random_state=sh.seed, n_jobs=sh.n_jobs).fit(s.X_cal[a], V[a])
        q_b = np.asarray(qrf.predict(s.X_cal[b], quantiles=1 - sh.alpha), dtype=np.float64)
        # a zero quantile (a leaf of equal scores) would divide by zero: floor it at a tiny share of the scores' scale
        floor = 1e-6 * float(np.mean(V[a])) + 1e-300
        ratio = np.sort(V[b] / np.maximum(q_b, floor))
        k = math.ceil((1 - sh.alpha) * (b.shape[0] + 1))
        Q = float(ratio[k - 1]) if k <= b.shape[0] else math.inf
        return qrf, Q, floor

    (qrf, Q, floor), sec = clock(fit)

    def predict() -> np.ndarray:
        return Q * np.maximum(np.asarray(qrf.predict(s.X_te, quantiles=1 - sh.alpha), dtype=np.float64), floor)

    half, psec = clock(predict)
    return Interval(
        sh.mu_test - half,
        sh.mu_test + half,
        sh.mu_cal_seconds + sec,
        sh.mu_test_seconds + psec,
        sh.mu_seconds,
        {"conformal_quantile": Q},
    )


#: LCP-RF's rows (the default on a prefit model, fitted on the training rows, the previous default): rows of the same
#: method with other options, never competitors of one another in the targets' tables
LCP_RF_ROWS = ("lcp-rf", "lcp-rf-fit", "lcp-rf-auto")


def certified_methods(res: dict[str, Any], name: str) -> list[str]:
    """Methods with a finite-sample guarantee (marginal or PAC) on data set ``name``, LCP-RF's rows aside."""
    rows = [r for r in res["rows"] if r["dataset"] == name]
    return [
        m for m in res["methods"] if m not in LCP_RF_ROWS and any(r["method"] == m and r.get("certified") for r in rows)
    ]

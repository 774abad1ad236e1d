"""Issue 36, eighth to eleventh rounds: levers on q10(CC) at 16,000 calibration rows, measured outside the default.

On ``bench_condcov.py``'s cells at n_cal 16,000 (same models, draws, seeds and shared base model; exact CC):

- ``--levers leaves``: LCP-RF fitted as a user calls it, with leaves forced above the sqrt rule of the 8,000
  localizer rows (90) and the scale forced: rows "L180f" (180 rows, scale "forest"), "L360f", "L180n" (scale
  "none"), next to "default";
- ``--levers debias``: an upper bound for re-centring the interval on a bias-corrected mean: mu(x) + b(x), b a
  random forest (leaves of 20 rows) of the signed residuals of an *extra*, independent draw of n_cal / 2 rows,
  then LCP-RF on the prefit corrected model ("debiased") against the same on mu ("plain"). A calibration set has
  no extra rows; inside LCP-RF b would have to be learned on the localizer part, so this bounds what it could give.

Ninth round:

- ``--levers split``: the default with a smaller localizer share of the calibration set (``localizer_size`` 0.25
  and 0.35 instead of 0.5: more conformal points per leaf, fewer rows to grow the forest): rows "loc25", "loc35";
- ``--levers eqtail``: the default's forest with an equal-tailed interval instead of the symmetric one: the upper
  end the one-sided LCP bound of the signed residual at 1 - alpha / 2 (``predict_quantiles``), the lower end the
  same bound of the negated residual, so each side misses at most alpha / 2 (exact) and the interval at most alpha.
  Rows "symmetric" and "equal-tailed", with the median over the evaluation points of the forest weights'
  effective sample size (Kish, ``ess``; n_conformal where the weights are uniform). ``--n-cal 1000`` / ``4000``
  runs the same at the other sizes of the benchmark.

Tenth round:

- ``--levers refit``: the base model fitted on the training rows *and* a random half of the calibration rows
  (10,000 rows at n_cal 16,000), the other half conformalized: row "refit/training" with
  ``localizer_data="training"`` (the forest on the 10,000 rows' out-of-fold scores, all 8,000 rows conformal
  points), "refit/default" with no option (4,000 localizer rows: the gate closes, calibration rows only). Exact
  either way: the model and the forest read only rows that are not conformal points. The rows record mu's median
  |b(x)| / s(x) at the evaluation points (``med_d``; b = mu - m, s the noise scale), and "refit/noise-scale
  oracle" is ``condcov_noise_oracle.py``'s oracle (mu +- c s(x), c exact for a mean CC of 0.9) on the refitted mu.

- ``--levers recentre``: re-centring as LCP-RF could do it inside a calibration set (no extra rows): the base model
  mu stays fixed; on a random half of the calibration rows a random forest b (200 trees, leaves of 20 rows) learns
  mu's signed residuals, the forest of LCP-RF grows on that half's out-of-fold scores of mu + b
  (``localizer_data="training"``: b refitted in 5 folds, so the scores are not in-sample), and the other half are
  the conformal points: row "recentre/b", against "recentre/plain", the same with b = 0. Exact: b and the forest
  read only the first half. ``--n-cal 4000`` / ``1000`` runs it at the benchmark's other sizes.

Eleventh round:

- ``--levers signed``: forests grown on a random half of the calibration rows with fixed leaves (20, 45, 90 rows;
  200 trees, every column, scale "none"), the other half the conformal points, on three targets: the absolute
  residual (row "abs/symmetric/L..", LCP-RF's forest with fixed settings, and "abs/equal-tailed/L.."), the signed
  residual y - mu ("signed/equal-tailed/L..": the leaves follow mu's bias) and both, standardized, as one
  multi-output forest ("both/equal-tailed/L.."). The equal-tailed rows are the two one-sided exact LCP bounds of the
  signed residual and of its negation at alpha / 2 each, as in ``eqtail``. Exact: the forests read only the first
  half.
- ``--levers trees``: the default with 100, 200 and 400 trees in its final forest (``n_estimators``; the tuning
  grows forests of its own tree count), with the weights' median effective sample size.
- ``--levers combo``: the ``recentre`` lever's re-centred fit ("recentre/symmetric", equal to its "recentre/b"
  rows) with the ``eqtail`` lever's equal-tailed interval around mu + b ("recentre/equal-tailed").

Rows: ``condcov_16k_levers.jsonl`` (docs/benchmarks/condcov.md, "Eighth round" to "Eleventh round").

    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers leaves --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers debias --seeds 2
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers split --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers eqtail --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers refit --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers recentre --seeds 3 [--n-cal 4000]
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers signed --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers trees --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_16k_levers.py --levers combo --seeds 3
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestRegressor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import bench_condcov as bc  # noqa: E402
from condcov_noise_oracle import noise_scale_oracle  # noqa: E402
from peerbench.data import base_model  # noqa: E402

import confrf as cf  # noqa: E402
from confrf._validation import required_count  # noqa: E402
from confrf.calibrators.distribution import SignedDistribution, signed_parts  # noqa: E402
from confrf.localizers import ForestLocalizer  # noqa: E402
from confrf.localizers._float32 import RankColumns  # noqa: E402

N_CAL = 16000
#: forced LCP-RF settings (estimator parameters, options) of ``--levers leaves``
LEAVES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "default": ({}, {}),
    "L180f": ({"min_samples_leaf": 180}, {"scale": "forest"}),
    "L360f": ({"min_samples_leaf": 360}, {"scale": "forest"}),
    "L180n": ({"min_samples_leaf": 180}, {"scale": "none"}),
}
#: ``--levers split``: the localizer share of the calibration set
SPLIT = {"loc25": 0.25, "loc35": 0.35}


class _Recentred:
    """A prefit mean model plus a bias correction."""

    def __init__(self, mu: Any, b: Any) -> None:
        self.mu, self.b = mu, b

    def fit(self, X: np.ndarray, y: np.ndarray) -> _Recentred:
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.mu.predict(X) + self.b.predict(X)


class _Frozen:
    """A fitted model that scikit-learn's ``clone`` copies as it is (not an estimator parameter to refit)."""

    def __init__(self, mu: Any) -> None:
        self.mu = mu

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.mu.predict(X)


class _LearnsBias(RegressorMixin, BaseEstimator):
    """mu (frozen) plus, if ``learn``, a random forest of the signed residuals of the rows it is fitted on."""

    def __init__(self, mu: _Frozen | None = None, learn: bool = True, random_state: int | None = None) -> None:
        self.mu, self.learn, self.random_state = mu, learn, random_state

    def fit(self, X: np.ndarray, y: np.ndarray) -> _LearnsBias:
        self.b_ = None
        if self.learn:
            self.b_ = RandomForestRegressor(
                200, min_samples_leaf=20, max_features=1.0, random_state=self.random_state, n_jobs=1
            ).fit(X, y - self.mu.predict(X))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.mu.predict(X) + (0.0 if self.b_ is None else self.b_.predict(X))


def _halves(seed: int, n_cal: int) -> tuple[np.ndarray, np.ndarray]:
    """A random half of the calibration rows (for the model or b and the forest) and the other half (conformal)."""
    perm = np.random.default_rng([seed, 7]).permutation(n_cal)
    return perm[: n_cal // 2], perm[n_cal // 2 :]


#: the ``--levers`` choices, one per construction above
LEVERS = ("leaves", "debias", "split", "eqtail", "refit", "recentre", "signed", "trees", "combo")
#: ``--levers trees``: the default with this many trees in its final forest (its tuning grows forests of its own)
TREES = (100, 200, 400)
#: ``--levers signed``: fixed leaf sizes of the forests grown on the localizer half
SIGNED_LEAVES = (20, 45, 90)


def _grown(X: np.ndarray, target: np.ndarray, leaf: int, seed: int) -> ForestLocalizer:
    """An honest forest (scale "none") grown on ``target``, one column or several (scikit-learn's multi-output
    trees: a split's gain sums the columns' variance reductions)."""
    loc = ForestLocalizer(n_estimators=200, min_samples_leaf=leaf, max_features=1.0, random_state=seed, n_jobs=1)
    loc.rank_columns_, loc.columns_, loc.n_columns_ = RankColumns.learn(X), None, X.shape[1]
    return loc.grow_chosen(X, target, leaf, 1.0, "none", seed)


def _one_sided(loc: ForestLocalizer, X_conf: np.ndarray, s: np.ndarray, X_ev: np.ndarray, level: float) -> np.ndarray:
    """The exact LCP bound t(x) of {s <= t(x)} at miscoverage ``level``, with ``loc``'s weights on (X_conf, s)."""
    loc.index(X_conf, s)
    return loc.thresholds(X_ev, required_count(level, len(s)))[0]


def _median_ess(est: cf.ConformalRegressor, X_ev: np.ndarray) -> float:
    """Median over X_ev of the Kish effective sample size of the forest weights, 1 / sum w^2 (QRF rows sum to 1)."""
    w = est.calibrator_.localizer.weights(X_ev)
    return float(np.median(1.0 / np.asarray(w.multiply(w).sum(axis=1)).ravel()))


def _recentred(sh: Any, seed: int, n_cal: int, learn: bool, kw: dict[str, Any]) -> cf.ConformalRegressor:
    """``--levers recentre``'s fit: mu (+ b learned if ``learn``) and the forest on one half, the other conformal."""
    grow, conf = _halves(seed, n_cal)
    X_cal, y_cal = sh.split.X_cal, sh.split.y_cal
    est = cf.ConformalRegressor(model=_LearnsBias(_Frozen(sh.mu), learn), options={"localizer_data": "training"}, **kw)
    return est.fit(X_cal[grow], y_cal[grow]).conformalize(X_cal[conf], y_cal[conf])


def _row(model: bc.Model, n_cal: int, seed: int, label: str, X_ev: np.ndarray, iv: np.ndarray, **extra: Any) -> dict:
    cc = model.coverage(X_ev, iv[:, 0], iv[:, 1])
    row = {
        "model": model.name,
        "n_cal": n_cal,
        "seed": seed,
        "lever": label,
        "dev": float(np.mean(np.abs(cc - (1 - bc.ALPHA)))),
        "q10": float(np.quantile(cc, 0.1)),
        "width_ratio": float(np.mean(iv[:, 1] - iv[:, 0]) / np.mean(model.oracle_width(X_ev))),
        **extra,
    }
    print(json.dumps(row), flush=True)
    return row


def cell(model: bc.Model, seed: int, lever: str, n_cal: int = N_CAL) -> list[dict]:
    sh = bc.shared_cell(model, n_cal, seed, 2000)
    X_tr, y_tr, X_cal, y_cal, X_ev = sh.split.X_tr, sh.split.y_tr, sh.split.X_cal, sh.split.y_cal, sh.split.X_te
    kw: dict[str, Any] = {"method": "lcp-rf", "alpha": bc.ALPHA, "random_state": seed, "n_jobs": 1}
    rows = []
    if lever == "leaves":
        for label, (params, options) in LEAVES.items():
            est = cf.ConformalRegressor(model=base_model(seed), options=dict(options), **params, **kw)
            est.fit(X_tr, y_tr).conformalize(X_cal, y_cal)
            rows.append(_row(model, n_cal, seed, label, X_ev, est.predict_interval(X_ev)))
        return rows
    if lever == "split":
        for label, share in SPLIT.items():
            est = cf.ConformalRegressor(model=base_model(seed), localizer_size=share, **kw)
            est.fit(X_tr, y_tr).conformalize(X_cal, y_cal)
            rows.append(_row(model, n_cal, seed, label, X_ev, est.predict_interval(X_ev)))
        return rows
    if lever in ("eqtail", "combo"):
        if lever == "eqtail":
            est = cf.ConformalRegressor(model=base_model(seed), **kw).fit(X_tr, y_tr).conformalize(X_cal, y_cal)
        else:  # recentre's "recentre/b" fit, then both intervals around mu + b
            est = _recentred(sh, seed, n_cal, True, kw)
        ess = _median_ess(est, X_ev)
        c, s = signed_parts(est.score_, est.model_.predict(X_ev))
        upper = est.signed_distribution().thresholds(X_ev, [1 - bc.ALPHA / 2], n_jobs=1)[:, 0]
        negated = SignedDistribution.from_calibrator(est.calibrator_, -est.calib_signed_)
        lower = negated.thresholds(X_ev, [1 - bc.ALPHA / 2], n_jobs=1)[:, 0]
        label = "" if lever == "eqtail" else "recentre/"
        rows.append(_row(model, n_cal, seed, f"{label}symmetric", X_ev, est.predict_interval(X_ev), ess=ess))
        iv = np.column_stack([c - s * lower, c + s * upper])
        rows.append(_row(model, n_cal, seed, f"{label}equal-tailed", X_ev, iv, ess=ess))
        return rows
    if lever == "refit":
        grow, conf = _halves(seed, n_cal)
        X_fit, y_fit = np.vstack([X_tr, X_cal[grow]]), np.concatenate([y_tr, y_cal[grow]])
        for label, options in (("refit/training", {"localizer_data": "training"}), ("refit/default", {})):
            est = cf.ConformalRegressor(model=base_model(seed), options=options, **kw)
            est.fit(X_fit, y_fit).conformalize(X_cal[conf], y_cal[conf])
            mu_ev = est.model_.predict(X_ev)
            d = float(np.median(np.abs(mu_ev - model.mean(X_ev)) / model.scale(X_ev)))
            rows.append(_row(model, n_cal, seed, label, X_ev, est.predict_interval(X_ev), med_d=d))
        # both rows fitted the same seeded model on the same rows, so mu_ev and d are theirs alike
        c, _ = noise_scale_oracle(model, X_ev, mu_ev)  # the refitted mu's ceiling for a noise-only localizer
        oracle = mu_ev[:, None] + np.outer(c * model.scale(X_ev), [-1.0, 1.0])
        rows.append(_row(model, n_cal, seed, "refit/noise-scale oracle", X_ev, oracle, med_d=d))
        return rows
    if lever == "trees":
        for k in TREES:
            est = cf.ConformalRegressor(model=base_model(seed), n_estimators=k, **kw)
            est.fit(X_tr, y_tr).conformalize(X_cal, y_cal)
            rows.append(
                _row(model, n_cal, seed, f"trees{k}", X_ev, est.predict_interval(X_ev), ess=_median_ess(est, X_ev))
            )
        return rows
    if lever == "signed":
        grow, conf = _halves(seed, n_cal)
        r, mu_ev = y_cal - sh.mu_cal, sh.mu_test
        both = np.column_stack([r[grow], np.abs(r[grow])])
        targets = {"abs": both[:, 1], "signed": both[:, 0], "both": (both - both.mean(0)) / both.std(0)}
        for leaf in SIGNED_LEAVES:
            for tname, target in targets.items():
                loc = _grown(X_cal[grow], target, leaf, seed)
                if tname == "abs":
                    t = _one_sided(loc, X_cal[conf], np.abs(r[conf]), X_ev, bc.ALPHA)
                    iv = np.column_stack([mu_ev - t, mu_ev + t])
                    rows.append(_row(model, n_cal, seed, f"abs/symmetric/L{leaf}", X_ev, iv))
                up = _one_sided(loc, X_cal[conf], r[conf], X_ev, bc.ALPHA / 2)
                lo = _one_sided(loc, X_cal[conf], -r[conf], X_ev, bc.ALPHA / 2)
                iv = np.column_stack([mu_ev - lo, mu_ev + up])
                rows.append(_row(model, n_cal, seed, f"{tname}/equal-tailed/L{leaf}", X_ev, iv))
        return rows
    if lever == "recentre":
        for label, learn in (("recentre/plain", False), ("recentre/b", True)):
            est = _recentred(sh, seed, n_cal, learn, kw)
            rows.append(_row(model, n_cal, seed, label, X_ev, est.predict_interval(X_ev)))
        return rows
    X_x, y_x = model.draw(np.random.default_rng([seed, 99]), n_cal // 2)
    b = RandomForestRegressor(200, min_samples_leaf=20, max_features=1.0, random_state=seed, n_jobs=1)
    b.fit(X_x, y_x - sh.mu.predict(X_x))
    for label, mu in (("plain", sh.mu), ("debiased", _Recentred(sh.mu, b))):
        est = cf.ConformalRegressor(model=mu, prefit=True, **kw).conformalize(X_cal, y_cal)
        rows.append(_row(model, n_cal, seed, label, X_ev, est.predict_interval(X_ev)))
    return rows


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["model"], r["n_cal"], r["lever"])].append(r)
    return "\n".join(
        f"{m} {n}: {lever}: |CC - 0.9| x 1000 {1000 * np.mean([r['dev'] for r in v]):.1f}, q10 "
        f"{np.mean([r['q10'] for r in v]):.3f}, width/oracle {np.mean([r['width_ratio'] for r in v]):.3f} ({len(v)})"
        for (m, n, lever), v in sorted(by.items())
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["sim", "toy", "multi", "bias"])
    ap.add_argument("--levers", choices=LEVERS, default="leaves")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-cal", type=int, default=N_CAL, help="calibration rows per cell (16,000: the target's size)")
    ap.add_argument("--out", type=Path, default=HERE / "condcov_16k_levers.jsonl")
    ap.add_argument("--report", action="store_true", help="only print the comparison")
    args = ap.parse_args()
    if not args.report:
        with args.out.open("a") as f:
            for name in args.models:
                for seed in range(args.seeds):
                    for r in cell(bc.MODEL_SPECS[name], seed, args.levers, args.n_cal):
                        f.write(json.dumps(r) + "\n")
    print(report(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

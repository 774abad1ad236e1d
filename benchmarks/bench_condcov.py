#!/usr/bin/env python
"""Exact conditional coverage of LCP-RF and its certified peers on simulated models.

Usage (from the repository root)::

    python benchmarks/bench_condcov.py                          # 5 models x n_cal 500..16000 x 3 seeds
    python benchmarks/bench_condcov.py --models toy sim --n-cal 1000 --seeds 3
    python benchmarks/bench_condcov.py --methods "MAPIE CQR" "crepes normalized"   # only these rows
    python benchmarks/bench_condcov.py --report                 # tables from the stored JSON lines only

Protocol. Every model has a known conditional law of Y given x (Gaussian or
Student-t noise around a known mean), so the conditional coverage of an
interval [l(x), u(x)] is computed exactly, without Monte Carlo:

    CC(x) = F((u - m(x)) / s(x)) - F((l - m(x)) / s(x)),

F the noise's cdf. Each seed draws 2,000 training rows, ``n_cal`` calibration
rows and ``--n-eval`` (2,000) evaluation points x; every method sees the same
labelled rows. The peers share one base model per seed
(``HistGradientBoostingRegressor(random_state=seed)`` on the training rows;
CQR: three quantile models of the same family). LCP-RF enters as a user calls
it: ``ConformalRegressor(model=<the same unfitted model>).fit(training rows)
.conformalize(calibration rows)`` (it refits the identical model). "LCP-RF default"
passes no option: ``localizer_data="auto"``, the default since issue 36, whose forest may learn
from the training rows' out-of-fold scores while the localizer part is below
``localizer_split.TRAINING_GATE`` rows: since issue 36's fourth round the training check first
(ceil(10/alpha) calibration rows against the training part; when it passes the forest grows on the
training part and every other calibration row is a conformal point), else the sources compared with
the training part as the baseline (rule ``bt0``, the default before the check); "LCP-RF auto"
passes ``localizer_data="auto"`` (the stored rows of that name were
run before the gate, with the pooled baseline: rule ``nl0``); "LCP-RF prefit" is the method on
the shared fitted model with ``prefit=True``: calibration rows only, which is also what
``localizer_data="calibration"`` learns from.

Rules side by side (``--variants NAME ...``): each name in ``VARIANTS`` maps to the
estimator's options and to module attributes of confrf patched for that run only (the
no-localization margin ``tuning.NO_LOCALIZATION_SE``, the source baseline
``sources.SMALL_PART_BASELINE``, the gate ``localizer_split.TRAINING_GATE`` (lifted for the named
"auto" rules), the localizer part's size ``localizer_split.localizer_rows_with_training``);
its rows are stored as "LCP-RF auto[NAME]", in the same row format::

    python benchmarks/bench_condcov.py --methods "LCP-RF prefit" --variants nl2 nl1 few1 training \
        --n-cal 500 1000 --n-eval 1000 --out benchmarks/results/condcov_rules.jsonl

Models
    sim, toy: the paper's (``confrf.datasets``): Gaussian noise, sd driven by x1.
    multi: 10 uniform features, mean 2 x1 + x2^2, Student-t noise (3 degrees of freedom) whose
        scale is driven by three features (0.2 + x3 + 0.8 x4 x5).
    bias: 5 features in [-1, 1], a mean that is smooth where the noise is large and wiggles fast
        (sin(12 x1)) where it is small (x1 > 0), so the base model's bias is large against the noise there.
    homo: 10 uniform features, mean 2 sin(pi x1) + x2^2 + x3, Gaussian noise of constant sd 0.5: the noise does
        not depend on x, so no localization is right (a rule that always localizes must not lose much here).

Metrics (per model, n_cal, method: mean over seeds, and the s.e. of the first one)
    |CC-0.9| x 1000: mean over x of |CC(x) - 0.9|; q10(CC): the 10 % quantile of CC(x) over x;
    CC<0.8: share of x with CC(x) < 0.8; width/oracle: mean width over the mean width of the oracle
    (m(x) +- the exact (1 - alpha/2) noise quantile; infinite widths are counted in the share "inf");
    seconds: calibration (and, for LCP-RF, the refit and out-of-fold fits) plus prediction.

Results are appended to ``--out`` (JSON lines; a rerun skips the cells already there) and
``--report`` writes the tables to ``--doc``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's confrf, not an installed one

from peerbench.data import Split, base_model  # noqa: E402
from peerbench.methods import Shared, run_crepes, run_mapie_cqr, run_mapie_split, run_qrf_normalized  # noqa: E402

import confrf as cf  # noqa: E402

ALPHA = 0.1
N_TRAIN = 2000
MODELS = ("sim", "toy", "multi", "bias", "homo")
N_CAL = (500, 1000, 4000, 16000)
#: conditionalconformal solves one linear program per point: run up to this many calibration rows
CC_MAX_CAL = 4000
HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "condcov.jsonl"
DOC = HERE.parent / "docs" / "benchmarks" / "condcov.md"


@dataclass(frozen=True)
class Model:
    """A regression model with a known conditional law: Y = m(x) + s(x) * eps, eps ~ F (symmetric)."""

    name: str
    p: int
    draw_x: Callable[[np.random.Generator, int], np.ndarray]
    mean: Callable[[np.ndarray], np.ndarray]
    scale: Callable[[np.ndarray], np.ndarray]
    noise: Any  # a frozen scipy distribution: rvs, cdf, ppf

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        X = self.draw_x(rng, n)
        eps = self.noise.rvs(size=n, random_state=rng)
        return X, self.mean(X) + self.scale(X) * eps

    def coverage(self, X: np.ndarray, lwr: np.ndarray, upr: np.ndarray) -> np.ndarray:
        """Exact P(lwr <= Y <= upr | x) for each row (a zero scale: Y = m(x) exactly)."""
        m, s = self.mean(X), self.scale(X)
        with np.errstate(divide="ignore", invalid="ignore"):
            hi = np.where(s > 0, self.noise.cdf((upr - m) / s), (upr >= m).astype(float))
            lo = np.where(s > 0, self.noise.cdf((lwr - m) / s), (lwr > m).astype(float))
        return np.clip(hi - lo, 0.0, 1.0)

    def oracle_width(self, X: np.ndarray) -> np.ndarray:
        return 2.0 * self.scale(X) * float(self.noise.ppf(1 - ALPHA / 2))


def _uniform(lo: float, hi: float, p: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, n: rng.uniform(lo, hi, size=(n, p))


MODEL_SPECS = {
    "sim": Model("sim", 50, _uniform(0, 1, 50), cf.datasets.sim_mean, cf.datasets.sim_sd, stats.norm()),
    "toy": Model("toy", 21, _uniform(0, 7, 21), cf.datasets.toy_mean, cf.datasets.toy_sd, stats.norm()),
    "multi": Model(
        "multi",
        10,
        _uniform(0, 1, 10),
        lambda X: 2 * X[:, 0] + X[:, 1] ** 2,
        lambda X: 0.2 + X[:, 2] + 0.8 * X[:, 3] * X[:, 4],
        stats.t(df=3),
    ),
    "bias": Model(
        "bias",
        5,
        _uniform(-1, 1, 5),
        lambda X: np.where(X[:, 0] > 0, 0.5 * np.sin(12 * X[:, 0]), X[:, 0]) + 0.5 * X[:, 1],
        lambda X: np.where(X[:, 0] > 0, 0.1, 1.0) * (1 + 0.5 * np.abs(X[:, 2])),
        stats.norm(),
    ),
    # the noise does not depend on x: no localization is right, and a rule that always localizes must not lose much
    "homo": Model(
        "homo",
        10,
        _uniform(0, 1, 10),
        lambda X: 2 * np.sin(np.pi * X[:, 0]) + X[:, 1] ** 2 + X[:, 2],
        lambda X: np.full(X.shape[0], 0.5),
        stats.norm(),
    ),
}


def _few_localizer_rows(n: int, n_training: int, localizer_size: float, alpha: float) -> int:
    """localizer_rows_with_training with the floor ceil(10 / alpha) instead of 3 ceil(10 / alpha)."""
    from confrf.calibrators.localizer_split import min_localizer_points

    full = int(round(localizer_size * n))
    share = int(round(localizer_size * n * n / (n + n_training)))
    return max(1, min(full, max(share, min_localizer_points(alpha))))


def _wider_leaf_grid(n_grow: int, top: int) -> list[int]:
    """leaf_candidates with the grid's top four times the sqrt rule: larger leaves where few conformal points fill them.

    At 500-1,000 calibration rows the forest grows on the 2,000 training rows, but only 400-900 conformal points
    fill its leaves: a leaf of ceil(sqrt(2,000)) = 45 training rows (the grid's top) holds 9-20 of them per tree.
    """
    from confrf.localizers.tuning import leaf_candidates

    return leaf_candidates(n_grow, 4 * top)


def _leaves_above(n_grow: int, top: int, doublings: int) -> list[int]:
    """leaf_candidates plus top * 2, ..., top * 2**doublings (at most half the growing rows) as challengers: the
    tuning's baseline stays the sqrt rule ``top`` (sources.grow_from_sources passes it), unlike ``top4``."""
    from confrf.localizers.tuning import leaf_candidates

    above = [top * 2**j for j in range(1, doublings + 1) if top * 2**j <= n_grow // 2]
    return sorted(set(leaf_candidates(n_grow, top)) | set(above))


# the rules before the training check (issue 36, fourth round) compared the sources whatever the training part
_NO_CHECK = {"confrf.localizers.sources:TRAINING_CHECK_LEVEL": None}
_POOLED = {"confrf.localizers.sources:SMALL_PART_BASELINE": "pooled", **_NO_CHECK}  # the nl rules' baseline
_TRAINING = {"confrf.localizers.sources:SMALL_PART_BASELINE": "training", **_NO_CHECK}  # the bt rules' (then default)
# the rules before the gate compared at every size
_UNGATED = {"confrf.calibrators.localizer_split:TRAINING_GATE": 10**12}

#: named LCP-RF rules compared side by side (``--variants``): options of the estimator and module attributes
#: patched for the run ("module:attribute" -> value); each row is stored as "LCP-RF auto[NAME]"
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "nl2": ({"localizer_data": "auto"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 2.0, **_POOLED, **_UNGATED}),
    "nl1": ({"localizer_data": "auto"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 1.0, **_POOLED, **_UNGATED}),
    "nl0": ({"localizer_data": "auto"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0, **_POOLED, **_UNGATED}),
    "bt1": ({"localizer_data": "auto"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 1.0, **_TRAINING, **_UNGATED}),
    "bt0": ({"localizer_data": "auto"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0, **_TRAINING, **_UNGATED}),
    "bt0se2": (
        {"localizer_data": "auto"},
        {
            "confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0,
            "confrf.localizers.sources:SOURCE_SE": 2.0,
            **_TRAINING,
            **_UNGATED,
        },
    ),
    "few1": (
        {"localizer_data": "auto"},
        {
            "confrf.localizers.tuning:NO_LOCALIZATION_SE": 1.0,
            "confrf.calibrators.localizer_split:localizer_rows_with_training": _few_localizer_rows,
            **_POOLED,
            **_UNGATED,
        },
    ),
    "fewbt1": (
        {"localizer_data": "auto"},
        {
            "confrf.localizers.tuning:NO_LOCALIZATION_SE": 1.0,
            "confrf.calibrators.localizer_split:localizer_rows_with_training": _few_localizer_rows,
            **_TRAINING,
            **_UNGATED,
        },
    ),
    # issue 36, small judge: the localizer part only checks the training source (100 rows at 500, 167 at 1,000)
    "fewbt0": (
        {"localizer_data": "auto"},
        {
            "confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0,
            "confrf.calibrators.localizer_split:localizer_rows_with_training": _few_localizer_rows,
            **_TRAINING,
        },
    ),
    "fewbt0se2": (
        {"localizer_data": "auto"},
        {
            "confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0,
            "confrf.localizers.sources:SOURCE_SE": 2.0,
            "confrf.calibrators.localizer_split:localizer_rows_with_training": _few_localizer_rows,
            **_TRAINING,
        },
    ),
    "training": ({"localizer_data": "training"}, {}),
    # the default with a leaf grid up to four times the sqrt rule where sources are tuned (grow_from_sources)
    "top4": ({}, {"confrf.localizers.sources:leaf_candidates": _wider_leaf_grid}),
    # the calibration rows' own localizer part when the training check does not pass (now the default; the rows
    # "LCP-RF auto[rejcal]" in explore/ were measured before it was), and the rule before (the training-sized part)
    "rejcal": ({}, {"confrf.calibrators.localizer_split:REJECTED_LOCALIZER": "calibration"}),
    "rejtrain": ({}, {"confrf.calibrators.localizer_split:REJECTED_LOCALIZER": "training"}),
    # issue 36, sixth round: leaves above the sqrt rule as challengers (the sqrt rule stays the tuning's baseline)
    "above1": ({}, {"confrf.localizers.sources:leaf_candidates": lambda n, top: _leaves_above(n, top, 1)}),
    "above2": ({}, {"confrf.localizers.sources:leaf_candidates": lambda n, top: _leaves_above(n, top, 2)}),
    # issue 36, seventh round: the default before normalized split conformal took over from the localized forest
    # where its leaves would hold fewer than 5/alpha conformal points (sources.normalizes); the stored rows of that
    # name at n_cal 500-4,000 are the runs of "LCP-RF default" made before the change (the same code path)
    "localized": ({}, {"confrf.localizers.sources:NORMALIZED_LEAF_MASS": 0.0}),
    # issue 36, eighth round: sigma(x)'s leaves fixed at the sqrt rule, as in the seventh round (the stored rows of
    # that name at n_cal 500-4,000 are the runs of "LCP-RF default" made before the leaf was chosen out of bag)
    "sigma-sqrt": ({}, {"confrf.localizers.sigma_leaf:SIGMA_LEAF_FACTORS": (1.0,)}),
    # issue 36, eleventh round: the tuning without the "screened" max_features candidate (all columns, or a third)
    "noscreen": ({}, {"confrf.localizers.screening:SCREEN_MIN_FEATURES": 10**9}),
    "calibration": ({"localizer_data": "calibration"}, {}),
    "cal2": ({"localizer_data": "calibration"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 2.0}),
    "cal1": ({"localizer_data": "calibration"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 1.0}),
    "cal0": ({"localizer_data": "calibration"}, {"confrf.localizers.tuning:NO_LOCALIZATION_SE": 0.0}),
}
_ORIGINAL: dict[str, Any] = {}


def _patched(patches: dict[str, Any]) -> Any:
    """A context manager that sets the module attributes of ``patches`` and restores them."""
    import contextlib
    import importlib

    @contextlib.contextmanager
    def cm() -> Any:
        old = {}
        for key, value in patches.items():
            mod, attr = key.split(":")
            m = importlib.import_module(mod)
            old[key] = getattr(m, attr)
            _ORIGINAL.setdefault(key, old[key])
            setattr(m, attr, value)
        try:
            yield
        finally:
            for key, value in old.items():
                mod, attr = key.split(":")
                setattr(importlib.import_module(mod), attr, value)

    return cm()


def variant(name: str) -> Callable[[Shared], tuple[np.ndarray, np.ndarray, dict]]:
    options, patches = VARIANTS[name]

    def run(sh: Shared) -> tuple[np.ndarray, np.ndarray, dict]:
        with _patched(patches):
            return lcp_rf(sh, False, dict(options))

    return run


def lcp_rf(sh: Shared, prefit: bool, options: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    s = sh.split
    kw: dict[str, Any] = dict(method="lcp-rf", alpha=ALPHA, random_state=sh.seed, n_jobs=1, options=options)
    if prefit:
        est = cf.ConformalRegressor(model=sh.mu, prefit=True, **kw).conformalize(s.X_cal, s.y_cal)
    else:
        est = cf.ConformalRegressor(model=base_model(sh.seed), **kw).fit(s.X_tr, s.y_tr)
        est.conformalize(s.X_cal, s.y_cal)
    iv = est.predict_interval(s.X_te)
    cal = est.calibrator_
    loc = cal.localizer
    info = {
        "source": getattr(cal, "localizer_source_", "calibration"),
        "note": getattr(cal, "training_note_", None),
        "localizes": not loc.pooled,
        # sigma(x) from the forest, uniform weights (rows written before this key: localizes false, source training)
        "normalized": bool(getattr(loc, "normalized", False)),
        "n_grow": int(cal.n_grow_),
        "n_conformal": int(cal.n_conformal_),
        "leaf": loc.min_samples_leaf_,
        "choice": None if getattr(loc, "source_choice_", None) is None else loc.source_choice_.text(),
    }
    return iv[:, 0], iv[:, 1], info


def condconf(sh: Shared, points: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """conditionalconformal (Gibbs, Cherian, Candes), Phi(x) = (1, x): coverage over linear shifts of x."""
    from conditionalconformal import CondConf

    s, mu = sh.split, sh.mu
    cc = CondConf(
        score_fn=lambda x, y: np.abs(y - mu.predict(x)), Phi_fn=lambda x: np.column_stack([np.ones(len(x)), x])
    )
    cc.setup_problem(s.X_cal, s.y_cal)
    top = float(np.abs(s.y_cal - sh.mu_cal).max()) * 2
    t = np.empty(points)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(points):
            cut = cc.predict(1 - ALPHA, s.X_te[i : i + 1], lambda v, x: v, exact=False, S_min=0.0, S_max=top)
            t[i] = float(np.asarray(cut).ravel()[0])
    m = sh.mu_test[:points]
    return m - t, m + t, {"points": points}


def methods(
    n_cal: int, cc_points: int, variants: list[str] = ()
) -> dict[str, Callable[[Shared], tuple[np.ndarray, np.ndarray, dict]]]:
    def peer(fn: Callable[..., Any]) -> Callable[[Shared], tuple[np.ndarray, np.ndarray, dict]]:
        def run(sh: Shared) -> tuple[np.ndarray, np.ndarray, dict]:
            iv = fn(sh)
            return iv.lwr, iv.upr, {}

        return run

    out: dict[str, Callable[[Shared], tuple[np.ndarray, np.ndarray, dict]]] = {
        "LCP-RF default": lambda sh: lcp_rf(sh, False, {}),
        "LCP-RF auto": lambda sh: lcp_rf(sh, False, {"localizer_data": "auto"}),
        "LCP-RF prefit": lambda sh: lcp_rf(sh, True, {}),
        "LCP-RF localizer_data=training": lambda sh: lcp_rf(sh, False, {"localizer_data": "training"}),
        "MAPIE split": peer(run_mapie_split),
        "MAPIE CQR": peer(run_mapie_cqr),
        "QRF normalized split": peer(run_qrf_normalized),
        "crepes normalized": peer(lambda sh: run_crepes(sh, False, 0)),
    }
    if n_cal <= CC_MAX_CAL and cc_points > 0:
        out["conditionalconformal"] = lambda sh: condconf(sh, cc_points)
    out.update({f"LCP-RF auto[{v}]": variant(v) for v in variants})
    return out


def shared_cell(model: Model, n_cal: int, seed: int, n_eval: int) -> Shared:
    """The draws of one (model, n_cal, seed) cell (training, calibration, evaluation x) with its shared base model
    fitted: every method of the cell, and the exploration scripts, see these rows."""
    rng = np.random.default_rng([seed, n_cal, MODELS.index(model.name) if model.name in MODELS else 9])
    X_tr, y_tr = model.draw(rng, N_TRAIN)
    X_cal, y_cal = model.draw(rng, n_cal)
    X_ev = model.draw_x(rng, n_eval)
    sh = Shared(Split(model.name, X_tr, y_tr, X_cal, y_cal, X_ev, np.zeros(n_eval)), seed, ALPHA, 1)
    sh.fit_base()
    return sh


def run_cell(
    model: Model,
    n_cal: int,
    seed: int,
    n_eval: int,
    cc_points: int,
    done: set,
    only: list[str] | None = None,
    variants: list[str] = (),
) -> list[dict[str, Any]]:
    sh = shared_cell(model, n_cal, seed, n_eval)
    X_ev = sh.split.X_te
    rows = []
    for name, fn in methods(n_cal, cc_points, variants).items():
        chosen = only is None or name in only or name.startswith("LCP-RF auto[")
        if (model.name, n_cal, seed, name) in done or not chosen:
            continue
        t0 = time.perf_counter()
        lwr, upr, info = fn(sh)
        sec = time.perf_counter() - t0
        Xe = X_ev[: lwr.shape[0]]
        cc = model.coverage(Xe, lwr, upr)
        w = upr - lwr
        finite = np.isfinite(w)
        rows.append(
            {
                "model": model.name,
                "n_cal": n_cal,
                "seed": seed,
                "method": name,
                "dev": float(np.mean(np.abs(cc - (1 - ALPHA)))),
                "q10": float(np.quantile(cc, 0.1)),
                "below08": float(np.mean(cc < 0.8)),
                "coverage": float(np.mean(cc)),
                "width_ratio": float(np.mean(w[finite]) / np.mean(model.oracle_width(Xe)[finite]))
                if finite.any()
                else math.inf,
                "inf": float(np.mean(~finite)),
                "seconds": sec,
                "points": int(lwr.shape[0]),
                **info,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


CERTIFIED = (
    "LCP-RF default",
    "LCP-RF auto",
    "LCP-RF prefit",
    "LCP-RF localizer_data=training",
    "MAPIE split",
    "MAPIE CQR",
    "QRF normalized split",
    "crepes normalized",
    "conditionalconformal",
)


def report(rows: list[dict[str, Any]]) -> str:
    import pandas as pd

    if not rows:
        return "(no results)\n"
    df = pd.DataFrame(rows)
    lines = []
    for model in [m for m in MODELS if m in set(df.model)] + sorted(set(df.model) - set(MODELS)):
        d = df[df.model == model]
        lines += [f"### {model}", ""]
        lines += [
            "| n_cal | method | seeds | mean abs(CC-0.9) x1000 (s.e.) | q10(CC) | share CC<0.8 | width/oracle | inf "
            "| seconds |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for n in sorted(set(d.n_cal)):
            dn = d[d.n_cal == n]
            g = dn.groupby("method")
            best = g.dev.mean().min()
            named = sorted(m for m in g.groups if str(m).startswith("LCP-RF auto["))
            for name in [m for m in CERTIFIED if m in g.groups] + named:
                x = g.get_group(name)
                k = len(x)
                se = float(x.dev.std(ddof=1) / math.sqrt(k)) * 1000 if k > 1 else float("nan")
                dev = x.dev.mean() * 1000
                mark = "**" if math.isclose(x.dev.mean(), best) else ""
                lines.append(
                    f"| {n:,} | {name} | {k} | {mark}{dev:.1f}{mark} ({se:.1f}) | {x.q10.mean():.3f} | "
                    f"{x.below08.mean():.3f} | {x.width_ratio.mean():.3f} | {x.inf.mean():.3f} | "
                    f"{x.seconds.mean():.1f} |"
                )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODEL_SPECS))
    ap.add_argument("--n-cal", nargs="+", type=int, default=list(N_CAL))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-eval", type=int, default=2000)
    ap.add_argument("--cc-points", type=int, default=200, help="conditionalconformal's evaluation points (0: skip)")
    ap.add_argument("--methods", nargs="+", default=None, help="run only these methods (default: all)")
    ap.add_argument(
        "--variants",
        nargs="+",
        default=[],
        choices=list(VARIANTS),
        help="also run these named LCP-RF rules (rows 'LCP-RF auto[NAME]'; see VARIANTS)",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", action="store_true", help="only print the tables of --out")
    ap.add_argument("--doc", type=Path, default=None, help="also write the tables to this markdown file")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if not args.report:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        done = {(r["model"], r["n_cal"], r["seed"], r["method"]) for r in load(args.out)}
        for n_cal in args.n_cal:
            for model in args.models:
                for seed in range(args.seeds):
                    rows = run_cell(
                        MODEL_SPECS[model], n_cal, seed, args.n_eval, args.cc_points, done, args.methods, args.variants
                    )
                    with args.out.open("a") as f:
                        f.writelines(json.dumps(r) + "\n" for r in rows)
    text = report([r for r in load(args.out) if r["model"] in args.models])
    print(text)
    if args.doc is not None:
        args.doc.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

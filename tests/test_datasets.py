"""Tests of confrf.datasets: simulators, exact oracles and embedded data."""

from __future__ import annotations

import dataclasses
import doctest
import socket
from importlib import resources

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri

from confrf import datasets
from confrf.datasets import (
    SimulatedData,
    folded_normal_quantile,
    list_datasets,
    load_california,
    load_diamonds,
    load_star,
    make_sim,
    make_toy,
    sim_mean,
    sim_sd,
    simulate,
    toy_mean,
    toy_sd,
)
from confrf.exceptions import InputError

MAKERS = {"sim": (make_sim, 50, 1.0), "toy": (make_toy, 21, 7.0)}


# --------------------------------------------------------------------------
# Simulators: shapes, columns, reproducibility
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sim", "toy"])
def test_shapes_columns_formula(name):
    maker, p, high = MAKERS[name]
    data = maker(123, random_state=0)
    cols = [f"x{j}" for j in range(1, p + 1)]
    assert isinstance(data, SimulatedData)
    assert data.name == name
    assert data.frame.shape == (123, p + 1)
    assert list(data.frame.columns) == cols + ["y"]
    assert (data.frame.dtypes == np.float64).all()
    assert data.formula == "y ~ " + " + ".join(cols)
    assert data.mean.shape == (123,) and data.noise_sd.shape == (123,)
    assert (data.noise_sd >= 0).all()
    X = data.frame[cols].to_numpy()
    assert X.min() >= 0.0 and X.max() <= high
    assert data.feature_names == cols
    assert data.X.shape == (123, p) and data.y.name == "y"
    assert len(data) == data.n == 123
    assert repr(data) == f"SimulatedData(name={name!r}, n=123, p={p})"


@pytest.mark.parametrize("name", ["sim", "toy"])
def test_reproducible_with_seed(name):
    maker, _, _ = MAKERS[name]
    a = maker(200, random_state=7)
    b = maker(200, random_state=7)
    c = maker(200, random_state=8)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.noise_sd, b.noise_sd)
    assert not np.allclose(a.frame.to_numpy(), c.frame.to_numpy())
    # a Generator is accepted and gives the same stream as its seed
    d = maker(200, random_state=np.random.default_rng(7))
    pd.testing.assert_frame_equal(a.frame, d.frame)
    # simulate() dispatches to the same simulator
    pd.testing.assert_frame_equal(simulate(name, 200, 7).frame, a.frame)
    # None gives fresh randomness
    assert not np.allclose(maker(50).frame.to_numpy(), maker(50).frame.to_numpy())


def test_simulate_and_n_errors():
    with pytest.raises(InputError, match="unknown simulated model"):
        simulate("bike", 10)
    for bad in (0, -3, 2.5, True, "10"):
        with pytest.raises(InputError):
            make_sim(bad)
    with pytest.raises(InputError):
        make_toy(10, random_state="seed")
    assert make_sim(np.int64(3), random_state=np.int64(1)).n == 3


def test_frozen_and_readonly():
    data = make_sim(10, random_state=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.name = "other"
    with pytest.raises(ValueError):
        data.mean[0] = 1.0
    with pytest.raises(ValueError):
        data.noise_sd[0] = 1.0


# --------------------------------------------------------------------------
# Simulators follow the paper's formulas
# --------------------------------------------------------------------------


def test_mean_sd_functions_match_formulas():
    sim = make_sim(1000, random_state=1)
    x1 = sim.frame["x1"].to_numpy()
    np.testing.assert_allclose(sim.mean, x1)
    np.testing.assert_allclose(sim.noise_sd, x1 / (1 + x1))
    np.testing.assert_allclose(sim_mean(sim.frame), sim.mean)
    np.testing.assert_allclose(sim_sd(sim.X.to_numpy()), sim.noise_sd)

    toy = make_toy(1000, random_state=1)
    x1 = toy.frame["x1"].to_numpy()
    np.testing.assert_allclose(toy.mean, np.sin(x1) ** 2 + 0.1)
    np.testing.assert_allclose(toy.noise_sd, 0.6 * np.abs(np.sin(2 * x1)))
    np.testing.assert_allclose(toy_mean(toy.X), toy.mean)
    np.testing.assert_allclose(toy_sd(toy.frame.to_numpy()), toy.noise_sd)


def test_mean_sd_function_errors():
    with pytest.raises(InputError, match="x1"):
        sim_mean(pd.DataFrame({"a": [0.1]}))
    with pytest.raises(InputError, match="2-D"):
        toy_sd(np.array([0.1, 0.2]))
    with pytest.raises(InputError, match="NaN"):
        sim_sd(np.array([[np.nan]]))


@pytest.mark.parametrize("name", ["sim", "toy"])
def test_standardised_residuals_are_standard_normal(name):
    n = 200_000
    data = simulate(name, n, random_state=11)
    keep = data.noise_sd > 1e-3
    z = (data.frame["y"].to_numpy() - data.mean)[keep] / data.noise_sd[keep]
    m = keep.sum()
    assert abs(z.mean()) < 5 / np.sqrt(m)
    assert abs(z.std() - 1) < 5 / np.sqrt(2 * m)
    # no dependence of the standardised residual's spread on x1
    x1 = data.frame["x1"].to_numpy()[keep]
    low = x1 < np.median(x1)
    assert abs(z[low].std() - z[~low].std()) < 5 * np.sqrt(2 / m) * 2
    # and normal tails: P(|z| > 1.96) = 0.05
    frac = np.mean(np.abs(z) > 1.959963984540054)
    assert abs(frac - 0.05) < 5 * np.sqrt(0.05 * 0.95 / m)
    # the noise features are unused: Y - mean does not depend on x2
    x2 = data.frame["x2"].to_numpy()[keep]
    assert abs(np.corrcoef(z, x2)[0, 1]) < 5 / np.sqrt(m)


# --------------------------------------------------------------------------
# Oracle quantile of |Y - mu_hat(x)|
# --------------------------------------------------------------------------


def _manual(mean, sd):
    mean = np.asarray(mean, dtype=float)
    frame = pd.DataFrame({"x1": np.zeros(mean.size), "y": mean})
    return SimulatedData(name="manual", frame=frame, formula="y ~ x1", mean=mean, noise_sd=np.asarray(sd, dtype=float))


def test_oracle_quantile_against_monte_carlo():
    rng = np.random.default_rng(2024)
    data = _manual(mean=[0.0, 1.0, 0.3, -2.0], sd=[1.0, 0.2, 0.5, 2.0])
    mu_hat = np.array([0.4, 1.0, 1.3, -2.1])  # shifts b = -0.4, 0, -1, 0.1
    n_mc = 200_000
    eps = rng.standard_normal((n_mc, data.n))
    v = np.abs(data.mean - mu_hat + data.noise_sd * eps)  # |Y - mu_hat|
    for q in (0.1, 0.5, 0.9, 0.99):
        t = data.oracle_score_quantile(mu_hat, q)
        cdf_at_t = (v <= t).mean(axis=0)
        se = np.sqrt(q * (1 - q) / n_mc)
        assert np.all(np.abs(cdf_at_t - q) < 5 * se), (q, cdf_at_t)
        emp = np.quantile(v, q, axis=0)
        np.testing.assert_allclose(t, emp, rtol=0.02, atol=0.01)


def test_oracle_quantile_closed_form_without_shift():
    data = make_sim(500, random_state=3)
    for q in (0.05, 0.5, 0.9, 0.999, 1 - 1e-12):
        t = data.oracle_score_quantile(data.mean, q)
        # s * Phi^{-1}((1 + q) / 2), written through 1 - q to stay exact near 1
        np.testing.assert_allclose(t, -data.noise_sd * ndtri((1 - q) / 2), rtol=1e-12, atol=1e-14)
        if q < 0.999:
            np.testing.assert_allclose(t, data.noise_sd * ndtri((1 + q) / 2), rtol=1e-12, atol=1e-14)


def test_oracle_quantile_root_accuracy():
    # the returned t solves Phi((t-b)/s) - Phi((-t-b)/s) = q to ~1e-12
    from scipy.special import ndtr

    rng = np.random.default_rng(5)
    b = rng.normal(0, 2, 5000)
    s = np.exp(rng.uniform(-5, 2, 5000))
    q = rng.uniform(0.001, 0.999, 5000)
    t = folded_normal_quantile(b, s, q)
    assert (t >= 0).all()
    F = ndtr((t - b) / s) - ndtr((-t - b) / s)
    np.testing.assert_allclose(F, q, atol=1e-11)
    # symmetric in b
    np.testing.assert_allclose(folded_normal_quantile(-b, s, q), t, rtol=1e-13)


def test_oracle_quantile_monotone_in_q_and_shift():
    data = make_toy(50, random_state=4)
    mu_hat = data.mean + 0.3
    qs = np.linspace(0.01, 0.99, 50)
    ts = np.array([data.oracle_score_quantile(mu_hat, q) for q in qs])
    assert np.all(np.diff(ts, axis=0) > 0)
    # larger |bias| gives a larger quantile
    t_small = data.oracle_score_quantile(data.mean + 0.1, 0.9)
    t_large = data.oracle_score_quantile(data.mean + 0.5, 0.9)
    assert np.all(t_large > t_small)
    # array q, one per row
    q_rows = np.linspace(0.1, 0.9, data.n)
    t_rows = data.oracle_score_quantile(mu_hat, q_rows)
    for i in (0, 17, 49):
        assert t_rows[i] == pytest.approx(data.oracle_score_quantile(mu_hat, q_rows[i])[i], rel=1e-12)


def test_oracle_quantile_zero_sd():
    data = _manual(mean=[1.0, 2.0, 0.0], sd=[0.0, 0.0, 1.0])
    mu_hat = np.array([0.5, 2.0, 0.0])
    for q in (0.01, 0.5, 0.99):
        t = data.oracle_score_quantile(mu_hat, q)
        assert t[0] == 0.5 and t[1] == 0.0
        assert t[2] == pytest.approx(ndtri((1 + q) / 2), rel=1e-12)
    lwr, upr = data.oracle_interval(mu_hat, 0.1)
    cov = data.conditional_coverage(mu_hat, lwr, upr)
    assert cov[0] == 1.0 and cov[1] == 1.0
    assert cov[2] == pytest.approx(0.9, abs=1e-12)
    # a degenerate Y is covered or not
    cov = data.conditional_coverage(None, [1.5, 2.5, -np.inf], [3.0, 3.0, np.inf])
    assert cov.tolist() == [0.0, 0.0, 1.0]
    assert folded_normal_quantile(-3.0, 0.0, 0.7) == 3.0


def test_oracle_input_errors():
    data = make_sim(10, random_state=0)
    for q in (0.0, 1.0, -0.1, 1.5, np.nan):
        with pytest.raises(InputError):
            data.oracle_score_quantile(data.mean, q)
    with pytest.raises(InputError, match="length 10"):
        data.oracle_score_quantile(np.zeros(9), 0.9)
    with pytest.raises(InputError, match="NaN"):
        data.oracle_interval(np.full(10, np.nan), 0.1)
    with pytest.raises(InputError):
        data.oracle_interval(data.mean, 1.0)
    with pytest.raises(InputError, match="length 10"):
        data.conditional_coverage(data.mean, np.zeros(3), np.ones(3))
    with pytest.raises(InputError, match="noise_sd"):
        _manual(mean=[0.0], sd=[-1.0])


# --------------------------------------------------------------------------
# Conditional coverage
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sim", "toy"])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.5])
def test_oracle_interval_has_exact_conditional_coverage(name, alpha):
    data = simulate(name, 2000, random_state=9)
    rng = np.random.default_rng(1)
    for mu_hat in (data.mean, data.mean + rng.normal(0, 0.3, data.n), 0.5):
        lwr, upr = data.oracle_interval(mu_hat, alpha)
        mu = np.broadcast_to(mu_hat, (data.n,))
        np.testing.assert_allclose(upr - mu, mu - lwr, rtol=1e-12, atol=1e-12)
        cov = data.conditional_coverage(mu_hat, lwr, upr)
        np.testing.assert_allclose(cov, 1 - alpha, atol=1e-8)
        # the half-width is the oracle score quantile
        np.testing.assert_allclose(upr - mu, data.oracle_score_quantile(mu_hat, 1 - alpha), rtol=1e-12, atol=1e-12)


def test_oracle_interval_per_row_alpha():
    data = make_toy(300, random_state=2)
    alpha = np.linspace(0.01, 0.6, data.n)
    lwr, upr = data.oracle_interval(data.mean - 0.2, alpha)
    cov = data.conditional_coverage(data.mean - 0.2, lwr, upr)
    np.testing.assert_allclose(cov, 1 - alpha, atol=1e-8)


def test_conditional_coverage_known_values_and_infinite_bounds():
    data = make_sim(100, random_state=6)
    m, s = data.mean, data.noise_sd
    np.testing.assert_array_equal(data.conditional_coverage(m, -np.inf, np.inf), 1.0)
    np.testing.assert_allclose(data.conditional_coverage(m, -np.inf, m), 0.5, atol=1e-15)
    np.testing.assert_allclose(data.conditional_coverage(m, m, np.inf), 0.5, atol=1e-15)
    np.testing.assert_allclose(
        data.conditional_coverage(m, m - 1.959963984540054 * s, m + 1.959963984540054 * s), 0.95, atol=1e-12
    )
    # empty or infinite-empty intervals cover nothing
    np.testing.assert_array_equal(data.conditional_coverage(m, m + 1, m - 1), 0.0)
    np.testing.assert_array_equal(data.conditional_coverage(m, np.inf, np.inf), 0.0)
    np.testing.assert_array_equal(data.conditional_coverage(m, -np.inf, -np.inf), 0.0)


def test_conditional_coverage_matches_monte_carlo():
    rng = np.random.default_rng(8)
    data = make_toy(5, random_state=8)
    lwr = data.mean - 0.2
    upr = data.mean + 0.5
    eps = rng.standard_normal((100_000, data.n))
    y = data.mean + data.noise_sd * eps
    emp = ((y >= lwr) & (y <= upr)).mean(axis=0)
    cov = data.conditional_coverage(None, lwr, upr)
    assert np.all(np.abs(emp - cov) < 5 * np.sqrt(0.25 / 100_000))


# --------------------------------------------------------------------------
# Real data
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def no_network():
    """Fail any attempt to open a network connection while loading."""
    orig_connect = socket.socket.connect
    orig_create = socket.create_connection

    def refuse(*args, **kwargs):
        raise AssertionError("confrf.datasets tried to use the network")

    socket.socket.connect = refuse
    socket.create_connection = refuse
    try:
        yield
    finally:
        socket.socket.connect = orig_connect
        socket.create_connection = orig_create


@pytest.fixture(scope="module")
def real(no_network):
    return {
        "california": load_california(),
        "diamonds": load_diamonds(),
        "star": load_star(),
        "star1": load_star(complete_first_grade=True),
    }


def test_data_files_are_package_resources():
    root = resources.files("confrf.datasets")
    for name in ("california_housing.csv.gz", "diamonds.csv.gz", "star.csv.gz"):
        res = root.joinpath("data", name)
        assert res.is_file()
        assert res.read_bytes()[:2] == b"\x1f\x8b"  # gzip, stored unchanged
    assert root.joinpath("README.md").is_file()


def test_load_california(real):
    df = real["california"]
    assert df.shape == (20640, 9)
    assert list(df.columns) == [
        "MedInc",
        "HouseAge",
        "AveRooms",
        "AveBedrms",
        "Population",
        "AveOccup",
        "Latitude",
        "Longitude",
        "MedHouseVal",
    ]
    assert (df.dtypes == np.float64).all()
    assert not df.isna().any().any()
    assert df["MedHouseVal"].max() == pytest.approx(5.00001)


def test_load_diamonds(real):
    df = real["diamonds"]
    assert df.shape == (53940, 10)
    assert list(df.columns) == ["carat", "cut", "color", "clarity", "depth", "table", "price", "x", "y", "z"]
    assert "rownames" not in df.columns
    expected = {
        "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
        "color": ["D", "E", "F", "G", "H", "I", "J"],
        "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
    }
    for col, levels in expected.items():
        assert isinstance(df[col].dtype, pd.CategoricalDtype)
        assert df[col].cat.ordered
        assert list(df[col].cat.categories) == levels
        assert not df[col].isna().any()  # every value is a known level
    assert df["price"].dtype == np.int64
    assert not df.isna().any().any()
    assert (df["cut"] >= "Very Good").sum() == 12082 + 13791 + 21551  # VG+Premium+Ideal


def test_load_star_raw(real):
    df = real["star"]
    assert df.shape == (11598, 47)
    assert df.index.name == "id" and df.index.is_unique
    assert "rownames" not in df.columns
    for col in (
        "gender",
        "ethnicity",
        "birth",
        "stark",
        "star1",
        "lunch1",
        "school2",
        "degree3",
        "ladderk",
        "tethnicity3",
    ):
        assert isinstance(df[col].dtype, pd.CategoricalDtype), col
    for col in ("readk", "read1", "math3", "experience1", "system1", "schoolid1"):
        assert df[col].dtype == np.float64, col
    assert list(df["star1"].cat.categories) == ["regular", "small", "regular+aide"]
    assert df["birth"].cat.ordered
    assert list(df["birth"].cat.categories)[:2] == ["1977 Q1", "1977 Q2"]
    assert df.isna().any().any()  # documented: many missing values
    assert df["read1"].isna().sum() == 5202
    assert len(df.dropna()) == 2161  # the CQR paper's complete cases


def test_load_star_complete_first_grade(real):
    df = real["star1"]
    assert df.shape == (6205, 15)
    assert list(df.columns) == datasets.STAR_FIRST_GRADE_COLUMNS + ["score1"]
    assert not df.isna().any().any()
    np.testing.assert_array_equal(df["score1"], df["read1"] + df["math1"])
    raw = real["star"]
    expected = raw[datasets.STAR_FIRST_GRADE_COLUMNS].dropna()
    assert df.index.equals(expected.index)
    for col in df.columns:
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            counts = df[col].value_counts()
            assert (counts > 0).all(), col  # unused levels removed


def test_list_datasets(real):
    cat = list_datasets()
    assert list(cat.columns[:5]) == ["name", "kind", "rows", "cols", "target"]
    assert "source" in cat.columns
    shapes = cat.set_index("name")
    for name in ("california", "diamonds", "star"):
        assert (shapes.loc[name, "rows"], shapes.loc[name, "cols"]) == real[name].shape
    assert shapes.loc["sim", "cols"] == make_sim(2, random_state=0).frame.shape[1]
    assert shapes.loc["toy", "cols"] == make_toy(2, random_state=0).frame.shape[1]
    for fn in cat["function"]:
        assert callable(getattr(datasets, fn))


# --------------------------------------------------------------------------
# Docstring examples run
# --------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["_simulate", "_simdata", "_sim_models", "_folded", "_real"])
def test_docstring_examples(module, no_network):
    import importlib

    mod = importlib.import_module(f"confrf.datasets.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0

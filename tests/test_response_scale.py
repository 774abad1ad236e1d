"""The response's own scale: support= clipping and monotone transforms of the response mapped back exactly."""

import doctest
import importlib
import warnings

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.exceptions import InputError
from confrf.formula import Design
from confrf.formula.transforms import ResponseTransform, response_transform
from confrf.results.response_scale import Support


def _g(formula, data, support=None):
    design, _, y, _ = Design.fit(formula, data)
    var = design._response_variables[0]
    return response_transform(design, support, data[var], y)


@pytest.fixture(scope="module")
def pos():
    rng = np.random.default_rng(3)
    n = 600
    x = rng.uniform(0, 2, n)
    y = np.exp(0.5 + x + rng.normal(0, 0.3 + 0.3 * x, n))
    return pd.DataFrame({"y": y, "x": x, "z": rng.normal(size=n)})


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(5)
    n = 1200
    x = rng.uniform(0, 3, n)
    y = rng.poisson(np.exp(0.2 + 0.8 * x)).astype(np.int64)
    return pd.DataFrame({"y": y, "x": x, "w": rng.normal(size=n)})


# -- reading the transform from the formula ------------------------------------------
@pytest.mark.parametrize(
    "lhs, increasing",
    [
        ("y", True),
        ("np.log(y)", True),
        ("log(y)", True),
        ("np.log1p(y)", True),
        ("np.log10(y)", True),
        ("np.sqrt(y)", True),
        ("I(y ** 0.5)", True),
        ("np.power(y, 3)", True),
        ("I(-y)", False),
        ("np.exp(-y / 10)", False),
        ("I(2 * y + 1)", True),
        ("np.log(2 * y + 1)", True),
        ("np.arcsinh(y)", True),
        ("scale(y)", True),
        ("center(y)", True),
        ("I(10 ** (y / 10))", True),
    ],
)
def test_known_monotone_transforms_are_read(pos, lhs, increasing):
    g = _g(f"{lhs} ~ x", pos)
    assert isinstance(g, ResponseTransform), g
    assert g.increasing is increasing
    assert g.is_identity is (lhs == "y")


@pytest.mark.parametrize(
    "lhs, why",
    [
        ("np.sin(y)", "np.sin is not monotone"),
        ("I(y + z)", "combines the columns"),
        ("I(y * y)", "another non-constant term"),
        ("I(1 / y)", "support="),
        ("np.square(y)", "support="),
        ("np.abs(y)", "support="),
        ("I(y ** 2)", "support="),
    ],
)
def test_non_invertible_responses_are_refused_with_the_reason(pos, lhs, why):
    g = _g(f"{lhs} ~ x", pos)
    assert isinstance(g, str) and why in g


def test_one_sided_functions_are_read_on_the_declared_support(pos):
    g = _g("I(1 / y) ~ x", pos, support=(0.0, np.inf))
    assert isinstance(g, ResponseTransform) and not g.increasing
    g = _g("np.square(y) ~ x", pos, support=(0.0, np.inf))
    assert isinstance(g, ResponseTransform) and g.increasing


@pytest.mark.parametrize(
    "lhs, support, inverse",
    [
        ("np.log(y)", None, lambda lo, hi: (np.exp(lo), np.exp(hi))),
        ("I(-y)", None, lambda lo, hi: (-hi, -lo)),
        ("I(2 * y + 1)", None, lambda lo, hi: ((lo - 1) / 2, (hi - 1) / 2)),
        ("I(1 / y)", (0.0, np.inf), lambda lo, hi: (1 / hi, 1 / lo)),
        ("np.sqrt(y)", None, lambda lo, hi: (np.square(np.maximum(lo, 0)), np.square(hi))),
    ],
)
def test_intervals_map_back_through_the_inverse_exactly(pos, lhs, support, inverse):
    g = _g(f"{lhs} ~ x", pos, support)
    v = g.forward(pos["y"].to_numpy())
    rng = np.random.default_rng(0)
    lo = v - rng.uniform(0.01, 0.3, v.shape[0]) * np.abs(v)
    hi = v + rng.uniform(0.01, 0.3, v.shape[0]) * np.abs(v)
    L, U = g.inverse_interval(lo, hi)
    eL, eU = inverse(lo, hi)
    np.testing.assert_allclose(L, eL, rtol=1e-12)
    np.testing.assert_allclose(U, eU, rtol=1e-12)
    # the same responses are inside: y in [L, U] exactly when g(y) in [lo, hi] (random points, no ties)
    grid = rng.uniform(0.01, 30, (v.shape[0], 50))
    inside_model = (lo[:, None] <= g.forward(grid)) & (g.forward(grid) <= hi[:, None])
    inside_resp = (L[:, None] <= grid) & (grid <= U[:, None])
    assert np.array_equal(inside_model, inside_resp)


def test_intervals_outside_the_transforms_range_are_empty(pos):
    g = _g("np.sqrt(y) ~ x", pos)
    L, U = g.inverse_interval(np.array([-3.0, -1.0, 1.0]), np.array([-1.0, 2.0, np.inf]))
    assert L[0] > U[0]  # sqrt(y) in [-3, -1] holds no y
    assert (L[1], U[1]) == (0.0, 4.0)
    assert (L[2], U[2]) == (1.0, np.inf)


# -- predict(..., scale="response") ------------------------------------------------------
@pytest.fixture(scope="module")
def log_fit(pos):
    return cf.split_cp("np.log(y) ~ x", data=pos, model="ols", random_state=0)


def test_response_scale_predictions_are_the_inverse_mapped_bounds(log_fit, pos):
    model = log_fit.predict(pos.head(50))
    resp = log_fit.predict(pos.head(50), scale="response")
    np.testing.assert_array_equal(resp["lwr"], np.exp(model["lwr"]))
    np.testing.assert_array_equal(resp["upr"], np.exp(model["upr"]))
    np.testing.assert_array_equal(resp["fit"], np.exp(model["fit"]))
    # the same rows are covered on either scale
    y = pos["y"].head(50).to_numpy()
    on_model = (model["lwr"] <= np.log(y)) & (np.log(y) <= model["upr"])
    on_resp = (resp["lwr"] <= y) & (y <= resp["upr"])
    assert on_model.equals(on_resp)


def test_decreasing_transforms_swap_the_ends(pos):
    res = cf.split_cp("I(-y) ~ x", data=pos, model="ols", random_state=0)
    model = res.predict(pos.head(20))
    resp = res.predict(pos.head(20), scale="response")
    np.testing.assert_allclose(resp["lwr"], -model["upr"])
    np.testing.assert_allclose(resp["upr"], -model["lwr"])
    assert (resp["lwr"] <= resp["upr"]).all()


@pytest.mark.parametrize(
    "lhs, g, g_inv",
    [
        ("I(-y)", lambda y: -y, lambda v: -v),
        ("np.exp(-y / 10)", lambda y: np.exp(-y / 10), lambda v: -10 * np.log(v)),
    ],
    ids=["negative", "exp"],
)
def test_decreasing_transforms_with_a_support_on_the_model_scale(pos, lhs, g, g_inv):
    """The support [0, inf) on the model's scale of a decreasing g is [g(inf), g(0)] (the ends swapped): the
    model-scale bounds lie in it, are finite and ordered, and map back to the response-scale ones end for end."""
    res = cf.split_cp(f"{lhs} ~ x", data=pos, model="ols", random_state=0, support="nonnegative")
    model = res.predict(pos.head(30))
    resp = res.predict(pos.head(30), scale="response")
    lo, hi = sorted((float(g(np.float64(0.0))), float(g(np.float64(np.inf)))))
    lwr, upr = model["lwr"].to_numpy(), model["upr"].to_numpy()
    assert np.all(np.isfinite(lwr)) and np.all(np.isfinite(upr)) and np.all(lwr < upr)
    assert np.all(lwr >= lo) and np.all(upr <= hi)
    assert np.any(upr == hi)  # the premise: the support clips some intervals (for I(-y): upr <= 0, some at 0)
    np.testing.assert_allclose(resp["lwr"], g_inv(upr), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(resp["upr"], g_inv(lwr), rtol=1e-12)
    if lhs == "I(-y)":
        assert np.all(upr <= 0) and np.array_equal(lwr, -resp["upr"].to_numpy())


def test_response_scale_of_fitted_and_residuals(log_fit, pos):
    fit = log_fit.fitted()
    np.testing.assert_allclose(log_fit.fitted(scale="response"), np.exp(fit))
    y = pos.loc[fit.index, "y"]
    np.testing.assert_allclose(log_fit.residuals(scale="response"), y - np.exp(fit))
    aug = log_fit.augment(pos.head(5), scale="response")
    np.testing.assert_allclose(aug[".resid"], pos["y"].head(5) - aug[".fitted"])


def test_scale_response_is_refused_with_the_reason(pos):
    res = cf.split_cp("np.sin(y) ~ x", data=pos, model="ols", random_state=0)
    with pytest.raises(InputError, match="np.sin is not monotone"):
        res.predict(pos.head(3), scale="response")
    with pytest.raises(InputError, match="scale must be 'model'"):
        res.predict(pos.head(3), scale="log")
    assert "not available" in str(res.summary())


def test_an_untransformed_response_has_one_scale(pos):
    res = cf.split_cp("y ~ x", data=pos, model="ols", random_state=0)
    assert res.predict(pos.head(5), scale="response").equals(res.predict(pos.head(5)))


# -- support= -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, expected",
    [
        ("nonnegative", (0.0, np.inf, False, False)),
        ("positive", (0.0, np.inf, True, False)),
        ("unit", (0.0, 1.0, False, False)),
        ("count", (0.0, np.inf, False, True)),
        ((0, None), (0.0, np.inf, False, False)),
        ((None, 10), (-np.inf, 10.0, False, False)),
    ],
)
def test_support_values(value, expected):
    s = Support.parse(value)
    assert (s.lower, s.upper, s.lower_open, s.integer) == expected


@pytest.mark.parametrize(
    "value, match",
    [("natural", "not a known range"), ((1, 1), "lower < upper"), ((0, np.nan), "number or None"), (3, "pair")],
)
def test_bad_support_values(value, match):
    with pytest.raises(InputError, match=match):
        Support.parse(value)


def test_responses_outside_the_support_are_refused(pos, counts):
    with pytest.raises(InputError, match="clipping the intervals to a range the response leaves"):
        cf.split_cp("y ~ x", data=pos.assign(y=pos.y - 2), support="nonnegative", random_state=0)
    with pytest.raises(InputError, match="whole numbers"):
        cf.split_cp("y ~ x", data=counts.assign(y=counts.y + 0.5), support="count", random_state=0)
    with pytest.raises(InputError, match="calib"):
        cf.split_cp("y ~ x", data=pos, calib=pos.assign(y=-pos.y), support="positive", random_state=0)


def _support_points(lwr, upr, grid):
    return (lwr[:, None] <= grid[None, :]) & (grid[None, :] <= upr[:, None])


@pytest.mark.parametrize("method", ["split", "lcp-rf"])
def test_count_support_keeps_exactly_the_same_whole_numbers(counts, method):
    opts = dict(method=method, model="ols", random_state=1)
    if method == "lcp-rf":
        opts.update(n_estimators=30, min_samples_leaf=10, max_features=1.0)
    plain = cf.conformal("y ~ x", data=counts, **opts)
    clipped = cf.conformal("y ~ x", data=counts, support="count", **opts)
    test = counts.sample(300, random_state=2)
    p, c = plain.predict(test), clipped.predict(test)
    assert (p["lwr"] < 0).any()  # the unclipped intervals do leave the support
    assert (c["lwr"] >= 0).all() and np.array_equal(c["lwr"], np.round(c["lwr"]))
    finite = np.isfinite(c["upr"])
    assert np.array_equal(c["upr"][finite], np.round(c["upr"][finite]))
    grid = np.arange(0, 200)
    assert np.array_equal(
        _support_points(p["lwr"].to_numpy(), p["upr"].to_numpy(), grid),
        _support_points(c["lwr"].to_numpy(), c["upr"].to_numpy(), grid),
    )
    y = test["y"].to_numpy()
    assert np.array_equal((p["lwr"] <= y) & (y <= p["upr"]), (c["lwr"] <= y) & (y <= c["upr"]))
    assert (c["upr"] - c["lwr"] <= p["upr"] - p["lwr"]).all()
    assert plain.evaluate(test).coverage == clipped.evaluate(test).coverage


def test_unit_support_clips_infinite_intervals(pos):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.uniform(size=12)})
    df["y"] = rng.uniform(size=12)
    res = cf.split_cp("y ~ x", data=df, support="unit", alpha=0.2, random_state=0, model="ols")
    with pytest.warns(cf.exceptions.InfiniteIntervalWarning, match="clipped to the support"):
        pred = res.predict(df, alpha=0.05)  # 6 calibration points: infinite at 0.05
    assert (pred["lwr"] == 0).all() and (pred["upr"] == 1).all()


def test_support_on_a_transformed_response(counts):
    df = counts
    res = cf.split_cp("np.log1p(y) ~ x", data=df, support="count", model="ols", random_state=0)
    model = res.predict(df.head(200))
    assert (model["lwr"] >= 0).all()  # log1p(0): the support on the model's scale
    resp = res.predict(df.head(200), scale="response")
    assert (resp["lwr"] >= 0).all() and np.array_equal(resp["lwr"], np.round(resp["lwr"]))
    grid = np.arange(0, 200)
    on_model = _support_points(model["lwr"].to_numpy(), model["upr"].to_numpy(), np.log1p(grid))
    on_resp = _support_points(resp["lwr"].to_numpy(), resp["upr"].to_numpy(), grid)
    assert np.array_equal(on_model, on_resp)


def test_whole_number_ends_survive_rounding_of_the_inverse(counts):
    # bounds exactly at g(k): expm1(log1p(k)) is off by one ulp for about half the k, and ceil/floor would
    # then drop k itself; the response-scale interval must hold exactly the k with g(k) in the interval
    from confrf.results.response_scale import ResponseScale

    design, _, y, _ = Design.fit("np.log1p(y) ~ x", counts)
    scale = ResponseScale(response_transform(design, (0.0, np.inf), counts["y"], y), Support.parse("count"))
    k = np.arange(0, 5000.0)
    lo, hi = scale.intervals(np.log1p(k), np.log1p(k + 3), "response")
    np.testing.assert_array_equal(lo, k)
    np.testing.assert_array_equal(hi, k + 3)


def test_the_summary_and_glance_say_so(counts):
    res = cf.split_cp("y ~ x", data=counts, support="count", random_state=0)
    text = str(res.summary())
    assert "Response scale" in text and "clipped" in text and "coverage" in text
    assert res.summary().frames["response_scale"].loc["Support", "value"].startswith("whole numbers in [0, inf)")
    assert res.glance().loc[0, "support"] == "whole numbers in [0, inf) (count)"


def test_support_is_refused_for_class_labels():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "g": rng.choice(["a", "b"], 60)})
    with pytest.raises(InputError, match="class label"):
        cf.conformal("g ~ x", data=df, method="split", support="nonnegative", random_state=0)
    res = cf.conformal("g ~ x", data=df, method="split", model="logit", random_state=0)
    with pytest.raises(InputError, match="class label"):
        res.predict(df.head(2), scale="response")


@pytest.mark.parametrize(
    "module", ["confrf.formula.transforms", "confrf.results.response_scale", "confrf.formula.update", "confrf._levels"]
)
def test_docstring_examples_run(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0

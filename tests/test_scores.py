"""Nonconformity scores: exact inversion, CQR by hand, scaled residuals, bad input."""

import pickle

import numpy as np
import pytest
import statsmodels.api as sm
from reference_kernel import split_order_statistic
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, QuantileRegressor
from sklearn.tree import DecisionTreeRegressor

import confrf as cf
from confrf import ConformalRegressor
from confrf.exceptions import InputError
from confrf.scores import AbsoluteScore, QuantileScore, ScaledScore, get_score
from confrf.scores.fitting import out_of_fold_scores

# dyadic values: every sum and product below is exact, so boundaries are tested exactly
GRID = np.arange(-48, 49) / 8.0


def _dyadic(rng, size, lo=-16, hi=17):
    return rng.integers(lo, hi, size=size) / 4.0


def _check_inversion(score, pred, t):
    lwr, upr = score.interval(pred, t)
    assert not np.isnan(lwr).any() and not np.isnan(upr).any()
    for i in range(t.shape[0]):
        y = GRID
        p = np.repeat(pred[i : i + 1], y.shape[0], axis=0) if np.ndim(pred) == 2 else np.full(y.shape[0], pred[i])
        inside = (lwr[i] <= y) & (y <= upr[i])
        np.testing.assert_array_equal(inside, score.score(y, p) <= t[i], err_msg=f"row {i}: pred {pred[i]}, t {t[i]}")


def test_absolute_inversion_exact():
    rng = np.random.default_rng(0)
    pred = _dyadic(rng, 60)
    t = np.abs(_dyadic(rng, 60))
    t[:5] = np.inf
    _check_inversion(AbsoluteScore(), pred, t)


def test_quantile_inversion_exact_including_negative_t_crossing_and_empty_sets():
    rng = np.random.default_rng(1)
    pred = np.column_stack([_dyadic(rng, 200), _dyadic(rng, 200)])  # about half the pairs cross
    t = _dyadic(rng, 200, -12, 13)  # negative thresholds included
    t[:5] = np.inf
    s = QuantileScore()
    _check_inversion(s, pred, t)
    lwr, upr = s.interval(pred, t)
    lo, hi = pred.min(axis=1), pred.max(axis=1)
    empty = hi - lo + 2 * t < 0
    assert empty.any()
    # the documented report of an empty set: the closed-form endpoints, lwr > upr, never NaN
    np.testing.assert_array_equal(lwr > upr, empty)
    np.testing.assert_array_equal(lwr, lo - t)


def test_quantile_crossing_pairs_are_sorted():
    s = QuantileScore()
    pred = np.array([[3.0, 1.0], [1.0, 3.0]])
    y = np.array([0.0, 0.0])
    np.testing.assert_array_equal(s.score(y, pred), [1.0, 1.0])
    np.testing.assert_array_equal(s.center(pred), [2.0, 2.0])
    lwr, upr = s.interval(pred, np.array([0.5, 0.5]))
    np.testing.assert_array_equal(lwr, [0.5, 0.5])
    np.testing.assert_array_equal(upr, [3.5, 3.5])


def test_scaled_inversion_exact():
    rng = np.random.default_rng(2)
    mu = _dyadic(rng, 100)
    sigma = 2.0 ** rng.integers(-2, 3, size=100)
    t = np.abs(_dyadic(rng, 100))
    t[:5] = np.inf
    _check_inversion(ScaledScore(), np.column_stack([mu, sigma]), t)


def test_unknown_score_and_bad_predictions():
    with pytest.raises(InputError, match="unknown score 'cqr'.*absolute.*quantile.*scaled"):
        get_score("cqr")
    with pytest.raises(InputError, match="two predictions per row"):
        QuantileScore().score(np.zeros(3), np.zeros(3))
    with pytest.raises(InputError, match="sigma\\(x\\) <= 0 in 1 of 2"):
        ScaledScore().score(np.zeros(2), np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(InputError, match="floor"):
        ScaledScore(floor=0.0)
    with pytest.raises(InputError, match="levels"):
        QuantileScore(levels=(0.9, 0.1))


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(900, random_state=3)


def test_cqr_split_equals_hand_computation(sim):
    train, calib, test = sim.frame.iloc[:300], sim.frame.iloc[300:700], sim.frame.iloc[700:]
    res = cf.split_cp("y ~ x1 + x2", data=train, calib=calib, score="quantile", model="qr", alpha=0.1, random_state=0)
    exog = lambda d: sm.add_constant(d[["x1", "x2"]].to_numpy(), has_constant="add")  # noqa: E731
    fits = [sm.QuantReg(train["y"].to_numpy(), exog(train)).fit(q=q, max_iter=5000) for q in (0.05, 0.95)]
    q_cal = [f.predict(exog(calib)) for f in fits]
    lo_c, hi_c = np.minimum(*q_cal), np.maximum(*q_cal)
    V = np.maximum(lo_c - calib["y"].to_numpy(), calib["y"].to_numpy() - hi_c)
    t = split_order_statistic(V, "0.1")
    q_te = [f.predict(exog(test)) for f in fits]
    p = res.predict(test)
    np.testing.assert_allclose(p["lwr"], np.minimum(*q_te) - t, rtol=0, atol=1e-8)
    np.testing.assert_allclose(p["upr"], np.maximum(*q_te) + t, rtol=0, atol=1e-8)
    np.testing.assert_allclose(p["fit"], (q_te[0] + q_te[1]) / 2, rtol=0, atol=1e-8)
    assert res.summary().frames["setup"].loc["Score", "value"] == "quantile"


def test_quantile_model_choices(sim):
    X, y = np.asarray(sim.X)[:300, :3], sim.y.to_numpy()[:300]
    kw = dict(method="split", score="quantile", alpha=0.2, random_state=0)
    for model in [
        "qgbm",
        (QuantileRegressor(quantile=0.1, alpha=0.0), QuantileRegressor(quantile=0.9, alpha=0.0)),
        HistGradientBoostingRegressor(loss="quantile", max_iter=20),
    ]:
        reg = ConformalRegressor(model=model, **kw).fit(X[:200], y[:200]).conformalize(X[200:], y[200:])
        assert reg.predict_interval(X[:5]).shape == (5, 2)
    levels = [m.quantile for m in reg.model_.models]
    assert levels == [0.1, 0.9]  # alpha/2 and 1 - alpha/2
    for bad, msg in [
        ("rf", "does not estimate quantiles"),
        (LinearRegression(), "no `quantile` parameter"),
        (HistGradientBoostingRegressor(), "loss='quantile'"),
    ]:
        with pytest.raises(InputError, match=msg):
            ConformalRegressor(model=bad, **kw).fit(X, y)


def test_prefit_crossing_quantile_models_use_the_sorted_pair(sim):
    X, y = np.asarray(sim.X)[:, :2], sim.y.to_numpy()
    a = LinearRegression().fit(X[:300], y[:300] + 0.3)
    b = LinearRegression().fit(X[:300], y[:300] - 0.3)
    b.coef_ = b.coef_ + np.array([1.5, 0.0])  # b crosses a inside the data range
    pa, pb = a.predict(X), b.predict(X)
    assert (pa > pb).any() and (pa < pb).any()
    res = [
        ConformalRegressor(model=m, prefit=True, method="split", score="quantile", alpha=0.1)
        .conformalize(X[300:700], y[300:700])
        .predict_interval(X[700:])
        for m in [(a, b), (b, a)]
    ]
    np.testing.assert_array_equal(res[0], res[1])
    assert np.all(res[0][:, 0] <= res[0][:, 1])
    with pytest.raises(InputError, match="fitted_lo, fitted_hi"):
        ConformalRegressor(model=a, prefit=True, method="split", score="quantile").conformalize(X[300:], y[300:])


def test_scaled_sigma_learned_out_of_fold_and_floored(sim):
    X, y = np.asarray(sim.X)[:, :3], sim.y.to_numpy()
    # a fully grown tree interpolates: its in-sample residuals are all 0, its out-of-fold ones are not
    reg = ConformalRegressor(
        model=DecisionTreeRegressor(min_samples_leaf=1), method="split", score="scaled", alpha=0.1, random_state=0
    ).fit(X[:500], y[:500])
    pred = reg.model_.predict(X[:500])
    floor = reg.model_.floor
    oof = np.abs(y[:500] - _oof_tree(X[:500], y[:500]))
    assert floor == pytest.approx(0.01 * oof.mean())
    assert np.all(pred[:, 1] >= floor)
    assert np.median(pred[:, 1]) > 10 * floor  # in-sample targets would give sigma = floor everywhere
    np.testing.assert_allclose(pred[:, 0], y[:500])  # mu itself is fitted on all the training rows
    reg.conformalize(X[500:], y[500:])
    d = reg.predict_details(X[:10])
    np.testing.assert_allclose(d["upr"] - d["fit"], d["t"] * pred[:10, 1])


def _oof_tree(X, y):
    from sklearn.model_selection import KFold, cross_val_predict

    seed = ConformalRegressor(random_state=0)._seeds()[0]
    return cross_val_predict(
        DecisionTreeRegressor(min_samples_leaf=1, random_state=seed), X, y, cv=KFold(5, shuffle=True, random_state=seed)
    )


class _Negative:
    def predict(self, X):
        return np.asarray(X)[:, 0] - 0.5  # negative on half the rows


def test_scaled_prefit_needs_positive_sigma(sim):
    X, y = np.asarray(sim.X)[:, :2], sim.y.to_numpy()
    mu = LinearRegression().fit(X, y)
    reg = ConformalRegressor(model=(mu, _Negative()), prefit=True, method="split", score="scaled")
    with pytest.raises(InputError, match="sigma\\(x\\) <= 0"):
        reg.conformalize(X, y)
    reg = ConformalRegressor(model=(mu, _Negative()), prefit=True, method="split", score=ScaledScore(floor=0.05))
    lo, hi = reg.conformalize(X[:400], y[:400]).predict_interval(X[400:]).T
    assert np.all(hi - lo > 0)


def test_out_of_fold_scores_are_not_in_sample(sim):
    X, y = np.asarray(sim.X)[:300, :3], sim.y.to_numpy()[:300]
    tree = DecisionTreeRegressor(min_samples_leaf=1)
    V = out_of_fold_scores(get_score("absolute"), X, y, tree, cv=4, alpha=0.1, random_state=0)
    assert V.min() >= 0 and np.median(V) > 0.05  # in sample, every residual would be 0
    with pytest.raises(InputError, match="cv"):
        out_of_fold_scores(get_score("absolute"), X, y, tree, cv=1, alpha=0.1)


@pytest.mark.parametrize("score,model", [("quantile", "qr"), ("scaled", "ols")])
def test_new_scores_pickle_and_reproduce(sim, score, model):
    res = cf.lcp_rf(
        "y ~ x1 + x2 + x3", data=sim.frame.iloc[:800], score=score, model=model, n_estimators=30, random_state=4
    )
    new = sim.frame.iloc[800:]
    clone = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(clone.predict(new).to_numpy(), res.predict(new).to_numpy())
    again = cf.lcp_rf(
        "y ~ x1 + x2 + x3", data=sim.frame.iloc[:800], score=score, model=model, n_estimators=30, random_state=4
    )
    np.testing.assert_array_equal(again.predict(new).to_numpy(), res.predict(new).to_numpy())


@pytest.mark.parametrize(
    "module",
    [
        "confrf.scores.base",
        "confrf.scores.lac",
        "confrf.scores.aps",
        "confrf.scores.raps",
        "confrf.scores.quantile",
        "confrf.scores.scaled",
        "confrf.scores.fitting",
        "confrf.localizers.kernel",
        "confrf.localizers.bandwidth",
        "confrf.calibrators.lcp_kernel",
        "confrf.calibrators.slcp",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0

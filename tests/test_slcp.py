"""SLCP (Han et al.): against a loop reference, its reference data, its limits."""

import numpy as np
import pytest
from reference_kernel import nw_quantile, split_order_statistic, standardize
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf import ConformalRegressor
from confrf.scores import get_score
from confrf.scores.fitting import out_of_fold_scores


@pytest.fixture(scope="module")
def sim():
    d = cf.datasets.make_sim(1000, random_state=7)
    return np.asarray(d.X)[:, :3], d.y.to_numpy()


@pytest.mark.parametrize("kernel", ["gaussian", "exponential"])
@pytest.mark.parametrize("alpha", ["0.1", "0.3"])
def test_slcp_matches_loop_reference(sim, kernel, alpha):
    X, y = sim
    reg = (
        ConformalRegressor(
            model=LinearRegression(), method="slcp", alpha=0.1, random_state=1, options={"kernel": kernel, "cv": 3}
        )
        .fit(X[:150], y[:150])
        .conformalize(X[150:250], y[150:250])
    )
    loc = reg.calibrator_.localizer
    h = loc.bandwidth_
    Z_ref = standardize(X[:150], X[:150])
    V_ref = reg.train_scores_
    lvl = 1 - float(alpha)
    V_cal = np.abs(y[150:250] - reg.model_.predict(X[150:250]))
    q_cal = [nw_quantile(Z_ref, V_ref, z, kernel, h, lvl) for z in standardize(X[:150], X[150:250])]
    Q = split_order_statistic(V_cal - np.array(q_cal), alpha)
    q_test = np.array([nw_quantile(Z_ref, V_ref, z, kernel, h, lvl) for z in standardize(X[:150], X[900:])])
    d = reg.predict_details(X[900:], alpha=float(alpha))
    np.testing.assert_allclose(d["t"], q_test + Q, rtol=0, atol=1e-12)
    assert d["closed"].all()


def test_reference_scores_are_out_of_fold_not_in_sample(sim):
    X, y = sim
    model = RandomForestRegressor(n_estimators=20, min_samples_leaf=1, random_state=0)
    reg = ConformalRegressor(model=model, method="slcp", alpha=0.1, random_state=3).fit(X[:300], y[:300])
    seed = reg._seeds()[0]
    expect = out_of_fold_scores(get_score("absolute"), X[:300], y[:300], model, cv=5, alpha=0.1, random_state=seed)
    np.testing.assert_allclose(reg.train_scores_, expect)
    in_sample = np.abs(y[:300] - reg.model_.predict(X[:300]))
    assert np.median(reg.train_scores_) > 1.5 * np.median(in_sample)  # a forest nearly interpolates its training data
    reg.conformalize(X[300:700], y[300:700])
    assert reg.calibrator_.sizes() == {"calibration": 400}
    assert reg.calibrator_.describe()["n_reference"] == 300


def test_huge_bandwidth_slcp_is_split(sim):
    X, y = sim
    kw = dict(model=LinearRegression(), alpha=0.1, random_state=0)
    split = ConformalRegressor(method="split", **kw).fit(X[:300], y[:300]).conformalize(X[300:700], y[300:700])
    slcp = ConformalRegressor(method="slcp", options={"bandwidth": 1e12}, **kw).fit(X[:300], y[:300])
    slcp.conformalize(X[300:700], y[300:700])
    # a constant local quantile q: t = q + (V - q)_(m) = V_(m) up to rounding
    np.testing.assert_allclose(slcp.predict_details(X[700:])["t"], split.predict_details(X[700:])["t"], atol=1e-12)


def test_slcp_adapts_on_sim_and_reports_in_summary():
    d = cf.datasets.make_sim(2000, random_state=8)
    res = cf.conformal("y ~ x1 + x2", data=d.frame.iloc[:1600], method="slcp", model="ols", random_state=0)
    p = res.predict(d.frame.iloc[1600:])
    x1 = d.frame["x1"].iloc[1600:].to_numpy()
    assert np.corrcoef(p["upr"] - p["lwr"], x1)[0, 1] > 0.5  # the noise sd grows with x1
    s = str(res.summary())
    assert "SLCP" in s and "Han et al. median heuristic" in s and "Guarantee (certified)" in s


def test_prefit_slcp_holds_out_half_the_calibration_set(sim):
    X, y = sim
    model = LinearRegression().fit(X[:300], y[:300])
    reg = ConformalRegressor(model=model, prefit=True, method="slcp", alpha=0.1, random_state=0)
    reg.conformalize(X[300:700], y[300:700])
    assert reg.calibrator_.sizes() == {"reference": 200, "conformal": 200}

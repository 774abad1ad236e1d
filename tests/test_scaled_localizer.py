"""The score scale of the forest localizer (``scale="forest"``): LCP on V / sigma(x), sigma the forest's prediction.

sigma is learned on the growing (localizer) part only, so V / sigma(x) is a
fixed score function and Guan's guarantee is unchanged. Checked here: sigma
is scikit-learn's forest prediction; the thresholds are sigma(x) times the
slow reference's LCP threshold of the scaled scores (exact rationals); the
tuning's choice never depends on the conformal points; the option's errors;
pickling. Monte Carlo coverage with the scale forced is in test_tuning.py.
"""

import pickle

import numpy as np
import pytest
from reference import forest_lcp_matrix, lcp_threshold_reference
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf._validation import required_count
from confrf.calibrators.base import random_split
from confrf.calibrators.lcp_rf import LCPForestCalibrator
from confrf.exceptions import InputError
from confrf.localizers import ForestLocalizer
from confrf.localizers.forest import SCALE_FLOOR


def _data(n, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    V = np.abs((0.05 + 3 * X[:, 0] ** 2) * rng.normal(size=n))
    return X, V


def _scaled(X, V, n_grow, n_conf, **kw):
    loc = ForestLocalizer(
        n_estimators=kw.pop("n_estimators", 8),
        min_samples_leaf=kw.pop("min_samples_leaf", 12),
        max_features=1.0,
        scale="forest",
        random_state=kw.pop("random_state", 1),
        **kw,
    )
    return loc.grow(X[:n_grow], V[:n_grow]).index(X[n_grow : n_grow + n_conf], V[n_grow : n_grow + n_conf])


def test_scale_is_the_forest_prediction_floored():
    X, V = _data(800)
    loc = _scaled(X, V, 400, 300)
    Xt = _data(50, seed=3)[0]
    np.testing.assert_allclose(
        loc.score_scale(Xt), np.maximum(loc.forest_.predict(Xt), SCALE_FLOOR * V[:400].mean()), rtol=1e-12
    )
    # the indexed scores are V / sigma; indexed_scores() gives them back in score units
    np.testing.assert_allclose(loc.index_.scores, V[400:700] / loc.score_scale(X[400:700]), rtol=1e-12)
    np.testing.assert_allclose(loc.indexed_scores(), V[400:700], rtol=1e-12)
    raw = ForestLocalizer(n_estimators=8, min_samples_leaf=12, max_features=1.0, random_state=1)
    raw.grow(X[:400], V[:400]).index(X[400:700], V[400:700])
    assert not raw.scaled and np.all(raw.score_scale(Xt) == 1.0)
    # a leaf of zero scores must not divide by zero: sigma is floored (at 1 when every growing score is 0)
    zero = ForestLocalizer(n_estimators=3, min_samples_leaf=5, max_features=1.0, scale="forest", random_state=0)
    zero.grow(X[:100], np.zeros(100)).index(X[100:200], V[100:200])
    assert np.all(zero.score_scale(Xt) == 1.0)
    assert np.all(np.isfinite(zero.thresholds(Xt, required_count(0.1, 100))[0]))


@pytest.mark.parametrize("alpha", ["0.1", "0.25"])
def test_thresholds_are_sigma_times_the_reference_on_scaled_scores(alpha):
    """Against the general LCP (itself checked against exact rationals) on 100 points, and the rationals on 15."""
    X, V = _data(700, seed=1)
    V = np.round(V, 2)  # ties
    loc = _scaled(X, V, 300, 100)
    Xc, Vc = X[300:400], V[300:400]
    s_cal = loc.score_scale(Xc)
    Xt = X[500:530]
    t, closed, _ = loc.thresholds(Xt, required_count(float(alpha), 100))
    s_test = loc.score_scale(Xt)
    raw_leaves = lambda A: loc.forest_.apply(A).astype(np.int64)  # noqa: E731
    for q in range(Xt.shape[0]):
        W = np.array(forest_lcp_matrix(raw_leaves(Xc), raw_leaves(Xt[q : q + 1])[0]), dtype=float)
        res = cf.lcp_threshold(W, Vc / s_cal, float(alpha))
        assert t[q] == res.t * s_test[q] and bool(closed[q]) == res.closed
    small = _scaled(X, V, 300, 15, n_estimators=4)
    Xs, Vs = X[300:315], V[300:315]
    t, closed, _ = small.thresholds(Xt[:8], required_count(float(alpha), 15))
    for q in range(8):
        W = forest_lcp_matrix(small.forest_.apply(Xs).astype(np.int64), small.forest_.apply(Xt[q : q + 1])[0])
        t_ref, closed_ref = lcp_threshold_reference(W, list(Vs / small.score_scale(Xs)), alpha)
        assert t[q] == t_ref * small.score_scale(Xt[q : q + 1])[0] and bool(closed[q]) == closed_ref


def test_conditional_quantiles_are_sigma_times_qrf_of_scaled_scores():
    """The QRF kernel is checked against the reference elsewhere; here: its composition with sigma."""
    X, V = _data(600, seed=2)
    loc = _scaled(X, V, 300, 200)
    raw = ForestLocalizer(n_estimators=8, min_samples_leaf=12, max_features=1.0, random_state=1).grow(X[:300], V[:300])
    _same = [
        np.array_equal(a.tree_.threshold, b.tree_.threshold)
        for a, b in zip(raw.forest_.estimators_, loc.forest_.estimators_)
    ]
    assert all(_same)  # the scale does not change how the forest grows
    raw.index(X[300:500], V[300:500] / loc.score_scale(X[300:500]))
    Xt = X[500:510]
    np.testing.assert_allclose(
        loc.conditional_quantiles(Xt, [0.5, 0.9]),
        raw.conditional_quantiles(Xt, [0.5, 0.9]) * loc.score_scale(Xt)[:, None],
        rtol=1e-12,
    )


def test_tuned_scale_never_depends_on_the_conformal_points():
    X, V = _data(1400, seed=4)
    loc_kw = dict(n_estimators=10, random_state=7, scale="tune")

    def calibrate(X, V):
        return LCPForestCalibrator(ForestLocalizer(**loc_kw)).calibrate(X, V, alpha=0.1, rng=np.random.default_rng(3))

    base = calibrate(X, V)
    assert {c[2] for c in base.localizer.tuning_.candidates} == {"none", "forest"}
    assert base.localizer.scale_ == base.localizer.tuning_.chosen[2]
    _, conf = random_split(X.shape[0], 0.5, np.random.default_rng(3), "localizer part", "localizer_size")
    X2, V2 = X.copy(), V.copy()
    rng = np.random.default_rng(0)
    perm = rng.permutation(conf)
    X2[conf], V2[conf] = X[perm], 50.0 * V[perm] + 1.0
    other = calibrate(X2, V2)
    assert other.localizer.tuning_ == base.localizer.tuning_
    np.testing.assert_array_equal(other.localizer.score_scale(X[:200]), base.localizer.score_scale(X[:200]))


def test_the_tuning_can_choose_either_scale():
    """Heteroscedastic scores with a strong scale favour "forest"; scores of one scale everywhere gain nothing."""
    X, V = _data(4000, seed=5)
    loc = ForestLocalizer(n_estimators=20, random_state=0, scale="tune").grow(X, V)
    table = loc.tuning_.table()
    assert set(table["scale"]) == {"none", "forest"} and table["chosen"].sum() == 1
    assert (loc.min_samples_leaf_, loc.max_features_, loc.scale_) == loc.tuning_.chosen
    assert "scaled" in loc.tuning_.text() and "raw" in loc.tuning_.text()
    flat = np.abs(np.random.default_rng(1).normal(size=4000))
    loc2 = ForestLocalizer(n_estimators=20, random_state=0, scale="tune").grow(X, flat)
    assert loc2.scale_ == "none"  # the baseline (sqrt rule, raw scores) stays unless beaten by one s.e.


def _model_data(n=1600, seed=6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = X[:, 1] + (0.05 + 2 * X[:, 0] ** 2) * rng.normal(size=n)
    return X, y


def test_option_errors_and_the_non_honest_variant():
    X, y = _model_data()
    model = LinearRegression().fit(X[:400], y[:400])
    for bad in ("sigma", 1, True):
        with pytest.raises(InputError, match="scale must be one of"):
            cf.ConformalRegressor(model=model, prefit=True, options={"scale": bad}).conformalize(X[400:], y[400:])
    with pytest.raises(InputError, match="'scale' applies only with guarantee='marginal'"):
        cf.ConformalRegressor(model=model, prefit=True, options={"scale": "forest", "guarantee": "pac"}).conformalize(
            X[400:], y[400:]
        )
    # the paper's non-honest variant: "tune" means raw scores (a scale learned on the conformal points themselves)
    est = cf.ConformalRegressor(model=model, prefit=True, honest=False, n_estimators=10, random_state=0)
    assert est.conformalize(X[400:], y[400:]).localizer_.scale_ == "none"
    forced = cf.ConformalRegressor(
        model=model, prefit=True, honest=False, n_estimators=10, random_state=0, options={"scale": "forest"}
    ).conformalize(X[400:], y[400:])
    assert forced.localizer_.scaled and not forced.calibrator_.guarantee(0.1).certified


def test_formula_api_summary_and_pickle():
    X, y = _model_data()
    df = cf.datasets.make_sim(1500, random_state=0).frame
    res = cf.lcp_rf("y ~ x1 + x2 + x3", data=df, model="ols", random_state=0, n_estimators=10, scale="forest")
    assert res.estimator.localizer_.scaled
    text = " ".join(str(res.summary()).split())
    assert "V / sigma(x)" in text
    back = pickle.loads(pickle.dumps(res))
    new = df.head(20)
    pd_a, pd_b = res.predict(new), back.predict(new)
    np.testing.assert_array_equal(pd_a.to_numpy(), pd_b.to_numpy())
    raw = cf.lcp_rf("y ~ x1 + x2 + x3", data=df, model="ols", random_state=0, n_estimators=10, scale="none")
    assert not raw.estimator.localizer_.scaled and "none (raw scores)" in " ".join(str(raw.summary()).split())

"""Kernel LCP (Guan): the dense kernel against lcp_threshold on the explicit matrix,
the limits of the bandwidth, Guan's rule, honesty, and negative scores everywhere."""

import pickle
from fractions import Fraction

import numpy as np
import pytest
from reference import forest_lcp_matrix, lcp_threshold_reference
from reference_kernel import kernel_lcp_matrix, standardize
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf import ConformalRegressor, _kernels, lcp_threshold
from confrf._validation import required_count
from confrf.exceptions import InputError
from confrf.localizers import KernelLocalizer
from confrf.localizers.bandwidth import guan_bandwidth, kernel_matrix, leave_one_out_thresholds

ALPHAS = (0.05, 0.1, 0.2, 0.5)


def _instance(rng, n, p, ties, negative):
    X = rng.normal(size=(n, p))
    V = rng.integers(-3, 3, size=n).astype(float) if ties else rng.normal(size=n)
    if negative:
        V = V - 10.0  # every score negative
    return X, V


@pytest.mark.parametrize("kernel", ["gaussian", "exponential"])
def test_dense_kernel_matches_lcp_threshold_on_explicit_matrix(kernel):
    rng = np.random.default_rng(0 if kernel == "gaussian" else 1)
    for rep in range(40):
        n, p = int(rng.integers(1, 30)), int(rng.integers(1, 4))
        X_ref = rng.normal(size=(25, p)) * rng.uniform(0.5, 3, size=p) + rng.normal(size=p)
        X, V = _instance(rng, n, p, ties=rep % 2 == 0, negative=rep % 3 == 0)
        X_test = rng.normal(size=(4, p))
        h = float(np.exp(rng.uniform(-1.5, 1.5)))
        loc = (
            KernelLocalizer(kernel=kernel, bandwidth=h)
            .fit_reference(X_ref, rng.normal(size=25), alpha=0.1, n_calibration=n, rng=rng)
            .index(X, V)
        )
        Z, Zt = standardize(X_ref, X), standardize(X_ref, X_test)
        np.testing.assert_allclose(loc.scaler_.transform(X), Z, atol=1e-12)  # standardization of the reference
        for alpha in ALPHAS:
            t, closed, level = loc.thresholds(X_test, required_count(alpha, n))
            for q in range(X_test.shape[0]):
                W = kernel_lcp_matrix(Z, Zt[q], kernel, h)
                ref = lcp_threshold(W, V, alpha)
                assert (t[q], closed[q]) == (ref.t, ref.closed), (rep, alpha, q)
                assert level[q] == pytest.approx(ref.level, abs=1e-9)
            np.testing.assert_allclose(
                loc.weights(X_test),
                np.array([kernel_lcp_matrix(Z, Zt[q], kernel, h)[-1] for q in range(X_test.shape[0])]),
                atol=1e-12,
            )


def test_leave_one_out_thresholds_match_lcp_threshold():
    rng = np.random.default_rng(2)
    for rep in range(25):
        n = int(rng.integers(2, 25))
        Z, V = _instance(rng, n, 2, ties=rep % 2 == 0, negative=rep % 3 == 0)
        K = kernel_matrix(Z, Z, "gaussian", float(np.exp(rng.uniform(-1, 1))))
        for alpha in (0.1, 0.3):
            t = leave_one_out_thresholds(K, V, required_count(alpha, n - 1), block=5)
            for i in range(n):
                keep = np.r_[np.delete(np.arange(n), i), i]
                Ki = K[np.ix_(keep, keep)]
                assert t[i] == lcp_threshold(Ki / Ki.sum(1, keepdims=True), V[keep[:-1]], alpha).t


@pytest.fixture(scope="module")
def toy():
    d = cf.datasets.make_toy(1100, random_state=5)
    return np.asarray(d.X)[:, :3], d.y.to_numpy()


def test_huge_bandwidth_is_split_exactly(toy):
    X, y = toy
    kw = dict(model=LinearRegression(), alpha=0.1, random_state=0)
    split = ConformalRegressor(method="split", **kw).fit(X[:300], y[:300]).conformalize(X[300:700], y[300:700])
    lcp = ConformalRegressor(method="lcp", options={"bandwidth": 1e12}, **kw).fit(X[:300], y[:300])
    lcp.conformalize(X[300:700], y[300:700])
    assert lcp.calibrator_.sizes() == {"calibration": 400}  # the training part is the reference: all 400 calibrate
    for alpha in (0.1, 0.25):
        a, b = split.predict_details(X[700:], alpha), lcp.predict_details(X[700:], alpha)
        np.testing.assert_array_equal(a["t"], b["t"])
        np.testing.assert_array_equal(a["closed"], b["closed"])


def test_tiny_bandwidth_isolates_every_point(toy):
    X, y = toy
    reg = (
        ConformalRegressor(
            model=LinearRegression(), method="lcp", options={"bandwidth": 1e-6}, alpha=0.1, random_state=0
        )
        .fit(X[:300], y[:300])
        .conformalize(X[300:700], y[300:700])
    )
    d = reg.predict_details(X[700:])
    assert np.all(np.isinf(d["t"])) and np.all(d["lwr"] == -np.inf) and np.all(d["upr"] == np.inf)
    assert np.all(d["level"] == 1.0)


def test_guan_rule_picks_the_smallest_mean_within_the_infinite_budget():
    rng = np.random.default_rng(4)
    Z = rng.uniform(size=(150, 1))
    V = np.abs(rng.normal(size=150)) * (0.1 + Z[:, 0])
    h, table = guan_bandwidth(
        Z, V, kernel="gaussian", alpha=0.1, n_calibration=149, max_infinite=0.05, rng=np.random.default_rng(0)
    )
    ok = table["share_infinite"] <= 0.05
    assert ok.any() and not ok.all()  # the small bandwidths of the grid isolate points
    assert h == table["grid"][ok][np.argmin(table["mean_threshold"][ok])]
    # recompute one grid point from scratch
    g = int(np.flatnonzero(table["grid"] == h)[0])
    t = leave_one_out_thresholds(kernel_matrix(Z, Z, "gaussian", h), V, required_count(0.1, 149))
    assert table["share_infinite"][g] == np.mean(np.isinf(t))
    assert table["mean_threshold"][g] == pytest.approx(t[np.isfinite(t)].mean())


def test_bandwidth_and_standardization_do_not_see_the_calibration_points(toy):
    X, y = toy
    kw = dict(model=LinearRegression(), method="lcp", alpha=0.1, random_state=0)
    a = ConformalRegressor(**kw).fit(X[:300], y[:300]).conformalize(X[300:700], y[300:700])
    b = ConformalRegressor(**kw).fit(X[:300], y[:300]).conformalize(X[700:1100], y[700:1100][::-1])
    assert a.calibrator_.localizer.bandwidth_ == b.calibrator_.localizer.bandwidth_
    np.testing.assert_allclose(a.calibrator_.localizer.scaler_.mean_, X[:300].mean(axis=0))
    d = a.calibrator_.describe()
    assert d["bandwidth_rule"] == "Guan (auto)" and d["learned_on"].startswith("training part (5-fold")


def test_prefit_holds_out_a_reference_share(toy):
    X, y = toy
    model = LinearRegression().fit(X[:300], y[:300])
    reg = ConformalRegressor(
        model=model, prefit=True, method="lcp", alpha=0.1, random_state=0, options={"reference_size": 0.25}
    ).conformalize(X[300:700], y[300:700])
    assert reg.calibrator_.sizes() == {"reference": 100, "conformal": 300}
    assert "held-out share" in reg.calibrator_.describe()["learned_on"]
    assert np.isfinite(reg.predict_interval(X[700:])).mean() > 0.9


def test_formula_api_summary_and_pickle():
    sim = cf.datasets.make_sim(700, random_state=1)
    res = cf.conformal("y ~ x1 + x2", data=sim.frame.iloc[:600], method="lcp", kernel="exponential", random_state=2)
    s = res.summary()
    assert "Kernel localizer" in str(s) and "LCP (exact localized conformal, kernel weights" in str(s)
    assert res.guarantee.certified and res.guarantee.kind == "marginal"
    assert s.frames["localizer"].loc["kernel", "value"] == "exponential"
    new = sim.frame.iloc[600:]
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(res)).predict(new).to_numpy(), res.predict(new).to_numpy())


def test_bad_options():
    sim = cf.datasets.make_sim(300, random_state=1)
    for opts, msg in [
        ({"kernel": "epanechnikov"}, "unknown kernel"),
        ({"bandwidth": -1.0}, "bandwidth"),
        ({"bandwidth": "silverman"}, "bandwidth"),
        ({"reference_size": 1.5}, "reference_size"),
        ({"cv": 1}, "cv"),
    ]:
        with pytest.raises(InputError, match=msg):
            cf.conformal("y ~ x1", data=sim.frame, method="lcp", model="ols", random_state=0, **opts)
    with pytest.raises(InputError, match="do not apply"):
        ConformalRegressor(method="lcp", options={"n_bandwidths": 3}).fit(np.zeros((10, 1)), np.zeros(10))


# --------------------------------------------------------------------------
# Negative scores: no kernel may assume scores >= 0


@pytest.mark.parametrize("alpha", ["0.1", "0.2", "0.5"])
def test_negative_scores_forest_kernel_and_lcp_threshold_match_reference(alpha):
    rng = np.random.default_rng(int(Fraction(alpha) * 100))
    for rep in range(10):
        n, k = int(rng.integers(2, 9)), int(rng.integers(1, 4))
        cal = np.column_stack([rng.integers(0, 3, size=n) + 3 * tree for tree in range(k)])
        test = np.column_stack([rng.integers(0, 3, size=2) + 3 * tree for tree in range(k)])
        V = -np.abs(rng.normal(size=n)) - 5.0 if rep % 2 else rng.integers(-4, 0, size=n).astype(float)
        ptr, mem, mm, below, pop = _kernels.build_leaf_index(
            np.ascontiguousarray(cal, dtype=np.int64), V, np.ones((n, k), dtype=np.int32), 3 * k
        )
        p2 = _kernels.calibration_p2(np.ascontiguousarray(cal, dtype=np.int64), ptr, mem, below, pop, n)
        t, closed, _ = _kernels.lcp_rf_thresholds(
            np.ascontiguousarray(test, dtype=np.int64),
            ptr,
            mem,
            mm,
            below,
            pop,
            V,
            p2,
            np.sort(p2),
            required_count(float(alpha), n),
        )
        for q in range(2):
            W = forest_lcp_matrix(cal, test[q])
            ref = lcp_threshold_reference(W, list(V), alpha)
            assert (t[q], bool(closed[q])) == ref
            assert (lcp_threshold(np.array(W, dtype=float), V, float(alpha))[:2]) == ref


def test_negative_scores_end_to_end_equal_shifted_scores():
    # shifting every score by a constant shifts every threshold by it: nothing assumes scores >= 0
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 2))
    V = np.abs(X[:, 0]) * rng.exponential(size=300)
    Xt = rng.normal(size=(50, 2))
    loc = KernelLocalizer(bandwidth=0.7).fit_reference(X[:50], V[:50], alpha=0.1, n_calibration=250, rng=rng)
    m = required_count(0.1, 250)
    a = loc.index(X[50:], V[50:]).thresholds(Xt, m)
    b = loc.index(X[50:], V[50:] - 7.0).thresholds(Xt, m)
    np.testing.assert_allclose(b[0], a[0] - 7.0)
    np.testing.assert_array_equal(a[1], b[1])

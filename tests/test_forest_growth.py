"""How the honest forest grows: per-tree ``max_samples`` and the optional LightGBM backend.

The conformal step is exact whatever partition the trees make (the kernel against the general LCP on the same
leaves), and the partition is learned on the localizer rows only. LightGBM is optional: its tests skip when it is
absent, and an unpickled forest grown by it predicts without it.
"""

import pickle
import sys

import numpy as np
import pytest
from reference import forest_lcp_matrix

import confrf as cf
from confrf import lcp_threshold
from confrf._validation import required_count
from confrf.calibrators.lcp_rf import LCPForestCalibrator
from confrf.localizers import ForestLocalizer
from confrf.localizers.forest import check_forest_backend, check_max_samples
from confrf.localizers.lightgbm_forest import grow_lightgbm_forest, lightgbm_available

needs_lightgbm = pytest.mark.skipif(not lightgbm_available(), reason="LightGBM (optional) is not installed")


def _data(n, seed=0, p=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    V = np.round(np.abs((0.2 + X[:, 0]) * rng.normal(size=n)), 2)  # ties
    return X, V


def _leaves(loc, X):
    return loc.forest_.apply(loc._tree_input(X)).astype(np.int64)


def _assert_exact(loc, X_cal, V_cal, X_test):
    for alpha in (0.1, 0.25):
        t, closed, _ = loc.thresholds(X_test, required_count(alpha, X_cal.shape[0]), n_threads=2)
        cal = _leaves(loc, X_cal)
        for q in range(X_test.shape[0]):
            W = np.array(forest_lcp_matrix(cal, _leaves(loc, X_test[q : q + 1])[0]), dtype=float)
            res = lcp_threshold(W, V_cal, alpha)
            assert (t[q], bool(closed[q])) == (res.t, res.closed), (alpha, q)


@pytest.mark.parametrize(
    "backend", ["sklearn", pytest.param("lightgbm", marks=needs_lightgbm)], ids=["sklearn", "lightgbm"]
)
@pytest.mark.parametrize("max_samples", [None, 0.5])
def test_thresholds_are_the_general_lcp_on_the_grown_leaves(backend, max_samples):
    X, V = _data(700)
    loc = ForestLocalizer(
        n_estimators=10,
        min_samples_leaf=15,
        max_features=0.75,
        forest_backend=backend,
        max_samples=max_samples,
        random_state=2,
    )
    loc.grow(X[:350], V[:350]).index(X[350:450], V[350:450])
    assert loc.forest_.max_samples == max_samples
    _assert_exact(loc, X[350:450], V[350:450], X[600:625])


@needs_lightgbm
@pytest.mark.parametrize("max_samples", [None, 0.3])
def test_converted_trees_route_rows_as_lightgbm(monkeypatch, max_samples):
    """The scikit-learn trees made from LightGBM's dump partition every row as LightGBM's own leaves do, and average
    to its prediction (its random-forest mode averages the trees)."""
    import lightgbm

    boosters = []
    train = lightgbm.train
    monkeypatch.setattr(lightgbm, "train", lambda *a, **k: boosters.append(train(*a, **k)) or boosters[-1])
    X, V = _data(3000, seed=1, p=6)
    X[:, 1] = np.round(X[:, 1], 2)  # ties, few distinct values
    rf = grow_lightgbm_forest(
        X[:2000],
        V[:2000],
        n_estimators=8,
        min_samples_leaf=20,
        max_features=0.5,
        max_depth=None,
        bootstrap=True,
        max_samples=max_samples,
        random_state=3,
        n_jobs=1,
    )
    ours = rf.apply(X.astype(np.float32))
    theirs = boosters[0].predict(X.astype(np.float32), pred_leaf=True)
    assert ours.shape == theirs.shape == (3000, 8)
    for t in range(8):
        pairs = np.unique(np.column_stack([ours[:, t], theirs[:, t]]), axis=0)
        assert len(pairs) == len(np.unique(ours[:, t])) == len(np.unique(theirs[:, t])), t  # a bijection
    assert len(np.unique(ours[:, 0])) > 20
    np.testing.assert_allclose(rf.predict(X), boosters[0].predict(X.astype(np.float32)), rtol=1e-9, atol=1e-12)


@needs_lightgbm
def test_lightgbm_forest_never_sees_the_conformal_points():
    X, V = _data(3000, seed=2, p=3)

    def calibrate(X, V):
        loc = ForestLocalizer(
            n_estimators=10, min_samples_leaf="tune", max_features="tune", forest_backend="lightgbm", random_state=1
        )
        return LCPForestCalibrator(loc, 0.5, n_jobs=1, max_localizer_size=400).calibrate(
            X, V, alpha=0.1, rng=np.random.default_rng(0)
        )

    grow = np.sort(np.random.default_rng(0).permutation(3000)[:400])
    conf = np.setdiff1d(np.arange(3000), grow)
    X2, V2 = X.copy(), V.copy()
    X2[conf] = np.random.default_rng(5).uniform(0.0, 0.05, size=(conf.shape[0], 3))
    V2[conf] = np.random.default_rng(6).exponential(size=conf.shape[0]) * 10
    a, b = calibrate(X, V).localizer, calibrate(X2, V2).localizer
    assert a.tuning_.chosen == b.tuning_.chosen and a.tuning_.scores == b.tuning_.scores
    Xn = np.random.default_rng(9).uniform(size=(300, 3))
    np.testing.assert_array_equal(a.leaves(Xn), b.leaves(Xn))
    np.testing.assert_array_equal(np.sort(a.indexed_scores()), np.sort(V[conf]))


@needs_lightgbm
def test_lightgbm_forest_is_reproducible_and_pickles_without_lightgbm(monkeypatch):
    X, V = _data(1200, seed=4)

    def grown(seed):
        loc = ForestLocalizer(n_estimators=12, min_samples_leaf=10, forest_backend="lightgbm", random_state=seed)
        return loc.grow(X[:600], V[:600]).index(X[600:1000], V[600:1000])

    a, b, c = grown(0), grown(0), grown(1)
    Xt = X[1000:]
    np.testing.assert_array_equal(a.leaves(Xt), b.leaves(Xt))
    assert not np.array_equal(a.leaves(Xt), c.leaves(Xt))
    blob = pickle.dumps(a, protocol=5)
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # import lightgbm now fails
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.thresholds(Xt, 360)[0], a.thresholds(Xt, 360)[0])
    np.testing.assert_array_equal(back.leaves(Xt), a.leaves(Xt))


def test_missing_lightgbm_is_named_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    X, V = _data(400)
    loc = ForestLocalizer(n_estimators=5, min_samples_leaf=10, forest_backend="lightgbm", random_state=0)
    with pytest.raises(cf.InputError, match="pip install lightgbm"):
        loc.grow(X, V)


@needs_lightgbm
def test_formula_api_grows_with_lightgbm():
    sim = cf.datasets.make_sim(1500, random_state=0)
    kw = {"alpha": 0.1, "random_state": 0, "n_jobs": 1}
    fit = cf.lcp_rf(sim.formula, data=sim.frame, forest_backend="lightgbm", **kw)
    again = cf.lcp_rf(sim.formula, data=sim.frame, forest_backend="lightgbm", **kw)
    new = sim.frame.iloc[:50]
    pred = fit.predict(new)
    assert pred.shape[0] == 50 and np.isfinite(pred["upr"]).all()
    np.testing.assert_array_equal(pred["upr"], again.predict(new)["upr"])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fit)).predict(new)["upr"], pred["upr"])


@pytest.mark.parametrize("bad", ["xgboost", None, 1])
def test_forest_backend_is_checked(bad):
    with pytest.raises(cf.InputError, match="forest_backend must be one of"):
        check_forest_backend(bad)
    sim = cf.datasets.make_sim(300, random_state=0)
    with pytest.raises(cf.InputError, match="forest_backend"):
        cf.lcp_rf(sim.formula, data=sim.frame, forest_backend=bad)


@pytest.mark.parametrize("bad", [0, 0.0, 1.5, -0.2, "half", True])
def test_max_samples_is_checked(bad):
    with pytest.raises(cf.InputError, match="max_samples must be None or a share in"):
        check_max_samples(bad, True)
    sim = cf.datasets.make_sim(300, random_state=0)
    with pytest.raises(cf.InputError, match="max_samples"):
        cf.lcp_rf(sim.formula, data=sim.frame, max_samples=bad)


def test_max_samples_needs_bootstrap():
    with pytest.raises(cf.InputError, match="bootstrap=True"):
        check_max_samples(0.5, False)
    X, V = _data(300)
    with pytest.raises(cf.InputError, match="bootstrap=True"):
        ForestLocalizer(n_estimators=5, bootstrap=False, max_samples=0.5).grow(X, V)


@pytest.mark.parametrize("kw", [{"guarantee": "pac"}, {"honest": False}])
@pytest.mark.parametrize("option", [{"max_samples": 0.5}, {"forest_backend": "lightgbm"}])
def test_growth_options_are_refused_where_they_would_be_ignored(kw, option):
    sim = cf.datasets.make_sim(600, random_state=0)
    with pytest.raises(cf.InputError, match="applies only to the honest LCP-RF"):
        cf.lcp_rf(sim.formula, data=sim.frame, **option, **kw)


@needs_lightgbm
def test_lightgbm_module_examples_run():
    import doctest

    from confrf.localizers import lightgbm_forest

    result = doctest.testmod(lightgbm_forest)
    assert result.attempted > 0 and result.failed == 0


def test_forest_localizer_example_runs():
    import doctest

    from confrf.localizers import forest

    result = doctest.testmod(forest)
    assert result.attempted > 0 and result.failed == 0

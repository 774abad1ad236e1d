"""random_state=None follows scikit-learn: it draws from numpy's global generator.

``np.random.seed(1)`` (R's ``set.seed(1)``) before two identical calls gives identical results; without a
seed, calls differ; a different global seed gives different results.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import confrf as cf
from confrf import ConformalRegressor
from confrf.classification import APSScore, ConformalClassifier
from confrf.localizers.forest import ForestLocalizer


@pytest.fixture(autouse=True)
def _keep_global_state():
    state = np.random.get_state()  # noqa: NPY002 - other tests must not see the seeds set here
    yield
    np.random.set_state(state)  # noqa: NPY002


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(400, random_state=0).frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def test_rows():
    return cf.datasets.make_sim(60, random_state=1).frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def labels(sim):
    return sim.assign(g=pd.Categorical(np.where(sim["y"] > sim["y"].median(), "hi", "lo")))


def _three(fit, seed=1):
    """(first after seed, second without reseeding, first after seed again, after seed + 1)."""
    np.random.seed(seed)  # noqa: NPY002 - the global seed is what is tested
    a, b = fit(), fit()
    np.random.seed(seed)  # noqa: NPY002 - the global seed is what is tested
    c = fit()
    np.random.seed(seed + 1)  # noqa: NPY002
    d = fit()
    return a, b, c, d


RF = RandomForestRegressor(n_estimators=20, min_samples_leaf=5)  # cloned by each fit; its draws follow the seed
REGRESSION = {
    "split": dict(method="split"),  # the split, and the default gbm's own draws
    "split-rf": dict(method="split", model=RF),
    "lcp-rf": dict(method="lcp-rf", model="ols"),  # the split, the forest and its tuning
    # the out-of-fold folds, the sources' tunings and the forest (localizers/sources.py)
    "lcp-rf-auto": dict(method="lcp-rf", model="ols", localizer_data="auto"),
    "cv+": dict(method="cv+", model="ols", cv=5),  # the folds
    "jackknife+ab": dict(method="jackknife+ab", model="ols", n_bootstrap=10),  # the bootstrap
    "scaled": dict(method="split", score="scaled", model=RF),
    "shift": dict(method="split", model="ols", shift_model=RandomForestClassifier(n_estimators=20)),
}


@pytest.mark.parametrize("name", list(REGRESSION))
def test_np_random_seed_reproduces_regression(sim, test_rows, name):
    kw = dict(REGRESSION[name])
    if "shift_model" in kw:
        kw["shift"] = test_rows.drop(columns="y")

    def fit():
        return cf.conformal("y ~ x1 + x2 + x3", data=sim, **kw).predict(test_rows)

    a, b, c, d = _three(fit)
    pd.testing.assert_frame_equal(a, c)
    assert not a.equals(b) and not a.equals(d)


@pytest.mark.parametrize("method, model", [("split", RandomForestClassifier(n_estimators=20)), ("lcp-rf", "logit")])
def test_np_random_seed_reproduces_classification(labels, test_rows, method, model):
    score = APSScore(randomized=True)  # the randomized score's U too

    def fit():
        res = cf.conformal("g ~ x1 + x2 + x3", data=labels, method=method, model=model, score=score)
        return res.predict(test_rows), res.random_state

    (a, sa), (b, sb), (c, sc), (d, sd) = _three(fit)
    pd.testing.assert_frame_equal(a, c)
    assert sa == sc and len({sa, sb, sd}) == 3  # the seed drawn from the global generator is kept


def test_the_drawn_seed_reproduces_the_fit(sim, test_rows):
    res = cf.conformal("y ~ x1 + x2", data=sim, method="lcp-rf", model="ols")
    assert isinstance(res.random_state, int)
    again = cf.conformal("y ~ x1 + x2", data=sim, method="lcp-rf", model="ols", random_state=res.random_state)
    pd.testing.assert_frame_equal(res.predict(test_rows), again.predict(test_rows))


def test_np_random_seed_reproduces_the_estimators(sim, test_rows):
    X, y = sim[["x1", "x2", "x3"]].to_numpy(), sim["y"].to_numpy()
    Xt = test_rows[["x1", "x2", "x3"]].to_numpy()

    def regress():
        return (
            ConformalRegressor(method="lcp-rf", model=RF, alpha=0.1, n_estimators=30)
            .fit(X[:200], y[:200])
            .conformalize(X[200:], y[200:])
            .predict(Xt)
        )

    a, b, c, d = _three(regress)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b) and not np.array_equal(a, d)
    codes = (y > np.median(y)).astype(int)

    def classify():
        clf = ConformalClassifier(method="split", model=RandomForestClassifier(n_estimators=20), alpha=0.1).fit(
            X[:200], codes[:200]
        )
        return clf.conformalize(X[200:], codes[200:]).predict_proba(Xt)

    a, b, c, d = _three(classify)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b) and not np.array_equal(a, d)


def test_np_random_seed_reproduces_a_tuned_forest_localizer(sim):
    X, V = sim[["x1", "x2", "x3"]].to_numpy()[:250], np.abs(sim["y"].to_numpy())[:250]

    def grow():
        loc = ForestLocalizer(alpha=0.1, n_estimators=20, min_samples_leaf="tune", max_features="tune")
        return loc.grow(X, V).forest_.estimators_[0].tree_.threshold

    a, b, c, d = _three(grow)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b) and not np.array_equal(a, d)

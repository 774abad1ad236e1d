"""The array-level estimator: lifecycle guards, scikit-learn integration."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from confrf import ConformalRegressor
from confrf.exceptions import InputError, NotFittedError, UnusedSettingWarning


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(900, 3))
    y = X[:, 0] + X[:, 0] * rng.normal(size=900)
    return X, y


def test_lifecycle_guards(xy):
    X, y = xy
    reg = ConformalRegressor()
    with pytest.raises(NotFittedError, match="fit"):
        reg.conformalize(X, y)
    with pytest.raises(NotFittedError):
        reg.predict_interval(X)
    reg.fit(X[:300], y[:300])
    with pytest.raises(NotFittedError, match="conformalize"):
        reg.predict_interval(X)
    with pytest.raises(InputError, match="columns"):
        reg.conformalize(X[300:600, :2], y[300:600])
    with pytest.raises(InputError, match="prefit"):
        ConformalRegressor(prefit=True).fit(X, y)


def test_bad_arrays(xy):
    X, y = xy
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN or inf in 1 row"):
        ConformalRegressor().fit(Xn, y)
    with pytest.raises(InputError, match="rows"):
        ConformalRegressor().fit(X, y[:-1])


@pytest.mark.parametrize(
    "as_bool",
    [
        lambda b: b,
        lambda b: b.tolist(),
        lambda b: pd.Series(b),
        lambda b: pd.Series(b, dtype="boolean"),
        lambda b: b.astype(object),
        lambda b: b.reshape(-1, 1),
    ],
    ids=["numpy", "list", "series", "nullable", "object", "column"],
)
def test_bool_y_is_a_class_label(xy, as_bool):
    """The formula API treats a bool response as a class label; the array level used to fit it as 0/1 silently."""
    X, y = xy
    flags = y > 0.5
    fix = r"boolean \(True/False\), which is a class label.*cf\.ConformalClassifier.*y\.astype\(float\)"
    with pytest.raises(InputError, match=fix):
        ConformalRegressor(method="split").fit(X[:300], as_bool(flags[:300]))
    reg = ConformalRegressor(method="split", random_state=0).fit(X[:300], flags[:300].astype(float))
    with pytest.raises(InputError, match=fix):
        reg.conformalize(X[300:600], as_bool(flags[300:600]))
    with pytest.raises(InputError, match=fix):
        ConformalRegressor(model=reg.model_, prefit=True).conformalize(X[300:600], as_bool(flags[300:600]))
    # numbers that are 0 and 1 stay a regression (the dtype decides, not the values)
    for numbers in (
        flags[300:600].astype(float),
        flags[300:600].astype(int),
        pd.Series(flags[300:600]).astype("Int64"),
    ):
        assert reg.conformalize(X[300:600], numbers).predict_interval(X[:2]).shape == (2, 2)


def test_clone_and_get_params_and_pipeline(xy):
    X, y = xy
    reg = ConformalRegressor(model=make_pipeline(StandardScaler(), Ridge()), method="split", alpha=0.2, random_state=1)
    assert clone(reg).get_params()["alpha"] == 0.2
    reg.fit(X[:300], y[:300]).conformalize(X[300:600], y[300:600])
    pi = reg.predict_interval(X[600:])
    assert pi.shape == (300, 2) and np.all(pi[:, 0] <= pi[:, 1])
    # another alpha at predict time: narrower intervals for larger alpha
    assert np.all(np.diff(reg.predict_interval(X[600:], alpha=0.5), axis=1) <= np.diff(pi, axis=1))


def test_details_and_levels(xy):
    X, y = xy
    reg = ConformalRegressor(random_state=0, n_estimators=30).fit(X[:300], y[:300]).conformalize(X[300:600], y[300:600])
    d = reg.predict_details(X[600:])
    assert set(d) == {"fit", "lwr", "upr", "t", "closed", "level"}
    finite = np.isfinite(d["t"])
    assert np.all((d["level"][finite] > 0) & (d["level"][finite] <= 1))
    np.testing.assert_allclose(d["upr"] - d["fit"], d["t"])


def test_random_state_reproducible(xy):
    X, y = xy
    a = (
        ConformalRegressor(random_state=5)
        .fit(X[:300], y[:300])
        .conformalize(X[300:600], y[300:600])
        .predict_interval(X[600:])
    )
    b = (
        ConformalRegressor(random_state=5)
        .fit(X[:300], y[:300])
        .conformalize(X[300:600], y[300:600])
        .predict_interval(X[600:])
    )
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "make",
    [lambda: 5, lambda: np.random.default_rng(5), lambda: np.random.RandomState(5)],
    ids=["int", "Generator", "RandomState"],
)
def test_random_state_kinds_reproduce(make):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 2))
    y = X[:, 0] + X[:, 0] * rng.normal(size=600)

    def run():
        est = ConformalRegressor(model="ols", n_estimators=10, random_state=make())
        return est.fit(X[:200], y[:200]).conformalize(X[200:], y[200:]).predict_interval(X[:20])

    np.testing.assert_array_equal(run(), run())


def test_tiny_feature_scale_still_adapts():
    # x * 1e-300 underflows to 0 in float32; the forest grows on its ranks instead
    # (OLS would refuse this scale: its pseudo-inverse drops the column; the mean model is enough here)
    from sklearn.dummy import DummyRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1200, 1))
    y = X[:, 0] * rng.normal(size=1200)
    kw = dict(model=DummyRegressor(), n_estimators=30, random_state=0)
    b = ConformalRegressor(**kw).fit(X[:400] * 1e-300, y[:400]).conformalize(X[400:] * 1e-300, y[400:])
    w = np.diff(b.predict_interval(X[:50] * 1e-300), axis=1)
    assert np.unique(np.round(w, 12)).size > 5  # widths adapt, not one constant width
    assert np.corrcoef(w[:, 0], X[:50, 0])[0, 1] > 0.5  # and grow with x, as the noise does


@pytest.mark.parametrize(
    "method, settings",
    [
        ("split", {"min_samples_leaf": 5}),
        ("lcp", {"n_estimators": 7, "honest": False}),
        ("slcp", {"max_features": 1.0}),
    ],
)
def test_forest_settings_a_method_ignores_are_named(xy, method, settings):
    """A forest setting that the method never reads is not silently ignored: the warning names it and the fix."""
    X, y = xy
    est = ConformalRegressor(model="ols", method=method, random_state=0, **settings).fit(X[:200], y[:200])
    with pytest.warns(UnusedSettingWarning) as record:
        est.conformalize(X[200:], y[200:])
    message = str(record[0].message)
    assert record[0].filename == __file__  # points at the user's call, not inside confrf
    for name, value in settings.items():
        assert f"{name}={value!r}" in message
    assert "lcp-rf" in message and "drop" in message
    # the setting indeed changes nothing
    ref = ConformalRegressor(model="ols", method=method, random_state=0).fit(X[:200], y[:200])
    ref.conformalize(X[200:], y[200:])
    np.testing.assert_array_equal(est.predict_interval(X[:50]), ref.predict_interval(X[:50]))


def test_forest_settings_read_or_left_at_default_do_not_warn(xy):
    X, y = xy
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedSettingWarning)
        ConformalRegressor(model="ols", method="split", random_state=0).fit(X[:200], y[:200]).conformalize(
            X[200:], y[200:]
        )
        ConformalRegressor(
            model="ols", method="lcp-rf", min_samples_leaf=5, n_estimators=10, localizer_size=0.4, random_state=0
        ).fit(X[:200], y[:200]).conformalize(X[200:], y[200:])
    # given group labels grow no forest: its shape settings are named, the localizer share is not
    est = ConformalRegressor(
        model="ols", method="split-g", options={"groups": "labels"}, n_estimators=5, localizer_size=0.4, random_state=0
    ).fit(X[:200], y[:200])
    with pytest.warns(UnusedSettingWarning, match=r"n_estimators=5 has no effect") as record:
        est.conformalize(X[200:], y[200:], groups=X[200:, 0] > 0)
    assert "localizer_size=0.4" not in str(record[0].message)

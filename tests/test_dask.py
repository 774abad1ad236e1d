"""Prediction on Dask: a Dask DataFrame on a dask.distributed LocalCluster (worker processes)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import confrf as cf

dd = pytest.importorskip("dask.dataframe")  # the "dask" extra (installed by the test extra)
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    # worker processes: the fitted result really is pickled and shipped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    df = cf.datasets.load_diamonds().sample(4000, random_state=0)
    return df.iloc[:3000], df.iloc[3000:]


@pytest.mark.parametrize("method", ["lcp-rf", "lcp-rf-g"])
def test_dask_dataframe_prediction_on_local_cluster_equals_pandas(client, data, method):
    train, test = data
    res = cf.conformal("price ~ carat + C(cut) + C(color)", data=train, method=method, random_state=0)
    ddf = dd.from_pandas(test, npartitions=4, sort=False)
    lazy = res.predict(ddf, details=True, max_width=3000.0)
    assert isinstance(lazy, dd.DataFrame)
    expected = res.predict(test, details=True, max_width=3000.0)
    assert list(lazy.columns) == list(expected.columns)
    assert lazy.dtypes.to_dict() == expected.dtypes.to_dict()
    got = lazy.compute()  # runs on the cluster: the client is the default scheduler
    pd.testing.assert_frame_equal(got, expected)
    # the work ran on the workers
    assert any(client.run(lambda: __import__("sys").modules.get("confrf") is not None).values())


def test_dask_errors_are_the_pandas_errors(client, data):
    train, test = data
    res = cf.lcp_rf("price ~ carat + C(cut)", data=train, random_state=0)
    bad = test.assign(cut=test["cut"].astype(str).where(np.arange(len(test)) != 5, "Superb"))
    with pytest.raises(cf.InputError, match="Superb"):
        res.predict(dd.from_pandas(bad, npartitions=2, sort=False)).compute()
    with pytest.raises(TypeError, match="dask.dataframe"):
        cf.dask.predict(res, test)
    # bad arguments fail at once, not when the graph runs
    ddf = dd.from_pandas(test, npartitions=2, sort=False)
    with pytest.raises(cf.InputError, match="alpha"):
        res.predict(ddf, alpha=1.5)
    with pytest.raises(cf.InputError, match="max_width"):
        res.predict(ddf, max_width=-1.0)


# -- calibration on the cluster -----------------------------------------------------
def _same_fit(a, b, test):
    """Same intervals, same thresholds, same index, same summary diagnostics."""
    pd.testing.assert_frame_equal(a.predict(test, details=True), b.predict(test, details=True))
    la, lb = a.estimator.localizer_, b.estimator.localizer_
    np.testing.assert_array_equal(la.index_.members, lb.index_.members)
    np.testing.assert_array_equal(la.index_.scores, lb.index_.scores)
    np.testing.assert_array_equal(a.estimator.calib_X_, b.estimator.calib_X_)
    pd.testing.assert_frame_equal(a.summary().frames["calibration"], b.summary().frames["calibration"])


# the default (tuned) forest; and a fixed one grown on a capped localizer part
@pytest.mark.parametrize("options", [{}, {"max_localizer_size": 300, "min_samples_leaf": 15, "max_features": 1.0}])
def test_dask_calibration_equals_in_memory(client, data, options, monkeypatch):
    import confrf._calibration_record

    monkeypatch.setattr(confrf._calibration_record, "DIAGNOSTIC_ROWS", 700)  # the summary's subsample is drawn too
    train, rest = data
    cal, test = rest.iloc[:1000], rest.iloc[1000:]
    formula = "price ~ carat + C(cut) + C(color) + depth"
    kw = dict(data=train.iloc[:800], random_state=0, n_estimators=20, **options)
    mem = cf.lcp_rf(formula, calib=cal, **kw)
    ddf = dd.from_pandas(cal, npartitions=3, sort=False)
    lazy = cf.lcp_rf(formula, calib=ddf, **kw)  # runs on the cluster: the client is the default scheduler
    assert lazy.nobs == mem.nobs and mem.estimator.calib_X_.shape[0] == 700
    if options:
        assert mem.nobs["localizer"] == 300 and mem.nobs["conformal"] == 700  # the cap moved rows to the conformal part
    _same_fit(mem, lazy, test)
    # the scores and the lookups ran on the workers
    assert any(client.run(lambda: __import__("sys").modules.get("confrf") is not None).values())


def test_dask_arrays_calibrate_like_numpy(client):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1600, 4))
    y = X[:, 0] + (0.1 + X[:, 1]) * rng.normal(size=1600)
    # no tuning; sigma(x) scales the scores, so the workers look it up with the leaves
    kw = dict(random_state=3, n_estimators=15, n_jobs=1, min_samples_leaf=20, max_features=1.0)
    kw["options"] = {"scale": "forest"}
    mem = cf.ConformalRegressor(**kw).fit(X[:400], y[:400]).conformalize(X[400:], y[400:])
    Xd, yd = da.from_array(X[400:], chunks=(250, 2)), da.from_array(y[400:], chunks=250)
    lazy = cf.ConformalRegressor(**kw).fit(X[:400], y[:400]).conformalize(Xd, yd)
    np.testing.assert_array_equal(mem.predict_interval(X[:300]), lazy.predict_interval(X[:300]))
    np.testing.assert_array_equal(mem.calib_scores_, lazy.calib_scores_)
    assert mem.localizer_.scale_ == lazy.localizer_.scale_ == "forest"


def test_dask_calibration_errors(client, data):
    train, rest = data
    ddf = dd.from_pandas(rest.iloc[:600], npartitions=2, sort=False)
    with pytest.raises(cf.InputError, match="method='lcp-rf'"):
        cf.split_cp("price ~ carat", data=train, calib=ddf, random_state=0)
    with pytest.raises(cf.InputError, match="Superb"):  # a worker's error is the pandas error
        bad = rest.iloc[:600].assign(cut=rest["cut"].iloc[:600].astype(str).where(np.arange(600) != 5, "Superb"))
        cf.lcp_rf("price ~ carat + C(cut)", data=train, calib=dd.from_pandas(bad, npartitions=2, sort=False))
    X, y = np.ones((600, 2)), np.ones(600)
    est = cf.ConformalRegressor(model="ols").fit(np.random.default_rng(0).normal(size=(50, 2)), np.arange(50.0))
    with pytest.raises(cf.InputError, match="same partitions"):
        est.conformalize(dd.from_pandas(pd.DataFrame(X), npartitions=2), dd.from_pandas(pd.Series(y), npartitions=3))
    with pytest.raises(cf.InputError, match="Dask collections"):
        est.conformalize(dd.from_pandas(pd.DataFrame(X), npartitions=2), y)
    with pytest.raises(cf.InputError, match="max_localizer_size"):
        cf.lcp_rf("price ~ carat", data=train, max_localizer_size=1)

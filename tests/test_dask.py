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

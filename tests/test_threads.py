"""n_jobs governs the OpenMP and BLAS pools of the base model (threadpoolctl), not only confrf's own threads."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression
from threadpoolctl import threadpool_info, threadpool_limits

import confrf as cf


def _pools() -> set:
    return {(i["user_api"], i["num_threads"]) for i in threadpool_info()}


class PoolRecorder(RegressorMixin, BaseEstimator):
    """A linear model that records the thread pools it would get in fit and in every predict call."""

    def fit(self, X, y):
        self.fit_pools_ = _pools()
        self.predict_pools_ = []
        self.lr_ = LinearRegression().fit(X, y)
        return self

    def predict(self, X):
        self.predict_pools_.append(_pools())
        return self.lr_.predict(X)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    return X, X[:, 0] + rng.normal(size=3000)


@pytest.mark.parametrize("n_jobs, threads", [(None, 1), (1, 1), (2, 2)])
def test_n_jobs_limits_the_base_models_pools(data, n_jobs, threads):
    X, y = data
    with threadpool_limits(limits=3):  # wider than any n_jobs here: the limit must come from confrf
        reg = cf.ConformalRegressor(model=PoolRecorder(), method="split", n_jobs=n_jobs)
        reg.fit(X[:1000], y[:1000]).conformalize(X[1000:], y[1000:])
        reg.predict_interval(X[:10])
        assert _pools() == {("openmp", 3), ("blas", 3)}  # restored outside confrf's calls
    expected = {("openmp", threads), ("blas", threads)}
    assert reg.model_.fit_pools_ == expected
    assert reg.model_.predict_pools_ == [expected, expected]  # calibration rows, then the new rows


def test_parallel_chunks_run_single_threaded_models(data):
    X, y = data
    with threadpool_limits(limits=3):
        reg = cf.ConformalRegressor(model=PoolRecorder(), method="split", n_jobs=2)
        reg.fit(X[:1000], y[:1000]).conformalize(X[1000:], y[1000:])
        reg.predict_interval(X, chunk_size=500)  # 6 chunks on 2 threads
    assert reg.model_.predict_pools_[1:] == [{("openmp", 1), ("blas", 1)}] * 6


def test_predict_n_jobs_overrides_the_fits(data):
    X, y = data
    with threadpool_limits(limits=3):
        reg = cf.ConformalRegressor(model=PoolRecorder(), method="split", n_jobs=None)
        reg.fit(X[:1000], y[:1000]).conformalize(X[1000:], y[1000:])
        reg.predict_interval(X[:5], n_jobs=2)
    assert reg.model_.predict_pools_[-1] == {("openmp", 2), ("blas", 2)}

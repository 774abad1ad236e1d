"""Chunked, parallel prediction: same answers whatever n_jobs and chunk_size; progress bar on demand."""

import numpy as np
import pytest

import confrf as cf
from confrf._parallel import kernel_threads, map_row_chunks, resolve_jobs, row_chunks
from confrf.exceptions import InputError

METHODS = [
    ("split", {}),
    ("lcp-rf", {}),
    ("lcp-rf", {"guarantee": "pac"}),
    ("qrf-tc", {}),
    ("split-g", {}),
    ("lcp-rf-g", {}),
    ("lcp", {}),
    ("slcp", {}),
]


@pytest.fixture(scope="module")
def sim():
    s = cf.datasets.make_sim(2400, random_state=3)
    return np.asarray(s.X)[:, :5], np.asarray(s.y)


@pytest.mark.parametrize("method,options", METHODS, ids=[m + ("-pac" if o else "") for m, o in METHODS])
def test_chunks_and_threads_do_not_change_predictions(sim, method, options):
    X, y = sim
    est = cf.ConformalRegressor(method=method, model="ols", random_state=0, n_jobs=1, options=options)
    est.fit(X[:800], y[:800]).conformalize(X[800:2000], y[800:2000])
    Xt = X[2000:]
    ref = est.predict_details(Xt, progress=False)
    for n_jobs, chunk in [(1, 37), (2, 37), (2, 1000), (-1, 1)]:
        got = est.predict_details(Xt, n_jobs=n_jobs, chunk_size=chunk, progress=False)
        assert got.keys() == ref.keys()
        for key in ref:
            msg = f"{key}, n_jobs={n_jobs}, chunk={chunk}"
            if key in ("fit", "lwr", "upr"):
                # BLAS blocks a matrix product differently for different row counts: last-bit changes only
                np.testing.assert_allclose(got[key], ref[key], rtol=1e-13, atol=1e-13, err_msg=msg)
            else:
                np.testing.assert_array_equal(got[key], ref[key], err_msg=msg)


def test_map_row_chunks_covers_rows_in_order_with_bounded_chunks():
    seen = []

    def fn(rows):
        seen.append(rows)
        assert rows.stop - rows.start <= 10
        return np.arange(rows.start, rows.stop)

    for n_jobs in (1, 2):
        seen.clear()
        out = map_row_chunks(fn, 95, chunk_size=10, n_jobs=n_jobs, progress=False)
        np.testing.assert_array_equal(np.concatenate(out), np.arange(95))
        assert sorted(r.start for r in seen) == list(range(0, 95, 10))


def test_parallel_chunks_run_single_threaded_kernels_and_sequential_ones_use_n_jobs():
    threads = map_row_chunks(lambda rows: kernel_threads(None), 40, chunk_size=10, n_jobs=2, progress=False)
    assert threads == [1, 1, 1, 1]
    assert map_row_chunks(lambda rows: kernel_threads(None), 40, chunk_size=10, n_jobs=1, progress=False) == [1] * 4
    assert map_row_chunks(lambda rows: kernel_threads(None), 5, chunk_size=10, n_jobs=2, progress=False) == [2]
    assert kernel_threads(3) == 3  # no limit outside a prediction


def test_zero_rows_and_bad_arguments():
    assert row_chunks(0, 10) == [slice(0, 0)]
    with pytest.raises(ValueError, match="chunk_size"):
        row_chunks(5, 0)
    with pytest.raises(InputError, match="n_jobs must be None, a positive integer or -1"):
        resolve_jobs(0)
    assert resolve_jobs(-1) >= 1


def test_progress_bar_on_demand(sim, capsys, monkeypatch):
    X, y = sim
    est = cf.ConformalRegressor(method="lcp-rf", model="ols", random_state=0)
    est.fit(X[:800], y[:800]).conformalize(X[800:2000], y[800:2000])
    est.predict_details(X[2000:], chunk_size=50, progress=True)
    err = capsys.readouterr().err
    assert "predict" in err and "rows" in err
    est.predict_details(X[2000:], chunk_size=50, progress=False)
    # the default bar waits PROGRESS_DELAY seconds; a long delay keeps a slow machine from showing it
    monkeypatch.setattr("confrf._parallel.PROGRESS_DELAY", 600.0)
    est.predict_details(X[2000:], chunk_size=50)
    assert capsys.readouterr().err == ""


def test_formula_predict_passes_the_options_through(sim):
    s = cf.datasets.make_sim(1500, random_state=0)
    res = cf.lcp_rf(s.formula, data=s.frame, random_state=0)
    a = res.predict(s.frame.head(300), progress=False)
    b = res.predict(s.frame.head(300), n_jobs=2, chunk_size=64, progress=False)
    assert a.equals(b)  # gbm predicts row by row: identical

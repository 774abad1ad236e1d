"""Thresholds of many rows at once (issue 40): rows with the same leaves computed once, rows ordered by their first
tree's leaf and computed in batches.

Each fast path must give exactly what the kernel gives row by row on the rows as they come (and, on small forests,
what the slow reference of tests/reference.py gives): ties, +-inf scores, duplicated rows, multiplicities.
"""

import numpy as np
import pytest
from reference import forest_lcp_matrix, lcp_threshold_reference

from confrf import ConformalRegressor, _kernels
from confrf._validation import required_count
from confrf.localizers import ForestLocalizer, batched, leaf_index
from confrf.localizers.leaf_index import LeafIndex, distinct_rows


def _rowwise(idx: LeafIndex, leaves: np.ndarray, m_req: int):
    """The kernel on the rows as given, one call (what LeafIndex.thresholds did before the distinct rows)."""
    return _kernels.lcp_rf_thresholds_ranked(
        np.ascontiguousarray(leaves, dtype=np.int64), *idx.ranked(), int(m_req), unit_mult=idx.unit_mult
    )


def _assert_same(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def _index(rng, n, k, leaves_per_tree, with_mult, infinite=True):
    cal = np.column_stack([rng.integers(0, leaves_per_tree, size=n) + t * leaves_per_tree for t in range(k)])
    mult = rng.integers(1, 3, size=(n, k)).astype(np.int32) if with_mult else None
    V = np.round(rng.exponential(size=n), 1)  # ties
    if infinite:  # (the reference tries v between and beyond finite scores only)
        V[rng.random(n) < 0.02] = np.inf
        V[rng.random(n) < 0.02] = -np.inf
    offsets = np.arange(k, dtype=np.int64) * leaves_per_tree
    return cal, V, mult, LeafIndex.build(cal.astype(np.int64), V, mult, offsets, k * leaves_per_tree)


def _test_rows(rng, cal, m, leaves_per_tree, missing=0.0):
    """Test rows, many of them repeated (the same leaf in every tree), some sharing only part of their leaves;
    ``missing``: the share of leaves without calibration points (-1)."""
    k = cal.shape[1]
    base = np.column_stack([rng.integers(0, leaves_per_tree, size=m) + t * leaves_per_tree for t in range(k)])
    base[rng.random(base.shape) < missing] = -1
    rows = base[rng.integers(0, max(1, m // 4), size=m)].copy()  # duplicates
    part = (rng.random(rows.shape) < 0.1) & (rng.random((m, 1)) < 0.3)
    rows[part] = base[part]
    return rows


def test_distinct_rows_are_exact():
    rng = np.random.default_rng(0)
    leaves = rng.integers(0, 3, size=(500, 4))
    distinct, inverse = distinct_rows(leaves)
    np.testing.assert_array_equal(distinct[inverse], leaves)
    assert distinct.shape[0] == np.unique(leaves, axis=0).shape[0]  # every duplicate found
    assert np.all(np.diff(distinct[:, 0]) >= 0)  # ordered by the first tree's leaf
    one, inv1 = distinct_rows(leaves[:1])
    np.testing.assert_array_equal(one[inv1], leaves[:1])
    empty, inv0 = distinct_rows(leaves[:0])
    assert empty.shape == (0, 4) and inv0.shape == (0,)


def test_distinct_rows_exact_whatever_the_hash(monkeypatch):
    """With every row hashed alike, equal rows may no longer be neighbours: fewer are merged, none wrongly."""
    monkeypatch.setattr(leaf_index, "_FOLD", np.zeros(8, dtype=np.int64))
    rng = np.random.default_rng(1)
    leaves = rng.integers(0, 2, size=(300, 6))
    distinct, inverse = distinct_rows(leaves)
    np.testing.assert_array_equal(distinct[inverse], leaves)


@pytest.mark.parametrize("alpha", ["0.1", "0.25"])
@pytest.mark.parametrize("with_mult", [False, True])
def test_duplicated_rows_match_the_reference(alpha, with_mult):
    rng = np.random.default_rng(7 + with_mult)
    for _rep in range(6):
        n, k, lpt = int(rng.integers(3, 12)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        cal, V, mult, idx = _index(rng, n, k, lpt, with_mult, infinite=False)
        test = _test_rows(rng, cal, 12, lpt)
        m_req = required_count(float(alpha), n)
        t, closed, level = idx.thresholds(test, m_req)
        _assert_same((t, closed, level), _rowwise(idx, test, m_req))
        for q in range(test.shape[0]):
            ref = lcp_threshold_reference(forest_lcp_matrix(cal, test[q], mult), list(V), alpha)
            assert (t[q], bool(closed[q])) == ref, (alpha, cal, test[q], V, mult)


@pytest.mark.parametrize("with_mult", [False, True])
def test_duplicated_rows_bitwise_at_scale(with_mult):
    """Thousands of points and rows, half of them repeated: the same doubles as the row-by-row kernel."""
    rng = np.random.default_rng(11 + with_mult)
    cal, V, mult, idx = _index(rng, 20_000, 30, 40, with_mult)
    test = _test_rows(rng, cal, 2_000, 40, missing=0.02)
    m_req = required_count(0.1, idx.n)
    fast = idx.thresholds(test, m_req, n_threads=2)
    assert np.unique(test, axis=0).shape[0] < 0.6 * test.shape[0]  # the path is exercised
    assert np.isfinite(fast[0]).mean() > 0.3
    _assert_same(fast, _rowwise(idx, test, m_req))


def _localizer(rng, scale, p=3, n=3_000):
    X = rng.uniform(size=(n, p))
    V = np.abs(rng.normal(scale=0.2 + X[:, 0], size=n))
    V[:20] = np.round(V[:20], 1)
    loc = ForestLocalizer(n_estimators=20, min_samples_leaf=15, max_features=1.0, scale=scale, random_state=0)
    loc.grow(X[: n // 2], V[: n // 2])
    loc.index(X[n // 2 :], V[n // 2 :])
    return loc


@pytest.mark.parametrize("scale", ["none", "forest"])
def test_batched_thresholds_equal_one_call(scale):
    rng = np.random.default_rng(3)
    loc = _localizer(rng, scale)
    X = rng.uniform(size=(700, 3))
    X[:300:3] = X[1:300:3]  # duplicated rows
    X[5, 1] = 1e300  # beyond float32: +inf for the trees
    m_req = required_count(0.1, loc.index_.n)
    one = loc.thresholds(X, m_req)
    for batch, threads in ((7, 1), (100, 2), (699, 2), (700, 1)):
        _assert_same(batched.batched_thresholds(loc, X, m_req, threads, batch), one)
    # the row-by-row kernel: the same doubles
    leaves = loc.leaves(X)
    t, closed, level = _rowwise(loc.index_, leaves, m_req)
    if loc.scaled:
        t = t * loc.score_scale(X)
    _assert_same(one, (t, closed, level))


def test_batched_thresholds_check_columns():
    loc = _localizer(np.random.default_rng(4), "none")
    with pytest.raises(Exception, match="columns"):
        batched.batched_thresholds(loc, np.zeros((50, 2)), 10, 1, 7)


def _estimator(n_jobs=1):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(4_000, 2))
    y = X[:, 0] + rng.normal(scale=0.1 + X[:, 0], size=4_000)
    est = ConformalRegressor(method="lcp-rf", model="ols", random_state=0, n_jobs=n_jobs)
    est.fit(X[:1_000], y[:1_000]).conformalize(X[1_000:], y[1_000:])
    Xt = np.round(rng.uniform(size=(900, 2)), 2)  # coarse: many rows share every leaf
    return est, Xt


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_predict_details_batched_equals_chunks(n_jobs, monkeypatch):
    """The estimator's thresholds computed beforehand in batches: every column identical to the chunked path."""
    est, Xt = _estimator(n_jobs)
    calls = []
    real = type(est.calibrator_).thresholds_in_batches

    def spy(self, X, alpha, batch):
        out = real(self, X, alpha, batch)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(type(est.calibrator_), "thresholds_in_batches", spy)
    fast = est.predict_details(Xt, chunk_size=128, progress=False)
    assert calls == [True]
    monkeypatch.setattr(type(est.calibrator_), "thresholds_in_batches", lambda self, X, alpha, batch: None)
    slow = est.predict_details(Xt, chunk_size=128, progress=False)
    assert fast.keys() == slow.keys()
    for key in fast:
        np.testing.assert_array_equal(fast[key], slow[key], err_msg=key)
    assert np.isfinite(fast["t"]).all()


def test_weighted_calibration_keeps_the_chunks():
    """The shift-weighted rule's thresholds depend on each row's ratio: no batches there."""
    est, Xt = _estimator()
    rng = np.random.default_rng(6)
    Xc = rng.uniform(size=(3_000, 2))
    yc = Xc[:, 0] + rng.normal(scale=0.1, size=3_000)
    est.conformalize(Xc, yc, likelihood_ratio=np.exp(Xc[:, 0]))
    assert est.calibrator_.thresholds_in_batches(Xt, 0.1, 100) is None

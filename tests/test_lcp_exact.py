"""The exact LCP kernels against slow references written from the definitions."""

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from reference import exact_m_req, forest_lcp_matrix, lcp_threshold_reference

from confrf import _kernels, lcp_threshold
from confrf._validation import required_count

ALPHAS = ["0.05", "0.1", "0.2", "0.5"]


def _random_instance(rng, n, kind):
    """Integer weight matrix K and scores; W = K / row sums (exact rationals)."""
    if kind == "identity":
        K = np.eye(n + 1, dtype=int)
    elif kind == "uniform":
        K = np.ones((n + 1, n + 1), dtype=int)
    else:
        K = rng.integers(0, 4, size=(n + 1, n + 1)) * (rng.random((n + 1, n + 1)) < 0.6)
        if kind == "symmetric":
            K = np.triu(K) + np.triu(K, 1).T
        np.fill_diagonal(K, np.maximum(np.diag(K), rng.integers(0, 2, size=n + 1)))
        for i in range(n + 1):  # every row needs some mass
            if K[i].sum() == 0:
                K[i, rng.integers(0, n + 1)] = 1
    ties = rng.random() < 0.5
    V = (rng.integers(0, 4, size=n) if ties else rng.normal(size=n)).astype(float)
    return K, V


def _to_weights(K):
    Wf = [[Fraction(int(K[i, j]), int(K[i].sum())) for j in range(K.shape[1])] for i in range(K.shape[0])]
    Wfloat = K / K.sum(axis=1, keepdims=True)
    return Wf, Wfloat


@pytest.mark.parametrize("kind", ["asymmetric", "symmetric", "identity", "uniform"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_general_matches_reference(kind, alpha):
    rng = np.random.default_rng(abs(hash((kind, alpha))) % 2**32)
    for _rep in range(12):
        n = int(rng.integers(1, 9))
        K, V = _random_instance(rng, n, kind)
        Wf, Wfloat = _to_weights(K)
        t_ref, closed_ref = lcp_threshold_reference(Wf, list(V), alpha)
        for W in (Wfloat, sp.csr_matrix(Wfloat), sp.coo_matrix(Wfloat)):
            got = lcp_threshold(W, V, float(alpha))
            assert (got.t, got.closed) == (t_ref, closed_ref), (kind, alpha, n, K, V)


@pytest.mark.parametrize("n,alpha", [(9, "0.1"), (19, "0.05"), (3, "0.5"), (4, "0.2"), (39, "0.1")])
def test_integer_quantile_index_exact(n, alpha):
    # (1 - alpha)(n + 1) is an integer: no float fuzz may push it to the next one
    assert required_count(float(alpha), n) == exact_m_req(alpha, n) == int((1 - Fraction(alpha)) * (n + 1))
    V = np.arange(1.0, n + 1)
    W = np.full((n + 1, n + 1), 1.0 / (n + 1))
    m = exact_m_req(alpha, n)
    assert lcp_threshold(W, V, float(alpha)) == (float(m), True, pytest.approx(m / (n + 1)))


def test_required_count_reads_typed_decimal():
    rng = np.random.default_rng(0)
    for _ in range(500):
        a = f"{rng.integers(1, 999) / 1000:.3f}".rstrip("0")
        n = int(rng.integers(1, 5000))
        assert required_count(float(a), n) == exact_m_req(a, n)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2, 0.5, 0.37])
def test_uniform_weights_equal_split_order_statistic(alpha):
    rng = np.random.default_rng(1)
    for n in [1, 2, 5, 18, 19, 20, 57, 200]:
        V = rng.integers(0, 30, size=n).astype(float)  # ties included
        W = sp.csr_matrix(np.full((n + 1, n + 1), 1.0 / (n + 1)))
        m = required_count(alpha, n)
        expect = np.sort(V)[m - 1] if m <= n else np.inf
        res = lcp_threshold(W, V, alpha)
        assert res.t == expect and res.closed


def test_too_few_points_is_infinite_for_any_matrix():
    rng = np.random.default_rng(2)
    for n in range(1, 9):  # alpha = 0.1 needs n >= 9
        K, V = _random_instance(rng, n, "asymmetric")
        assert lcp_threshold(K / K.sum(1, keepdims=True), V, 0.1).t == np.inf


def test_bad_weights_rejected():
    with pytest.raises(ValueError, match="row-stochastic"):
        lcp_threshold(np.ones((3, 3)), [1.0, 2.0], 0.1)
    with pytest.raises(ValueError, match=r"\(n\+1\)"):
        lcp_threshold(np.eye(2), [1.0, 2.0], 0.1)
    with pytest.raises(ValueError, match="alpha"):
        lcp_threshold(np.eye(3), [1.0, 2.0], 1.5)


# --------------------------------------------------------------------------
# The forest kernel, fed leaf assignments directly


def _kernel_thresholds(leaves_cal, leaves_test, V, alpha, mult=None, gather="auto", compact_min=None):
    n, k = leaves_cal.shape
    n_leaves = int(max(leaves_cal.max(), leaves_test.max())) + 1
    if mult is None:
        mult = np.ones((n, k), dtype=np.int32)
    ptr, mem, mm, below, pop = _kernels.build_leaf_index(
        np.ascontiguousarray(leaves_cal, dtype=np.int64), V, np.ascontiguousarray(mult, dtype=np.int32), n_leaves
    )
    p2 = _kernels.calibration_p2(np.ascontiguousarray(leaves_cal, dtype=np.int64), ptr, mem, below, pop, n)
    return _kernels.lcp_rf_thresholds(
        np.ascontiguousarray(leaves_test, dtype=np.int64),
        ptr,
        mem,
        mm,
        below,
        pop,
        V,
        p2,
        np.sort(p2),
        required_count(alpha, n),
        n_threads=2,
        gather=gather,
        **({} if compact_min is None else {"compact_min": compact_min}),
    )


def _random_forest_leaves(rng, n, k, n_leaf_per_tree, m_test):
    cal = np.column_stack([rng.integers(0, n_leaf_per_tree, size=n) + tree * n_leaf_per_tree for tree in range(k)])
    test = np.column_stack(
        [rng.integers(0, n_leaf_per_tree, size=m_test) + tree * n_leaf_per_tree for tree in range(k)]
    )
    return cal, test


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("with_mult", [False, True])
@pytest.mark.parametrize("gather", ["sort", "bitmap", "blocked"])
@pytest.mark.parametrize("compact_min", [0, None])
def test_forest_kernel_matches_reference(alpha, with_mult, gather, compact_min):
    """compact_min=0: the bisection sets decided neighbours aside at every step (the default only past 64)."""
    rng = np.random.default_rng(7 + ALPHAS.index(alpha) + 10 * with_mult)
    for rep in range(6):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(1, 4))
        cal, test = _random_forest_leaves(rng, n, k, int(rng.integers(1, 4)), 3)
        V = (rng.integers(0, 3, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        mult = rng.integers(0, 3, size=(n, k)).astype(np.int32) if with_mult else None
        if mult is not None:  # every populated leaf keeps some mass, as in a grown forest
            for tree in range(k):
                for leaf in np.unique(cal[:, tree]):
                    sel = np.flatnonzero(cal[:, tree] == leaf)
                    if mult[sel, tree].sum() == 0:
                        mult[sel[0], tree] = 1
        t, closed, level = _kernel_thresholds(cal, test, V, float(alpha), mult, gather, compact_min)
        for q in range(test.shape[0]):
            W = forest_lcp_matrix(cal, test[q], mult)
            ref = lcp_threshold_reference(W, list(V), alpha)
            assert (t[q], bool(closed[q])) == ref, (alpha, cal, test[q], V, mult)


def _mass_in_every_leaf(rng, cal, k, mult):
    for tree in range(k):  # every populated leaf keeps some mass, as in a grown forest
        for leaf in np.unique(cal[:, tree]):
            sel = np.flatnonzero(cal[:, tree] == leaf)
            if mult[sel, tree].sum() == 0:
                mult[sel[0], tree] = 1
    return mult


@pytest.mark.parametrize("n, k, leaves_per_tree", [(300, 40, 3), (6000, 25, 40), (9000, 6, 1500)])
@pytest.mark.parametrize("with_mult", [False, True])
def test_forest_kernel_gathers_agree_bitwise(n, k, leaves_per_tree, with_mult):
    """The sorting gather (cost by a test point's entries; one radix pass at n = 300, two from n = 4,097), the
    bitmap gather (cost by n) and the blocked one ("auto"; one block at n = 300, two at n = 6,000) add the same
    terms in the same order: identical thresholds, sides and levels, also with test leaves that hold no calibration
    point (-1)."""
    rng = np.random.default_rng(n + k + with_mult)
    cal, test = _random_forest_leaves(rng, n, k, leaves_per_tree, 400)
    test[rng.random(test.shape) < 0.05] = -1
    V = np.round(rng.exponential(size=n), 1)  # ties
    mult = _mass_in_every_leaf(rng, cal, k, rng.integers(0, 3, size=(n, k)).astype(np.int32)) if with_mult else None
    out = {g: _kernel_thresholds(cal, test, V, 0.1, mult, g) for g in ("sort", "bitmap", "blocked", "auto")}
    # the bisection's compaction (every step / never) changes no count, hence no result
    out["compact0"] = _kernel_thresholds(cal, test, V, 0.1, mult, "sort", compact_min=0)
    out["nocompact"] = _kernel_thresholds(cal, test, V, 0.1, mult, "sort", compact_min=n + 1)
    assert np.isfinite(out["sort"][0]).mean() > 0.5
    for g in ("bitmap", "blocked", "auto", "compact0", "nocompact"):
        for a, b in zip(out["sort"], out[g]):
            np.testing.assert_array_equal(a, b, err_msg=g)
    with pytest.raises(ValueError, match="gather must be one of"):
        _kernel_thresholds(cal, test[:2], V, 0.1, mult, "heap")


@pytest.mark.long  # the reference builds every dense (n+1) x (n+1) weight matrix
def test_forest_kernel_matches_general_function_at_scale():
    rng = np.random.default_rng(11)
    for alpha in (0.1, 0.2):
        n, k = 150, 8
        cal, test = _random_forest_leaves(rng, n, k, 6, 20)
        V = np.round(rng.exponential(size=n), 1)  # many ties
        t, closed, level = _kernel_thresholds(cal, test, V, alpha)
        for q in range(test.shape[0]):
            W = np.array(forest_lcp_matrix(cal, test[q]), dtype=float)
            res = lcp_threshold(W, V, alpha)
            assert (t[q], bool(closed[q])) == (res.t, res.closed)
            assert level[q] == pytest.approx(res.level)


def test_forest_kernel_isolated_test_point_is_infinite():
    cal = np.zeros((20, 2), dtype=np.int64)
    test = np.array([[1, 1]])  # leaves with no calibration point
    V = np.arange(20.0)
    t, closed, level = _kernel_thresholds(cal, test, V, 0.1)
    assert np.isinf(t[0]) and level[0] == 1.0


def test_forest_kernel_single_leaf_is_split_conformal():
    # one leaf holding everything makes the weights uniform: split conformal
    rng = np.random.default_rng(3)
    for n in (9, 19, 50):
        V = rng.integers(0, 10, size=n).astype(float)
        cal = np.zeros((n, 3), dtype=np.int64) + np.arange(3)
        t, closed, _ = _kernel_thresholds(cal, np.arange(3)[None, :], V, 0.1)
        m = required_count(0.1, n)
        assert t[0] == np.sort(V)[m - 1] and closed[0]

"""The blocked gather of the threshold kernel (issue 40) against the bitmap and sorting gathers and the slow reference.

The blocked gather reads each of a test point's leaves one block of score ranks at a time; its thresholds, sides
and levels must be identical, bit for bit, to the bitmap gather's (which sums the same products in the same tree
order over arrays of all n points) and to the exact rational reference (tests/reference.py).
"""

import numpy as np
import pytest
from reference import forest_lcp_matrix, lcp_threshold_reference

from confrf import _kernels
from confrf._kernels._forest import BLOCK_BITS, _set_block_bits
from confrf._validation import required_count

ALPHAS = ["0.1", "0.2", "0.35"]


def _thresholds(cal, test, V, alpha, mult, gather):
    n, k = cal.shape
    n_leaves = int(max(cal.max(), test.max())) + 1
    mm = None if mult is None else np.ascontiguousarray(mult, dtype=np.int32)
    ptr, mem, member_mult, below, pop = _kernels.build_leaf_index(np.ascontiguousarray(cal), V, mm, n_leaves)
    p2 = _kernels.calibration_p2(k, ptr, mem, below, pop, n)
    return _kernels.lcp_rf_thresholds(
        np.ascontiguousarray(test, dtype=np.int64),
        ptr,
        mem,
        member_mult,
        below,
        pop,
        V,
        p2,
        np.sort(p2),
        required_count(float(alpha), n),
        n_threads=2,
        gather=gather,
    )


def _forest(rng, n, k, leaves_per_tree, m_test, with_mult):
    cal = np.column_stack([rng.integers(0, leaves_per_tree, size=n) + t * leaves_per_tree for t in range(k)])
    test = np.column_stack([rng.integers(0, leaves_per_tree, size=m_test) + t * leaves_per_tree for t in range(k)])
    mult = None
    if with_mult:
        mult = rng.integers(0, 3, size=(n, k)).astype(np.int32)
        for t in range(k):  # every populated leaf keeps some mass, as in a grown forest
            mass = np.bincount(cal[:, t], weights=mult[:, t], minlength=(t + 1) * leaves_per_tree)
            first = np.full(mass.shape[0], -1)
            first[cal[::-1, t]] = np.arange(n)[::-1]  # the first member of every populated leaf
            empty = (mass == 0) & (first >= 0)
            mult[first[empty], t] = 1
    return cal.astype(np.int64), test, mult


@pytest.fixture
def tiny_blocks():
    """Blocks of 2 to 8 ranks: a dozen-point forest spans several blocks, which the reference can check."""
    old = _set_block_bits(1, 3)
    yield
    _set_block_bits(*old)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("with_mult", [False, True])
def test_blocked_matches_reference_across_blocks(tiny_blocks, alpha, with_mult):
    rng = np.random.default_rng(40 + ALPHAS.index(alpha) + 10 * with_mult)
    for rep in range(8):
        n = int(rng.integers(2, 14))
        k = int(rng.integers(1, 4))
        cal, test, mult = _forest(rng, n, k, int(rng.integers(1, 4)), 3, with_mult)
        V = (rng.integers(0, 3, size=n) if rep % 2 else rng.normal(size=n)).astype(float)  # ties on odd reps
        t, closed, level = _thresholds(cal, test, V, alpha, mult, "blocked")
        for q in range(test.shape[0]):
            ref = lcp_threshold_reference(forest_lcp_matrix(cal, test[q], mult), list(V), alpha)
            assert (t[q], bool(closed[q])) == ref, (alpha, cal, test[q], V, mult)
        for a, b in zip((t, closed, level), _thresholds(cal, test, V, alpha, mult, "bitmap")):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "n, k, leaves_per_tree, bits",
    [
        (300, 40, 3, None),  # one block
        (20_000, 25, 4, None),  # narrowest blocks (4,096 ranks): 5 of them
        (140_000, 10, 5_000, None),  # few entries a point: the widest blocks (65,536 ranks), 3 of them
        (3_000, 12, 30, (1, 1)),  # blocks of 2 ranks
        (5_000, 8, 50, (5, 9)),
    ],
)
@pytest.mark.parametrize("with_mult", [False, True])
def test_blocked_agrees_bitwise_with_the_other_gathers(n, k, leaves_per_tree, bits, with_mult):
    """Ties, +-inf scores and multiplicities (some 0), test leaves without calibration points (-1): the blocked
    gather and "auto" give the bitmap's and the sort's thresholds, sides and levels bit for bit."""
    rng = np.random.default_rng(n + k + with_mult)
    cal, test, mult = _forest(rng, n, k, leaves_per_tree, 300, with_mult)
    test[rng.random(test.shape) < 0.05] = -1
    V = np.round(rng.exponential(size=n), 1)  # ties
    V[rng.random(n) < 0.01] = np.inf
    V[rng.random(n) < 0.01] = -np.inf
    old = _set_block_bits(*bits) if bits else None
    try:
        out = {g: _thresholds(cal, test, V, "0.1", mult, g) for g in ("blocked", "auto", "bitmap", "sort")}
    finally:
        if old:
            _set_block_bits(*old)
    assert np.isfinite(out["bitmap"][0]).mean() > 0.3
    for g in ("blocked", "auto", "sort"):
        for a, b in zip(out["bitmap"], out[g]):
            np.testing.assert_array_equal(a, b, err_msg=g)


def test_blocked_weighted_kernel_agrees_bitwise():
    """The covariate-shift kernel shares the gather: blocked and bitmap give identical weighted thresholds."""
    rng = np.random.default_rng(4)
    n, k = 20_000, 20
    cal, test, mult = _forest(rng, n, k, 5, 200, True)
    V = np.round(rng.exponential(size=n), 1)
    ptr, mem, member_mult, below, pop = _kernels.build_leaf_index(cal, V, mult, int(cal.max()) + 1)
    p2 = _kernels.calibration_p2(k, ptr, mem, below, pop, n)
    rank = _kernels.score_ranks(V)
    order = np.argsort(rank)
    w = rng.uniform(0.5, 2.0, size=n)
    by_p2 = np.argsort(p2, kind="stable")
    cumw = np.concatenate([[0.0], np.cumsum(w[by_p2])])
    req = 0.9 * (w.sum() + rng.uniform(0.5, 2.0, size=test.shape[0]))
    args = (test, ptr, rank[mem], member_mult, below, pop, V[order], p2[order], p2[by_p2], cumw, w[order], req)
    a = _kernels.lcp_rf_thresholds_weighted(*args, gather="blocked")
    b = _kernels.lcp_rf_thresholds_weighted(*args, gather="bitmap")
    assert np.isfinite(a[0]).mean() > 0.3
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_block_bits_checked():
    assert BLOCK_BITS == (12, 16)
    with pytest.raises(ValueError, match="block bits"):
        _set_block_bits(0, 4)
    with pytest.raises(ValueError, match="block bits"):
        _set_block_bits(6, 17)

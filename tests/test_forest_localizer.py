"""Forest weights and QRF quantiles against per-tree loops and np.quantile."""

from fractions import Fraction

import numpy as np
import pytest
from reference import forest_lcp_matrix, qrf_weights, quantile

from confrf import _kernels, lcp_threshold
from confrf._validation import required_count
from confrf.exceptions import InputError
from confrf.localizers import ForestLocalizer
from confrf.localizers.forest import auto_n_estimators


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(700, 4))
    V = np.abs(X[:, 0] * rng.normal(size=700))
    return X, V


def _raw_leaves(loc, X):
    # the columns the trees see (all of them, or the screened ones when the tuning chose screening)
    return loc.forest_.apply(loc._tree_input(X)).astype(np.int64)


@pytest.mark.parametrize("honest", [True, False])
def test_weights_match_per_tree_loop(data, honest):
    X, V = data
    loc = ForestLocalizer(n_estimators=15, min_samples_leaf=10, honest=honest, random_state=1)
    if honest:
        loc.grow(X[:300], V[:300]).index(X[300:600], V[300:600])
        cal, mult = X[300:600], None
    else:
        loc.fit(X[:600], V[:600])
        cal = X[:600]
        mult = np.stack([np.bincount(s, minlength=600) for s in loc.forest_.estimators_samples_], axis=1)
    Xt = X[600:]
    W = loc.weights(Xt).toarray()
    ref = qrf_weights(_raw_leaves(loc, cal), _raw_leaves(loc, Xt), mult)
    np.testing.assert_allclose(W, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    # the LCP row (test point counted in its leaves) against the exact matrix's last row
    Ws = loc.weights(Xt[:5], include_self=True).toarray()
    np.testing.assert_allclose(Ws.sum(axis=1), 1.0, atol=1e-12)
    for q in range(5 if honest else 2):
        exact = forest_lcp_matrix(_raw_leaves(loc, cal), _raw_leaves(loc, Xt[q : q + 1])[0], mult)
        np.testing.assert_allclose(Ws[q], np.array(exact[-1], dtype=float), atol=1e-12)


def test_lcp_rows_stay_normalized_where_the_test_points_leaves_hold_no_indexed_point():
    """The LCP test row divides by all k trees: a tree whose leaf of x holds no indexed point puts its whole
    1/k on x itself. Two blocks grow the forest, only the lower-left one is indexed; the queries lie inside it,
    in the corners (whose trees split the root on x1 or on x2 and so disagree on the block: some leaves empty,
    some not) and inside the other block (every leaf empty: all mass on x)."""
    rng = np.random.default_rng(0)
    upper = np.repeat([0, 1], 200)
    X = np.where(upper[:, None] == 1, rng.uniform(3, 4, size=(400, 2)), rng.uniform(0, 1, size=(400, 2)))
    V = np.where(upper == 1, 3.0, 1.0) + rng.uniform(size=400)
    loc = ForestLocalizer(n_estimators=20, min_samples_leaf=5, max_features=1, random_state=0, scale="none")
    grow, lower = np.arange(0, 400, 2), np.flatnonzero(upper == 0)[1::2]
    loc.grow(X[grow], V[grow]).index(X[lower], V[lower])
    Xt = np.array([[0.5, 0.5], [0.2, 0.9], [0.5, 3.5], [3.5, 0.5], [2.0, 2.0], [3.5, 3.5], [3.9, 3.1]])
    cal, test = _raw_leaves(loc, X[lower]), _raw_leaves(loc, Xt)
    k = cal.shape[1]
    N = np.array([[np.sum(cal[:, tree] == test[q, tree]) for tree in range(k)] for q in range(Xt.shape[0])])
    empty = (N == 0).sum(axis=1)
    # the premise: rows with no, some, and every leaf empty
    assert empty[0] == 0 and (empty[2:4] > 0).all() and (empty[2:4] < k).all() and (empty[5:] == k).all()
    W, own = loc.lcp_rows(Xt)
    Ws = loc.weights(Xt, include_self=True).toarray()
    for q in range(Xt.shape[0]):
        want_own = sum(Fraction(1, k * (int(N[q, tree]) + 1)) for tree in range(k))
        assert own[q] == pytest.approx(float(want_own), rel=1e-12, abs=0)
        assert W[q].sum() + own[q] == pytest.approx(1.0, rel=1e-12, abs=0)
        exact = forest_lcp_matrix(cal, test[q])[-1]  # the last row of the (n + 1) x (n + 1) matrix
        np.testing.assert_allclose(Ws[q], np.array(exact, dtype=float), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(Ws[:, -1], own)
    assert W[5:].nnz == 0  # inside the other block the row is x's own mass alone, 1 (checked above)


def test_qrf_mean_reproduces_forest_prediction(data):
    # non-honest bootstrap weights without the test point are exactly the forest's averaging
    X, V = data
    loc = ForestLocalizer(n_estimators=20, min_samples_leaf=5, honest=False, random_state=3).fit(X[:500], V[:500])
    W = loc.weights(X[500:])
    np.testing.assert_allclose(W @ V[:500], loc.forest_.predict(X[500:]), rtol=1e-10, atol=1e-12)


def test_thresholds_match_general_lcp_on_a_grown_forest(data):
    X, V = data
    Vr = np.round(V, 2)  # ties
    loc = ForestLocalizer(n_estimators=10, min_samples_leaf=15, random_state=2)
    loc.grow(X[:350], Vr[:350]).index(X[350:450], Vr[350:450])
    for alpha in (0.1, 0.25):
        t, closed, level = loc.thresholds(X[600:630], required_count(alpha, 100), n_threads=2)
        for q in range(30):
            W = np.array(
                forest_lcp_matrix(_raw_leaves(loc, X[350:450]), _raw_leaves(loc, X[600 + q : 601 + q])[0]), dtype=float
            )
            res = lcp_threshold(W, Vr[350:450], alpha)
            assert (t[q], bool(closed[q])) == (res.t, res.closed)


def test_threads_do_not_change_results(data):
    X, V = data
    loc = ForestLocalizer(n_estimators=30, random_state=4).fit(X[:600], V[:600])
    a = loc.thresholds(X[600:], 500, n_threads=1)
    b = loc.thresholds(X[600:], 500, n_threads=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_weighted_quantile_against_expanded_np_quantile():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        vals = rng.integers(0, 6, size=n).astype(float)
        counts = rng.integers(1, 5, size=n)
        expanded = np.repeat(vals, counts)
        for a in rng.uniform(0.01, 1.0, size=3).tolist() + [1.0, 0.5]:
            got = _kernels.weighted_quantile(vals, counts / counts.sum(), a)
            assert got == np.quantile(expanded, a, method="inverted_cdf")
    assert _kernels.weighted_quantile(np.array([1.0, 2.0]), np.array([0.5, 0.5]), 0.0) == -np.inf
    assert _kernels.weighted_quantile(np.array([1.0, 2.0]), np.array([0.25, 0.25]), 0.9) == np.inf


def test_conditional_quantiles_against_exact_definition(data):
    X, V = data
    loc = ForestLocalizer(n_estimators=5, min_samples_leaf=20, random_state=6)
    loc.grow(X[:300], V[:300]).index(X[300:600], V[300:600])
    qs = [Fraction(1, 10), Fraction(1, 2), Fraction(9, 10), Fraction(1)]
    got = loc.conditional_quantiles(X[600:620], np.array([float(a) for a in qs]))
    cal, test = _raw_leaves(loc, X[300:600]), _raw_leaves(loc, X[600:620])
    Vc = V[300:600]
    for q in range(20):
        w = [Fraction(0)] * 300
        for tree in range(cal.shape[1]):
            same = np.flatnonzero(cal[:, tree] == test[q, tree])
            for j in same:
                w[j] += Fraction(1, len(same) * cal.shape[1])
        atoms = [(Vc[j], w[j]) for j in range(300) if w[j]]
        for j, a in enumerate(qs):
            assert got[q, j] == quantile(a, atoms)


def test_bootstrap_multiplicity_thresholds_match_general_lcp(data):
    # the paper's non-honest weights (multiplicities > 1) go through the rank-numbered kernel too
    X, V = data
    Vr = np.round(V, 2)
    loc = ForestLocalizer(n_estimators=8, min_samples_leaf=20, honest=False, random_state=5).fit(X[:120], Vr[:120])
    assert not loc.index_.unit_mult
    mult = loc.growing_multiplicity()
    t, closed, _ = loc.thresholds(X[600:620], required_count(0.1, 120), n_threads=2)
    for q in range(20):
        W = np.array(
            forest_lcp_matrix(_raw_leaves(loc, X[:120]), _raw_leaves(loc, X[600 + q : 601 + q])[0], mult), dtype=float
        )
        res = lcp_threshold(W, Vr[:120], 0.1)
        assert (t[q], bool(closed[q])) == (res.t, res.closed)


@pytest.mark.parametrize("honest", [True, False])
def test_pickle_keeps_memberships_only_and_rebuilds_the_same_index(data, honest):
    import pickle

    X, V = data
    loc = ForestLocalizer(n_estimators=12, min_samples_leaf=8, honest=honest, random_state=6)
    if honest:
        loc.grow(X[:300], V[:300]).index(X[300:600], V[300:600])
    else:
        loc.fit(X[:600], V[:600])
    blob = pickle.dumps(loc.index_)
    back = pickle.loads(blob)
    for name, value in vars(loc.index_).items():
        np.testing.assert_array_equal(getattr(back, name), value, err_msg=name)
    # one uint16 leaf id per (point, tree) (the trees have fewer than 65,536 nodes) and the scores; multiplicities
    # only when not all 1
    idx = loc.index_
    expected = idx.n * idx.n_trees * 2 + idx.scores.nbytes + idx.node_offset.nbytes
    if not honest:
        expected += idx.member_mult.nbytes
    assert len(blob) < expected + 2000
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(loc)).thresholds(X[600:], 250)[0], loc.thresholds(X[600:], 250)[0]
    )


@pytest.mark.parametrize(
    "transform",
    [lambda x: 1 + 1e-9 * x, lambda x: 1e-300 * x, lambda x: 1e39 * x, lambda x: 1e7 + x, lambda x: 1e-8 * x],
    ids=["1+1e-9x", "1e-300x", "1e39x", "1e7+x", "1e-8x"],  # 1e-8 x: distinct in float32, but within 1e-7
)
def test_columns_float32_cannot_hold_apart_are_grown_on_ranks(transform):
    # scikit-learn trees cast X to float32: without ranks these columns collapse (or overflow)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 2))
    V = np.abs(rng.normal(size=400)) * X[:, 0]
    Xt = np.column_stack([transform(X[:, 0]), X[:, 1]])
    # a given leaf size: tuning could choose no localization here, and then there would be no trees to compare
    kw = dict(n_estimators=8, bootstrap=False, random_state=0, max_features=1.0, min_samples_leaf=10)
    plain = ForestLocalizer(**kw).fit(X[:300], V[:300])
    ranked = ForestLocalizer(**kw).fit(Xt[:300], V[:300])
    assert ranked.rank_columns_.columns == (0,) and plain.rank_columns_ is None
    # every tree splits its own (here: all) growing points the same way
    np.testing.assert_array_equal(ranked.weights(Xt[:300]).toarray(), plain.weights(X[:300]).toarray())
    assert np.unique(ranked.leaves(Xt[300:])[:, 0]).size > 1  # new rows still spread over the leaves


def test_only_columns_whose_merged_values_matter_are_ranked():
    """float32 merges chance pairs and triples of continuous values (scikit-learn never splits closer than 1e-7);
    no leaf notices them, so such columns stay as they are (no knots in the fitted object, no interpolation per
    lookup). Runs longer than the smallest leaf and than 0.1% of the values are ranked."""
    import doctest

    from confrf.localizers import _float32

    rng = np.random.default_rng(0)
    n = 60_000
    u = rng.uniform(size=n)
    assert 1 < _float32.longest_inseparable_run(u) <= 5  # merges do happen at this size ...
    day = 1.7e9 + 86_400 * rng.uniform(size=n)  # timestamps within one day: float32 holds them to 128 s
    blocks = np.repeat(np.arange(n // 20) * 1.0, 20) + 1e-9 * np.tile(np.arange(20), n // 20)  # runs of 20
    X = np.column_stack([u, rng.normal(size=n), rng.exponential(size=n) * 1e3, day, blocks, 1e-8 * u])
    assert _float32.blurred_columns(X) == [3, 5]  # ... but only these matter
    assert _float32.longest_inseparable_run(blocks) == 20 < _float32.MAX_RUN_SHARE * np.unique(blocks).size
    small = blocks[:2000]  # at 2,000 values a run of 20 is 1%: ranked
    assert _float32.blurred_columns(small[:, None]) == [0]
    assert ForestLocalizer(n_estimators=2, min_samples_leaf=50).grow(X[:, :3], u).rank_columns_ is None
    assert doctest.testmod(_float32).failed == 0


@pytest.mark.parametrize(
    "n_grow, leaf, trees",
    [
        (1200, 6, 416),  # ceil(3000 / 6) = 500, but growing them would cost more than 100 trees on 5,000 points
        (1200, 9, 334),  # ceil(3000 / 9)
        (600, 12, 250),  # ceil(3000 / 12)
        (600, 40, 100),  # 75 is below the floor
        (100, 3, 500),  # 1000 is above the ceiling
        (5000, 3, 100),  # from 5,000 growing points: 100
        (10**6, 1, 100),
    ],
)
def test_auto_tree_count(n_grow, leaf, trees):
    assert auto_n_estimators(n_grow, leaf) == trees


def test_auto_trees_are_grown_indexed_and_described(data):
    X, V = data
    loc = ForestLocalizer(min_samples_leaf=9, max_features=1.0, random_state=0).grow(X[:400], V[:400])
    assert loc.n_estimators == "auto" and loc.n_trees == len(loc.forest_.estimators_) == 334
    loc.index(X[400:], V[400:])
    # every one of the 334 trees carries weight: the weights against the per-tree loop
    W = loc.weights(X[:20]).toarray()
    np.testing.assert_allclose(W, qrf_weights(_raw_leaves(loc, X[400:]), _raw_leaves(loc, X[:20])), rtol=0, atol=1e-12)
    assert loc.describe()["n_estimators"] == "334 (auto)"
    assert ForestLocalizer(n_estimators=7, min_samples_leaf=9, max_features=1.0).grow(X[:400], V[:400]).n_trees == 7
    for bad in ("many", 0, 2.5, True):
        with pytest.raises(InputError, match="n_estimators"):
            ForestLocalizer(n_estimators=bad).grow(X[:400], V[:400])

"""Large calibration sets: the capped localizer part, chunked lookups, the pickle, the bounded summary rows."""

import pickle

import numpy as np
import pytest

import confrf as cf
import confrf._calibration_record
from confrf.calibrators.lcp_rf import LCPForestCalibrator
from confrf.calibrators.localizer_split import MAX_LOCALIZER_POINTS, check_max_localizer_size
from confrf.localizers import ForestLocalizer
from confrf.localizers.leaf_index import LeafIndex


def _data(n, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    V = np.abs((0.2 + X[:, 0]) * rng.normal(size=n))
    return X, V


def _calibrate(X, V, cap, seed=0, **loc_kw):
    loc = ForestLocalizer(**{"n_estimators": 10, "min_samples_leaf": 10, "max_features": 1.0, **loc_kw}, random_state=1)
    return LCPForestCalibrator(loc, 0.5, n_jobs=1, max_localizer_size=cap).calibrate(
        X, V, alpha=0.1, rng=np.random.default_rng(seed)
    )


def test_cap_moves_the_other_localizer_rows_to_the_conformal_part():
    X, V = _data(2000)
    capped, free = _calibrate(X, V, 300), _calibrate(X, V, None)
    assert capped.sizes() == {"localizer": 300, "conformal": 1700}
    assert free.sizes() == {"localizer": 1000, "conformal": 1000}
    # a cap that does not bind changes nothing: the same permutation, the same parts
    same = _calibrate(X, V, 1000)
    np.testing.assert_array_equal(same.thresholds(X[:50], 0.1).t, free.thresholds(X[:50], 0.1).t)
    # the formula API's default binds only past 2 * MAX_LOCALIZER_POINTS calibration rows
    assert check_max_localizer_size("auto") == MAX_LOCALIZER_POINTS and check_max_localizer_size(None) is None


def test_capped_forest_never_sees_the_conformal_points():
    """The localizer rows are the first `cap` of a permutation of n: replacing every other row (conformal) by other
    points leaves the forest, the tuning and the split unchanged."""
    X, V = _data(3000, seed=2)
    cal = _calibrate(X, V, 400, min_samples_leaf="tune", max_features="tune")
    grow = np.sort(np.random.default_rng(0).permutation(3000)[:400])
    conf = np.setdiff1d(np.arange(3000), grow)
    X2, V2 = X.copy(), V.copy()
    X2[conf] = np.random.default_rng(5).uniform(0.0, 0.05, size=(conf.shape[0], 3))
    V2[conf] = np.random.default_rng(6).exponential(size=conf.shape[0]) * 10
    cal2 = _calibrate(X2, V2, 400, min_samples_leaf="tune", max_features="tune")
    a, b = cal.localizer, cal2.localizer
    assert a.tuning_.chosen == b.tuning_.chosen and a.tuning_.scores == b.tuning_.scores
    Xn = np.random.default_rng(9).uniform(size=(300, 3))
    np.testing.assert_array_equal(a.leaves(Xn), b.leaves(Xn))
    # the conformal points are indexed: their scores are the other data's
    np.testing.assert_array_equal(np.sort(a.indexed_scores()), np.sort(V[conf]))
    np.testing.assert_array_equal(np.sort(b.indexed_scores()), np.sort(V2[conf]))


def test_chunked_lookups_build_the_same_index(monkeypatch):
    import confrf.calibrators.rows as rows
    import confrf.localizers.forest as forest

    X, V = _data(1500, seed=3)
    whole = _calibrate(X, V, None, scale="forest").localizer.index_
    monkeypatch.setattr(rows, "LOOKUP_CHUNK", 97)
    monkeypatch.setattr(forest, "LOOKUP_CHUNK", 97)
    chunked = _calibrate(X, V, None, scale="forest").localizer.index_
    for name, value in vars(whole).items():
        np.testing.assert_array_equal(getattr(chunked, name), value, err_msg=name)
    loc = ForestLocalizer(n_estimators=5, min_samples_leaf=10, random_state=0).grow(X[:500], V[:500])
    a = vars(loc.index(X[500:], V[500:]).index_).copy()
    b = vars(loc.index(X[500:], V[500:]).index_)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_pickle_bytes_per_conformal_point():
    """The leaf index pickles 2 bytes per (point, tree) plus the score; the estimator adds the forest and a bounded
    summary sample, so its size per conformal point stays small."""
    X, V = _data(6000, seed=4)
    y = V * np.sign(np.random.default_rng(0).normal(size=6000))
    est = cf.ConformalRegressor(model="ols", n_estimators=50, min_samples_leaf=20, max_features=1.0, random_state=0)
    est.fit(X[:1000], y[:1000]).conformalize(X[1000:], y[1000:])
    idx = est.localizer_.index_
    assert len(pickle.dumps(idx, protocol=5)) < idx.n * (2 * idx.n_trees + 8) + 4000
    per_point = len(pickle.dumps(est, protocol=5)) / idx.n
    assert per_point < 2 * idx.n_trees + 8 + 400  # forest nodes and the summary's rows on top of the index
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_interval(X[:200]), est.predict_interval(X[:200]))


def test_leaf_index_pickled_by_the_previous_version_loads():
    X, V = _data(800, seed=5)
    loc = ForestLocalizer(n_estimators=6, min_samples_leaf=10, random_state=0).grow(X[:400], V[:400])
    idx = loc.index(X[400:], V[400:]).index_
    old = {  # the layout before per-tree leaf ids: member ids grouped by leaf
        "node_offset": idx.node_offset,
        "leaf_ptr": idx.leaf_ptr,
        "members": idx.members,
        "member_mult": None,
        "scores": idx.scores,
    }
    back = LeafIndex.__new__(LeafIndex)
    back.__setstate__(old)
    for name, value in vars(idx).items():
        np.testing.assert_array_equal(getattr(back, name), value, err_msg=name)


def test_summary_keeps_a_bounded_sample_of_calibration_rows(monkeypatch):
    monkeypatch.setattr(confrf._calibration_record, "DIAGNOSTIC_ROWS", 300)
    sim = cf.datasets.make_sim(1600, random_state=0)
    res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=10)
    est = res.estimator
    assert est.calib_X_.shape[0] == est.calib_scores_.shape[0] == 300 and est.n_calib_ == 800
    cal = cf.api.split_indices(1600, 0.5, 0)[1]  # the calibration rows of data (seed 0)
    X_cal, y_cal = res.design.transform(sim.frame)[cal], sim.frame.y.to_numpy()[cal]
    np.testing.assert_array_equal(est.calib_X_, X_cal[est.calib_rows_])
    V = est.score_.score(y_cal, est.model_.predict(X_cal))
    np.testing.assert_array_equal(est.calib_scores_, V[est.calib_rows_])
    # the tie check counts every score, not the subsample
    assert est.calib_score_ties_ == confrf._calibration_record.score_ties(V) and est.calib_score_ties_[0] == 800
    s = res.summary()
    assert "random subsample of 300 of the 800 calibration rows" in " ".join(str(s).split())
    assert s.frames["calibration_facts"].loc["calibration rows as test points", "value"] == 300


@pytest.mark.parametrize("bad", [1, 0, 2.5, "big", True])
def test_max_localizer_size_is_checked(bad):
    with pytest.raises(cf.InputError, match="max_localizer_size must be 'auto'"):
        check_max_localizer_size(bad)
    sim = cf.datasets.make_sim(300, random_state=0)
    with pytest.raises(cf.InputError, match="max_localizer_size"):
        cf.lcp_rf(sim.formula, data=sim.frame, max_localizer_size=bad)


def test_forest_pickles_compactly_and_predicts_the_same():
    from confrf.localizers._compact_trees import pack_forest

    X, V = _data(3000, seed=7, p=5)
    loc = ForestLocalizer(n_estimators=20, min_samples_leaf=5, max_features=1.0, scale="forest", random_state=0)
    loc.grow(X[:1500], V[:1500]).index(X[1500:], V[1500:])
    nodes = sum(est.tree_.node_count for est in loc.forest_.estimators_)
    packed = len(pickle.dumps(pack_forest(loc.forest_), protocol=5))
    assert packed < 28 * nodes + 20_000 < len(pickle.dumps(loc.forest_, protocol=5))  # scikit-learn's: 72 a node
    back = pickle.loads(pickle.dumps(loc, protocol=5))
    Xt = np.random.default_rng(1).uniform(size=(400, 5))
    np.testing.assert_array_equal(back.forest_.apply(Xt), loc.forest_.apply(Xt))
    np.testing.assert_array_equal(back.forest_.predict(Xt), loc.forest_.predict(Xt))
    np.testing.assert_array_equal(back.thresholds(Xt, 1400)[0], loc.thresholds(Xt, 1400)[0])
    np.testing.assert_array_equal(back.score_scale(Xt), loc.score_scale(Xt))


def test_leaf_index_kernel_takes_int32_leaves_and_no_multiplicity_array():
    from confrf import _kernels

    rng = np.random.default_rng(3)
    leaves = rng.integers(0, 40, size=(300, 7)) + np.arange(7) * 40
    scores = np.round(rng.exponential(size=300), 1)  # ties
    full = _kernels.build_leaf_index(leaves.astype(np.int64), scores, np.ones((300, 7), dtype=np.int32), 280)
    lean = _kernels.build_leaf_index(leaves.astype(np.int32), scores, None, 280)
    for a, b in zip(full, lean):
        np.testing.assert_array_equal(a, b)
    ptr, members, _, below, pop = lean
    np.testing.assert_array_equal(
        _kernels.calibration_p2(leaves.astype(np.int32), ptr, members, below, pop, 300),
        _kernels.calibration_p2(7, ptr, members, below, pop, 300),
    )


def test_max_localizer_size_is_refused_where_it_would_be_ignored():
    sim = cf.datasets.make_sim(600, random_state=0)
    for kw in ({"guarantee": "pac"}, {"honest": False}):
        with pytest.raises(cf.InputError, match="applies only to the honest LCP-RF"):
            cf.lcp_rf(sim.formula, data=sim.frame, max_localizer_size=100, **kw)


def test_honest_index_stores_no_multiplicities():
    """Every multiplicity of the honest forest is 1: member_mult is a stride-0 view of one int32 (a quarter of the
    index at 4 bytes per point and tree), read by every kernel as 1; bootstrap counts (honest=False) are stored."""
    from confrf import _kernels

    X, V = _data(2000, seed=8)
    honest = _calibrate(X, V, None).localizer
    idx = honest.index_
    assert idx.unit_mult and idx.member_mult.strides == (0,) and idx.member_mult.base.nbytes == 4
    assert idx.member_mult.shape == idx.members.shape and np.all(idx.member_mult[:50] == 1)
    # the kernels read it as ones: the same weights and thresholds as with an explicit array of ones
    ones = np.ones(idx.members.shape, dtype=np.int32)
    leaves = honest.leaves(X[:40])
    for mult in (idx.member_mult, ones):
        W = _kernels.forest_weight_rows(leaves, idx.leaf_ptr, idx.members, mult, idx.leaf_pop, idx.n, True)
        np.testing.assert_array_equal(
            W[2], _kernels.forest_weight_rows(leaves, idx.leaf_ptr, idx.members, ones, idx.leaf_pop, idx.n, True)[2]
        )
    np.testing.assert_array_equal(
        _kernels.forest_weight_sumsq(leaves, idx.leaf_ptr, idx.members, idx.member_mult, idx.leaf_pop, idx.n),
        _kernels.forest_weight_sumsq(leaves, idx.leaf_ptr, idx.members, ones, idx.leaf_pop, idx.n),
    )
    with pytest.raises(ValueError, match="stride-0 member_mult must hold multiplicities of 1"):
        _kernels.forest_weight_sumsq(
            leaves, idx.leaf_ptr, idx.members, np.broadcast_to(np.int32(2), ones.shape), idx.leaf_pop, idx.n
        )
    paper = ForestLocalizer(n_estimators=10, min_samples_leaf=10, max_features=1.0, honest=False, random_state=1)
    pidx = paper.fit(X[:1000], V[:1000]).index_
    assert not pidx.unit_mult and pidx.member_mult.flags.c_contiguous and pidx.member_mult.max() > 1

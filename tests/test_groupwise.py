"""Groupwise calibration (SPLIT-G, LCP-RF-G): graph, region rule, equivalences, bad input."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from reference import forest_lcp_matrix, lcp_threshold_reference
from reference_groups import (
    LeafTableForest,
    region_reference,
    split_threshold_reference,
    weight_graph_reference,
)
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf.calibrators.base import random_split
from confrf.calibrators.grouping import units_to_keep
from confrf.calibrators.groupwise import REST
from confrf.calibrators.lcp import lcp_threshold
from confrf.calibrators.lcp_rf_g import LCPForestGroupCalibrator
from confrf.calibrators.split_g import SplitGroupCalibrator
from confrf.exceptions import InfiniteIntervalWarning, InputError
from confrf.localizers import ForestLocalizer
from confrf.localizers.graph import cluster_graph, weight_graph
from confrf.localizers.regions import UNDECIDABLE, WeightRegions

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")

ALPHA = 0.1


def _hand_localizer(leaves: np.ndarray, n_leaves: int, mult: np.ndarray | None = None) -> ForestLocalizer:
    loc = ForestLocalizer(n_estimators=leaves.shape[1])
    loc.forest_ = LeafTableForest(leaves.shape[1], n_leaves)
    return loc.index(leaves.astype(float), np.arange(leaves.shape[0], dtype=float), multiplicity=mult)


def _data(n, seed, d=3):
    """Heterogeneous noise: three regions of x1 with sd 0.1, 1.0, 0.3."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    region = np.digitize(X[:, 0], [0.3, 0.7])
    y = 2 * X[:, 0] + np.array([0.1, 1.0, 0.3])[region] * rng.normal(size=n)
    return X, y, np.array(["a", "b", "c"], dtype=object)[region]


MODEL = LinearRegression().fit(*_data(300, 0)[:2])


# -- the weight graph and its groups -------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_weight_graph_matches_reference(seed):
    rng = np.random.default_rng(seed)
    leaves = rng.integers(0, 3, size=(9, 3))
    mult = rng.integers(0, 3, size=(9, 3)) if seed % 2 else None
    loc = _hand_localizer(leaves, 3, mult)
    G = weight_graph(loc, leaves.astype(float))
    ref = weight_graph_reference(leaves, mult)
    assert sp.issparse(G)
    np.testing.assert_allclose(G.toarray(), np.array(ref, dtype=float), rtol=0, atol=1e-12)


def test_cluster_graph_components_and_leiden_find_known_structure():
    # two 6-cliques joined by one weak edge, plus a separate pair
    n = 14
    A = np.zeros((n, n))
    A[:6, :6] = 1.0
    A[6:12, 6:12] = 1.0
    A[5, 6] = A[6, 5] = 0.01
    A[12, 13] = A[13, 12] = 1.0
    np.fill_diagonal(A, 0)
    G = sp.csr_matrix(A)
    comp = cluster_graph(G, "components")
    assert comp.tolist() == [0] * 12 + [1, 1]  # 0 is the largest
    pytest.importorskip("igraph")
    comm = cluster_graph(G, "leiden", seed=3)
    assert len(set(comm[:6])) == 1 and len(set(comm[6:12])) == 1 and len(set(comm[12:])) == 1
    assert len({comm[0], comm[6], comm[12]}) == 3
    assert comm[12] == 2  # the pair is the smallest group
    assert comm.tolist() == cluster_graph(G, "leiden", seed=3).tolist()


def test_leiden_without_igraph_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "igraph", None)
    with pytest.raises(InputError, match=r"confrf\[groups\]"):
        cluster_graph(sp.identity(3, format="csr"), "leiden")


# -- the region rule -------------------------------------------------------------
def test_region_rule_matches_reference_with_exact_ties():
    n_ties = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        k, L, C = (2, 3, 2) if seed % 2 else (4, 3, 3)  # few trees and leaves: exact ties happen
        leaves = rng.integers(0, L, size=(10, k))
        clusters = rng.integers(0, C, size=10)
        clusters[:C] = np.arange(C)
        mult = rng.integers(0, 3, size=(10, k)) if seed % 3 == 2 else None
        rule = WeightRegions(_hand_localizer(leaves, L, mult), clusters)
        new = rng.integers(0, L, size=(40, k))
        queries = np.vstack([leaves, new])  # calibration-like and new points go through the same rule
        got = rule.assign(queries.astype(float))
        masses = rule.masses(queries.astype(float))
        for q, x in enumerate(queries):
            want, ref_masses = region_reference(leaves, clusters, x, mult)
            np.testing.assert_allclose(masses[q], [float(m) for m in ref_masses], atol=1e-12)
            assert got[q] == want, (seed, q, ref_masses)
            n_ties += want == UNDECIDABLE
    assert n_ties > 0  # the tie case is exercised


def test_region_rule_hand_built_cases():
    # tree 0: leaf 0 = {0, 1, 2}, leaf 1 = {3, 4}; tree 1: leaf 0 = {0, 3}, leaf 1 = {1, 2, 4}
    leaves = np.array([[0, 0], [0, 1], [0, 1], [1, 0], [1, 1]])
    clusters = np.array([0, 0, 1, 1, 1])
    rule = WeightRegions(_hand_localizer(leaves, 2), clusters)
    # x in (leaf 0, leaf 0): masses C0 = (2/3 + 1/2)/2 = 7/12, C1 = (1/3 + 1/2)/2 = 5/12
    # x in (leaf 1, leaf 0): C0 = (0 + 1/2)/2 = 1/4, C1 = (1 + 1/2)/2 = 3/4
    # x in (leaf 0, leaf 1): C0 = (2/3 + 1/3)/2 = 1/2, C1 = (1/3 + 2/3)/2 = 1/2 -> undecidable
    got = rule.assign(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert got.tolist() == [0, 1, UNDECIDABLE]


# -- equivalences ----------------------------------------------------------------
#: LCP-RF's forest settings that LCP-RF-G uses by default (it does not tune them)
# LCP-RF-G's forest: the sqrt rule, every feature, raw scores ("tune" and the scale are LCP-RF's alone)
SQRT_RULE = {"min_samples_leaf": "auto", "max_features": 1.0, "options": {"scale": "none"}}


def _reg(method, X, y, seed=0, groups=None, **kw):
    return cf.ConformalRegressor(
        model=MODEL, prefit=True, method=method, alpha=ALPHA, random_state=seed, n_estimators=30, **kw
    ).conformalize(X, y, groups=groups)


def test_lcp_rf_g_with_one_group_equals_lcp_rf():
    X, y, _ = _data(500, 1)
    Xt = _data(200, 2)[0]
    a = _reg("lcp-rf", X, y, **SQRT_RULE).predict_details(Xt)
    b = _reg("lcp-rf-g", X, y, groups=np.zeros(500), options={"groups": "labels"})
    d = b.predict_details(Xt, groups=np.zeros(200))
    for key in ("t", "closed", "level", "lwr", "upr"):
        np.testing.assert_array_equal(a[key], d[key])
    assert set(d["group"]) == {0.0}


def test_lcp_rf_g_components_of_a_connected_graph_equals_lcp_rf():
    X, y, _ = _data(500, 3)
    Xt = _data(200, 4)[0]
    reg = _reg("lcp-rf-g", X, y, options={"groups": "components"})
    table = reg.calibrator_.group_table()
    assert table.loc["G1", "conformal"] == 250 and table.loc[REST, "conformal"] == 0
    np.testing.assert_array_equal(
        reg.predict_details(Xt)["t"], _reg("lcp-rf", X, y, **SQRT_RULE).predict_details(Xt)["t"]
    )


def test_split_g_with_one_group_equals_split():
    X, y, _ = _data(300, 5)
    Xt = _data(50, 6)[0]
    a = _reg("split", X, y).predict_interval(Xt)
    b = _reg("split-g", X, y, groups=["all"] * 300, options={"groups": "labels"}).predict_interval(
        Xt, groups=["all"] * 50
    )
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("alpha", ["0.1", "0.2", "0.05"])
def test_split_g_equals_split_conformal_per_group_by_hand(alpha):
    X, y, g = _data(400, 7)
    Xt, _, gt = _data(90, 8)
    reg = cf.ConformalRegressor(
        model=MODEL, prefit=True, method="split-g", alpha=float(alpha), options={"groups": "labels"}
    ).conformalize(X, y, groups=g)
    d = reg.predict_details(Xt, groups=gt)
    V = np.abs(y - MODEL.predict(X))
    for lab in "abc":
        t = split_threshold_reference(V[g == lab].tolist(), alpha)
        assert np.all(d["t"][gt == lab] == t)
        assert np.all(d["group"][gt == lab] == lab)
    np.testing.assert_allclose(d["upr"] - d["fit"], d["t"])


def test_lcp_rf_g_with_user_groups_is_exact_lcp_within_each_group():
    X, y, g = _data(60, 9)
    Xt, _, gt = _data(12, 10)
    V = np.abs(y - MODEL.predict(X))
    loc = ForestLocalizer(n_estimators=3, min_samples_leaf=3, random_state=0)
    alpha = 0.2
    cal = LCPForestGroupCalibrator(loc, groups="labels", min_group_size=0).calibrate(
        X, V, alpha=alpha, rng=np.random.default_rng(11), labels=g
    )
    conf = np.sort(np.random.default_rng(11).permutation(60)[30:])  # the conformal part LCP-RF would draw
    th, names = cal.grouped_thresholds(Xt, alpha, labels=gt)
    assert names.tolist() == gt.tolist()
    leaves = cal.group_localizers_[0].leaves  # every group shares the forest
    checked_reference = 0
    for q in range(Xt.shape[0]):
        members = conf[g[conf] == gt[q]]
        W = forest_lcp_matrix(leaves(X[members]), leaves(Xt[q : q + 1])[0])
        fast = lcp_threshold(np.array(W, dtype=float), V[members], alpha)
        assert (th.t[q], th.closed[q]) == (fast.t, fast.closed)
        assert th.level[q] == pytest.approx(fast.level, abs=1e-12)
        if checked_reference < 3 and len(members) <= 10 and np.isfinite(fast.t):
            assert (th.t[q], bool(th.closed[q])) == lcp_threshold_reference(W, V[members].tolist(), "0.2")
            checked_reference += 1
    assert np.isfinite(th.t).sum() >= 6 and checked_reference > 0


def test_one_region_rule_for_conformal_and_new_points():
    X, y, _ = _data(600, 12)
    V = np.abs(y - MODEL.predict(X))
    cal = LCPForestGroupCalibrator(
        ForestLocalizer(n_estimators=30, random_state=1), groups="components", min_group_size=0
    ).calibrate(X, V, alpha=ALPHA, rng=np.random.default_rng(13))
    conf = np.sort(np.random.default_rng(13).permutation(600)[300:])
    names = cal.groups_of(X[conf])
    for code, group in enumerate(cal.grouping_.names):
        loc = cal.group_localizers_[code]
        mine = np.sort(V[conf][names == group])
        assert (0 if loc is None else loc.index_.n) == mine.size
        if loc is not None:
            np.testing.assert_array_equal(np.sort(loc.index_.scores), mine)


# -- honesty: groups and merges never look at the conformal scores ---------------
@pytest.mark.parametrize("cls", [SplitGroupCalibrator, LCPForestGroupCalibrator])
def test_groups_do_not_depend_on_conformal_scores(cls):
    X, y, _ = _data(600, 14)
    V = np.abs(y - MODEL.predict(X))
    conf = np.sort(np.random.default_rng(15).permutation(600)[300:])
    V2 = V.copy()
    V2[conf] = np.random.default_rng(0).permutation(V2[conf]) * 3
    grid = np.random.default_rng(1).uniform(size=(300, 3))
    out = []
    for scores in (V, V2):
        cal = cls(ForestLocalizer(n_estimators=30, random_state=1), groups="components", min_group_size=40)
        cal.calibrate(X, scores, alpha=ALPHA, rng=np.random.default_rng(15))
        out.append((cal.grouping_.names, cal.grouping_.merged, cal.groups_of(grid).tolist()))
    assert out[0] == out[1]


def _two_blocks(n, seed):
    """Two blocks of the unit square (lower left, upper right) with different score levels; the off-diagonal
    corners hold no point."""
    rng = np.random.default_rng(seed)
    upper = rng.integers(0, 2, size=n)
    X = np.where(upper[:, None] == 1, rng.uniform(0.6, 1.0, size=(n, 2)), rng.uniform(0.0, 0.4, size=(n, 2)))
    return X, np.where(upper == 1, 3.0, 1.0) + rng.uniform(size=n)


@pytest.mark.parametrize("cls", [SplitGroupCalibrator, LCPForestGroupCalibrator])
def test_merges_read_undecidable_counts_on_the_localizer_part_only(cls, monkeypatch):
    """The corner (x1 < 0.5 < x2) is undecidable: half of the trees split the root on x1 (the corner goes with
    the lower block), half on x2 (it goes with the upper one), so its masses on the two components tie (up to rounding).
    Moving conformal points into it must change neither the inputs of the merge rule nor the groups: the
    expected size of '(rest)' counts the undecidable *localizer* points, and reading them from the conformal
    part would make 10 undecidable points pull the smaller group into '(rest)'."""
    import confrf.calibrators.groupwise as groupwise

    n, moved, seed = 400, 10, 3
    X, V = _two_blocks(n, 0)
    _, conf = random_split(n, 0.5, np.random.default_rng(seed), "localizer part", "localizer_size")
    X2 = X.copy()
    X2[conf[:moved]] = np.random.default_rng(1).uniform([0.05, 0.65], [0.35, 0.95], size=(moved, 2))
    corner = np.array([[0.2, 0.8], [0.05, 0.95], [0.35, 0.65]])
    grid = np.random.default_rng(2).uniform(size=(300, 2))
    calls, out, undecidable = [], [], []
    real = groupwise.units_to_keep

    def recording(expected, expected_undecidable, merge, *, has_rest):
        calls.append((np.array(expected, dtype=float), float(expected_undecidable), float(merge), has_rest))
        return real(expected, expected_undecidable, merge, has_rest=has_rest)

    monkeypatch.setattr(groupwise, "units_to_keep", recording)
    for data in (X, X2):
        loc = ForestLocalizer(n_estimators=20, min_samples_leaf=10, max_features=1, random_state=9, scale="none")
        cal = cls(loc, groups="components", min_group_size=30).calibrate(
            data, V, alpha=ALPHA, rng=np.random.default_rng(seed)
        )
        roots = [int(tree.tree_.feature[0]) for tree in cal.localizer.forest_.estimators_]
        assert roots.count(0) == roots.count(1) == 10  # the premise: the corner's masses tie
        rule = cal.grouping_.regions
        np.testing.assert_allclose(rule.masses(corner), 0.5, rtol=0, atol=1e-12)  # a tie up to rounding
        assert (rule.assign(corner) == UNDECIDABLE).all()
        out.append(
            (
                cal.grouping_.names,
                cal.grouping_.merged,
                cal.grouping_.unit_codes.tolist(),
                cal.counts_["localizer"].tolist(),
                cal.groups_of(grid).tolist(),
            )
        )
        undecidable.append(int(np.sum(rule.assign(data[conf]) == UNDECIDABLE)))
    # the premise: exactly the moved conformal points are undecidable in the second fit, none in the first
    assert undecidable == [0, moved]
    # one call per fit, with identical inputs (no undecidable localizer point: with components, each one's
    # leaves hold only its own component), and identical groups
    assert len(calls) == 2
    assert calls[0][1] == calls[1][1] == 0.0
    np.testing.assert_array_equal(calls[0][0], calls[1][0])
    assert calls[0][1:] == calls[1][1:]
    assert out[0] == out[1]
    assert out[0][0] == ["G1", "G2", REST] and out[0][1] == []  # with 10 pooled points G1 or G2 would join '(rest)'


def test_min_group_size_merges_small_groups_into_rest_decided_on_localizer_part():
    X, y, g = _data(400, 16)
    g = g.copy()
    g[:6] = "tiny"
    V = np.abs(y - MODEL.predict(X))
    cal = SplitGroupCalibrator(None, groups="labels", min_group_size=20).calibrate(
        X, V, alpha=ALPHA, rng=np.random.default_rng(17), labels=g
    )
    assert cal.grouping_.merged == ["tiny"]
    assert cal.grouping_.names == ["a", "b", "c", REST]
    grow = np.sort(np.random.default_rng(17).permutation(400)[:200])
    table = cal.group_table()
    assert table.loc[REST, "localizer"] == np.sum(g[grow] == "tiny")
    assert cal.groups_of(X[:3], labels=["tiny", "a", "c"]).tolist() == [REST, "a", "c"]
    assert "merged small groups (tiny)" in cal.guarantee(ALPHA).sentence


def test_units_to_keep_grows_a_too_small_rest_from_the_smallest_groups():
    merge = 10.0
    # 4 in the rest (3 merged + 1 undecidable): the smallest kept unit (12) joins it; then 16 >= 10
    assert units_to_keep(np.array([50.0, 12.0, 3.0, 30.0]), 1.0, merge, has_rest=True).tolist() == [
        True,
        False,
        False,
        True,
    ]
    # an empty rest stays empty, and nothing is merged when every unit is large and no rest exists
    assert units_to_keep(np.array([50.0, 12.0, 0.0]), 0.0, merge, has_rest=True).tolist() == [True, True, False]
    assert units_to_keep(np.array([50.0, 12.0]), 0.0, merge, has_rest=False).all()
    # a large enough rest is left alone; ties join in unit order; everything may end in the rest
    assert units_to_keep(np.array([50.0, 2.0]), 9.0, merge, has_rest=True).tolist() == [True, False]
    assert units_to_keep(np.array([12.0, 12.0, 1.0]), 0.0, merge, has_rest=False).tolist() == [False, True, False]
    assert not units_to_keep(np.array([12.0, 1.0]), 0.0, 20.0, has_rest=False).any()


def test_a_rest_too_small_for_finite_intervals_takes_in_the_smallest_group():
    """Merging only the small groups used to leave '(rest)' below the size it needs, hence infinite intervals
    for exactly the points it was made for; the smallest group now joins it, decided on the localizer part."""
    X, y, g = _data(400, 16)
    g = g.copy()
    g[:40] = "tiny"
    V = np.abs(y - MODEL.predict(X))
    grow = np.sort(np.random.default_rng(17).permutation(400)[:200])
    counts = pd.Series(g[grow]).value_counts()
    assert 0 < counts["tiny"] < 30 <= counts.drop("tiny").min()  # the premise: tiny alone is too small
    cal = SplitGroupCalibrator(None, groups="labels", min_group_size=30).calibrate(
        X, V, alpha=ALPHA, rng=np.random.default_rng(17), labels=g
    )
    smallest = counts.drop("tiny").idxmin()
    assert sorted(cal.grouping_.merged) == sorted(["tiny", smallest])
    assert cal.group_table().loc[REST, "localizer"] == counts["tiny"] + counts[smallest]
    assert np.isfinite(cal.thresholds(X[:2], ALPHA, labels=np.array(["tiny", smallest], dtype=object)).t).all()


def test_small_groups_warn_and_show_in_the_summary():
    sim = cf.datasets.make_sim(1000, random_state=0)
    df = sim.frame.assign(grp=np.where(np.arange(1000) < 12, "few", "many"))
    with pytest.warns(InfiniteIntervalWarning, match="'few'"):
        res = cf.conformal("y ~ x1 + x2", data=df, method="split-g", groups="grp", model="ols", random_state=0)
    table = res.summary().frames["groups"]
    assert not table.loc["few", "finite"] and table.loc["many", "finite"]
    assert table["conformal"].sum() == res.nobs["calibration"]
    with pytest.warns(InfiniteIntervalWarning):
        pred = res.predict(df.head(20))
    assert np.isinf(pred.loc[pred.group == "few", "upr"]).all()


# -- formula API -------------------------------------------------------------------
@pytest.fixture(scope="module")
def frame():
    X, y, g = _data(1200, 18)
    return pd.DataFrame({"y": y, "x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "region": g})


def test_formula_groups_column_not_in_formula(frame):
    res = cf.conformal("y ~ x1 + x2 + x3", data=frame, method="split-g", groups="region", random_state=0)
    pred = res.predict(frame.head(30))
    assert pred.columns.tolist() == ["fit", "lwr", "upr", "group"]
    assert pred["group"].tolist() == frame["region"].head(30).tolist()
    assert res.groups(frame.head(30)).tolist() == frame["region"].head(30).tolist()
    assert res.guarantee.kind == "groupwise" and res.guarantee.certified
    assert res.predict(frame.head(3), details=True).columns.tolist()[:4] == ["fit", "lwr", "upr", "group"]


def test_formula_groups_term_and_callable_agree(frame):
    kw = {"data": frame, "method": "split-g", "model": "ols", "random_state": 0}
    a = cf.conformal("y ~ x1", groups="C(region)", **kw).predict(frame.head(50))
    b = cf.conformal("y ~ x1", groups=lambda d: d["region"].to_numpy(), **kw).predict(frame.head(50))
    c = cf.conformal("y ~ x1", groups="region", **kw).predict(frame.head(50))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    d = cf.conformal("y ~ x1", groups="x1 > 0.5", **kw).predict(frame.head(50))
    assert d["group"].tolist() == (frame["x1"].head(50) > 0.5).tolist()


def test_formula_groups_with_separate_calib_and_dropped_rows(frame):
    data = frame.iloc[:600].copy()
    data.loc[data.index[:5], "x2"] = np.nan
    res = cf.conformal(
        "y ~ x1 + x2",
        data=data,
        calib=frame.iloc[600:],
        method="split-g",
        groups="region",
        model="ols",
        na_action="drop",
        random_state=0,
    )
    assert res.nobs["calibration"] == 600
    res2 = cf.conformal(
        "y ~ x1 + x2",
        data=data,
        method="split-g",
        groups="region",
        model=res.estimator.model_,
        prefit=True,
        na_action="drop",
    )
    # the fitted values through the same design pipeline as calibration: a different BLAS path
    # (predict on the raw columns) can differ in the last bit and move an order statistic's value
    fitted = res2.predict(data.iloc[5:])["fit"].to_numpy()
    V = np.abs(data["y"].to_numpy()[5:] - fitted)
    t = res2.predict(data.iloc[5:8], details=True)["t"].to_numpy()
    want = [
        split_threshold_reference(V[data["region"].to_numpy()[5:] == r].tolist(), "0.1")
        for r in data["region"].iloc[5:8]
    ]
    np.testing.assert_array_equal(t, want)


def test_graph_groups_in_formula_api_are_reproducible_and_pickle(frame):
    pytest.importorskip("igraph")
    kw = {"data": frame, "method": "lcp-rf-g", "model": "ols", "random_state": 3, "n_estimators": 30}
    a = cf.conformal("y ~ x1 + x2 + x3", **kw)
    b = cf.conformal("y ~ x1 + x2 + x3", **kw)
    pa, pb = a.predict(frame.head(100)), b.predict(frame.head(100))
    pd.testing.assert_frame_equal(pa, pb)
    assert len(a.estimator.calibrator_.grouping_.names) >= 3  # Leiden finds structure here
    c = pickle.loads(pickle.dumps(a))
    pd.testing.assert_frame_equal(c.predict(frame.head(100)), pa)
    s = a.summary()
    assert "Group sizes" in str(s) and s.frames["group_settings"].loc["groups", "value"] == "leiden"


def test_user_groups_result_pickles(frame):
    res = cf.conformal(
        "y ~ x1", data=frame, method="lcp-rf-g", groups="region", model="ols", random_state=0, n_estimators=20
    )
    back = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(back.predict(frame.head(40)), res.predict(frame.head(40)))


def _region_of(d):
    return d["region"]


def test_groups_function_pickles_at_module_level_and_a_lambda_says_how(frame):
    kw = dict(data=frame, method="split-g", model="ols", random_state=0)
    res = cf.conformal("y ~ x1", groups=_region_of, **kw)
    back = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(back.predict(frame.head(40)), res.predict(frame.head(40)))
    lam = cf.conformal("y ~ x1", groups=lambda d: d["region"], **kw)
    with pytest.raises(pickle.PicklingError, match="groups='<lambda>'.*top level of a module"):
        pickle.dumps(lam)


def test_paper_variant_is_flagged_not_certified(frame):
    res = cf.conformal(
        "y ~ x1 + x2 + x3",
        data=frame,
        method="split-g",
        groups="components",
        honest=False,
        model="ols",
        random_state=0,
        n_estimators=20,
    )
    g = res.guarantee
    assert not g.certified and g.kind == "none" and "honest=False" in g.sentence
    assert res.nobs["calibration"] == 600
    # the calibration points keep their own cluster (the paper's literal construction)
    assert res.summary().frames["groups"]["conformal"].sum() == 600


# -- bad input ------------------------------------------------------------------------
def test_unknown_group_column_names_a_close_match(frame):
    with pytest.raises(InputError, match="'regoin'.*Did you mean 'region'"):
        cf.conformal("y ~ x1", data=frame, method="split-g", groups="regoin", model="ols")


def test_nan_group_labels_raise(frame):
    bad = frame.copy()
    bad.loc[bad.index[3], "region"] = None
    with pytest.raises(InputError, match="missing"):
        cf.conformal("y ~ x1", data=bad, method="split-g", groups="region", model="ols", prefit=False)
    X, y, g = _data(100, 1)
    g[0] = np.nan
    with pytest.raises(InputError, match="missing"):
        _reg("split-g", X, y, groups=g, options={"groups": "labels"})


def test_unseen_group_label_at_predict_raises(frame):
    res = cf.conformal("y ~ x1", data=frame, method="split-g", groups="region", model="ols", random_state=0)
    new = frame.head(4).assign(region=["a", "zzz", "b", "zzz"])
    with pytest.raises(InputError, match=r"\['zzz'\].*not seen"):
        res.predict(new)
    with pytest.raises(InputError, match="region"):
        res.predict(frame.head(4).drop(columns="region"))


def test_labels_and_methods_must_match():
    X, y, g = _data(200, 2)
    with pytest.raises(InputError, match="apply only to methods"):
        _reg("split", X, y, groups=g)
    with pytest.raises(InputError, match="pass groups="):
        _reg("split-g", X, y, options={"groups": "labels"})
    with pytest.raises(InputError, match="apply only to methods"):
        _reg("split-g", X, y, groups=g, options={"groups": "components"})
    with pytest.raises(InputError, match="learns the groups from the forest"):
        SplitGroupCalibrator(ForestLocalizer(), groups="components").calibrate(
            X, y, alpha=ALPHA, rng=np.random.default_rng(0), labels=g
        )
    with pytest.raises(InputError, match="one label per row"):
        _reg("split-g", X, y, groups=g[:10], options={"groups": "labels"})


@pytest.mark.parametrize(
    "opts, match",
    [
        ({"guarantee": "pac", "pac_bound": "hoeffding"}, "not offered"),
        ({"delta": 0.1}, "apply only with guarantee='pac'"),
        ({"guarantee": "conditional"}, "guarantee must be"),
        ({"groups": "kmeans"}, "groups must be one of"),
        ({"resolution": 0}, "resolution"),
        ({"min_group_size": -1}, "min_group_size"),
    ],
)
def test_bad_options(opts, match):
    X, y, _ = _data(200, 3)
    with pytest.raises(InputError, match=match):
        _reg("lcp-rf-g", X, y, options=opts)


def test_pac_in_formula_api(frame):
    res = cf.conformal(
        "y ~ x1", data=frame, method="split-g", groups="region", guarantee="pac", model="ols", random_state=0
    )
    rep = res.pac_report()
    assert (
        res.guarantee.kind == "pac"
        and rep.bound == "binomial"
        and list(rep.groups.index) == list(res.estimator.calibrator_.grouping_.names)
    )
    with pytest.raises(InputError, match="pac_size does not apply"):
        cf.conformal(
            "y ~ x1", data=frame, method="split-g", groups="region", guarantee="pac", pac_size=0.3, model="ols"
        )


@pytest.mark.parametrize(
    "module",
    [
        "confrf.calibrators.split_g",
        "confrf.calibrators.groupwise_pac",
        "confrf.localizers.graph",
        "confrf.localizers.regions",
        "confrf.group_labels",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_forest_weights_of_grouped_fit_explain_why_they_are_missing():
    import confrf as cf
    from confrf.exceptions import NotFittedError

    sim = cf.datasets.make_sim(1200, random_state=0)
    res = cf.conformal(sim.formula, data=sim.frame, method="lcp-rf-g", groups="components", random_state=0)
    with pytest.raises(NotFittedError, match="one weight index per group"):
        res.forest_weights(sim.frame.head(3))

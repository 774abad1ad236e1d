"""localizer_data="training" for the forest methods other than LCP-RF: LCP-RF-G, SPLIT-G, QRF-TC and the PAC variants.

The forest, the groups, the region rule and the merging must be functions of the training part only (the conformal
points, D1 and D2 never move them), the thresholds must be the slow references' (Guan's exact LCP within each group,
split conformal's order statistic, the PAC corrections' brute force), the configurations that cannot grow on the
training part must be refused with the reason, and the guarantees must hold (--long Monte Carlo: group-conditional,
PAC, weighted under covariate shift).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from reference import forest_lcp_matrix
from reference_groups import region_reference, split_threshold_reference, weight_graph_reference
from reference_pac import binomial_k_reference, smallest_correction

import confrf as cf
import confrf.calibrators.groupwise as groupwise
from confrf.calibrators import METHODS, lcp_threshold
from confrf.exceptions import ConfrfWarning, InputError

#: the methods whose forest can grow on the training part, with the options that select them
FOREST_METHODS = [
    ("lcp-rf-g", {}),
    ("split-g", {}),
    ("qrf-tc", {}),
    ("lcp-rf", {"guarantee": "pac"}),
    ("lcp-rf-g", {"guarantee": "pac"}),
    ("split-g", {"guarantee": "pac"}),
]


class _Est:  # the shared settings the factories read
    n_estimators, max_depth, honest, n_jobs, localizer_size, alpha, prefit = 10, None, True, 1, 0.5, 0.1, False
    min_samples_leaf, max_features = "auto", 1.0

    def __init__(self, alpha=0.1, **kw):
        self.alpha = alpha
        self.__dict__.update(kw)


def _calibrator(method, options, X_ref, V_ref, alpha=0.1, **est):
    spec = METHODS[method]
    cal = spec.factory(_Est(alpha, **est), {**spec.options, **options, "localizer_data": "training"}, 0)
    cal.set_reference(X_ref, V_ref)
    return cal


def _calibrate(method, options, X, V, X_ref, V_ref, alpha=0.1, seed=0, **kw):
    cal = _calibrator(method, options, X_ref, V_ref, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        return cal.calibrate(X, V, alpha=alpha, rng=np.random.default_rng(seed), **kw)


def _leaves(loc, X):
    """Every row's leaf in every tree (a groupwise calibrator indexes copies of its localizer, not itself)."""
    return loc._global_leaves(np.asarray(X, dtype=float), loc._node_offsets())


def _hetero(rng, n, p=2):
    X = rng.uniform(size=(n, p))
    return X, np.abs((0.1 + 2 * X[:, 0]) * rng.normal(size=n))


@pytest.mark.parametrize("method, options", FOREST_METHODS)
def test_the_option_and_its_default_are_lcp_rfs(method, options):
    spec, lcp = METHODS[method], METHODS["lcp-rf"]
    assert spec.options["localizer_data"] == lcp.options["localizer_data"] and spec.options["cv"] == lcp.options["cv"]
    opts = {**spec.options, **options}
    assert spec.uses_training({**opts, "localizer_data": "training"})
    # "auto" grows these forests on the localizer part (no leaf tuning to compare sources by): no training scores
    assert not spec.uses_training({**opts, "localizer_data": "auto"})
    assert not spec.uses_training({**opts, "localizer_data": "calibration"})
    assert "localizer_size" not in spec.reads({**opts, "localizer_data": "training"})


@pytest.mark.parametrize("method, options", FOREST_METHODS)
def test_calibration_points_never_move_the_forest_or_the_groups(method, options):
    rng = np.random.default_rng(1)
    X, V = _hetero(rng, 600)
    Xr, Vr = _hetero(rng, 500)
    cal = _calibrate(method, options, X, V, Xr, Vr)
    assert cal.localizer.n_grow_ == 500 and cal.describe()["forest_grown_on"].endswith("(500 rows)")
    # every calibration row is a conformal point (D1 or D2 for PAC): no localizer share
    parts = getattr(cal, "parts_", {})
    assert parts.get("localizer", np.empty(0)).size == 0
    # new calibration points everywhere: piled into one corner, with new, larger scores
    X2, V2 = rng.uniform(0.0, 0.05, size=X.shape), rng.exponential(size=V.shape[0]) * 10
    cal2 = _calibrate(method, options, X2, V2, Xr, Vr)
    Xf = np.random.default_rng(9).uniform(size=(300, 2))
    np.testing.assert_array_equal(_leaves(cal.localizer, Xf), _leaves(cal2.localizer, Xf))
    if hasattr(cal, "grouping_"):
        assert cal.grouping_.names == cal2.grouping_.names and cal.grouping_.merged == cal2.grouping_.merged
        np.testing.assert_array_equal(cal.assign(Xf), cal2.assign(Xf))


def test_groups_are_learned_on_the_training_rows_weight_graph(monkeypatch):
    """The graph clustered is the training rows' weight graph (the slow reference), and every calibration and test
    point goes through the region rule of those clusters (the reference rule)."""
    seen = {}
    real = groupwise.cluster_graph

    def record(graph, how, **kw):
        seen["graph"], seen["clusters"] = graph, real(graph, how, **kw)
        return seen["clusters"]

    monkeypatch.setattr(groupwise, "cluster_graph", record)
    rng = np.random.default_rng(2)
    X, V = _hetero(rng, 300)
    Xr, Vr = _hetero(rng, 60)
    cal = _calibrator("lcp-rf-g", {"groups": "components", "min_group_size": 0}, Xr, Vr, n_estimators=3)
    cal.localizer.min_samples_leaf = 12
    cal.calibrate(X, V, alpha=0.1, rng=np.random.default_rng(0))
    leaves_r = _leaves(cal.localizer, Xr)
    ref = weight_graph_reference(leaves_r)
    np.testing.assert_allclose(seen["graph"].toarray(), np.array(ref, dtype=float), atol=1e-12)
    Xt = np.vstack([X[:40], np.random.default_rng(4).uniform(size=(40, 2))])
    units = cal.grouping_.regions.assign(Xt)
    for q, x in enumerate(_leaves(cal.localizer, Xt)):
        assert units[q] == region_reference(leaves_r, seen["clusters"], x)[0]


@pytest.mark.parametrize("method", ["lcp-rf-g", "split-g"])
def test_thresholds_within_each_group_are_the_references(method):
    rng = np.random.default_rng(3)
    X, V = _hetero(rng, 160)
    Xr, Vr = _hetero(rng, 200)
    cal = _calibrate(method, {"groups": "leiden", "min_group_size": 20}, X, V, Xr, Vr, alpha=0.2)
    codes = cal.assign(X)
    Xt = np.random.default_rng(4).uniform(size=(12, 2))
    th, _ = cal.grouped_thresholds(Xt, 0.2)
    codes_t = cal.assign(Xt)
    assert len(set(codes_t)) > 1, "the set-up must have several groups"
    for q in range(Xt.shape[0]):
        mine = np.flatnonzero(codes == codes_t[q])  # every calibration point is conformal
        if method == "split-g":
            assert th.t[q] == split_threshold_reference(list(V[mine]), "0.2")
            continue
        W = forest_lcp_matrix(_leaves(cal.localizer, X[mine]), _leaves(cal.localizer, Xt[q : q + 1])[0])
        assert isinstance(W[0][0], Fraction)
        ref = lcp_threshold(np.array(W, dtype=float), V[mine], 0.2)  # Guan's definition on the exact weights
        assert (th.t[q], bool(th.closed[q])) == (ref.t, ref.closed)


@pytest.mark.parametrize("method, options", [("qrf-tc", {}), ("lcp-rf", {"guarantee": "pac"})])
def test_pac_corrections_on_a_training_forest_match_brute_force(method, options):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(150, 2))
    V = np.round(np.abs((0.2 + X[:, 0]) * rng.normal(size=150)), 1)  # ties
    Xr, Vr = _hetero(rng, 300)
    cal = _calibrator(method, {**options, "pac_size": 0.4, "delta": 0.5}, Xr, Vr, alpha=0.3, n_estimators=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        cal.calibrate(X, V, alpha=0.3, rng=np.random.default_rng(3))
    loc, d1 = cal.localizer, cal.parts_["D1"]
    assert d1.size + cal.n2_ == 150  # D1 takes what the localizer part would have
    V1, L1, L2 = V[d1], _leaves(loc, X[d1]), _leaves(loc, cal.X2_)
    exact = [smallest_correction(L1, L2[j], V1, cal.V2_[j], "0.3", cal.base) for j in range(cal.n2_)]
    k = binomial_k_reference(cal.n2_, "0.3", "0.5")
    c = cal._correction(0.3)
    assert c.k == k and abs(c.a_hat - float(sorted(exact)[k - 1][0])) <= 1e-9


def test_configurations_without_a_training_forest_are_refused():
    Xr, Vr = _hetero(np.random.default_rng(0), 50)
    with pytest.raises(InputError, match="given labels.*localizer_data='calibration'"):
        _calibrator("lcp-rf-g", {"groups": "labels"}, Xr, Vr)
    with pytest.raises(InputError, match="honest=False.*localizer_data='calibration'"):
        _calibrator("lcp-rf-g", {}, Xr, Vr, honest=False)
    with pytest.raises(InputError, match="prefit=True.*localizer_data='calibration'"):
        _calibrator("qrf-tc", {}, Xr, Vr, prefit=True)
    # the target population's tuning would need likelihood ratios at the training rows
    X, V = _hetero(np.random.default_rng(2), 300)
    cal = _calibrator("lcp-rf", {"shift_tuning": "target"}, Xr, Vr)
    with pytest.raises(InputError, match="training part has none.*shift_tuning='calibration'"):
        cal.calibrate(X, V, alpha=0.1, rng=np.random.default_rng(0), likelihood_ratio=1 + X[:, 0])
    # a calibration without the training part (classification keeps none) is an error, never the localizer part
    rng = np.random.default_rng(1)
    X = rng.normal(size=(900, 2))
    y = np.where(X[:, 0] + rng.normal(size=900) > 0, "a", "b")
    # lcp-rf-g's classes are given labels (class-conditional): refused for that reason
    for method, why in [("lcp-rf", "did not keep"), ("qrf-tc", "did not keep"), ("lcp-rf-g", "given labels")]:
        clf = cf.ConformalClassifier(
            model="logit", method=method, alpha=0.1, random_state=0, options={"localizer_data": "training"}
        ).fit(X[:300], y[:300])
        with pytest.raises(InputError, match=f"{why}.*localizer_data='calibration'"):
            clf.conformalize(X[300:], y[300:])


def test_the_estimator_grows_on_the_training_part_and_the_summary_says_so():
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(1600, 2))
    y = X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=1600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        res = cf.conformal(
            "y ~ x1 + x2",
            data={"y": y[:1200], "x1": X[:1200, 0], "x2": X[:1200, 1]},
            method="lcp-rf-g",
            localizer_data="training",
            model="ols",
            n_estimators=10,
            random_state=0,
        )
    cal = res.estimator.calibrator_
    assert cal.n_grow_ == res.estimator.n_train_
    assert cal.sizes() == {"localizer (training)": cal.n_grow_, "conformal": cal.n_conformal_}
    assert "training part (5-fold out-of-fold scores)" in str(res.summary())
    assert "learned on the training part" in res.guarantee.sentence


# ------------------------------------------------------------------ --long Monte Carlo ---
def _two_regions(rng, n):
    """x1 < 0.4 (quiet) or > 0.6 (loud): the learned groups nest in the two regions."""
    X = rng.uniform(size=(n, 2))
    X[:, 0] = np.where(rng.uniform(size=n) < 0.5, 0.4 * X[:, 0], 0.6 + 0.4 * X[:, 0])
    return X, np.abs(np.where(X[:, 0] < 0.5, 0.2, 2.0) * rng.normal(size=n))


@pytest.mark.long
def test_group_conditional_coverage_with_a_training_forest():
    """P(Y in C(X) | region) >= 1 - alpha in both regions, over fresh training, calibration and test draws."""
    alpha, reps, n_test = 0.2, 150, 40
    hits: dict[bool, list[float]] = {True: [], False: []}
    for r in range(reps):
        rng = np.random.default_rng(2000 + r)
        X, V = _two_regions(rng, 120 + n_test)
        Xr, Vr = _two_regions(rng, 200)
        cal = _calibrate("lcp-rf-g", {"groups": "components"}, X[:120], V[:120], Xr, Vr, alpha=alpha, seed=r)
        cover = V[120:] <= cal.thresholds(X[120:], alpha).t
        quiet = X[120:, 0] < 0.5
        for region in (True, False):
            if (quiet == region).any():
                hits[region].append(float(np.mean(cover[quiet == region])))
    for region, h in hits.items():
        cover, se = float(np.mean(h)), float(np.std(h, ddof=1)) / np.sqrt(len(h))
        assert 1 - alpha - 3 * se <= cover <= 1 - alpha + 0.08, (region, cover, se)


@pytest.mark.long
@pytest.mark.parametrize("method, options", [("lcp-rf", {"guarantee": "pac"}), ("lcp-rf-g", {"guarantee": "pac"})])
def test_pac_guarantee_with_a_training_forest(method, options):
    """P(coverage given the data >= 1 - alpha) >= 1 - delta: the share of draws below 1 - alpha stays under delta."""
    alpha, delta, reps = 0.2, 0.2, 60
    test_rng = np.random.default_rng(7)
    Xt, Vt = _hetero(test_rng, 4000)  # coverage given the data, to about +-0.006
    short = []
    for r in range(reps):
        rng = np.random.default_rng(3000 + r)
        X, V = _hetero(rng, 240)
        Xr, Vr = _hetero(rng, 200)
        o = {**options, "delta": delta} if method == "lcp-rf" else {**options, "delta": delta, "groups": "components"}
        cal = _calibrate(method, o, X, V, Xr, Vr, alpha=alpha, seed=r)
        short.append(float(np.mean(Vt <= cal.thresholds(Xt, alpha).t)) < 1 - alpha)
    fails, se = float(np.mean(short)), np.sqrt(delta * (1 - delta) / reps)
    assert fails <= delta + 3 * se, (method, fails)


@pytest.mark.long
@pytest.mark.parametrize("method, options", [("lcp-rf", {}), ("lcp-rf-g", {"groups": "components"})])
def test_weighted_coverage_under_shift_with_a_training_forest(method, options):
    """Covariate shift with a known ratio w(x) = 2 x1 (target denser at large x1): target coverage >= 1 - alpha."""
    alpha, reps, n_test = 0.2, 80, 30
    hits = []
    for r in range(reps):
        rng = np.random.default_rng(4000 + r)
        X, V = _hetero(rng, 150)
        Xr, Vr = _hetero(rng, 200)
        w = 2 * X[:, 0]
        Xt = rng.uniform(size=(n_test, 2))
        Xt[:, 0] = np.sqrt(Xt[:, 0])  # density 2 x1: the target population
        Vt = np.abs((0.1 + 2 * Xt[:, 0]) * rng.normal(size=n_test))
        cal = _calibrate(method, options, X, V, Xr, Vr, alpha=alpha, seed=r, likelihood_ratio=w)
        hits.append(float(np.mean(Vt <= cal.thresholds(Xt, alpha, likelihood_ratio=2 * Xt[:, 0]).t)))
    cover, se = float(np.mean(hits)), float(np.std(hits, ddof=1)) / np.sqrt(reps)
    assert 1 - alpha - 3 * se <= cover <= 1 - alpha + 0.08, (method, cover, se)

"""Localizer diagnostics against per-tree references; assumption checks flip on hand-built fits."""

import warnings

import numpy as np
import pytest
from reference_diagnostics import (
    ess_reference,
    leaf_masses_reference,
    within_leaf_ratio_reference,
)
from sklearn.dummy import DummyRegressor

from confrf import ConformalRegressor
from confrf.exceptions import InfiniteIntervalWarning, InputError
from confrf.localizers import ForestLocalizer, KernelLocalizer
from confrf.localizers.diagnostics import (
    forest_ess,
    indexed_leaves,
    kernel_ess,
    leaf_masses,
    within_leaf_variance_ratio,
)
from confrf.results.diagnostics import FAIL, NOTE, OK, UNVERIFIABLE, assumption_checks, leaf_threshold

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")


@pytest.fixture(scope="module", params=[True, False], ids=["honest", "paper"])
def forest(request):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(260, 3))
    V = np.abs(rng.normal(size=260)) * (0.2 + X[:, 0])
    loc = ForestLocalizer(n_estimators=6, min_samples_leaf=4, random_state=0, honest=request.param)
    if request.param:
        loc.grow(X[:120], V[:120]).index(X[120:], V[120:])
        Xc, Vc, mult = X[120:], V[120:], np.ones((140, 6), dtype=np.int64)
    else:
        loc.fit(X[120:], V[120:])
        Xc, Vc, mult = X[120:], V[120:], loc.growing_multiplicity()
    return loc, Xc, Vc, mult


def test_indexed_leaves_are_the_trees_leaves(forest):
    loc, Xc, _, _ = forest
    np.testing.assert_array_equal(indexed_leaves(loc), loc.leaves(Xc))


def test_forest_ess_matches_per_tree_reference(forest):
    loc, Xc, _, mult = forest
    ess = forest_ess(loc)
    np.testing.assert_allclose(ess, ess_reference(loc.forest_, Xc, mult), rtol=1e-12)
    assert (ess >= 1.0).all() and (ess <= Xc.shape[0]).all()


def test_forest_ess_with_threads(forest):
    loc, Xc, _, mult = forest
    np.testing.assert_allclose(forest_ess(loc, n_threads=2), ess_reference(loc.forest_, Xc, mult), rtol=1e-12)


def test_kernel_ess_in_blocks(monkeypatch):
    import confrf.localizers.diagnostics as D

    monkeypatch.setattr(D, "_ROW_BLOCK_ENTRIES", 7 * 200)  # blocks of 7 rows
    test_kernel_ess_matches_dense_reference()


def test_leaf_masses_and_within_leaf_ratio_match_references(forest):
    loc, Xc, Vc, mult = forest
    assert np.array_equal(np.sort(leaf_masses(loc)), np.sort(leaf_masses_reference(loc.forest_, Xc, mult)))
    assert within_leaf_variance_ratio(loc) == pytest.approx(
        within_leaf_ratio_reference(loc.forest_, Xc, Vc, mult), rel=1e-10
    )


def test_kernel_ess_matches_dense_reference():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    V = np.abs(rng.normal(size=300))
    loc = KernelLocalizer(bandwidth=0.7).fit_reference(X[:100], V[:100], alpha=0.1, n_calibration=200, rng=rng)
    loc.index(X[100:], V[100:])
    Z = (X[100:] - X[:100].mean(0)) / X[:100].std(0)
    d2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    W = np.exp(-d2 / (2 * 0.7**2))
    W /= W.sum(1, keepdims=True)
    np.testing.assert_allclose(kernel_ess(loc), 1 / (W**2).sum(1), rtol=1e-10)


def _data(n=1000, seed=0, discrete=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = X[:, 0] + (0.2 + X[:, 0]) * rng.normal(size=n)
    return X, (np.round(y) if discrete else y)


def _fit(n_cal=1000, **kw):
    X, y = _data(400 + n_cal, discrete=kw.pop("discrete", False))
    model = kw.pop("model", "ols")
    est = ConformalRegressor(model=model, random_state=0, n_estimators=kw.pop("n_estimators", 5), **kw)
    return est.fit(X[:400], y[:400]).conformalize(X[400:], y[400:])


def test_leaf_check_flips_with_leaf_size():
    tiny = assumption_checks(_fit(min_samples_leaf=1), 0.1)
    huge = assumption_checks(_fit(min_samples_leaf=200), 0.1)
    # A3 is a condition of the asymptotic theory: below the bar it is a neutral note, never warn/fail
    assert tiny.status["A3"] == NOTE and huge.status["A3"] == OK
    assert "not the guarantee" in " ".join(tiny.notes)
    row = huge.table.set_index("check").loc["leaf mass N, min"]
    assert row["value"] >= leaf_threshold(500, 1.01) == row["reference_value"]
    assert tiny.table.set_index("check").loc["share of leaves below", "value"] > 0.5
    assert "set min_samples_leaf to about" in " ".join(tiny.notes)


def test_leaf_check_uses_beta_and_tree_exponent():
    est = _fit(min_samples_leaf=200)
    assert assumption_checks(est, 0.1, beta=1.01).status["A3"] == OK
    # a larger beta raises the bar above the leaves' mass
    assert assumption_checks(est, 0.1, beta=3.0).status["A3"] == NOTE
    # k = 5 trees against n^a = 500^0.1 = 1.86
    t = assumption_checks(est, 0.1, tree_exponent=0.1).table.set_index("check")
    assert t.loc["trees k", "status"] == NOTE and t.loc["trees k", "reference_value"] == pytest.approx(500**0.1)
    with pytest.raises(InputError, match="beta"):
        assumption_checks(est, 0.1, beta=1.0)
    with pytest.raises(InputError, match="tree_exponent"):
        assumption_checks(est, 0.1, tree_exponent=0)


def test_tie_check_flips_on_discrete_scores():
    cont = assumption_checks(_fit(min_samples_leaf=50), 0.1)
    disc = assumption_checks(_fit(min_samples_leaf=50, discrete=True, model=DummyRegressor()), 0.1)
    assert cont.status["A1"] == OK and disc.status["A1"] == NOTE  # ties do not threaten the guarantee
    est = _fit(min_samples_leaf=50, discrete=True, model=DummyRegressor())
    V = est.calib_scores_
    tied = np.mean([np.sum(V == v) > 1 for v in V])
    assert disc.table.set_index("check").loc["share of tied scores", "value"] == tied
    assert cont.status["A2"] == UNVERIFIABLE


def test_group_check_flips_on_a_small_group():
    X, y = _data(1400)
    labels = np.where(np.arange(1000) < 5, "tiny", "big")
    est = ConformalRegressor(model="ols", method="split-g", options={"groups": "labels"}, random_state=0)
    est.fit(X[:400], y[:400])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteIntervalWarning)
        est.conformalize(X[400:], y[400:], groups=labels)
    checks = assumption_checks(est, 0.1)
    assert checks.status == {"Groups": FAIL}
    t = checks.table.set_index("check")
    assert t.loc["smallest group (conformal)", "value"] == 5 and t.loc["groups below", "value"] == 1
    big = ConformalRegressor(model="ols", method="split-g", options={"groups": "labels"}, random_state=0)
    big.fit(X[:400], y[:400]).conformalize(X[400:], y[400:], groups=np.where(np.arange(1000) < 500, "a", "b"))
    assert assumption_checks(big, 0.1).status == {"Groups": OK}


def test_group_check_follows_the_pac_count():
    """With guarantee='pac' a group needs the binomial correction's count, not split conformal's ceil(1/alpha) - 1."""
    X, y = _data(1400)
    labels = np.where(np.arange(1000) < 20, "tiny", "big")
    checks = {}
    for guarantee in ("marginal", "pac"):
        est = ConformalRegressor(
            model="ols", method="split-g", options={"groups": "labels", "guarantee": guarantee}, random_state=0
        ).fit(X[:400], y[:400])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InfiniteIntervalWarning)
            est.conformalize(X[400:], y[400:], groups=labels)
        part, need = est.calibrator_.required_points(0.1)
        t = assumption_checks(est, 0.1).table.set_index("check")
        assert t.loc[f"smallest group ({part})", "value"] == 20
        assert t.loc[f"smallest group ({part})", "reference"] == f">= {need}"
        # the check agrees with the intervals: the tiny group's are infinite exactly when it fails
        finite = bool(np.isfinite(est.predict_interval(X[400:401], groups=["tiny"])).all())
        checks[guarantee] = (t.loc[f"smallest group ({part})", "status"], finite, need)
    assert checks["marginal"] == ("ok", True, 9)
    assert checks["pac"][:2] == ("fail", False) and checks["pac"][2] > 20


def test_group_leaf_masses_count_the_leaves_a_group_reaches():
    """LCP-RF-G's groups share one forest: a group's A3 leaves are those its conformal points reach, never the
    other groups' leaves, which are empty by construction (they made the check read 'min 0, median 0')."""
    X, y = _data(1400)
    est = ConformalRegressor(
        model="ols",
        method="lcp-rf-g",
        options={"groups": "labels"},
        n_estimators=5,
        min_samples_leaf=10,
        random_state=0,
    ).fit(X[:400], y[:400])
    Xc = X[400:]
    labels = np.where(Xc[:, 0] < 0.5, "low", "high")  # groups in disjoint halves of x0
    est.conformalize(Xc, y[400:], groups=labels)
    cal = est.calibrator_
    conf = cal.parts_["conformal"]
    masses = []
    for g in ("low", "high"):
        rows = conf[labels[conf] == g]
        N = leaf_masses_reference(cal.localizer.forest_, Xc[rows], np.ones((rows.shape[0], 5), dtype=np.int64))
        assert np.mean(N == 0) > 0.3  # the other half's leaves: empty for this group
        masses.append(N[N > 0])
    N = np.concatenate(masses)
    t = assumption_checks(est, 0.1).table.set_index("check")
    assert t.loc["leaf mass N, min", "value"] == N.min() >= 1
    assert t.loc["leaf mass N, median", "value"] == np.median(N)


def test_no_checks_for_split():
    assert assumption_checks(_fit(method="split"), 0.1) is None

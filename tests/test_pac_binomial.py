"""The exact binomial (order-statistic) PAC bound: k, the corrections and a_hat against brute force.

References in tests/reference_pac.py (exact rationals); the Monte Carlo check of the
statement is in tests/test_pac_coverage_mc.py.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from reference_pac import (
    binomial_k_reference,
    binomial_tail_exact,
    pac_row_levels,
    quantile,
    smallest_correction,
    upper_quantile,
)

import confrf as cf
from confrf.calibrators.pac import PACForestCalibrator
from confrf.calibrators.pac_bounds import binomial_k, binomial_tail
from confrf.calibrators.pac_correction import ForestPACMap, binomial_correction, levels
from confrf.exceptions import InfiniteIntervalWarning, InputError, PACTargetWarning
from confrf.localizers import ForestLocalizer


# ---------------------------------------------------------------------- k ---
@pytest.mark.parametrize("alpha", ["0.1", "0.05", "0.2", "0.37", "0.5"])
@pytest.mark.parametrize("delta", ["0.1", "0.05", "0.5", "0.01"])
def test_k_matches_brute_force(alpha, delta):
    for n2 in list(range(1, 70)) + [266, 267, 333, 667]:
        assert binomial_k(n2, float(alpha), float(delta)) == binomial_k_reference(n2, alpha, delta), n2


@pytest.mark.parametrize("n2, alpha, k", [(2, "0.5", 2), (3, "0.5", 3), (4, "0.5", 4), (10, "0.5", 8)])
def test_k_boundary_tail_equal_to_delta_is_accepted(n2, alpha, k):
    # delta equal to a tail value exactly: "<= delta" accepts it
    tail = binomial_tail_exact(n2, alpha, k)
    delta = float(tail)
    assert Fraction(repr(delta)) == tail  # the tail is a short decimal here
    assert binomial_k(n2, float(alpha), delta) == k == binomial_k_reference(n2, alpha, repr(delta))
    # a hair below: the next k
    assert binomial_k(n2, float(alpha), delta * (1 - 1e-12)) == k + 1


def test_k_above_n2_when_no_order_statistic_qualifies():
    # (1 - alpha)^n2 > delta: even the largest point fails; n2 = 21 at alpha = delta = 0.1 (0.9^21 = 0.109)
    assert binomial_k(21, 0.1, 0.1) == 22 and binomial_k(22, 0.1, 0.1) == 22
    assert cf.pac_n2(alpha=0.1, delta=0.1) == 22
    assert math.isinf(cf.pac_epsilon(21, alpha=0.1, delta=0.1))
    # the numbers: n2 = 266 asks for 247/266, n2 = 667 for 611/667
    assert binomial_k(266, 0.1, 0.1) == 247 and binomial_k(667, 0.1, 0.1) == 611


def test_k_large_n2_uses_float_tail_with_margin():
    for n2 in (5000, 20000):
        k = binomial_k(n2, 0.1, 0.1)
        assert binomial_tail(n2, 0.1, k) <= 0.1 < binomial_tail(n2, 0.1, k - 1)


def test_planning_helpers_binomial():
    for n2 in (30, 100, 266, 1000):
        k = binomial_k(n2, 0.1, 0.1)
        eps = cf.pac_epsilon(n2, alpha=0.1, delta=0.1)
        assert eps == pytest.approx(k / n2 - 0.9, abs=1e-15)
        assert cf.pac_delta(n2, epsilon=eps, alpha=0.1) <= 0.1  # the inverse: the same target count
        assert cf.pac_delta(n2, epsilon=eps, alpha=0.1) == pytest.approx(binomial_tail(n2, 0.1, k))
        # binomial is tighter than Hoeffding at K = 20 (and K = 1)
        assert eps < cf.pac_epsilon(n2, 20, 0.1) and eps < cf.pac_epsilon(n2, 1, 0.1)
    for eps in (0.1, 0.05, 0.02):
        n = cf.pac_n2(alpha=0.1, delta=0.1, epsilon=eps)
        assert cf.pac_epsilon(n, alpha=0.1, delta=0.1) <= eps
        assert all(cf.pac_epsilon(m, alpha=0.1, delta=0.1) > eps for m in range(22, n))  # smallest
    assert cf.pac_n2(20, 0.1, 0.05) == 1060 == cf.pac_n2(K=20, delta=0.1, epsilon=0.05, bound="hoeffding")
    for call, match in [
        (lambda: cf.pac_n2(delta=0.1), "alpha"),
        (lambda: cf.pac_epsilon(100, 20, 0.1, alpha=0.1, bound="binomial"), "K"),
        (lambda: cf.pac_n2(delta=0.1, epsilon=0.1, bound="hoeffding"), "needs K"),
        (lambda: cf.pac_n2(alpha=0.1, bound="bayes"), "bound must be"),
        (lambda: cf.pac_delta(100, alpha=0.1), "epsilon"),
    ]:
        with pytest.raises(InputError, match=match):
            call()


# ----------------------------------------------------- corrections, a_hat ---
def _leaves(loc, X):
    return loc.forest_.apply(X.astype(np.float32)).astype(np.int64)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(320, 2))
    V = np.round(np.abs((0.2 + X[:, 0]) * rng.normal(size=320)), 1)  # ties
    return X, V


@pytest.mark.parametrize("base", ["qrf", "lcp"])
@pytest.mark.parametrize("alpha, delta", [("0.3", "0.5"), ("0.1", "0.1")])
def test_corrections_and_a_hat_match_brute_force(small, base, alpha, delta):
    X, V = small
    loc = ForestLocalizer(n_estimators=4, min_samples_leaf=8, random_state=2)
    cal = PACForestCalibrator(loc, base=base, pac_size=0.4, delta=float(delta))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteIntervalWarning)
        cal.calibrate(X[:260], V[:260], alpha=float(alpha), rng=np.random.default_rng(3))
    d1 = cal.parts_["D1"]
    V1, L1 = V[:260][d1], _leaves(loc, X[:260][d1])
    L2 = _leaves(loc, cal.X2_)
    n2 = cal.n2_
    exact = [smallest_correction(L1, L2[j], V1, cal.V2_[j], alpha, base) for j in range(n2)]
    A, _ = cal.map_.smallest_corrections(cal.X2_, cal.V2_, float(alpha))
    # the float correction is the exact one up to the kernel's 1e-12 tolerance and rounding
    np.testing.assert_allclose(A, [float(a) for a, _ in exact], rtol=0, atol=1e-9)
    # ... and it is the smallest float that covers: covered at A, not at the float below
    W, b = cal.map_.rows(cal.X2_, float(alpha))
    at = cal.map_.quantiles(W, levels(b, A)[:, None])[:, 0]
    assert (cal.V2_ <= at).all()
    pos = A > -1
    below = cal.map_.quantiles(W, levels(b, np.nextafter(A, -2.0))[:, None])[:, 0]
    assert (cal.V2_[pos] > below[pos]).all()
    # k and a_hat: the k-th smallest exact correction, ties included
    k = binomial_k_reference(n2, alpha, delta)
    c = cal._correction(float(alpha))
    assert c.k == k and k <= n2
    a_ref = sorted(exact)[k - 1]
    assert abs(c.a_hat - float(a_ref[0])) <= 1e-9
    assert c.covered == sum(1 for a in exact if a <= a_ref) >= k  # every point tied with the k-th is covered
    # the D2 count seen by the kernel (D2 points scored like test points) equals #{A_j <= a_hat}
    t2 = cal.thresholds(cal.X2_, float(alpha)).t
    assert int(np.count_nonzero(cal.V2_ <= t2)) == c.covered
    # test rows: the threshold is the exact map's, at the exact a_hat approached from above
    Xt = X[260:]
    th = cal.thresholds(Xt, float(alpha)).t
    Lt = _leaves(loc, Xt)
    for q in range(Xt.shape[0]):
        b_q, atoms = pac_row_levels(L1, Lt[q], V1, alpha, base)
        lvl = min(Fraction(1), b_q + a_ref[0])  # > 0 here: a_ref is a D2 point's F((-inf, v)) - b
        assert th[q] in (quantile(lvl, atoms), upper_quantile(lvl, atoms)), q


def test_hand_checked_uniform_weights():
    # one leaf per tree: F_x puts 1/10 on each D1 score 1..9 and 1/10 on +inf (own mass)
    X1 = np.zeros((9, 1))
    loc = ForestLocalizer(n_estimators=3, min_samples_leaf=50, random_state=0).grow(np.zeros((60, 1)), np.zeros(60))
    loc.index(X1, np.arange(1.0, 10.0))
    pmap = ForestPACMap(loc, "qrf")
    X2 = np.zeros((6, 1))
    V2 = np.array([0.5, 5.5, 6.5, 7.5, 8.5, 9.5])
    # alpha = 0.5: b = 0.5; F_x((-inf, v)) = 0, .5, .6, .7, .8, .9, so A = -1 (no score below: covered at every
    # level, from the bottom of the search range), 0, .1, .2, .3, .4 (each + 1e-12: covered just above);
    # P(Bin(6, 0.5) >= 3) = 42/64 > 0.5 >= P(Bin(6, 0.5) >= 4) = 22/64: k = 4, a_hat = A_(4) = 0.2+;
    # the level 0.7+ passes F(7) = 0.7, so t = Q(0.7+) = 8 and 4 of the 6 D2 points are covered
    c = binomial_correction(pmap, X2, V2, 0.5, 0.5, 0.02)
    assert c.k == 4 and c.a_hat == pytest.approx(0.2, abs=1e-9) and c.a_hat > 0.2 and c.covered == 4
    assert pmap.thresholds(np.zeros((2, 1)), 0.5, c.a_hat).t.tolist() == [8.0, 8.0]
    # lcp base: m_req = ceil(0.5 * 10) = 5, t = 5, b = F((-inf, 5]) = 0.5: the same numbers
    c2 = binomial_correction(ForestPACMap(loc, "lcp"), X2, V2, 0.5, 0.5, 0.02)
    assert c2.k == 4 and c2.a_hat == pytest.approx(0.2, abs=1e-9)


@pytest.mark.parametrize("base", ["qrf", "lcp"])
@pytest.mark.parametrize("seed", range(4))
def test_binomial_never_larger_than_hoeffding(base, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(1500, 3))
    V = np.abs((0.3 + X[:, 0]) * rng.normal(size=1500))
    Xt = rng.uniform(size=(300, 3))
    loc = dict(n_estimators=10, min_samples_leaf=10, random_state=seed)
    out = {}
    for name, kw in [("binomial", {}), ("hoeffding", {"grid_size": 20}), ("hoeffding5", {"grid_size": 5})]:
        cal = PACForestCalibrator(ForestLocalizer(**loc), base=base, delta=0.1, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cal.calibrate(X, V, alpha=0.1, rng=np.random.default_rng(seed))
        out[name] = cal
    b = out["binomial"]
    for h in (out["hoeffding"], out["hoeffding5"]):
        assert all((b.parts_[p] == h.parts_[p]).all() for p in b.parts_)  # same parts, same forest
        cb, ch = b._correction(0.1), h._correction(0.1)
        assert cb.k <= ch.k and cb.a_hat <= ch.a_hat
        assert (b.thresholds(Xt, 0.1).t <= h.thresholds(Xt, 0.1).t).all()


# ------------------------------------------------------- fit-time checks ---
def test_refuses_d2_too_small_for_any_finite_interval():
    sim = cf.datasets.make_sim(120, random_state=0)  # 60 calibration rows, n2 = 20 < 22
    with pytest.raises(InputError, match=r"D2 has 20 point\(s\).*needs at least 22 points"):
        cf.qrf_tc(sim.formula, data=sim.frame, model="ols", random_state=0, n_estimators=10)


def test_warns_when_many_intervals_would_be_infinite():
    sim = cf.datasets.make_sim(1200, random_state=1)
    # leaves of 3 localizer points: D1 leaf-mates are few, the own mass is large, many levels reach it
    with pytest.warns(InfiniteIntervalWarning, match="will be infinite"):
        cf.qrf_tc(sim.formula, data=sim.frame, model="ols", random_state=0, n_estimators=5, min_samples_leaf=3)


def test_default_fit_at_800_calibration_points_is_finite():
    sim = cf.datasets.make_sim(1600, random_state=3)
    test = cf.datasets.make_sim(1000, random_state=4)
    for fit in (cf.qrf_tc, lambda *a, **k: cf.lcp_rf(*a, guarantee="pac", **k)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", InfiniteIntervalWarning)
            warnings.simplefilter("error", PACTargetWarning)
            res = fit(sim.formula, data=sim.frame, model="ols", random_state=0, n_estimators=50)
            p = res.predict(test.frame)
        assert np.isfinite(p["upr"]).mean() > 0.98 and res.pac_report().d2_infinite <= 0.02


# ---------------------------------------------------------- groupwise PAC ---
def test_groupwise_pac_per_group_corrections_and_report():
    import pickle

    from confrf.calibrators.groupwise_pac import PACLCPForestGroupCalibrator

    sim = cf.datasets.make_sim(3000, random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteIntervalWarning)
        res = cf.conformal(
            sim.formula,
            data=sim.frame,
            method="lcp-rf-g",
            guarantee="pac",
            groups="components",
            model="ols",
            random_state=0,
            n_estimators=20,
            min_samples_leaf=40,
        )
    cal = res.estimator.calibrator_
    assert isinstance(cal, PACLCPForestGroupCalibrator)
    rep = res.pac_report()
    L = int((cal.counts_["D2"] > 0).sum())
    assert rep.n2 == res.nobs["D2"] == cal.counts_["D2"].sum() and f"delta/L = 0.1/{L}" in rep.sentence
    assert res.guarantee.kind == "pac" and "simultaneously in every group" in res.guarantee.sentence
    for code, name in enumerate(cal.grouping_.names):
        rows = np.flatnonzero(cal.d2_codes_ == code)
        row = rep.groups.loc[name]
        assert (
            row["n2"] == rows.size and row["k"] == binomial_k_reference(rows.size, "0.1", repr(0.1 / L))
            if rows.size
            else row["k"] == 1
        )
        if rows.size and row["finite"]:
            c = binomial_correction(
                ForestPACMap(cal.group_localizers_[code], "lcp"), cal.X2_[rows], cal.V2_[rows], 0.1, 0.1 / L, 0.02
            )
            assert c.a_hat == row["a_hat"] and c.covered / rows.size == row["d2_coverage"]
    s = res.summary()
    assert "k (order statistic)" not in str(s) and "k" in s.frames["groups"].columns
    assert "Groups with points L:" in str(s)
    assert rep.n_groups == L and rep.delta_group == pytest.approx(0.1 / L)
    new = sim.frame.tail(50)
    pd_equal = pickle.loads(pickle.dumps(res)).predict(new).equals(res.predict(new))
    assert pd_equal

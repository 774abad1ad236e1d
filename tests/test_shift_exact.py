"""The covariate-shift (weighted) thresholds against slow references written from the definitions.

Weights are small integers and halves, so that the rationals of the reference
and the floats of the code are the same numbers. The code's stated tolerance
(a score is rejected once the covered p-mass reaches 1 - alpha + 1e-9) is
given to the reference as ``slack``; with slack 0 (the exact definition) the
code's sets must contain the reference's.
"""

from fractions import Fraction

import numpy as np
import pytest
from reference import forest_lcp_matrix
from reference_shift import weighted_lcp_threshold_reference, weighted_split_reference
from test_lcp_exact import _random_forest_leaves, _random_instance, _to_weights

from confrf import _kernels, lcp_threshold
from confrf._validation import required_count
from confrf.calibrators import LCPForestCalibrator, SplitCalibrator
from confrf.localizers.leaf_index import LeafIndex
from confrf.localizers.weighted import ForestShiftIndex
from confrf.shift.weighted import ShiftWeights, distinct_cumulative

ALPHAS = ["0.05", "0.1", "0.2", "0.5"]
SLACK = Fraction(1, 10**9)  # the tolerance the code states (shift/weighted.py: SHIFT_TOL)
WEIGHTS = [0.0, 0.5, 1.0, 2.0, 3.0]


def _ratios(rng, n):
    """n calibration ratios (not all 0) and the test point's, from WEIGHTS; sometimes a huge test ratio."""
    w = rng.choice(WEIGHTS, size=n + 1)
    if not np.any(w[:n] > 0):
        w[int(rng.integers(0, n))] = 1.0
    if rng.random() < 0.15:
        w[n] = 64.0  # the test point's own mass at +inf dominates: infinite thresholds
    return w


def _frac(w):
    return [Fraction(float(x)) for x in w]


def _slack(w):
    """Equal ratios take the exact integer rule (no tolerance); others the stated tolerance."""
    return Fraction(0) if np.all(np.asarray(w) == w[0]) else SLACK


def _contains(t, closed, t_ref, closed_ref):
    """(-inf, t] / (-inf, t) contains the reference's set."""
    return t > t_ref or (t == t_ref and (closed or not closed_ref))


@pytest.mark.parametrize("kind", ["asymmetric", "symmetric", "uniform"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_general_weighted_matches_reference(kind, alpha):
    rng = np.random.default_rng(31 + ALPHAS.index(alpha) + 10 * ["asymmetric", "symmetric", "uniform"].index(kind))
    for _rep in range(8):
        n = int(rng.integers(1, 8))
        K, V = _random_instance(rng, n, kind)
        Wf, Wfloat = _to_weights(K)
        w = _ratios(rng, n)
        got = lcp_threshold(Wfloat, V, float(alpha), likelihood_ratio=w)
        assert (got.t, got.closed) == weighted_lcp_threshold_reference(Wf, list(V), _frac(w), alpha, _slack(w)), (
            kind,
            alpha,
            K,
            V,
            w,
        )
        t_exact, c_exact = weighted_lcp_threshold_reference(Wf, list(V), _frac(w), alpha)
        assert _contains(got.t, got.closed, t_exact, c_exact)


def test_equal_ratios_give_the_unweighted_threshold_exactly():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(1, 30))
        K, V = _random_instance(rng, n, "asymmetric")
        W = K / K.sum(1, keepdims=True)
        c = float(rng.choice([1.0, 0.3, 7.25]))
        for alpha in (0.1, 0.2, 0.5):
            assert lcp_threshold(W, V, alpha, likelihood_ratio=np.full(n + 1, c)) == lcp_threshold(W, V, alpha)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_weighted_split_matches_reference(alpha):
    rng = np.random.default_rng(11 + ALPHAS.index(alpha))
    for rep in range(60):
        n = int(rng.integers(1, 15))
        V = (rng.integers(-2, 4, size=n) if rep % 2 else rng.normal(size=n)).astype(float)  # ties, negatives
        w = _ratios(rng, n)
        cal = _split(V, w[:n])
        th = cal.thresholds(np.zeros((1, 1)), float(alpha), likelihood_ratio=w[n:])
        assert th.t[0] == weighted_split_reference(list(V), _frac(w), alpha, _slack(w)), (V, w)
        assert th.closed[0]
        # the uniform LCP matrix is split conformal, weighted or not
        W = np.full((n + 1, n + 1), 1.0 / (n + 1))
        assert lcp_threshold(W, V, float(alpha), likelihood_ratio=w).t == th.t[0]


def _split(V, w_cal):
    """A weighted SplitCalibrator on V, bypassing the size check that refuses tiny calibration sets."""
    cal = SplitCalibrator()
    order = np.argsort(V, kind="stable")
    cal.sorted_scores_ = np.asarray(V)[order]
    cal.shift_ = ShiftWeights(np.asarray(w_cal, dtype=float)[order])
    cal._distinct = distinct_cumulative(cal.sorted_scores_, cal.shift_.w)
    return cal


def test_weighted_split_equal_ratios_is_split_bit_for_bit():
    rng = np.random.default_rng(3)
    V = rng.exponential(size=101)
    plain = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None)
    for c in (1.0, 0.7):
        weighted = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None, likelihood_ratio=np.full(101, c))
        for a in (0.05, 0.1, 0.2):
            a_th, b_th = plain.thresholds(np.zeros((3, 1)), a), weighted.thresholds(np.zeros((3, 1)), a, np.full(3, c))
            assert np.array_equal(a_th.t, b_th.t) and np.array_equal(a_th.level, b_th.level)


# --------------------------------------------------------------------------
# The weighted forest kernel, fed leaf assignments directly


def _weighted_kernel(cal_leaves, test_leaves, V, w_cal, w_test, alpha, mult=None, gather="auto"):
    n, k = cal_leaves.shape
    n_leaves = int(max(cal_leaves.max(), test_leaves.max())) + 1
    if mult is None:
        mult = np.ones((n, k), dtype=np.int32)
    index = LeafIndex.build(np.ascontiguousarray(cal_leaves, dtype=np.int64), V, mult, np.zeros(k, np.int64), n_leaves)
    shift = ShiftWeights(np.asarray(w_cal, dtype=float))
    si = ForestShiftIndex.build(index, shift.w)
    return _kernels.lcp_rf_thresholds_weighted(
        np.ascontiguousarray(test_leaves, dtype=np.int64),
        index.leaf_ptr,
        index.member_rank,
        index.member_mult,
        index.below,
        index.leaf_pop,
        index.scores_r,
        index.p2_r,
        index.sorted_p2,
        si.cumw_p2,
        si.w_r,
        shift.requirement(float(alpha), np.asarray(w_test, dtype=float)),
        n_threads=2,
        gather=gather,
    )


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("with_mult", [False, True])
@pytest.mark.parametrize("gather", ["sort", "bitmap"])
def test_weighted_forest_kernel_matches_reference(alpha, with_mult, gather):
    rng = np.random.default_rng(17 + ALPHAS.index(alpha) + 10 * with_mult)
    for rep in range(12):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, 4))
        cal, test = _random_forest_leaves(rng, n, k, int(rng.integers(1, 4)), 2)
        V = (rng.integers(0, 3, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        mult = None
        if with_mult:
            mult = rng.integers(0, 3, size=(n, k)).astype(np.int32)
            for tree in range(k):
                for leaf in np.unique(cal[:, tree]):
                    sel = np.flatnonzero(cal[:, tree] == leaf)
                    if mult[sel, tree].sum() == 0:
                        mult[sel[0], tree] = 1
        ws = [_ratios(rng, n) for _ in range(test.shape[0])]
        w_cal = ws[0][:n]
        w_test = np.array([w[n] for w in ws])
        t, closed, _ = _weighted_kernel(cal, test, V, w_cal, w_test, alpha, mult, gather)
        for q in range(test.shape[0]):
            W = forest_lcp_matrix(cal, test[q], mult)
            w = _frac(np.append(w_cal, w_test[q]))
            # the raw kernel always applies the tolerance (the calibrator routes equal ratios elsewhere)
            assert (t[q], bool(closed[q])) == weighted_lcp_threshold_reference(W, list(V), w, alpha, SLACK), (
                alpha,
                cal,
                test[q],
                V,
                w,
            )


@pytest.mark.parametrize("n, k, leaves_per_tree", [(300, 40, 3), (6000, 25, 40)])
def test_weighted_forest_kernel_gathers_agree_bitwise(n, k, leaves_per_tree):
    """As the unweighted kernel: the sorting and the bitmap gather give identical weighted thresholds."""
    rng = np.random.default_rng(n + k)
    cal, test = _random_forest_leaves(rng, n, k, leaves_per_tree, 300)
    V = np.round(rng.exponential(size=n), 1)
    w_cal, w_test = rng.exponential(size=n), rng.exponential(size=test.shape[0]) * 3
    out = {g: _weighted_kernel(cal, test, V, w_cal, w_test, 0.1, gather=g) for g in ("sort", "bitmap", "auto")}
    assert np.isfinite(out["sort"][0]).mean() > 0.5
    for g in ("bitmap", "auto"):
        for a, b in zip(out["sort"], out[g]):
            np.testing.assert_array_equal(a, b, err_msg=g)


@pytest.mark.long  # dense (n+1) x (n+1) matrices for every test point
def test_weighted_forest_kernel_matches_general_function_at_scale():
    rng = np.random.default_rng(23)
    for alpha in (0.1, 0.2):
        n, k = 150, 8
        cal, test = _random_forest_leaves(rng, n, k, 6, 20)
        V = np.round(rng.exponential(size=n), 1)  # many ties
        w_cal = rng.exponential(size=n)
        w_test = rng.exponential(size=test.shape[0]) * 3
        t, closed, level = _weighted_kernel(cal, test, V, w_cal, w_test, alpha)
        for q in range(test.shape[0]):
            W = np.array(forest_lcp_matrix(cal, test[q]), dtype=float)
            res = lcp_threshold(W, V, alpha, likelihood_ratio=np.append(w_cal, w_test[q]))
            assert (t[q], bool(closed[q])) == (res.t, res.closed)
            assert level[q] == pytest.approx(res.level)


def test_weighted_forest_calibrator_equal_ratios_bit_for_bit():
    """LCP-RF with every ratio equal (1, or any constant) gives today's thresholds exactly."""
    from confrf.localizers import ForestLocalizer

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 3))
    V = X[:, 0] * rng.exponential(size=600)
    Xt = rng.uniform(size=(200, 3))

    def fit(w):
        loc = ForestLocalizer(n_estimators=30, min_samples_leaf=10, max_features=1.0, random_state=0)
        return LCPForestCalibrator(loc).calibrate(X, V, alpha=0.1, rng=np.random.default_rng(1), likelihood_ratio=w)

    plain = fit(None).thresholds(Xt, 0.1)
    for c in (1.0, 2.5):
        got = fit(np.full(600, c)).thresholds(Xt, 0.1, likelihood_ratio=np.full(200, c))
        for field in ("t", "closed", "level"):
            assert np.array_equal(getattr(plain, field), getattr(got, field))


def test_weighted_forest_threshold_monotone_in_test_ratio():
    """A larger w(x) puts more mass at +inf: the threshold can only grow (and ends infinite)."""
    from confrf.localizers import ForestLocalizer

    rng = np.random.default_rng(2)
    X = rng.uniform(size=(400, 2))
    V = rng.exponential(size=400)
    w = rng.exponential(size=400)
    loc = ForestLocalizer(n_estimators=20, min_samples_leaf=10, max_features=1.0, random_state=0)
    cal = LCPForestCalibrator(loc).calibrate(X, V, alpha=0.1, rng=np.random.default_rng(1), likelihood_ratio=w)
    x = np.repeat(rng.uniform(size=(1, 2)), 6, axis=0)
    t = cal.thresholds(x, 0.1, likelihood_ratio=np.array([0.0, 0.5, 1.0, 4.0, 30.0, 1e6])).t
    assert np.all(t[1:] >= t[:-1]) and np.isinf(t[-1])


def test_required_count_and_requirement_agree_on_the_unweighted_rule():
    # (1 - alpha)(n + 1) with unit weights: the weighted rule rejects at the same count unless it is an exact tie
    for n in (9, 10, 57, 200):
        for alpha in (0.1, 0.13, 0.5):
            req = ShiftWeights(np.ones(n)).requirement(alpha, np.array([1.0]))[0]
            m = required_count(alpha, n)
            assert m - 1 < req <= m + 1e-6


def test_reweighted_equals_calibrating_again():
    from confrf.localizers import ForestLocalizer

    rng = np.random.default_rng(4)
    X = rng.uniform(size=(500, 2))
    V = X[:, 0] * rng.exponential(size=500)
    w = np.exp(3 * X[:, 0])
    Xt = rng.uniform(size=(100, 2))
    wt = np.exp(3 * Xt[:, 0])

    def fit(ratio):
        loc = ForestLocalizer(n_estimators=20, min_samples_leaf=10, max_features=1.0, random_state=0)
        return LCPForestCalibrator(loc).calibrate(X, V, alpha=0.1, rng=np.random.default_rng(1), likelihood_ratio=ratio)

    plain, weighted = fit(None), fit(w)
    for a, b, kw in ((plain.reweighted(w), weighted, {"likelihood_ratio": wt}), (weighted.reweighted(), plain, {})):
        for field in ("t", "closed", "level"):
            assert np.array_equal(
                getattr(a.thresholds(Xt, 0.1, **kw), field), getattr(b.thresholds(Xt, 0.1, **kw), field)
            )


@pytest.mark.parametrize("alpha", ["0.2", "0.35", "0.5"])
@pytest.mark.parametrize("case", ["mixed", "constant calibration ratios"])
def test_weighted_lcp_rf_calibrator_matches_reference(alpha, case):
    """The calibrator end to end (honest split, forest, the conformal points' ratios, each row's own w(x), the
    routing of equal ratios to the integer rule) against the rational reference, row by row.

    Test ratios include 0 (the calibration points alone), the calibration points' common value (the integer
    rule), other values, and 64 (more than alpha / (1 - alpha) times the total: +inf)."""
    from confrf.localizers import ForestLocalizer

    rng = np.random.default_rng(41 + int(100 * float(alpha)) + 1000 * (case == "mixed"))
    for rep in range(2):
        n = 16
        X = rng.uniform(size=(n, 2))
        V = (rng.integers(0, 4, size=n) if rep % 2 else np.round(rng.normal(size=n), 2)).astype(float)
        w = np.ones(n) if case != "mixed" else rng.choice(WEIGHTS, size=n)
        if not np.any(w > 0):
            w[0] = 1.0
        Xt = np.vstack([X[:3], rng.uniform(size=(3, 2))])  # calibration rows too: shared leaves, ties
        w_test = np.array([0.0, 1.0, 2.0, 0.5, 3.0, 64.0])
        loc = ForestLocalizer(n_estimators=3, min_samples_leaf=2, max_features=1.0, random_state=rep)
        cal = LCPForestCalibrator(loc).calibrate(
            X, V, alpha=float(alpha), rng=np.random.default_rng(rep), likelihood_ratio=w
        )
        conf = cal.conformal_rows_
        if not np.any(w[conf] > 0):
            continue
        th = cal.thresholds(Xt, float(alpha), likelihood_ratio=w_test)
        leaves_cal, leaves_test = loc.leaves(X[conf]), loc.leaves(Xt)
        for q in range(Xt.shape[0]):
            wq = np.append(w[conf], w_test[q])
            ref = weighted_lcp_threshold_reference(
                forest_lcp_matrix(leaves_cal, leaves_test[q]), list(V[conf]), _frac(wq), alpha, _slack(wq)
            )
            assert (th.t[q], bool(th.closed[q])) == ref, (alpha, case, rep, q, wq)
        assert np.isinf(th.t[-1])


@pytest.mark.parametrize("method", ["split", "lcp-rf"])
def test_equal_ratios_where_the_requirement_is_an_integer(method):
    """(1 - alpha)(n + 1) = 90 exactly (n = 99, alpha = 0.1): the only place where the integer rule and the
    weighted rule with its tolerance part. Equal ratios must take the integer rule (reject at count 90: today's
    thresholds bit for bit); a test ratio a hair above the calibration ratios' common value is weighted, and the
    exact weighted rule then accepts a count of 90 (90 < 0.9 (99 + 1 + 1e-6)): the unweighted rule at count 91."""
    from confrf.localizers import ForestLocalizer

    rng = np.random.default_rng(8)
    c = 2.5
    if method == "split":
        V = rng.exponential(size=99)
        plain = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None)
        cal = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None, likelihood_ratio=np.full(99, c))
        Xt = np.zeros((4, 1))
        assert required_count(0.1, 99) == 90
        at_91 = np.full(4, np.sort(V)[90])
    else:
        X = rng.uniform(size=(198, 2))
        V = X[:, 0] * rng.exponential(size=198)
        Xt = rng.uniform(size=(300, 2))

        def fit(w):
            loc = ForestLocalizer(n_estimators=10, min_samples_leaf=8, max_features=1.0, random_state=0)
            return LCPForestCalibrator(loc).calibrate(X, V, alpha=0.1, rng=np.random.default_rng(1), likelihood_ratio=w)

        plain, cal = fit(None), fit(np.full(198, c))
        assert plain.n_conformal_ == 99
        at_91 = plain.localizer.thresholds(Xt, 91)[0]
    a, b = plain.thresholds(Xt, 0.1), cal.thresholds(Xt, 0.1, likelihood_ratio=np.full(Xt.shape[0], c))
    for field in ("t", "closed", "level"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    hair = cal.thresholds(Xt, 0.1, likelihood_ratio=np.full(Xt.shape[0], c * (1 + 1e-6)))
    assert np.array_equal(hair.t, at_91)
    assert np.any(hair.t > a.t)  # the premise: the two rules part here


# --------------------------------------------------------------------------
# Diagnostics and invariances the thresholds alone do not pin down


def test_weighted_split_level_is_the_p_mass_at_or_below_the_threshold():
    """level = sum_{V_i <= t} w_i / (sum_j w_j + w(x)): the test point's own ratio is part of the total.

    Pinned: V = 1..19, unit calibration ratios, w(x) = 2, alpha = 0.1 give t = 19 (the p-mass reaches
    19/21 >= 0.9 there) and level 19/21, not 19/19."""
    cal = SplitCalibrator().calibrate(None, np.arange(1.0, 20.0), alpha=0.1, rng=None, likelihood_ratio=np.ones(19))
    th = cal.thresholds(np.zeros((1, 1)), 0.1, likelihood_ratio=np.array([2.0]))
    assert th.t[0] == 19.0 and th.level[0] == float(Fraction(19, 21))
    rng = np.random.default_rng(12)
    weighted = 0
    for rep in range(80):
        n = int(rng.integers(1, 15))
        V = (rng.integers(-2, 4, size=n) if rep % 2 else rng.normal(size=n)).astype(float)
        w = _ratios(rng, n)
        for alpha in ("0.1", "0.3"):
            th = _split(V, w[:n]).thresholds(np.zeros((1, 1)), float(alpha), likelihood_ratio=w[n:])
            t = th.t[0]
            wf = _frac(w)
            total = sum(wf, Fraction(0))
            expected = 1.0 if np.isinf(t) else float(sum((wf[i] for i in range(n) if V[i] <= t), Fraction(0)) / total)
            assert th.level[0] == pytest.approx(expected, rel=1e-12, abs=0.0), (V, w, alpha)
            weighted += bool(np.isfinite(t) and w[n] not in (0.0, w[0]))
    assert weighted > 20  # the premise: finite thresholds with a test ratio that moves the total


def _tie_case():
    """Scores [1, 2, 3] x 4 with ratios [6, 3, 1] x 4 and w(x) = 0: the mass at or below 2 is 36 = 0.9 * 40, an
    exact tie. The stated tolerance (1 - alpha + 1e-9, relative to the total) keeps 2 accepted: t = 3."""
    return np.tile([1.0, 2.0, 3.0], 4), np.tile([6.0, 3.0, 1.0], 4), np.array([0.0])


@pytest.mark.parametrize("factor", [1e8, 1e-8])
def test_ratios_scaled_by_a_constant_leave_every_threshold_unchanged(factor):
    """Likelihood ratios are defined up to a constant (only p_i = w_i / (sum_j w_j + w(x)) enters), so multiplying
    every ratio by 1e8 or 1e-8 changes no threshold: the tolerance must scale with the total, also at an exact tie.
    Split conformal, Guan's LCP (lcp_threshold) and the LCP-RF calibrator (whose forest is one leaf on a constant
    feature, so that the tie reaches it)."""
    from confrf.localizers import ForestLocalizer

    V, w, w_test = _tie_case()
    assert weighted_split_reference(list(V), _frac(np.append(w, w_test)), "0.1", SLACK) == 3.0
    x = np.zeros((1, 1))
    base = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None, likelihood_ratio=w)
    scaled = SplitCalibrator().calibrate(None, V, alpha=0.1, rng=None, likelihood_ratio=w * factor)
    assert base.thresholds(x, 0.1, likelihood_ratio=w_test).t[0] == 3.0
    assert scaled.thresholds(x, 0.1, likelihood_ratio=w_test * factor).t[0] == 3.0
    W = np.full((13, 13), 1.0 / 13)
    assert lcp_threshold(W, V, 0.1, likelihood_ratio=np.append(w, w_test) * factor).t == 3.0

    # LCP-RF: a constant feature grows one-leaf trees (uniform LCP weights); the tie is put on the conformal points
    loc = ForestLocalizer(n_estimators=3, min_samples_leaf=2, max_features=1.0, random_state=0)
    V24 = np.tile([1.0, 2.0, 3.0], 8)
    forest = LCPForestCalibrator(loc).calibrate(np.zeros((24, 1)), V24, alpha=0.1, rng=np.random.default_rng(0))
    conf = forest.conformal_rows_
    w24 = np.zeros(24)
    w24[conf[V24[conf] <= 2][0]] = 36.0
    w24[conf[V24[conf] == 3][0]] = 4.0
    for c in (1.0, factor):
        assert forest.reweighted(w24 * c).thresholds(x, 0.1, likelihood_ratio=w_test * c).t[0] == 3.0

    # and random cases, with every kind of threshold
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 12))
        K, Vr = _random_instance(rng, n, "asymmetric")
        Wr = K / K.sum(1, keepdims=True)
        wr = _ratios(rng, n)
        for alpha in (0.1, 0.2, 0.5):
            a, b = lcp_threshold(Wr, Vr, alpha, likelihood_ratio=wr), lcp_threshold(Wr, Vr, alpha, wr * factor)
            assert (a.t, a.closed) == (b.t, b.closed) and a.level == pytest.approx(b.level, rel=1e-12)
            a, b = (_split(Vr, s * wr[:n]).thresholds(x, alpha, likelihood_ratio=s * wr[n:]) for s in (1.0, factor))
            assert a.t[0] == b.t[0] and a.level[0] == pytest.approx(b.level[0], rel=1e-12)
    X = rng.uniform(size=(400, 2))
    Vf = X[:, 0] * rng.exponential(size=400)
    wf = np.exp(3 * X[:, 0])
    Xt = rng.uniform(size=(100, 2))
    wt = np.exp(3 * Xt[:, 0])
    loc = ForestLocalizer(n_estimators=10, min_samples_leaf=8, max_features=1.0, random_state=0)
    cal = LCPForestCalibrator(loc).calibrate(X, Vf, alpha=0.1, rng=np.random.default_rng(1))
    a = cal.reweighted(wf).thresholds(Xt, 0.1, likelihood_ratio=wt)
    b = cal.reweighted(wf * factor).thresholds(Xt, 0.1, likelihood_ratio=wt * factor)
    assert np.array_equal(a.t, b.t) and np.array_equal(a.closed, b.closed)
    np.testing.assert_allclose(a.level, b.level, rtol=1e-12)

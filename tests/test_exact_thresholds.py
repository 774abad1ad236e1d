"""The exact threshold of every calibrator on small cases that can be checked by hand.

With uniform weights (one leaf per tree, or a huge kernel bandwidth) every localized method
must reduce to an order statistic written out below from its definition; an off-by-one rank
anywhere fails here, not only in some unrelated API test.
"""

import math
import warnings

import numpy as np
import pytest
from reference_pac import binomial_k_reference

from confrf.calibrators import (
    KernelLCPCalibrator,
    LCPForestCalibrator,
    PACForestCalibrator,
    PACSplitGroupCalibrator,
    SLCPCalibrator,
    SplitCalibrator,
    SplitGroupCalibrator,
)
from confrf.calibrators.split import split_threshold
from confrf.exceptions import ConfrfWarning
from confrf.localizers import ForestLocalizer


def _m(alpha, n):  # ceil((1 - alpha)(n + 1)) for alpha = 1/10 or 1/5, in integers
    return math.ceil((1 - alpha) * (n + 1) - 1e-9)


@pytest.mark.parametrize("n, alpha, rank", [(19, 0.1, 18), (9, 0.1, 9), (9, 0.2, 8), (99, 0.1, 90)])
def test_split(n, alpha, rank):
    scores = np.random.default_rng(n).permutation(np.arange(1.0, n + 1))
    th = SplitCalibrator().calibrate(None, scores, alpha=alpha, rng=None).thresholds(np.zeros((2, 1)), alpha)
    assert th.t.tolist() == [rank, rank] and th.closed.all()  # the rank-th smallest of 1..n is rank
    assert th.level[0] == pytest.approx(rank / (n + 1))
    assert split_threshold(np.arange(1.0, 9.0), 0.1) == (np.inf, 1.0)  # n = 8: m = 9 > n


def test_split_with_ties():
    scores = np.repeat(np.arange(1.0, 11.0), 2)  # 1,1,2,2,...,10,10: n = 20, m = ceil(0.9 * 21) = 19
    t = SplitCalibrator().calibrate(None, scores, alpha=0.1, rng=None).thresholds(np.zeros((1, 1)), 0.1).t[0]
    assert t == 10.0  # the 19th smallest
    t = SplitCalibrator().calibrate(None, scores[:-2], alpha=0.1, rng=None).thresholds(np.zeros((1, 1)), 0.1).t[0]
    assert t == 9.0  # n = 18, m = ceil(0.9 * 19) = 18: the 18th smallest, the largest 9


def test_split_g_and_its_pac_variant():
    V = np.concatenate([np.arange(1.0, 20.0), 10 * np.arange(1.0, 20.0), np.arange(1.0, 6.0), np.arange(1.0, 61.0)])
    labels = np.array(["a"] * 19 + ["b"] * 19 + ["c"] * 5 + ["d"] * 60, dtype=object)
    X = np.zeros((V.shape[0], 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        cal = SplitGroupCalibrator(None, groups="labels").calibrate(X, V, alpha=0.1, rng=None, labels=labels)
        # n = 19: m = 18; n = 5: m = 6 > 5 (infinite); n = 60: m = ceil(0.9 * 61) = 55
        t = cal.thresholds(np.zeros((4, 1)), 0.1, labels=["a", "b", "c", "d"]).t.tolist()
        assert t == [18.0, 180.0, np.inf, 55.0]
        pac = PACSplitGroupCalibrator(None, groups="labels", delta=0.2).calibrate(
            X, V, alpha=0.1, rng=None, labels=labels
        )
    # the k_g-th smallest, k_g from the binomial tail at delta / L = 0.2 / 4
    ks = [binomial_k_reference(n, "0.1", "0.05") for n in (19, 19, 5, 60)]
    assert ks == [20, 20, 6, 59]  # 0.9^19 = 0.135 > 0.05: no order statistic of 19 points qualifies
    t = pac.thresholds(np.zeros((4, 1)), 0.1, labels=["a", "b", "c", "d"]).t.tolist()
    assert t == [np.inf, np.inf, np.inf, 59.0]


def _one_leaf():
    # min_samples_leaf above half the localizer part: no split, every tree is one leaf, weights uniform
    return ForestLocalizer(n_estimators=3, min_samples_leaf=10_000, random_state=0)


@pytest.mark.parametrize("n", [40, 80, 200])
def test_lcp_rf_with_uniform_weights_is_split(n):
    rng = np.random.default_rng(n)
    X, V = rng.uniform(size=(n, 2)), np.round(rng.exponential(size=n) * 10)  # ties
    cal = LCPForestCalibrator(_one_leaf()).calibrate(X, V, alpha=0.1, rng=rng)
    conf = np.sort(cal.localizer.index_.scores)
    t = cal.thresholds(rng.uniform(size=(3, 2)), 0.1).t
    assert (t == conf[_m(0.1, conf.shape[0]) - 1]).all()


@pytest.mark.parametrize("base", ["qrf", "lcp"])
@pytest.mark.parametrize("seed", range(3))
def test_pac_with_uniform_weights_is_an_order_statistic(base, seed):
    # F_x: 1/(n1+1) on each D1 score, 1/(n1+1) at +inf; b = 1 - alpha (QRF) or m/(n1+1) (LCP: split's level).
    # D2 point j with c_j D1 scores below it is covered at level u iff c_j/(n1+1) < u, so its smallest
    # correction is just above c_j/(n1+1) - b (the correction may be negative). With c_(k) the k-th smallest
    # c_j, the level is just above c_(k)/(n1+1) and the threshold is the (c_(k) + 1)-th smallest D1 score
    # (+inf past n1), whatever the base level.
    rng = np.random.default_rng(seed)
    n = 600
    X, V = rng.uniform(size=(n, 2)), rng.exponential(size=n)
    cal = PACForestCalibrator(_one_leaf(), base=base, delta=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        cal.calibrate(X, V, alpha=0.1, rng=rng)
    s1 = np.sort(V[cal.parts_["D1"]])
    n1, n2 = s1.shape[0], cal.n2_
    c = np.sort(np.searchsorted(s1, V[cal.parts_["D2"]], side="left"))
    k = binomial_k_reference(n2, "0.1", "0.1")
    rank = int(c[k - 1]) + 1
    want = s1[rank - 1] if rank <= n1 else np.inf
    assert (cal.thresholds(rng.uniform(size=(3, 2)), 0.1).t == want).all()
    assert cal._correction(0.1).covered == int(np.count_nonzero(c < rank))


def test_kernel_lcp_with_huge_bandwidth_is_split():
    rng = np.random.default_rng(4)
    X, V = rng.uniform(size=(300, 2)), np.round(rng.exponential(size=300) * 10)
    cal = KernelLCPCalibrator(bandwidth=1e6, reference_size=0.3).calibrate(X, V, alpha=0.1, rng=rng)
    conf = np.sort(cal.localizer.scores_)
    t = cal.thresholds(rng.uniform(size=(3, 2)), 0.1).t
    assert (t == conf[_m(0.1, conf.shape[0]) - 1]).all()


def test_slcp_with_constant_local_quantile_is_split():
    # a huge bandwidth makes q(x) one weighted quantile of the reference scores, the same for every x:
    # the split correction of V - q then gives back split conformal on V
    rng = np.random.default_rng(5)
    X, V = rng.uniform(size=(300, 2)), np.round(rng.exponential(size=300) * 10)
    cal = SLCPCalibrator(bandwidth=1e6).calibrate(X, V, alpha=0.1, rng=rng)
    conf = np.sort(cal.scores_)
    t = cal.thresholds(rng.uniform(size=(3, 2)), 0.1).t
    assert (t == conf[_m(0.1, conf.shape[0]) - 1]).all()

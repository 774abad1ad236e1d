"""The tuning's no-localization candidate recomputed from its definition, the margin it must be beaten by, and the
size rule below which a tuned LCP-RF does not split at all.

The no-localization candidate of ``tune_forest(..., pooled=True)`` puts every localizer point in one leaf: its
simulated threshold on a conformal fold is split conformal's (weighted split conformal with each test point's own
w(x) under covariate shift). Its score is recomputed here from the thirds and the definitions, as
tests/test_tuning.py recomputes the forest candidates'. These tests call ``tune_forest`` directly, with one or two
forest candidates, so that they do not depend on the default grid.
"""

import math
from bisect import bisect_left
from fractions import Fraction

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf.calibrators.localizer_split import min_localizer_points
from confrf.localizers import ForestLocalizer
from confrf.localizers import tuning as tuning_module
from confrf.localizers.tuning import MAX_INFINITE, tune_forest

#: the weighted rule's stated tolerance: a score is rejected once its mass reaches (1 - alpha + 1e-9) of the total
SLACK = Fraction(1, 10**9)
ALPHA = 0.1


def _heteroscedastic(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    return X, np.abs((0.2 + 2 * X[:, 0] ** 2) * rng.normal(size=n))


def _homoscedastic(n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, 4)), np.abs(rng.normal(size=n))  # the scores' law does not depend on x


def _tune(X, V, leaves, random_state, ratio=None):
    return tune_forest(
        X,
        V,
        alpha=ALPHA,
        leaves=list(leaves),
        max_features=[1.0],
        forest_kwargs={},
        random_state=random_state,
        n_jobs=1,
        make_localizer=ForestLocalizer,
        ratio=ratio,
        pooled=True,
    )


def _simulations(n, random_state, n_splits):
    """(the tuning forests' seed, [(growing third, conformal third, test third), ...]) of tune_forest(random_state).

    The n tuning points (n <= MAX_TUNE_POINTS) in the order of rng.permutation, cut in thirds; split r grows
    third r and each other third is the test fold once, the remaining one its conformal points."""
    rng = np.random.default_rng(random_state)
    use = rng.permutation(n)
    seed = int(rng.integers(0, 2**31 - 1))
    thirds = (use[: n // 3], use[n // 3 : 2 * n // 3], use[2 * n // 3 :])
    sims = []
    for r in range(n_splits):
        g, f1, f2 = thirds[r], thirds[(r + 1) % 3], thirds[(r + 2) % 3]
        sims += [(g, f1, f2), (g, f2, f1)]
    return seed, sims


def _split_threshold(v_conf):
    """Split conformal: the ceil((1 - alpha)(n + 1))-th smallest conformal score, +inf when that exceeds n."""
    n = v_conf.shape[0]
    need = math.ceil((1 - Fraction(repr(ALPHA))) * (n + 1))
    return float(np.sort(v_conf)[need - 1]) if need <= n else math.inf


def _weighted_split_thresholds(v_conf, w_conf, w_test):
    """Weighted split conformal for each test point (Tibshirani et al. 2019), in rationals: the smallest conformal
    score whose ratio mass at or below it reaches (1 - alpha + tol)(sum w + w(x)), +inf when none does."""
    order = np.argsort(v_conf, kind="stable")
    cum, acc = [], Fraction(0)
    for i in order:
        acc += Fraction(float(w_conf[i]))
        cum.append(acc)
    level = 1 - Fraction(repr(ALPHA)) + SLACK
    out = []
    for wx in w_test:
        j = bisect_left(cum, level * (acc + Fraction(float(wx))))
        out.append(float(v_conf[order[j]]) if j < len(cum) else math.inf)
    return np.array(out)


def _loss(t, v, cap):
    """The half interval score t + (v - t)_+ / alpha, an infinite t counted as ``cap``."""
    t = np.where(np.isinf(t), cap, t)
    return t + np.maximum(v - t, 0.0) / ALPHA


def _no_localization_losses(X, V, random_state, n_splits, w=None):
    """Per tuning point, the mean over its simulations of its (weighted) loss under no localization; and the
    weighted share of infinite thresholds."""
    n = X.shape[0]
    lw = np.ones(n) if w is None else w / np.mean(w)  # each test point counts w(x) / mean(w) times
    _, sims = _simulations(n, random_state, n_splits)
    loss, n_inf, mass = {}, 0.0, 0.0
    for _, c, e in sims:
        t = np.full(e.shape[0], _split_threshold(V[c])) if w is None else _weighted_split_thresholds(V[c], w[c], w[e])
        n_inf += float(np.sum(np.isinf(t) * lw[e]))
        mass += float(np.sum(lw[e]))
        for i, point_loss in zip(e, _loss(t, V[e], 2 * V.max())):
            loss.setdefault(int(i), []).append(lw[i] * point_loss)
    return {i: float(np.mean(v)) for i, v in loss.items()}, n_inf / mass


def _forest_losses(X, V, m, random_state):
    """Per tuning point, the loss of the forest candidate (m, 1.0, "none") in the first split (one split: tuning
    with a single forest candidate never rotates the thirds)."""
    seed, sims = _simulations(X.shape[0], random_state, 1)
    g = sims[0][0]
    loc = ForestLocalizer(n_estimators=15, min_samples_leaf=m, max_features=1.0, random_state=seed).grow(X[g], V[g])
    loss = {}
    for _, c, e in sims:
        loc.index(X[c], V[c])
        need = math.ceil((1 - Fraction(repr(ALPHA))) * (c.shape[0] + 1))
        t = loc.thresholds(X[e], need)[0]  # the exact LCP-RF kernel, tested against references elsewhere
        for i, point_loss in zip(e, _loss(t, V[e], 2 * V.max())):
            loss[int(i)] = point_loss
    return loss


# -- the candidate's score -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_no_localization_score_is_split_conformal_on_the_conformal_third(weighted):
    """Its score is the mean over the tuning points of the half interval score of split conformal's threshold on
    the conformal third (the ceil((1 - alpha)(n + 1))-th smallest score; weighted: the weighted split threshold
    with each test point's w(x), its loss counted w(x) / mean(w) times), averaged over a point's simulations when
    the thirds rotate. Both paths (one split, and three) are checked."""
    seen = set()
    for data, seed in ((_heteroscedastic, 0), (_homoscedastic, 4), (_homoscedastic, 6)):
        X, V = data(900, seed)
        w = np.exp(2.5 * X[:, 0]) if weighted else None
        tun = _tune(X, V, [16, 8], random_state=seed, ratio=w)
        assert tun.pooled == tun.candidates[-1] == (900, 1.0, "none") and tun.weighted == weighted
        seen.add(tun.n_splits)
        loss, inf_share = _no_localization_losses(X, V, seed, tun.n_splits, w)
        assert len(loss) == (900 if tun.n_splits == 3 else 600)  # one split tests two thirds
        assert tun.scores[-1] == pytest.approx(np.mean(list(loss.values())), rel=1e-12)
        assert tun.infinite[-1] == pytest.approx(inf_share, rel=1e-12, abs=1e-15)
    assert seen == {1, 3}


# -- the margin it must be beaten by -------------------------------------------------------------------------------
def _paired_z(X, V, m, random_state):
    """The localized candidate's mean paired gain over no localization, in standard errors of the differences."""
    loc_loss = _forest_losses(X, V, m, random_state)
    pooled_loss, _ = _no_localization_losses(X, V, random_state, 1)
    d = np.array([loc_loss[i] - pooled_loss[i] for i in sorted(loc_loss)])
    return -float(np.mean(d)) / (float(np.std(d, ddof=1)) / math.sqrt(d.shape[0]))


def test_no_localization_is_kept_unless_a_forest_has_a_lower_mean_loss(monkeypatch):
    """With one forest candidate (m, 1.0, "none") and no infinite intervals, the localized candidate is chosen iff
    its mean loss is below no localization's, i.e. it beats it by more than NO_LOCALIZATION_SE = 0 paired standard
    errors (z > 0; two until issue 36, docs/benchmarks/condcov.md "Choosing the rule").
    Pinned: homoscedastic scores, seed 6, m = 16 have 0 < z < 1, where zero and one standard error decide
    differently (so do zero and two), and homoscedastic seed 1, m = 8 has z < 0 and keeps no localization. And the
    constant is the one used: a huge margin forces no localization where the noise depends strongly on x (z about
    9)."""
    assert tuning_module.NO_LOCALIZATION_SE == 0.0
    cases = [(_homoscedastic, 3, 16), (_homoscedastic, 1, 8), (_homoscedastic, 6, 16), (_heteroscedastic, 0, 16)]
    z = {}
    for data, seed, m in cases:
        X, V = data(900, seed)
        tun = _tune(X, V, [m], random_state=seed)
        assert tun.candidates == ((m, 1.0, "none"), tun.pooled) and max(tun.infinite) <= MAX_INFINITE
        z[(data, seed)] = _paired_z(X, V, m, seed)
        assert tun.localizes == (z[(data, seed)] > 0.0), (data.__name__, seed, z[(data, seed)])
    assert 0.0 < z[(_homoscedastic, 6)] < 1.0  # the premise of the pinned case
    assert z[(_homoscedastic, 1)] < 0.0
    X, V = _homoscedastic(900, 6)
    assert _tune(X, V, [16], random_state=6).localizes
    for margin in (1.0, 2.0):
        monkeypatch.setattr(tuning_module, "NO_LOCALIZATION_SE", margin)
        assert not _tune(X, V, [16], random_state=6).localizes
    X, V = _heteroscedastic(900, 0)
    assert z[(_heteroscedastic, 0)] > 5.0
    monkeypatch.setattr(tuning_module, "NO_LOCALIZATION_SE", 0.0)
    assert _tune(X, V, [16], random_state=0).localizes
    monkeypatch.setattr(tuning_module, "NO_LOCALIZATION_SE", 1e6)
    assert not _tune(X, V, [16], random_state=0).localizes


# -- too few localizer points: no split at all ---------------------------------------------------------------------
@pytest.mark.parametrize("alpha", ["0.05", "0.1", "0.15", "0.2", "0.3"])
def test_min_localizer_points_is_the_ceiling_of_10_over_alpha(alpha):
    """The smallest localizer part m with m * alpha >= 10, alpha the decimal typed: 67 at 0.15 and 34 at 0.3 (a
    floor would give 66 and 33)."""
    a = Fraction(alpha)
    m = min_localizer_points(float(alpha))
    assert m * a >= 10 > (m - 1) * a
    assert {"0.15": 67, "0.3": 34}.get(alpha, m) == m


def test_66_calibration_rows_at_alpha_03_are_split_conformal_on_all_of_them():
    """At alpha = 0.3, 66 calibration rows give a localizer part of 33 < ceil(10 / 0.3) = 34: split conformal on all
    66 rows (not an LCP-RF split 33/33); 68 rows give 34 and the forest is tuned."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(300, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(size=300)
    kw = dict(model=LinearRegression(), alpha=0.3, random_state=1)
    small = cf.ConformalRegressor(**kw).fit(X[:200], y[:200]).conformalize(X[200:266], y[200:266])
    split = cf.ConformalRegressor(method="split", **kw).fit(X[:200], y[:200]).conformalize(X[200:266], y[200:266])
    assert small.calibrator_.sizes() == {"calibration": 66} and small.localizer_.skipped_
    np.testing.assert_array_equal(small.predict_interval(X[:50]), split.predict_interval(X[:50]))
    enough = cf.ConformalRegressor(**kw).fit(X[:200], y[:200]).conformalize(X[200:268], y[200:268])
    assert enough.calibrator_.sizes() == {"localizer": 34, "conformal": 34} and enough.localizer_.tuning_

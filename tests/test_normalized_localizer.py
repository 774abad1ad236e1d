"""Normalized split conformal inside LCP-RF: the training part's forest gives sigma(x) only, the weights are uniform.

When the forest grows on the training part (the training check passed) and its tuned leaves would hold fewer than
``sources.NORMALIZED_LEAF_MASS / alpha`` conformal points, LCP-RF keeps the forest for sigma(x) and puts every
conformal point in one leaf. Checked here from the definitions: thresholds, p-values and predictive quantiles are
split conformal's order statistics of V / sigma(x) times sigma(x) (Guan's LCP with uniform weights is split
conformal: test_tuning.py checks that against the exact-rational reference), sigma is scikit-learn's forest
prediction, and the covariate-shift weighted thresholds are Tibshirani's weighted split rule on V / sigma(x)
(exact-rational reference); that the rule reads sizes and the training part only (the conformal points never move
it); what the summary says; pickling. Monte Carlo coverage of the mode: the --long test at the end.
"""

import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
from reference_shift import weighted_split_reference
from scipy import stats

import confrf as cf
import confrf.localizers.sigma_leaf as sigma_leaf
import confrf.localizers.sources as sources
import confrf.localizers.tuning as tuning
from confrf.exceptions import ConfrfWarning
from confrf.localizers.forest import SCALE_FLOOR

ALPHA = 0.2


def _draw(rng, n, p=2):
    X = rng.uniform(size=(n, p))
    return X, X[:, 0] + (0.1 + 2 * X[:, 0]) * rng.normal(size=n)


@pytest.fixture
def always(monkeypatch):
    """The rule always asks for normalization once the training check has passed (the rule itself: below)."""
    monkeypatch.setattr(sources, "normalizes", lambda *args: "forced by the test")
    monkeypatch.setattr(sources, "NORMALIZED_LEAF_MASS", 1e9)


def _fit(seed=0, n_train=300, n_cal=100, likelihood_ratio=None, n_estimators=10, **kw):
    rng = np.random.default_rng(seed)
    Xt, yt = _draw(rng, n_train)
    Xc, yc = _draw(rng, n_cal)
    est = cf.ConformalRegressor(model="ols", alpha=ALPHA, random_state=seed, n_estimators=n_estimators, **kw).fit(
        Xt, yt
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        est.conformalize(Xc, yc, likelihood_ratio=likelihood_ratio)
    return est, Xc


def _conformal(est, Xc):
    conf = est.calibrator_.conformal_rows_
    return Xc[conf], est.calib_scores_[conf], est.calib_signed_[conf]


def test_the_mode_is_sigma_from_the_training_forest_and_uniform_weights(always):
    est, Xc = _fit()
    loc = est.localizer_
    assert "sources not compared" in loc.source_choice_.reason, "the set-up needs the training check to pass"
    assert loc.normalized and loc.pooled and loc.scaled and loc.n_trees == 1 and loc.forest_ is not None
    # sigma's leaf: the out-of-bag choice among multiples of the sqrt rule of the 300 training rows (18)
    assert loc.n_grow_ == 300 and loc.sigma_leaf_.candidates == (13, 18, 25, 36, 51)
    assert loc.min_samples_leaf_ == loc.sigma_leaf_.chosen
    Xq = np.random.default_rng(9).uniform(size=(40, 2))
    sigma = loc.score_scale(Xq)
    # sigma is scikit-learn's forest prediction, floored at SCALE_FLOOR times the mean growing score; not 1
    assert 0 < loc.scale_floor_ < SCALE_FLOOR * 10 and sigma.min() > loc.scale_floor_
    np.testing.assert_allclose(sigma, np.maximum(loc.forest_.predict(Xq), loc.scale_floor_), rtol=1e-12)
    assert np.ptp(sigma) > 0.1
    Xk, Vk, _ = _conformal(est, Xc)
    np.testing.assert_allclose(loc.index_.scores, Vk / loc.score_scale(Xk), rtol=1e-12)
    np.testing.assert_allclose(loc.indexed_scores(), Vk, rtol=1e-12)


def test_thresholds_pvalues_and_quantiles_are_the_references_on_scaled_scores(always):
    est, Xc = _fit(seed=1)
    loc = est.localizer_
    assert loc.normalized
    Xk, Vk, Sk = _conformal(est, Xc)
    n = Vk.shape[0]
    s_cal = loc.score_scale(Xk)
    Xq = np.random.default_rng(3).uniform(size=(6, 2))
    s_q = loc.score_scale(Xq)
    d = est.predict_details(Xq)
    # Guan's LCP with uniform weights is split conformal (test_tuning.py checks it against the reference): the
    # ceil((1 - alpha)(n + 1))-th smallest V_i / sigma(X_i), a closed set, times sigma(x)
    m = math.ceil(Fraction(str(1 - ALPHA)) * (n + 1))
    t_ref = np.sort(Vk / s_cal)[m - 1]
    for q in range(Xq.shape[0]):
        assert d["t"][q] == t_ref * s_q[q] and bool(d["closed"][q])
    # p-values: the smallest alpha at which v / sigma(x) leaves the uniform LCP set of the V_i / sigma(X_i), which is
    # split conformal's (1 + #{V_i / sigma_i >= v / sigma(x)}) / (n + 1)
    mu = est.predict(Xq)
    Vs = Vk / s_cal
    for y in (mu + 0.05, mu + 0.4 * s_q, mu - 1.5 * s_q):
        p = est.predict_pvalues(Xq, y)
        v = np.abs(y - mu) / s_q
        np.testing.assert_array_equal(p, (1 + (Vs[None, :] >= v[:, None]).sum(axis=1)) / (n + 1))
    # predictive quantiles: mu(x) + sigma(x) times the ceil(tau (n + 1))-th smallest signed score over sigma
    Q = est.predict_quantiles(Xq, [0.25, 0.5, 0.9])
    S = np.sort(Sk / s_cal)
    for j, tau in enumerate([Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)]):
        np.testing.assert_allclose(Q[:, j], mu + s_q * S[math.ceil(tau * (n + 1)) - 1], rtol=1e-12, atol=1e-12)


def test_weighted_thresholds_are_the_reference_on_scaled_scores(always):
    """Covariate shift: with uniform weights the weighted LCP set is Tibshirani's weighted split set; its reference
    (exact rationals, integer ratios) on V / sigma(x)."""
    rng = np.random.default_rng(7)
    w_cal = rng.integers(1, 4, size=100).astype(float)
    est, Xc = _fit(seed=2, likelihood_ratio=w_cal)
    loc = est.localizer_
    assert loc.normalized and est.calibrator_.shift_ is not None
    conf = est.calibrator_.conformal_rows_
    Xk, Vk = Xc[conf], est.calib_scores_[conf]
    V_scaled = list(Vk / loc.score_scale(Xk))
    Xq = rng.uniform(size=(4, 2))
    w_q = np.array([1.0, 2.0, 3.0, 30.0])
    d = est.predict_details(Xq, likelihood_ratio=w_q)
    s_q = loc.score_scale(Xq)
    for q in range(4):
        w = [Fraction(int(v)) for v in w_cal[conf]] + [Fraction(int(w_q[q]))]
        t_ref = weighted_split_reference(V_scaled, w, str(ALPHA))
        assert d["t"][q] == t_ref * s_q[q] and (bool(d["closed"][q]) or np.isinf(t_ref)), q


def test_the_rule_reads_sizes_and_the_training_part_only(monkeypatch):
    """Moving the conformal points' responses moves neither the choice nor sigma(x); the sizes decide."""
    monkeypatch.setattr(tuning, "NO_LOCALIZATION_SE", -1e9)
    monkeypatch.setattr(tuning, "MAX_INFINITE", 1.0)
    est, Xc = _fit(seed=4, n_train=600, n_cal=300)
    loc = est.localizer_
    # 200 conformal points, leaves of about 25 of 600 training rows: about 8 points a leaf, below 5 / 0.2 = 25
    assert loc.normalized and "below 5/alpha = 25" in loc.normalized_
    conf = est.calibrator_.conformal_rows_
    rng = np.random.default_rng(4)
    _draw(rng, 600)
    Xc2, yc2 = _draw(rng, 300)
    yc2[conf] = yc2[conf] * 3 + 10  # the conformal points' responses only
    est2 = cf.ConformalRegressor(model="ols", alpha=ALPHA, random_state=4, n_estimators=10)
    est2.fit(*_draw(np.random.default_rng(4), 600))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        est2.conformalize(Xc2, yc2)
    np.testing.assert_array_equal(est2.calibrator_.conformal_rows_, conf)
    Xq = rng.uniform(size=(50, 2))
    assert est2.localizer_.normalized_ == loc.normalized_
    np.testing.assert_array_equal(est2.localizer_.score_scale(Xq), loc.score_scale(Xq))
    # an explicit leaf size or scale asks for a localized forest: no normalization
    for opts in ({"min_samples_leaf": 25}, {"options": {"scale": "none"}}):
        other, _ = _fit(seed=4, n_train=600, n_cal=300, **opts)
        assert not other.localizer_.normalized, opts
    # with many conformal points per leaf the localized forest stays
    monkeypatch.setattr(sources, "NORMALIZED_LEAF_MASS", 0.1)
    assert not _fit(seed=4, n_train=600, n_cal=300)[0].localizer_.normalized


def _oob_mse_reference(X, V, leaf, seed):
    """A forest's out-of-bag mean squared error from the definition: each row's prediction is the mean of the trees
    whose bootstrap sample left it out (rows left out by no tree count at their mean, as scikit-learn's)."""
    from sklearn.ensemble import RandomForestRegressor

    f = RandomForestRegressor(
        n_estimators=sigma_leaf.SIGMA_LEAF_TREES, min_samples_leaf=leaf, max_features=1.0, random_state=seed
    ).fit(X, V)
    total, count = np.zeros(len(V)), np.zeros(len(V))
    for tree, rows in zip(f.estimators_, f.estimators_samples_, strict=True):
        out = np.ones(len(V), bool)
        out[rows] = False
        total[out] += tree.predict(X[out])
        count[out] += 1
    assert count.min() > 0, "every row is out of bag somewhere with 100 trees"
    return float(np.mean((V - total / count) ** 2))


def test_sigma_leaf_is_the_out_of_bag_choice_of_the_definition():
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(240, 2))
    V = np.abs(rng.normal(size=240)) * (0.1 + 2 * X[:, 0])
    choice = sigma_leaf.choose_sigma_leaf(X, V, base=16, max_features=1.0, random_state=3)
    assert choice.candidates == (11, 16, 23, 32, 45)
    ref = [_oob_mse_reference(X, V, leaf, 3) for leaf in choice.candidates]
    np.testing.assert_allclose(choice.losses, ref, rtol=1e-10)
    assert choice.chosen == choice.candidates[int(np.argmin(ref))]
    assert "among leaves of 11, 16, 23, 32, 45" in choice.text()
    # small growing parts: candidates stay below half of the rows (two leaves at least), without repeats
    assert sigma_leaf.sigma_leaf_candidates(12, 5) == [4, 5]
    assert sigma_leaf.sigma_leaf_candidates(9, 5) == [3]


def test_sigma_leaf_follows_how_fast_the_noise_changes():
    """Noise of one scale everywhere: the largest leaf predicts it best; noise switching on and off every 0.05 in
    x1: a small leaf. A choice stuck at the sqrt rule (or at any one multiple of it) fails one of the two."""
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(2000, 2))
    flat = np.abs(rng.normal(size=2000))
    fast = flat * np.where(np.floor(X[:, 0] / 0.05) % 2 == 0, 0.05, 1.0)
    got = [sigma_leaf.choose_sigma_leaf(X, V, 45, 1.0, 0).chosen for V in (flat, fast)]
    assert got == [127, 32], got


def test_the_summary_says_so_and_the_fit_pickles(always):
    est, Xc = _fit(seed=5)
    why = est.localizer_.normalized_
    desc = est.calibrator_.describe()
    assert desc["weights"] == "uniform (normalized split conformal)" and why in desc["note"]
    assert est.localizer_.sigma_leaf_.text() in desc["note"]
    assert "normalized split conformal" in est.calibrator_.guarantee(ALPHA).sentence
    assert "leaf_size_min" not in desc  # one leaf holds every conformal point: no leaf facts
    # the forest block counts sigma's trees, not the one tree of the one-leaf index
    auto = _fit(seed=5, n_estimators="auto")[0]
    trees = len(auto.localizer_.forest_.estimators_)
    assert trees > 1 and auto.calibrator_.describe()["n_estimators"] == f"{trees} (auto)"
    Xq = np.random.default_rng(5).uniform(size=(30, 2))
    again = pickle.loads(pickle.dumps(est))
    for key in ("lwr", "upr", "t", "closed"):
        np.testing.assert_array_equal(again.predict_details(Xq)[key], est.predict_details(Xq)[key])
    np.testing.assert_array_equal(again.predict_quantiles(Xq, [0.3, 0.8]), est.predict_quantiles(Xq, [0.3, 0.8]))


def test_formula_api_summary_prints_the_mode():
    """The default at a small calibration set, as a statistician calls it (sim, 750 calibration rows): the training
    check passes, the tuned leaves would hold about 24 of the 650 conformal points, so the summary names the mode,
    why, and what the guarantee rests on; no title calls it "no localization"."""
    sim = cf.datasets.make_sim(1500, random_state=0)
    res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=20)
    loc = res.estimator.localizer_
    assert loc.normalized and not loc.pooled_ and "sources not compared" in loc.source_choice_.reason
    text = " ".join(str(res.summary()).split())
    # the titles say it wherever the method's name appears, so no one reads the intervals as localized ones
    assert text.startswith("LCP-RF, normalized split conformal (forest sigma(x), uniform weights)")
    assert "normalized split conformal" in str(res).splitlines()[0]
    assert "weights: uniform (normalized split conformal)" in text
    assert (
        "note: normalized split conformal (the tuned leaves (28 training rows) would hold about 24 of the 650" in text
    )
    assert "sigma(x) from a forest grown on disjoint data, uniform weights: normalized split conformal" in text
    assert "no localization" not in text.replace("no localization:", "")  # the tuning's candidate keeps its name
    d = res.estimator.predict_details(res.design.transform(sim.frame.head(200)))
    assert np.ptp(d["upr"] - d["lwr"]) > 0.5  # widths follow sigma(x)


@pytest.mark.long
def test_marginal_coverage_of_the_normalized_mode(always):
    """P(V <= t(X)) >= 1 - alpha over fresh training, calibration and test draws, normalization forced.

    A draw's coverage is the exact P(V <= t(x) | x) = 2 Phi(t(x) / s(x)) - 1 of the half-normal score, averaged
    over its test points (as test_localizer_sources.py's source tests)."""
    from test_localizer_sources import _calibrate, _hetero

    alpha, reps, covers, normalized = 0.2, 40, [], 0
    for r in range(reps):
        rng = np.random.default_rng(5000 + r)
        X, V = _hetero(rng, 150, p=2)
        Xr, Vr = _hetero(rng, 300, p=2)
        Xt = rng.uniform(size=(100, 2))
        cal = _calibrate(X, V, Xr, Vr, alpha=alpha, seed=r)
        normalized += cal.localizer.normalized
        t = cal.thresholds(Xt, alpha).t
        covers.append(float(np.mean(2 * stats.norm.cdf(t / (0.1 + 2 * Xt[:, 0])) - 1)))
    cover, se = float(np.mean(covers)), float(np.std(covers, ddof=1)) / np.sqrt(reps)
    print(f"normalized in {normalized} of {reps} draws: coverage {cover:.4f} (se {se:.4f})")
    assert normalized >= reps * 3 // 4, normalized
    assert cover >= 1 - alpha - 3 * se, (cover, se)
    # split conformal of continuous scores over n conformal points covers at most 1 - alpha + 1 / (n + 1)
    n_conf = cal.n_conformal_
    assert cover <= 1 - alpha + 1 / (n_conf + 1) + 3 * se, (cover, se, n_conf)

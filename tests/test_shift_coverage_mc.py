"""Monte Carlo coverage under a known covariate shift: weighted SPLIT and weighted LCP-RF cover the target.

Calibration x ~ U(0, 1)^2; the target draws x1 with density proportional to exp(4 x1), where the
noise is largest (scores |y| with y = x1^2 * 3 * eps). The ratio exp(4 x1) is known. Each
repetition draws a calibration set and 100 target points; the mean of the repetitions'
coverages estimates P_target(Y in C(X)) with a standard error from their spread. Unweighted
split conformal, which ignores the shift, must fail by the same yardstick (the test has power).
Prediction sets: the same tilt, with binary labels that get noisier with x1 (LAC scores of the
true probabilities); weighted split and LCP-RF sets, and class-conditional split sets per class.
"""

import numpy as np
import pytest

from confrf.calibrators import LCPForestCalibrator, SplitCalibrator
from confrf.localizers import ForestLocalizer

ALPHA = 0.1
TILT = 4.0
REPS = 300


def _draw(rng, n, target):
    x = rng.uniform(size=(n, 2))
    if target:  # inverse cdf of the density proportional to exp(TILT x1) on [0, 1]
        x[:, 0] = np.log1p(rng.uniform(size=n) * np.expm1(TILT)) / TILT
    v = np.abs(3 * x[:, 0] ** 2 * rng.normal(size=n))
    return x, v, np.exp(TILT * x[:, 0])


def _coverages(make, weighted, reps=REPS, seed=0):
    rng = np.random.default_rng(seed)
    out = np.empty(reps)
    for r in range(reps):
        X, V, w = _draw(rng, 400, target=False)
        Xt, Vt, wt = _draw(rng, 100, target=True)
        kw = {"likelihood_ratio": w} if weighted else {}
        cal = make(r).calibrate(X, V, alpha=ALPHA, rng=np.random.default_rng(r), **kw)
        th = cal.thresholds(Xt, ALPHA, **({"likelihood_ratio": wt} if weighted else {}))
        out[r] = np.mean(np.where(th.closed, Vt <= th.t, Vt < th.t))
    return out


def _mean_se(c):
    return c.mean(), c.std(ddof=1) / np.sqrt(c.size)


def _lcp_rf(seed):
    loc = ForestLocalizer(n_estimators=25, min_samples_leaf=15, max_features=1.0, random_state=seed)
    return LCPForestCalibrator(loc, localizer_size=0.5)


@pytest.mark.long
def test_weighted_split_covers_the_target_and_unweighted_does_not():
    mean, se = _mean_se(_coverages(lambda r: SplitCalibrator(), weighted=True, reps=2000))
    assert mean >= 1 - ALPHA - 3 * se, (mean, se)
    assert mean <= 1 - ALPHA + 0.04  # exact, not trivially wide
    plain, plain_se = _mean_se(_coverages(lambda r: SplitCalibrator(), weighted=False, reps=2000))
    assert plain < 1 - ALPHA - 3 * plain_se, (plain, plain_se)


@pytest.mark.long
def test_weighted_lcp_rf_covers_the_target():
    cov = _coverages(_lcp_rf, weighted=True, seed=1)
    mean, se = _mean_se(cov)
    assert mean >= 1 - ALPHA - 3 * se, (mean, se)
    assert mean <= 1 - ALPHA + 0.05


# -- prediction sets ------------------------------------------------------------------------------
class _TrueModel:
    """Binary labels: the majority class (a when x2 > 0.5) has probability 1 - x1 / 4, so labels get noisier
    with x1, where the target population lies; the 'prefit' model returns these probabilities (LAC scores)."""

    classes_ = np.array(["a", "b"])

    def predict_proba(self, X):
        major = 1 - 0.25 * X[:, 0]
        pa = np.where(X[:, 1] > 0.5, major, 1 - major)
        return np.column_stack([pa, 1 - pa])


def _draw_labels(rng, n, target):
    x = rng.uniform(size=(n, 2))
    if target:
        x[:, 0] = np.log1p(rng.uniform(size=n) * np.expm1(TILT)) / TILT
    y = np.where(rng.random(n) < _TrueModel().predict_proba(x)[:, 0], "a", "b")
    return x, y, np.exp(TILT * x[:, 0])


def _set_coverages(method, weighted, reps, seed=0, **settings):
    """Per repetition: the coverage of 100 target points, and that of each class's target points."""
    from confrf.classification import ConformalClassifier

    rng = np.random.default_rng(seed)
    out, by_class = np.empty(reps), np.full((reps, 2), np.nan)
    for r in range(reps):
        X, y, w = _draw_labels(rng, 400, target=False)
        Xt, yt, wt = _draw_labels(rng, 100, target=True)
        clf = ConformalClassifier(_TrueModel(), method=method, prefit=True, random_state=r, **settings)
        clf.conformalize(X, y, likelihood_ratio=w if weighted else None)
        sets = clf.predict_sets(Xt, likelihood_ratio=wt if weighted else None)
        code = (yt == "b").astype(int)
        hit = sets[np.arange(yt.size), code]
        out[r] = hit.mean()
        for k in (0, 1):
            if (code == k).any():
                by_class[r, k] = hit[code == k].mean()
    return out, by_class


@pytest.mark.long
def test_weighted_sets_cover_the_target():
    """split and LCP-RF sets (marginal) and class-conditional split sets (per class) cover target rows; unweighted
    split sets do not (the test has power)."""
    mean, se = _mean_se(_set_coverages("split", weighted=True, reps=1500)[0])
    assert 1 - ALPHA - 3 * se <= mean <= 1 - ALPHA + 0.03, (mean, se)
    plain, plain_se = _mean_se(_set_coverages("split", weighted=False, reps=1500)[0])
    assert plain < 1 - ALPHA - 3 * plain_se, (plain, plain_se)
    cov = _set_coverages("lcp-rf", weighted=True, reps=150, seed=1, n_estimators=20, min_samples_leaf=15)[0]
    mean, se = _mean_se(cov)
    assert 1 - ALPHA - 3 * se <= mean <= 1 - ALPHA + 0.04, (mean, se)
    _, by_class = _set_coverages("split-g", weighted=True, reps=800, seed=2)
    for k in (0, 1):
        mean, se = _mean_se(by_class[~np.isnan(by_class[:, k]), k])
        assert 1 - ALPHA - 3 * se <= mean <= 1 - ALPHA + 0.03, (k, mean, se)

"""Monte Carlo coverage under a known covariate shift: weighted SPLIT and weighted LCP-RF cover the target.

Calibration x ~ U(0, 1)^2; the target draws x1 with density proportional to exp(4 x1), where the
noise is largest (scores |y| with y = x1^2 * 3 * eps). The ratio exp(4 x1) is known. Each
repetition draws a calibration set and 100 target points; the mean of the repetitions'
coverages estimates P_target(Y in C(X)) with a standard error from their spread. Unweighted
split conformal, which ignores the shift, must fail by the same yardstick (the test has power).
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

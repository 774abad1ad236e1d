"""Monte Carlo: marginal coverage of SPLIT and honest LCP-RF on exchangeable data.

The base model is fixed; every repetition draws a fresh calibration set and a
fresh test set. Exact finite-sample theory: coverage >= 1 - alpha (and, for
split conformal with continuous scores, <= 1 - alpha + 1/(n+1)).

A repetition's coverage is the toy model's exact P(Y in C(x) | x), averaged over
its test points: the same expectation as the share of covered test labels,
without the labels' binomial noise. The per-repetition variance is then about
0.75 times as large (measured: 0.74-0.75 for SPLIT and LCP-RF), so 0.8 times
the repetitions give the same standard error, hence the same power.
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import confrf as cf


def _mc(method, reps, n_cal, n_test, alpha, seed, **kw):
    rng = np.random.default_rng(seed)
    train = cf.datasets.make_toy(400, random_state=rng)
    model = LinearRegression().fit(np.asarray(train.X), train.y)
    cover = []
    for _r in range(reps):
        cal = cf.datasets.make_toy(n_cal, random_state=rng)
        test = cf.datasets.make_toy(n_test, random_state=rng)
        reg = cf.ConformalRegressor(
            model=model, prefit=True, method=method, alpha=alpha, random_state=int(rng.integers(2**31)), **kw
        ).conformalize(np.asarray(cal.X), cal.y)
        lo, hi = reg.predict_interval(np.asarray(test.X)).T
        cover.append(test.conditional_coverage(None, lo, hi).mean())
    cover = np.asarray(cover)
    return cover.mean(), cover.std(ddof=1) / np.sqrt(reps)


def _check(method, reps, alpha=0.1, **kw):
    mean, se = _mc(method, reps, n_cal=200, n_test=200, alpha=alpha, seed=2024, **kw)
    print(f"{method}: coverage {mean:.4f} (se {se:.4f}) over {reps} draws")
    assert mean >= 1 - alpha - 3 * se
    return mean, se


def test_split_marginal_coverage_quick():
    mean, se = _check("split", 40)
    assert mean <= 1 - 0.1 + 1 / 201 + 3 * se


def test_lcp_rf_marginal_coverage_quick():
    _check("lcp-rf", 25, n_estimators=50)


@pytest.mark.long
def test_split_marginal_coverage_long(mc_reps):
    mean, se = _check("split", mc_reps or 320)
    assert mean <= 1 - 0.1 + 1 / 201 + 3 * se


@pytest.mark.long
@pytest.mark.parametrize("alpha", [0.1, 0.2])
def test_lcp_rf_marginal_coverage_long(mc_reps, alpha):
    # 50 trees as in the quick test: the guarantee holds for any number of trees, and the fits are the cost
    _check("lcp-rf", mc_reps or 240, alpha=alpha, n_estimators=50)

"""Monte Carlo: marginal coverage of kernel LCP, SLCP and LCP-RF with every score.

Every repetition draws fresh training, calibration and test sets of the toy
model and refits everything (base model(s), out-of-fold scores, bandwidth,
forest). Exact finite-sample theory: coverage >= 1 - alpha.

A repetition's coverage is the toy model's exact P(Y in C(x) | x) averaged over
its test points, which has the expectation of the share of covered test labels
without their binomial noise: 0.64-0.80 times the per-repetition variance
(measured for kernel LCP, SLCP and LCP-RF), so 0.8 times the repetitions keep
the standard error, hence the power.
"""

import zlib

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, QuantileRegressor

import confrf as cf

MODELS = {
    "absolute": lambda: LinearRegression(),
    "scaled": lambda: LinearRegression(),
    "quantile": lambda: (QuantileRegressor(quantile=0.05, alpha=0.0), QuantileRegressor(quantile=0.95, alpha=0.0)),
}


def _mc(method, score, reps, alpha, seed, prefit=False, n=(200, 200, 200), **kw):
    rng = np.random.default_rng(seed)
    cover = []
    for _ in range(reps):
        tr, cal, te = (cf.datasets.make_toy(m, random_state=rng) for m in n)
        Xtr, Xcal, Xte = (np.asarray(d.X)[:, :5] for d in (tr, cal, te))
        model = MODELS[score]()
        if prefit:  # fitted elsewhere: the kernel methods hold out a share of the calibration set instead
            model = model.fit(Xtr, tr.y)
        reg = cf.ConformalRegressor(
            model=model,
            method=method,
            score=score,
            alpha=alpha,
            prefit=prefit,
            random_state=int(rng.integers(2**31)),
            **kw,
        )
        if not prefit:
            reg.fit(Xtr, tr.y)
        lo, hi = reg.conformalize(Xcal, cal.y).predict_interval(Xte).T
        cover.append(te.conditional_coverage(None, lo, hi).mean())
    cover = np.asarray(cover)
    return cover.mean(), cover.std(ddof=1) / np.sqrt(reps)


def _check(method, score, reps, alpha=0.1, **kw):
    mean, se = _mc(method, score, reps, alpha, seed=zlib.crc32(f"{method}/{score}/{alpha}".encode()), **kw)
    print(f"{method}/{score}: coverage {mean:.4f} (se {se:.4f}) over {reps} draws")
    assert mean >= 1 - alpha - 3 * se
    return mean, se


@pytest.mark.parametrize(
    "method,score",
    [
        ("lcp", "absolute"),
        ("slcp", "absolute"),
        ("lcp-rf", "quantile"),
        ("lcp-rf", "scaled"),
        ("lcp", "quantile"),
        ("slcp", "scaled"),
    ],
)
def test_marginal_coverage_quick(method, score):
    kw = {"n_estimators": 30} if method == "lcp-rf" else {}
    _check(method, score, 20, **kw)


#: the LCP-RF draws on the default localizer_data="auto" (the training rows' out-of-fold scores may teach the forest:
#: 5 out-of-fold fits and three source tunings, 4 times the cost of a draw): the default score, and the two-model
#: score at the other alpha. The other draws grow the forest on the localizer part ("calibration"): what they add is
#: every score at both alphas (tests/test_localizer_sources.py checks the coverage with each source)
AUTO = {("absolute", 0.1), ("quantile", 0.2)}


@pytest.mark.long
@pytest.mark.parametrize("alpha", [0.1, 0.2])
@pytest.mark.parametrize("score", ["absolute", "quantile", "scaled"])
@pytest.mark.parametrize("method", ["lcp", "slcp", "lcp-rf"])
def test_marginal_coverage_long(mc_reps, method, score, alpha):
    kw = {"n_estimators": 50} if method == "lcp-rf" else {}
    if method == "lcp-rf" and (score, alpha) not in AUTO:
        kw["options"] = {"localizer_data": "calibration"}
    _check(method, score, mc_reps or 80, alpha=alpha, **kw)


@pytest.mark.long
@pytest.mark.parametrize("method", ["lcp", "slcp"])
def test_marginal_coverage_prefit_long(mc_reps, method):
    _check(method, "absolute", mc_reps or 120, prefit=True)

"""CV+, jackknife+ and jackknife+-after-bootstrap: exact against the papers' definitions, guarantees, lifecycle.

The references in ``tests/reference_cross.py`` refit every fold (or bag) model
from scratch and build every interval end one (training row, new row) pair at
a time; the fast path must agree with them bit for bit (J+aB's mean up to the
summation order), on small problems with many tied scores, for the compiled
selection kernel, the fold-bisection kernel and the generic path of a score
without ``interval_parts``.
"""

import pickle
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import reference_cross as ref
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, ShuffleSplit
from sklearn.tree import DecisionTreeRegressor

import confrf as cf
from confrf import _kernels
from confrf.calibrators import cross_bounds
from confrf.calibrators.cross_bounds import rank_bounds
from confrf.exceptions import InputError, UnusedSettingWarning
from confrf.scores import AbsoluteScore, QuantileScore, ScaledScore


class HalfUpScore:
    """A user score without interval_parts: V = max((y - mu) / 2, mu - y), whose set is [mu - t, mu + 2 t]."""

    name = "half-up"

    def score(self, y, pred):
        pred = np.asarray(pred, dtype=float).ravel()
        return np.maximum((np.asarray(y) - pred) / 2.0, pred - np.asarray(y))

    def interval(self, pred, t):
        pred = np.asarray(pred, dtype=float).ravel()
        t = np.asarray(t, dtype=float)
        return pred - t, pred + 2.0 * t

    def center(self, pred):
        return np.asarray(pred, dtype=float).ravel()


def _tied(n=23, seed=0):
    """Integer responses and a depth-2 tree: few distinct predictions, many tied scores."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, 2)).astype(float)
    y = np.round(X[:, 0] + rng.normal(size=n))
    return X, y


SCORES = {
    "absolute": (lambda: "absolute", DecisionTreeRegressor(max_depth=2, random_state=0)),
    "scaled": (lambda: ScaledScore(cv=3), DecisionTreeRegressor(max_depth=2, random_state=0)),
    # a small quantile-loss boosting (cloned at alpha/2 and 1 - alpha/2) keeps the many refits cheap
    "quantile": (
        lambda: QuantileScore(),
        HistGradientBoostingRegressor(loss="quantile", max_iter=5, min_samples_leaf=4),
    ),
    "user": (lambda: HalfUpScore(), DecisionTreeRegressor(max_depth=2, random_state=0)),
}


def _folds(cal):
    return [cal.rows_[cal.group_ == k] for k in range(cal.n_folds)]


CASES = [(m, s, "rows") for m in ("cv+", "jackknife+") for s in sorted(SCORES)]
# the fold-bisection kernel (CV+ at large n, scores with interval_parts), forced from the first row on
CASES += [("cv+", s, "folds") for s in sorted(SCORES) if s != "user"]


@pytest.mark.parametrize(("method", "score", "kernel"), CASES)
def test_cv_plus_and_jackknife_plus_equal_the_reference(method, score, kernel, monkeypatch):
    if kernel == "folds":
        monkeypatch.setattr(cross_bounds, "BISECT_FOLD_SIZE", 1)
    make_score, model = SCORES[score]
    X, y = _tied()
    Xn = np.vstack([X[:6], [[0.0, 0.0], [3.0, 3.0], [1.5, 2.5]]])
    est = cf.ConformalRegressor(model=model, method=method, score=make_score(), alpha=0.2, random_state=3)
    if method == "cv+":
        est.set_params(options={"cv": 4})
    est.fit(X, y)
    cal = est.calibrator_
    assert np.unique(cal.scores_).size < cal.scores_.size  # the problem has ties
    folds = _folds(cal)
    if method == "cv+":
        assert [f.size for f in folds] == [5] * 4 and cal.n_spare_ == 3  # 23 = 4 * 5 + 3
    else:
        assert len(folds) == X.shape[0] and cal.n_spare_ == 0
    models, owner, R = ref.cv_plus_fit(est.score_, X, y, folds, model, est._seeds()[0], alpha=0.2)
    np.testing.assert_array_equal(cal.scores_, R)
    # the fitted level and others, including one whose ranks leave the interval infinite (j_hi > n)
    for a, rows in ((0.2, Xn), (0.5, Xn[:3]), (0.05, Xn[:3]), (0.01, Xn[:2])):
        lower, upper = ref.cv_plus_bounds(est.score_, models, owner, R, rows, a)
        got = est.predict_interval(rows, alpha=a)
        np.testing.assert_array_equal(got[:, 0], lower)
        np.testing.assert_array_equal(got[:, 1], upper)


def test_kernels_against_brute_force_with_ties_negative_scores_and_signed_zeros():
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        K = int(rng.integers(1, min(n, 6) + 1))
        m = int(rng.integers(1, 5))
        group = rng.integers(0, K, size=n)
        R = np.round(rng.normal(size=n), 1) if trial % 2 else np.round(rng.exponential(size=n), 1)
        if trial % 5 == 0:
            R[: n // 2] = 0.0
        a_lo = np.round(rng.normal(size=(m, K)), 1)
        a_lo[0, 0] = -0.0
        a_hi = a_lo + np.abs(np.round(rng.normal(size=(m, K)), 1))
        scale = np.round(np.abs(rng.normal(size=(m, K))), 1) + 0.1 if trial % 3 == 0 else np.empty((0, 0))
        j_lo, j_hi = int(rng.integers(0, n + 1)), int(rng.integers(1, n + 2))
        threads = 2 if trial % 10 == 0 else 1
        lo, hi, count = _kernels.cross_bounds_rows(a_lo, a_hi, scale, group.astype(np.int64), R, j_lo, j_hi, threads)
        sorted_R, ptr = cross_bounds.fold_sorted_scores(group, R, K)
        lo2, hi2, count2 = _kernels.cross_bounds_folds(a_lo, a_hi, scale, sorted_R, ptr, j_lo, j_hi, threads)
        for q in range(m):
            s = scale[q, group] if scale.size else None
            ends_lo = np.sort(a_lo[q, group] - (R * s if s is not None else R))
            ends_hi = np.sort(a_hi[q, group] + (R * s if s is not None else R))
            want_lo = -np.inf if j_lo == 0 else ends_lo[j_lo - 1]
            want_hi = np.inf if j_hi > n else ends_hi[j_hi - 1]
            assert lo[q] == want_lo and lo2[q] == want_lo, trial
            assert hi[q] == want_hi and hi2[q] == want_hi, trial
            assert count[q] == count2[q] == (n if j_hi > n else np.sum(ends_hi <= want_hi)), trial


def test_rank_bounds_are_exact_rationals():
    # (1 - 0.1) * 20 is 18.000000000000004 in floating point; the ranks read alpha as the decimal typed
    assert rank_bounds(0.1, 19) == (2, 18)
    assert rank_bounds(0.1, 8) == (0, 9)  # too few scores: both ends infinite
    for n in range(1, 60):
        j_lo, j_hi = rank_bounds(0.25, n)
        assert j_lo == (n + 1) // 4 and j_lo + j_hi == n + 1


@pytest.mark.parametrize("aggregation", ["mean", "median"])
@pytest.mark.parametrize("score", ["absolute", "quantile"])
def test_jackknife_ab_equals_the_reference(aggregation, score):
    make_score, model = SCORES[score]
    X, y = _tied(30, seed=2)
    Xn = X[:7]
    est = cf.ConformalRegressor(
        model=model,
        method="jackknife+ab",
        score=make_score(),
        alpha=0.2,
        random_state=5,
        options={"n_bootstrap": 8, "aggregation": aggregation},
    ).fit(X, y)
    cal = est.calibrator_
    lower, upper, R = ref.jackknife_ab(
        est.score_, X, y, cal.bags_, Xn, 0.2, model, est._seeds()[0], aggregation=aggregation
    )
    np.testing.assert_array_equal(np.isinf(cal.scores_), np.isinf(R))
    np.testing.assert_allclose(cal.scores_, R, rtol=1e-12, atol=1e-12)
    got = est.predict_interval(Xn)
    np.testing.assert_allclose(got[:, 0], lower, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[:, 1], upper, rtol=1e-12, atol=1e-12)


def test_jackknife_ab_rows_in_every_bag_count_as_infinite_scores():
    X, y = _tied(12, seed=4)
    est = cf.ConformalRegressor(
        model=LinearRegression(), method="jackknife+ab", alpha=0.3, random_state=1, options={"n_bootstrap": 2}
    ).fit(X, y)
    cal = est.calibrator_
    every = ~cal.out_of_bag_.any(axis=1)
    assert every.any() and np.all(np.isinf(cal.scores_[every])) and np.all(np.isfinite(cal.scores_[~every]))
    assert str(int(every.sum())) in str(cal.describe()["rows in every bag"])
    lower, upper, _ = ref.jackknife_ab(est.score_, X, y, cal.bags_, X[:5], 0.3, LinearRegression(), est._seeds()[0])
    got = est.predict_interval(X[:5])
    np.testing.assert_allclose(got[:, 0], lower, rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], upper, rtol=1e-12)


def test_jackknife_ab_level_counts_the_rows_in_every_bag():
    """level is the share of all n + 1 points (the rows in every bag, with their +inf upper ends, included) whose
    upper end is at or below upr: n = 30, alpha = 0.3, 8 rows in every bag give 22/31, not 22/23."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X[:, 0] + rng.normal(size=30)  # continuous: no two upper ends tie
    est = cf.ConformalRegressor(
        model=LinearRegression(), method="jackknife+ab", alpha=0.3, random_state=1, options={"n_bootstrap": 5}
    ).fit(X, y)
    cal = est.calibrator_
    every = ~cal.out_of_bag_.any(axis=1)
    assert every.sum() == 8  # the premise
    lower, upper, _ = ref.jackknife_ab(est.score_, X, y, cal.bags_, X[:6], 0.3, LinearRegression(), est._seeds()[0])
    d = est.predict_details(X[:6])
    np.testing.assert_allclose(d["lwr"], lower, rtol=1e-12)
    np.testing.assert_allclose(d["upr"], upper, rtol=1e-12)
    assert np.all(np.isfinite(upper))
    j_hi = ref.ranks(0.3, 30)[1]  # the upper end is the j_hi-th smallest of the 30 (none tied): j_hi at or below
    assert j_hi == 22 and np.all(d["level"] == float(Fraction(j_hi, 31)))


def test_jackknife_ab_draws_a_random_number_of_bags():
    """B ~ Binomial(B_tilde, (1 - 1/(n+1))^m), B_tilde = round(n_bootstrap / p): Kim, Xu & Barber's condition."""
    X, y = _tied(40, seed=1)
    counts = []
    for seed in range(40):
        cal = (
            cf.ConformalRegressor(
                model=LinearRegression(), method="jackknife+ab", random_state=seed, options={"n_bootstrap": 10}
            )
            .fit(X, y)
            .calibrator_
        )
        p = (1 - 1 / 41) ** 40
        assert cal.n_tilde_ == round(10 / p) and cal.p_keep_ == pytest.approx(p)
        assert len(cal.bags_) == cal.n_models and all(b.size == 40 for b in cal.bags_)
        counts.append(cal.n_models)
    assert len(set(counts)) > 3 and abs(np.mean(counts) - 10) < 2
    sub = (
        cf.ConformalRegressor(
            model=LinearRegression(),
            method="jackknife+ab",
            random_state=0,
            options={"replace": False, "bag_size": 20, "n_bootstrap": 10},
        )
        .fit(X, y)
        .calibrator_
    )
    assert sub.p_keep_ == pytest.approx(1 - 20 / 41) and all(np.unique(b).size == 20 for b in sub.bags_)


def test_guarantees_state_the_worst_case_and_the_practice():
    X, y = _tied(40, seed=3)

    def guarantee(method, **opts):
        est = cf.ConformalRegressor(model=LinearRegression(), method=method, random_state=0, options=opts or None)
        return est.fit(X, y).calibrator_.guarantee(0.1)

    jk = guarantee("jackknife+")
    assert jk.certified and jk.kind == "marginal (1 - 2 alpha)" and ">= 0.8 (1 - 2 alpha)" in jk.sentence
    cv = guarantee("cv+", cv=5)  # 40 = 5 * 8: equal folds
    eps = min(2 * (1 - 1 / 5) / (40 / 5 + 1), (1 - 5 / 40) / 6)
    assert cv.certified and f"{0.8 - eps:.4g}" in cv.sentence and "folds of 8 rows" in cv.sentence
    assert "close to 0.9" in cv.sentence and "0.9 exactly" not in cv.sentence
    uneven = guarantee("cv+", cv=KFold(3, shuffle=True, random_state=0))  # 14, 13, 13 rows
    assert not uneven.certified and "equal size" in uneven.sentence and "cv=3" in uneven.sentence
    even = guarantee("cv+", cv=KFold(4, shuffle=True, random_state=0))
    assert even.certified
    jab = guarantee("jackknife+ab")
    assert jab.certified and "Binomial(" in jab.sentence and ">= 0.8" in jab.sentence


def test_int_cv_makes_equal_folds_and_the_spare_rows_train_every_model():
    X, y = _tied(23, seed=0)
    cal = (
        cf.ConformalRegressor(model=LinearRegression(), method="cv+", random_state=0, options={"cv": 5})
        .fit(X, y)
        .calibrator_
    )
    folds = _folds(cal)
    spare = np.setdiff1d(np.arange(23), np.concatenate(folds))
    assert [f.size for f in folds] == [4] * 5 and spare.size == 3 and cal.sizes() == {"scored out of fold": 20}
    # refitting each fold model on everything outside its fold (spare rows included) gives the same scores
    _, _, R = ref.cv_plus_fit(AbsoluteScore(), X, y, folds, LinearRegression(), None, alpha=0.1)
    np.testing.assert_array_equal(cal.scores_, R)


def test_n_jobs_gives_identical_models_and_intervals():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 4))
    y = X[:, 0] + rng.normal(size=200) * (0.2 + X[:, 1])
    gbm = HistGradientBoostingRegressor(max_iter=20)  # OpenMP inside: one thread per fit when fits run side by side
    out = {}
    for jobs in (1, 2):
        for method, opts in (("cv+", {"cv": 4}), ("jackknife+ab", {"n_bootstrap": 4})):
            est = cf.ConformalRegressor(model=gbm, method=method, random_state=0, n_jobs=jobs, options=opts)
            out[jobs, method] = est.fit(X, y).predict_interval(X[:50])
    for method in ("cv+", "jackknife+ab"):
        np.testing.assert_array_equal(out[1, method], out[2, method])


def test_lifecycle_errors_name_the_fix():
    X, y = _tied(40)
    est = cf.ConformalRegressor(model=LinearRegression(), method="cv+", random_state=0).fit(X, y)
    with pytest.raises(InputError, match="calibrates during fit"):
        est.conformalize(X, y)
    with pytest.raises(InputError, match="cannot use a prefit model"):
        cf.ConformalRegressor(model=LinearRegression().fit(X, y), method="jackknife+", prefit=True).fit(X, y)
    with pytest.raises(InputError, match="every row exactly once"):
        cf.ConformalRegressor(
            model=LinearRegression(), method="cv+", options={"cv": ShuffleSplit(3, random_state=0)}
        ).fit(X, y)
    with pytest.raises(InputError, match="cv=50 folds need at least 50 rows"):
        cf.ConformalRegressor(model=LinearRegression(), method="cv+", options={"cv": 50}).fit(X, y)
    with pytest.raises(InputError, match="at least 9 are needed"):
        cf.ConformalRegressor(model=LinearRegression(), method="jackknife+").fit(X[:8], y[:8])
    with pytest.raises(InputError, match="aggregation"):
        cf.ConformalRegressor(method="jackknife+ab", options={"aggregation": "max"}).fit(X, y)
    with pytest.raises(InputError, match="bag_size < n"):
        cf.ConformalRegressor(model=LinearRegression(), method="jackknife+ab", options={"replace": False}).fit(X, y)
    with pytest.raises(InputError, match="n_bootstrap"):
        cf.ConformalRegressor(method="jackknife+ab", options={"n_bootstrap": 0}).fit(X, y)
    with pytest.raises(InputError, match="do not apply to method 'cv\\+'"):
        cf.ConformalRegressor(method="cv+", options={"n_bootstrap": 5}).fit(X, y)
    with pytest.raises(InputError, match="no per-row score threshold"):
        est.calibrator_.thresholds(X, 0.1)


def test_formula_api_uses_every_row_and_refuses_a_calibration_set():
    df = cf.datasets.make_sim(240, random_state=0).frame
    formula = "y ~ x1 + x2 + x3"
    res = cf.cv_plus(formula, data=df, model="ols", cv=8, random_state=0)
    assert res.nobs == {"train": 240, "scored out of fold": 240} and res.method == "cv+"
    pred = res.predict(df.head(5), details=True)
    assert list(pred.columns) == ["fit", "lwr", "upr", "t", "closed", "level"]
    assert pred["t"].isna().all() and (pred["level"] > 0.89).all()
    # the fit column is the model fitted on all rows (as lm), which result.model returns
    full = cf.datasets.make_sim(240, random_state=0)
    np.testing.assert_allclose(pred["fit"], res.model.predict(np.column_stack([np.ones(5), full.X.iloc[:5, :3]])))
    summary = res.summary()
    statement = summary.frames["guarantee"].loc["statement", "value"]
    assert "1 - 2 alpha - epsilon" in statement and "close to 0.9" in statement
    assert "Cross-fitting" in str(summary) and summary.frames["localizer"].loc["folds", "value"] == 8
    for bad, match in (
        ({"calib": df}, "calib= set has no role"),
        ({"calib_size": 0.3}, "calib_size= has no role"),
        ({"prefit": True}, "cannot use a prefit model"),
    ):
        with pytest.raises(InputError, match=match):
            cf.conformal(formula, data=df, method="jackknife+", model="ols", **bad)
    with pytest.warns(UnusedSettingWarning, match="min_samples_leaf"):
        cf.conformal(formula, data=df, method="jackknife+ab", model="ols", min_samples_leaf=5, random_state=0)
    jk = cf.conformal(formula, data=df.head(60), method="jackknife+", model="ols", random_state=0)
    assert jk.guarantee.kind == "marginal (1 - 2 alpha)" and jk.predict(df.tail(3)).shape == (3, 3)


def test_reproducible_and_pickles():
    df = cf.datasets.make_sim(200, random_state=1).frame
    a = cf.conformal("y ~ x1 + x2", data=df, method="jackknife+ab", model="ols", random_state=7)
    b = cf.conformal("y ~ x1 + x2", data=df, method="jackknife+ab", model="ols", random_state=7)
    pd.testing.assert_frame_equal(a.predict(df.head(20)), b.predict(df.head(20)))
    c = pickle.loads(pickle.dumps(a))
    pd.testing.assert_frame_equal(a.predict(df.head(20)), c.predict(df.head(20)))
    # the stored fold models drop statsmodels' copies of the data (n models must not hold n copies)
    assert all(m.results_.model.exog is None for m in a.estimator.calibrator_.models_)


def test_memory_stays_bounded_at_100k_training_rows():
    """CV+ on 100,000 rows predicts 20,000 new rows without an n x m matrix (that would be 16 GB)."""
    rng = np.random.default_rng(0)
    n = 100_000
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=n)
    est = cf.ConformalRegressor(model=LinearRegression(), method="cv+", random_state=0, options={"cv": 5}).fit(X, y)
    Xn = rng.normal(size=(20_000, 3))
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bounds = est.predict_interval(Xn)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100e6, peak
    # the fold-bisection kernel's answer is the selection kernel's, on a sample of rows
    sub = Xn[:200]
    preds = np.stack([m.predict(sub) for m in est.calibrator_.models_])
    a_lo = np.ascontiguousarray(preds.T)
    cal = est.calibrator_
    lo, hi, _ = _kernels.cross_bounds_rows(a_lo, a_lo, np.empty((0, 0)), cal.group_, cal.scores_, *rank_bounds(0.1, n))
    np.testing.assert_array_equal(bounds[:200, 0], lo)
    np.testing.assert_array_equal(bounds[:200, 1], hi)
    assert np.mean(np.abs(bounds[:, 1] - bounds[:, 0]) - 2 * 1.645) < 0.05  # about N(0, 1)'s 90% interval


def test_jackknife_ab_memory_is_bounded_by_blocks():
    rng = np.random.default_rng(0)
    n = 20_000
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + rng.normal(size=n)
    est = cf.ConformalRegressor(
        model=LinearRegression(), method="jackknife+ab", random_state=0, options={"n_bootstrap": 5}
    ).fit(X, y)
    tracemalloc.start()
    est.predict_interval(rng.normal(size=(1000, 2)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 60e6, peak  # n x m = 160 MB of float64 if held at once


@pytest.mark.long
@pytest.mark.parametrize("method", ["cv+", "jackknife+"])
def test_monte_carlo_coverage_at_n_100_long(method, mc_reps):
    """Fresh data per draw, n = 100 training rows, heteroscedastic noise: coverage at least 1 - alpha - 3 s.e.
    (OLS is stable, so the practice, not only the worst case 1 - 2 alpha, must hold)."""
    rng = np.random.default_rng(2024)
    cover = []
    for _ in range(mc_reps or (400 if method == "cv+" else 200)):  # the jackknife+ fits 101 models per draw
        X = rng.uniform(-1, 1, size=(150, 3))
        y = X @ np.array([1.0, 0.5, 0.0]) + (0.3 + np.abs(X[:, 0])) * rng.standard_t(5, size=150)
        est = cf.ConformalRegressor(
            model=LinearRegression(), method=method, alpha=0.1, random_state=int(rng.integers(2**31))
        )
        lo, hi = est.fit(X[:100], y[:100]).predict_interval(X[100:]).T
        cover.append(np.mean((y[100:] >= lo) & (y[100:] <= hi)))
    cover = np.asarray(cover)
    mean, se = cover.mean(), cover.std(ddof=1) / np.sqrt(cover.size)
    print(f"{method}: coverage {mean:.4f} (se {se:.4f}) over {cover.size} draws")
    assert mean >= 0.9 - 3 * se
    assert mean <= 0.95  # and not an interval that covers everything


def test_case_weights_reach_every_fold_model_and_shift_is_refused():
    """weights= (the base model's case weights) are accepted: each fold model gets its rows' weights (checked
    against weighted least squares refitted on the folds); covariate-shift options are refused with the reason."""
    import statsmodels.api as sm

    sim = cf.datasets.make_sim(120, random_state=3)
    df = sim.frame.assign(w=np.linspace(0.5, 3.0, 120))
    res = cf.cv_plus("y ~ x1 + x2", data=df, model="ols", weights="w", cv=4, random_state=0)
    cal = res.estimator.calibrator_
    X = np.column_stack([np.ones(120), df[["x1", "x2"]].to_numpy()])
    for k in range(4):
        fold = cal.rows_[cal.group_ == k]
        keep = np.setdiff1d(np.arange(120), fold)
        wls = sm.WLS(df.y.to_numpy()[keep], X[keep], weights=df.w.to_numpy()[keep]).fit()
        np.testing.assert_allclose(cal.models_[k].predict(X[fold, 1:]), wls.predict(X[fold]), rtol=1e-10)
    for kw, match in (({"likelihood_ratio": "w"}, "likelihood_ratio"), ({"shift": df.head(30)}, "shift")):
        with pytest.raises(InputError, match=f"{match}.*not offered with method 'cv\\+'"):
            cf.cv_plus("y ~ x1 + x2", data=df, model="ols", random_state=0, **kw)

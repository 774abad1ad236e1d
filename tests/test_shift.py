"""Covariate shift in the formula API, the estimator, the summary: w = 1 changes nothing, bad input, honesty."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf import ConformalRegressor
from confrf.exceptions import ConfrfWarning, InputError
from confrf.shift import RatioEstimator

FAST = {"n_estimators": 20, "min_samples_leaf": 10, "max_features": 1.0}


def _frame(n, seed, tilt=0.0):
    """y = x1 + x1 * eps: noise grows with x1; ``tilt`` draws x1 with density proportional to exp(tilt * x1)."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(size=4 * n)
    if tilt:
        keep = rng.random(4 * n) < np.exp(tilt * (x1 - 1))
        x1 = x1[keep]
    x1 = x1[:n]
    g = np.where(rng.random(n) < 0.5, "a", "b")
    df = pd.DataFrame({"x1": x1, "x2": rng.uniform(size=n), "g": g})
    df["y"] = x1 + x1 * rng.normal(size=n) + (g == "b")
    df["w"] = np.exp(3.0 * df.x1)  # the likelihood ratio of the tilt-3 target population
    df["one"] = 1.0
    return df


FORMULA = "y ~ x1 + x2 + C(g)"


@pytest.mark.parametrize(
    "method, opts",
    [
        ("split", {}),
        ("lcp-rf", FAST),
        ("split-g", {"groups": "g"}),
        ("lcp-rf-g", {"groups": "g", **FAST}),
        ("lcp", {"bandwidth": 0.5}),
        ("slcp", {}),
    ],
)
def test_unit_ratio_gives_todays_intervals_bit_for_bit(method, opts):
    df, new = _frame(500, 0), _frame(100, 1)
    base = cf.conformal(FORMULA, data=df, method=method, random_state=3, **opts).predict(new, details=True)
    for ratio in ("one", "one * 2.5") if method in ("split", "lcp-rf") else ("one * 2.5",):
        got = cf.conformal(FORMULA, data=df, method=method, random_state=3, likelihood_ratio=ratio, **opts)
        pd.testing.assert_frame_equal(got.predict(new, details=True), base, check_exact=True)


def test_weighted_intervals_follow_the_target_and_pickle():
    df, new = _frame(1500, 0), _frame(300, 1, tilt=3.0)
    plain = cf.lcp_rf(FORMULA, data=df, random_state=0, **FAST)
    res = cf.lcp_rf(FORMULA, data=df, random_state=0, likelihood_ratio="w", **FAST)
    a, b = plain.predict(new, details=True), res.predict(new, details=True)
    assert (b.t >= a.t - 1e-12).mean() > 0.5  # mass moved to large x1, where the scores are large
    assert res.guarantee.certified and res.guarantee.kind == "marginal (target)"
    again = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(again.predict(new, details=True), b)
    s = res.summary()
    facts = s.frames["shift"]["value"]
    assert facts["conformal points weighted"] == res.nobs["conformal"]
    assert 0 < facts["ESS (sum w)^2 / sum w^2"] < res.nobs["conformal"]
    assert "Covariate shift" in str(s)


def test_estimated_ratio_is_not_certified_and_says_so():
    df, target = _frame(1200, 0), _frame(400, 5, tilt=3.0).drop(columns="y")
    res = cf.split_cp(FORMULA, data=df, shift=target, random_state=0)
    assert not res.guarantee.certified and "Lei and Candes" in res.guarantee.sentence
    w = res.estimator.ratio_model_(res.design.transform(df.head(50)))
    truth = np.exp(3 * df.x1.head(50))
    assert np.corrcoef(np.log(w), np.log(truth))[0, 1] > 0.95  # logistic regression recovers an exponential tilt
    facts = res.summary().frames["shift"]["value"]
    assert facts["target rows (shift=)"] == 400
    assert res.predict(target).shape == (400, 3)


def test_shift_model_gbm_and_a_classifier():
    from sklearn.linear_model import LogisticRegression

    df, target = _frame(600, 0), _frame(300, 5, tilt=2.0)
    for model in ("gbm", LogisticRegression(max_iter=500)):
        res = cf.split_cp(FORMULA, data=df, shift=target, shift_model=model, shift_clip=0.05, random_state=0)
        assert np.isfinite(res.predict(target).upr).all()


def test_honesty_classifier_and_forest_ignore_the_conformal_points():
    df, other, target = _frame(800, 0), _frame(800, 7), _frame(300, 5, tilt=2.0)
    # the classifier sees the training part and the target rows only: other calibration rows leave it unchanged
    fits = [cf.split_cp(FORMULA, data=df, calib=cal, shift=target, random_state=0) for cal in (df.iloc[:400], other)]
    coefs = [f.estimator.ratio_model_.classifier_[-1].coef_ for f in fits]
    np.testing.assert_array_equal(coefs[0], coefs[1])
    # the forest is grown on the localizer part without ratios: other ratios leave it unchanged
    trees = []
    for ratio in ("w", "np.exp(-5 * x1)", "one"):
        res = cf.lcp_rf(FORMULA, data=df, random_state=0, likelihood_ratio=ratio, **FAST)
        trees.append([e.tree_.threshold.copy() for e in res.estimator.localizer_.forest_.estimators_])
    for t in trees[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(trees[0], t))


@pytest.mark.parametrize(
    "column, message",
    [
        (-1.0, "negative"),
        (np.nan, "missing"),
        (np.inf, "infinite"),
    ],
)
def test_bad_ratios_name_the_problem(column, message):
    df = _frame(400, 0)
    df.loc[df.index[5], "w"] = column
    with pytest.raises(InputError, match=message):
        cf.split_cp(FORMULA, data=df, calib=df, likelihood_ratio="w", random_state=0)


def test_bad_ratio_sources_and_combinations():
    df = _frame(400, 0)
    with pytest.raises(InputError, match="0 in every row"):
        cf.split_cp(FORMULA, data=df, likelihood_ratio="one * 0", random_state=0)
    with pytest.raises(InputError, match="the calibration rows have no column 'wt'.*Did you mean 'w'"):
        cf.split_cp(FORMULA, data=df, likelihood_ratio="np.exp(wt)", random_state=0)
    res = cf.split_cp(FORMULA, data=df, likelihood_ratio="w", random_state=0)
    with pytest.raises(InputError, match="newdata has no column 'w'|newdata.*'w'"):
        res.predict(df.drop(columns="w"))
    with pytest.raises(InputError, match="either likelihood_ratio"):
        cf.split_cp(FORMULA, data=df, likelihood_ratio="w", shift=df, random_state=0)
    with pytest.raises(InputError, match="add shift="):
        cf.split_cp(FORMULA, data=df, shift_model="gbm", random_state=0)
    with pytest.raises(InputError, match="shift_clip must lie"):
        cf.split_cp(FORMULA, data=df, shift=df, shift_clip=0.7, random_state=0)
    with pytest.raises(InputError, match="unknown shift_model"):
        cf.split_cp(FORMULA, data=df, shift=df, shift_model="svm", random_state=0)


def test_refusals_name_the_option_given_in_plain_words(monkeypatch):
    df = _frame(400, 0)
    with pytest.raises(InputError, match=r"^likelihood_ratio='np.exp\(wt\)': the calibration rows have no column 'wt'"):
        cf.split_cp(FORMULA, data=df, likelihood_ratio="np.exp(wt)", random_state=0)
    with pytest.raises(InputError) as info:
        cf.split_cp(FORMULA, data=df, weights="wt", random_state=0)
    assert "the training rows have no column 'wt'" in str(info.value)
    with pytest.raises(InputError, match=r"^likelihood_ratio= \(covariate shift\) is not offered with method 'cv\+'"):
        cf.conformal(FORMULA, data=df, method="cv+", likelihood_ratio="w", random_state=0)
    with pytest.raises(InputError, match=r"^shift= \(covariate shift\) is not offered with method 'jackknife\+'"):
        cf.conformal(FORMULA, data=df, method="jackknife+", shift=df, random_state=0)

    def no_ratio_model(*args, **kwargs):  # the refusal comes before any shift model is fitted
        raise AssertionError("the shift model was fitted")

    monkeypatch.setattr(RatioEstimator, "fit", no_ratio_model)
    labels = df.assign(c=pd.Categorical(np.where(df["y"] > df["y"].median(), "hi", "lo")))
    for formula, data, kw in [
        (FORMULA, df, dict(method="qrf-tc")),
        (FORMULA, df, dict(method="lcp-rf", guarantee="pac")),
        ("c ~ x1 + x2", labels, dict(method="qrf-tc")),
        ("c ~ x1 + x2", labels, dict(method="split-g", guarantee="pac")),
    ]:
        with pytest.raises(InputError) as info:
            cf.conformal(formula, data=data, shift=df.head(100), random_state=0, **FAST, **kw)
        msg = str(info.value)
        assert msg.startswith("shift= (covariate shift) cannot be used here") and "likelihood_ratio" not in msg
        assert "i.i.d. draws" in msg
    with pytest.raises(InputError, match=r"^likelihood_ratio= \(covariate shift\) cannot be used here.*i.i.d."):
        cf.conformal(FORMULA, data=df, method="qrf-tc", likelihood_ratio="w", random_state=0)


def test_shift_frame_with_other_columns_or_unseen_levels():
    df = _frame(400, 0)
    with pytest.raises(InputError, match="shift"):
        cf.split_cp(FORMULA, data=df, shift=df.drop(columns="x2"), random_state=0)
    with pytest.raises(InputError, match="shift"):
        cf.split_cp(FORMULA, data=df, shift=df.assign(g="zz"), random_state=0)


def test_refusals_pac_sets_prefit():
    df = _frame(600, 0)
    with pytest.raises(InputError, match="i.i.d. draws"):
        cf.conformal(FORMULA, data=df, method="qrf-tc", likelihood_ratio="w", random_state=0)
    with pytest.raises(InputError, match="i.i.d. draws"):
        cf.lcp_rf(FORMULA, data=df, guarantee="pac", likelihood_ratio="w", random_state=0)
    with pytest.raises(InputError, match="i.i.d. draws"):
        cf.conformal(FORMULA, data=df, method="split-g", groups="g", guarantee="pac", likelihood_ratio="w")
    with pytest.raises(InputError, match="prediction intervals only"):  # sets take the ratio, not case weights
        cf.conformal("C(g) ~ x1 + x2", data=df, weights="w", random_state=0)
    model = cf.split_cp(FORMULA, data=df, random_state=0).model
    with pytest.raises(InputError, match="prefit=True leaves no training part"):
        cf.split_cp(FORMULA, data=df, model=model, prefit=True, shift=df, random_state=0)
    with pytest.raises(InputError, match="fits nothing"):
        cf.split_cp(FORMULA, data=df, model=model, prefit=True, weights="w", random_state=0)
    # a known ratio works with a prefit model
    assert cf.split_cp(FORMULA, data=df, model=model, prefit=True, likelihood_ratio="w").predict(df).shape[0] == 600


def test_case_weights_are_the_base_models_and_nothing_else():
    import statsmodels.api as sm

    df = _frame(500, 0)
    res = cf.split_cp(FORMULA, data=df, calib=df, model="ols", weights="w", random_state=0)
    X = res.design.transform(df)
    wls = sm.WLS(df.y.to_numpy(), sm.add_constant(X), weights=df.w.to_numpy()).fit()
    np.testing.assert_allclose(res.model.params, wls.params, rtol=1e-10)
    assert res.shift is None and res.guarantee.kind == "marginal"  # the calibration is not weighted
    with pytest.raises(InputError, match="case weights must be >= 0"):
        cf.split_cp(FORMULA, data=df, weights="-w", random_state=0)
    with pytest.raises(InputError, match="sample_weight"):
        from sklearn.neighbors import KNeighborsRegressor

        cf.split_cp(FORMULA, data=df, model=KNeighborsRegressor(), weights="w", random_state=0)
    with pytest.raises(InputError, match="score='absolute'"):
        cf.split_cp(FORMULA, data=df, score="quantile", weights="w", random_state=0)


def test_array_level_ratios():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(900, 2))
    y = X[:, 0] * rng.normal(size=900)
    w = np.exp(2 * X[:, 0])
    reg = ConformalRegressor(method="split", random_state=0).fit(X[:300], y[:300])
    reg.conformalize(X[300:], y[300:], likelihood_ratio=w[300:])
    with pytest.raises(InputError, match="give the new rows' likelihood ratios"):
        reg.predict_interval(X[:5])
    assert reg.predict_interval(X[:5], likelihood_ratio=w[:5]).shape == (5, 2)
    with pytest.raises(InputError, match="one number per row"):
        reg.predict_interval(X[:5], likelihood_ratio=w[:4])
    # a ratio function gives the new rows' ratios itself
    ratio = RatioEstimator().fit(X[:300], rng.uniform(size=(300, 2)) ** 0.5)
    reg.conformalize(X[300:], y[300:], likelihood_ratio=ratio)
    assert np.isfinite(reg.predict_interval(X[:5])).all()
    plain = ConformalRegressor(method="split", random_state=0).fit(X[:300], y[:300]).conformalize(X[300:], y[300:])
    with pytest.raises(InputError, match="calibration used no ratios"):
        plain.predict_interval(X[:5], likelihood_ratio=w[:5])


def test_small_ess_warns():
    df = _frame(400, 0)
    with pytest.warns(ConfrfWarning, match="effective sample size"):
        res = cf.split_cp(FORMULA, data=df, likelihood_ratio="np.exp(150 * x1)", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfrfWarning)
        text = str(res.summary())
    assert "WARNING" in text


def test_infinite_for_a_huge_test_ratio():
    df = _frame(400, 0)
    res = cf.split_cp(FORMULA, data=df, likelihood_ratio="w", random_state=0)
    new = df.head(3).assign(w=[1.0, 1e9, 0.0])
    with pytest.warns(ConfrfWarning, match="infinite"):
        p = res.predict(new)
    assert np.isfinite(p.upr.iloc[0]) and np.isinf(p.upr.iloc[1]) and np.isfinite(p.upr.iloc[2])
    assert res.summary().frames["shift"]["value"]["last predict share with w(x) forcing +inf"] == pytest.approx(1 / 3)


def test_cli_shift_and_likelihood_ratio(tmp_path, capsys):
    from confrf.__main__ import main

    df, target = _frame(500, 0), _frame(200, 5, tilt=3.0)
    df.to_csv(tmp_path / "train.csv", index=False)
    target.drop(columns="y").to_csv(tmp_path / "target.csv", index=False)
    common = ["fit", FORMULA, "--data", str(tmp_path / "train.csv"), "--newdata", str(tmp_path / "target.csv")]
    common += ["--method", "split", "--random-state", "0"]
    for extra in (["--shift", str(tmp_path / "target.csv")], ["--likelihood-ratio", "w"]):
        assert main(common + extra + ["--out", str(tmp_path / "pred.csv")]) == 0
        assert len(pd.read_csv(tmp_path / "pred.csv")) == 200
    capsys.readouterr()
    assert main(common + ["--likelihood-ratio", "wt"]) == 2
    assert "--data has no column 'wt'" in capsys.readouterr().err
    assert main(common + ["--likelihood-ratio", "w", "--shift", str(tmp_path / "target.csv")]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(common + ["--shift", str(tmp_path / "nope.csv")]) == 2
    assert "--shift" in capsys.readouterr().err


def test_split_g_weighted_is_weighted_split_within_each_group():
    from confrf.calibrators import SplitCalibrator
    from confrf.calibrators.split_g import SplitGroupCalibrator

    rng = np.random.default_rng(0)
    n = 300
    labels = np.where(rng.random(n) < 0.4, "a", "b")
    V = rng.exponential(size=n) * np.where(labels == "a", 1.0, 3.0)
    w = rng.exponential(size=n)
    cal = SplitGroupCalibrator(None, groups="labels").calibrate(
        np.zeros((n, 1)), V, alpha=0.1, rng=None, labels=labels, likelihood_ratio=w
    )
    wt = np.array([0.3, 2.0, 9.0])
    for g in ("a", "b"):
        alone = SplitCalibrator().calibrate(None, V[labels == g], alpha=0.1, rng=None, likelihood_ratio=w[labels == g])
        got = cal.thresholds(np.zeros((3, 1)), 0.1, labels=[g] * 3, likelihood_ratio=wt)
        np.testing.assert_array_equal(got.t, alone.thresholds(np.zeros((3, 1)), 0.1, likelihood_ratio=wt).t)

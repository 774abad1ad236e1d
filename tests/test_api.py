"""The formula API end to end: predict frames, errors, reproducibility, pickling."""

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf._validation import required_count
from confrf.exceptions import InfiniteIntervalWarning, InputError, NotFittedError


@pytest.fixture(scope="module")
def diamonds():
    df = cf.datasets.load_diamonds().sample(4000, random_state=0)
    df.index = [f"row{i}" for i in range(len(df))]  # a non-default index must survive predict
    return df


@pytest.fixture(scope="module")
def fitted(diamonds):
    return cf.lcp_rf("price ~ carat + C(cut) + C(color)", data=diamonds.iloc[:3000], alpha=0.1, random_state=0)


def test_predict_frame_shape_index_and_columns(fitted, diamonds):
    new = diamonds.iloc[3000:3050].drop(columns=["price"]).assign(extra="ignored")
    p = fitted.predict(new)
    assert list(p.columns) == ["fit", "lwr", "upr"]
    assert p.index.equals(new.index)
    assert (p["lwr"] <= p["fit"]).all() and (p["fit"] <= p["upr"]).all()
    assert np.isfinite(p.to_numpy()).all()


def test_width_tracks_price(fitted, diamonds):
    test = diamonds.iloc[3000:]
    p = fitted.predict(test)
    width = p["upr"] - p["lwr"]
    assert np.corrcoef(width, test["carat"])[0, 1] > 0.5  # diamonds' error grows with size


def test_unseen_level_missing_column_and_nan_are_errors(fitted, diamonds):
    new = diamonds.iloc[3000:3010].copy()
    bad = new.assign(cut=new["cut"].astype(str).where(np.arange(10) > 2, "Superb"))
    with pytest.raises(InputError, match="Superb"):
        fitted.predict(bad)
    with pytest.raises(InputError, match="color"):
        fitted.predict(new.drop(columns=["color"]))
    with pytest.raises(InputError, match="carat"):
        fitted.predict(new.assign(carat=np.where(np.arange(10) == 4, np.nan, new["carat"])))


def test_same_seed_same_output_other_seed_other_output(diamonds):
    kw = dict(data=diamonds.iloc[:1500], alpha=0.1)
    a = cf.lcp_rf("price ~ carat + C(cut)", random_state=3, **kw).predict(diamonds.iloc[3000:3100])
    b = cf.lcp_rf("price ~ carat + C(cut)", random_state=3, **kw).predict(diamonds.iloc[3000:3100])
    c = cf.lcp_rf("price ~ carat + C(cut)", random_state=4, **kw).predict(diamonds.iloc[3000:3100])
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_pickle_round_trip(fitted, diamonds):
    new = diamonds.iloc[3000:3100]
    clone = pickle.loads(pickle.dumps(fitted))
    pd.testing.assert_frame_equal(clone.predict(new), fitted.predict(new))


def test_calib_argument_uses_all_data_for_training(diamonds):
    res = cf.split_cp("price ~ carat", data=diamonds.iloc[:1000], calib=diamonds.iloc[1000:1500], random_state=0)
    assert res.nobs == {"train": 1000, "calibration": 500}
    # split conformal threshold is the m-th smallest calibration score, by hand
    cal = diamonds.iloc[1000:1500]
    scores = np.sort(np.abs(cal["price"].to_numpy() - res.estimator.model_.predict(cal[["carat"]].to_numpy())))
    p = res.predict(diamonds.iloc[2000:2005])
    np.testing.assert_allclose(p["upr"] - p["fit"], scores[required_count(0.1, 500) - 1])


@pytest.mark.parametrize("model", ["ols", "rf", LinearRegression()])
def test_models(diamonds, model):
    res = cf.conformal(
        "price ~ carat + C(color)", data=diamonds.iloc[:1200], model=model, method="split", random_state=0
    )
    assert np.isfinite(res.predict(diamonds.iloc[3000:3010]).to_numpy()).all()


def test_ols_matches_statsmodels_formula(diamonds):
    import statsmodels.formula.api as smf

    df = diamonds.iloc[:800]
    res = cf.split_cp("price ~ carat + C(cut)", data=df, calib=diamonds.iloc[800:1300], model="ols")
    ref = smf.ols("price ~ carat + C(cut)", data=df).fit()
    new = diamonds.iloc[3000:3010]
    np.testing.assert_allclose(res.predict(new)["fit"], ref.predict(new), rtol=1e-8)


def test_prefit_sklearn_and_statsmodels(diamonds):
    from confrf.formula import Design

    design, X, y, _ = Design.fit("price ~ carat + C(cut)", diamonds.iloc[:1000])
    lr = LinearRegression().fit(X, y)
    res = cf.split_cp("price ~ carat + C(cut)", data=diamonds.iloc[1000:2000], model=lr, prefit=True)
    assert res.nobs == {"train": 0, "calibration": 1000}
    np.testing.assert_allclose(
        res.predict(diamonds.iloc[3000:3005])["fit"], lr.predict(design.transform(diamonds.iloc[3000:3005]))
    )
    ols = sm.OLS(y, sm.add_constant(X)).fit()
    res2 = cf.split_cp("price ~ carat + C(cut)", data=diamonds.iloc[1000:2000], model=ols, prefit=True)
    np.testing.assert_allclose(
        res2.predict(diamonds.iloc[3000:3005])["fit"], res.predict(diamonds.iloc[3000:3005])["fit"], rtol=1e-8
    )


def test_bad_options(diamonds):
    d = diamonds.iloc[:500]
    with pytest.raises(InputError, match="alpha"):
        cf.lcp_rf("price ~ carat", data=d, alpha=1.2)
    with pytest.raises(InputError, match="alpha"):
        cf.lcp_rf("price ~ carat", data=d, alpha=0)
    with pytest.raises(InputError, match="unknown method"):
        cf.conformal("price ~ carat", data=d, method="magic")
    with pytest.raises(InputError, match="unknown option"):
        cf.conformal("price ~ carat", data=d, n_trees=5)
    with pytest.raises(InputError, match="unknown model"):
        cf.conformal("price ~ carat", data=d, model="xgb")
    with pytest.raises(cf.FormulaError):
        cf.conformal("price ~ nonexistent", data=d)


@pytest.mark.parametrize(
    "alias, own, other, fix",
    [
        (cf.lcp_rf, "lcp-rf", "split", r"cf\.conformal\(formula, data, method='split'\) or its alias cf\.split_cp\("),
        (cf.split_cp, "split", "lcp-rf", r"method='lcp-rf'\) or its alias cf\.lcp_rf\("),
        (cf.qrf_tc, "qrf-tc", "lcp", r"cf\.conformal\(formula, data, method='lcp'\) instead"),
        (cf.lcp_rf, "lcp-rf", "magic", r"the methods of cf\.conformal\(\) are \["),
        (cf.split_cp, "split", ["split"], r"cannot take method=\['split'\]"),
    ],
    ids=["lcp_rf-split", "split_cp-lcp_rf", "qrf_tc-lcp", "unknown", "not-a-string"],
)
def test_alias_with_another_method_names_conformal_and_the_alias(diamonds, alias, own, other, fix):
    """The aliases fix method=: another one used to end in a bare TypeError ('got multiple values')."""
    d = diamonds.iloc[:400]
    with pytest.raises(InputError, match=rf"cf\.{alias.__name__}\(\) is cf\.conformal\(\) with method='{own}'.*{fix}"):
        alias("price ~ carat", data=d, method=other)


def test_alias_with_its_own_method_and_qrf_tc_guarantee(diamonds):
    """Restating what the alias does is accepted (e.g. keyword dicts forwarded as **kw); contradicting it is not."""
    d = diamonds.iloc[:1500]
    plain = cf.split_cp("price ~ carat", data=d, random_state=0).predict(d.head(5))
    same = cf.split_cp("price ~ carat", data=d, method="split", random_state=0).predict(d.head(5))
    pd.testing.assert_frame_equal(same, plain)
    kw = dict(random_state=0, n_estimators=20)
    res = cf.qrf_tc("price ~ carat", data=d, method="qrf-tc", guarantee="pac", **kw)
    assert res.method == "qrf-tc" and "guarantee" not in res.options
    pd.testing.assert_frame_equal(res.predict(d.head(5)), cf.qrf_tc("price ~ carat", data=d, **kw).predict(d.head(5)))
    for guarantee in ("marginal", None):
        with pytest.raises(
            InputError,
            match=r"cf\.qrf_tc\(\) always gives the training-conditional guarantee.*"
            r"cf\.lcp_rf\(formula, data\)",
        ):
            cf.qrf_tc("price ~ carat", data=d, guarantee=guarantee)
    # a bool response goes to prediction sets through the aliases, with the same checks
    flags = d.assign(big=d["price"] > 3000)
    with pytest.raises(InputError, match=r"cf\.qrf_tc\(\) is cf\.conformal\(\) with method='qrf-tc'"):
        cf.qrf_tc("big ~ carat", data=flags, method="split")


def test_too_small_calibration_set_is_an_error(diamonds):
    with pytest.raises(InputError, match="at least 19"):
        cf.split_cp("price ~ carat", data=diamonds.iloc[:30], alpha=0.05, calib_size=0.5)
    with pytest.raises(InputError, match="conformal part"):  # a given leaf size splits off a localizer part
        cf.lcp_rf("price ~ carat", data=diamonds.iloc[:40], alpha=0.05, calib_size=0.5, min_samples_leaf=5)
    # the tuned default does not split 20 calibration points (fewer than ceil(10/alpha) localizer points): split
    # conformal on all 20, which is enough at alpha = 0.05
    res = cf.lcp_rf("price ~ carat", data=diamonds.iloc[:40], alpha=0.05, calib_size=0.5, random_state=0)
    assert res.nobs == {"train": 20, "calibration": 20}


def test_infinite_intervals_are_inf_counted_and_warned(diamonds):
    # one-point leaves: the test point is alone in some leaves and gets much of its own mass
    res = cf.lcp_rf(
        "price ~ carat + C(clarity)",
        data=diamonds.iloc[:400],
        alpha=0.05,
        random_state=0,
        min_samples_leaf=1,
        n_estimators=5,
    )
    with pytest.warns(InfiniteIntervalWarning):
        p = res.predict(diamonds.iloc[3000:3400])
    inf = np.isinf(p["upr"])
    assert inf.any() and not p.isna().any().any()
    assert (p.loc[inf, "lwr"] == -np.inf).all()
    s = res.summary()
    assert s.frames["last_predict"].loc["Infinite intervals", "value"] == int(inf.sum())


def test_summary_renders_and_states_guarantee(fitted, diamonds):
    fitted.predict(diamonds.iloc[3000:3010])
    s = fitted.summary()
    text = str(s)
    for needle in ("lcp-rf", "price ~ carat", "No. localizer", "No. conformal", "certified", "alpha"):
        assert needle in text
    assert "<table" in s.as_html() and "tabular" in s.as_latex()
    assert s.frames["guarantee"].loc["certified", "value"]
    assert "lcp-rf" in repr(fitted) and len(repr(fitted).splitlines()) == 1


def test_non_honest_is_flagged_not_certified(diamonds):
    res = cf.lcp_rf("price ~ carat", data=diamonds.iloc[:800], honest=False, random_state=0)
    assert not res.guarantee.certified
    assert "NOT certified" in str(res.summary())
    assert res.nobs == {"train": 400, "calibration": 400}


def test_forest_weights_and_conditional_quantiles(fitted, diamonds):
    new = diamonds.iloc[3000:3020]
    W = fitted.forest_weights(new)
    assert W.shape == (20, fitted.nobs["conformal"])
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0)
    Ws = fitted.forest_weights(new, include_self=True)
    assert Ws.shape == (20, fitted.nobs["conformal"] + 1)
    q = fitted.conditional_quantiles(new, [0.5, 0.9])
    assert list(q.columns) == ["q0.5", "q0.9"] and q.index.equals(new.index)
    assert (q["q0.5"] <= q["q0.9"]).all()


def test_split_has_no_forest(diamonds):
    res = cf.split_cp("price ~ carat", data=diamonds.iloc[:500], random_state=0)
    with pytest.raises(NotFittedError):
        res.forest_weights(diamonds.iloc[:3])


def test_dot_formula_and_na_drop(diamonds):
    df = diamonds.iloc[:600][["price", "carat", "depth"]].copy()
    df.iloc[5, 1] = np.nan
    with pytest.raises(InputError, match="na_action='drop'"):
        cf.split_cp("price ~ .", data=df)
    res = cf.split_cp("price ~ .", data=df, na_action="drop", random_state=0)
    assert res.design.column_names == ["carat", "depth"]
    assert "Rows dropped (NA)" in str(res.summary())


# ------------------------------------------------------------ conventions users bring (issue 14)
def test_prefit_statsmodels_formula_result(diamonds):
    import statsmodels.formula.api as smf

    train, cal, new = diamonds.iloc[:1000], diamonds.iloc[1000:2000], diamonds.iloc[3000:3010]
    model = smf.ols("price ~ carat + C(cut)", data=train).fit()
    res = cf.split_cp("price ~ carat + C(cut)", data=cal, model=model, prefit=True)
    np.testing.assert_allclose(res.predict(new)["fit"], model.predict(new), rtol=1e-10)
    assert res.model is model
    const = cf.split_cp("price ~ 1", data=cal, model=smf.ols("price ~ 1", data=train).fit(), prefit=True)
    assert const.predict(new)["fit"].iloc[0] == pytest.approx(train["price"].mean())
    glm = smf.glm(
        "price ~ np.log(carat) + C(color)", data=train, family=sm.families.Gamma(sm.families.links.Log())
    ).fit()
    res2 = cf.split_cp("price ~ np.log(carat) + C(color)", data=cal, model=glm, prefit=True)
    np.testing.assert_allclose(res2.predict(new)["fit"], glm.predict(new), rtol=1e-10)


@pytest.mark.parametrize(
    "make", [lambda: np.random.default_rng(3), lambda: np.random.RandomState(3)], ids=["Generator", "RandomState"]
)
def test_random_state_generators_in_the_formula_api(diamonds, make):
    d = diamonds.iloc[:800]
    a = cf.lcp_rf("price ~ carat", data=d, model="ols", n_estimators=20, random_state=make())
    b = cf.lcp_rf("price ~ carat", data=d, model="ols", n_estimators=20, random_state=make())
    pd.testing.assert_frame_equal(a.predict(d.head(20)), b.predict(d.head(20)))
    assert isinstance(a.random_state, int)  # the seed drawn from the generator, which reproduces the fit
    c = cf.lcp_rf("price ~ carat", data=d, model="ols", n_estimators=20, random_state=a.random_state)
    pd.testing.assert_frame_equal(a.predict(d.head(20)), c.predict(d.head(20)))


def test_predict_several_alphas(fitted, diamonds):
    new = diamonds.iloc[3000:3020]
    p = fitted.predict(new, alpha=[0.05, 0.2])
    assert p.columns.tolist() == ["fit", "lwr_0.05", "upr_0.05", "lwr_0.2", "upr_0.2"]
    assert p.index.equals(new.index)
    for a in (0.05, 0.2):
        one = fitted.predict(new, alpha=a)
        np.testing.assert_array_equal(p[f"lwr_{a!r}"], one["lwr"])
        np.testing.assert_array_equal(p[f"upr_{a!r}"], one["upr"])
    assert (p["upr_0.05"] - p["lwr_0.05"] >= p["upr_0.2"] - p["lwr_0.2"]).all()
    d = fitted.predict(new, alpha=np.array([0.1, 0.3]), details=True, max_width=5000.0)
    assert d.columns.tolist() == ["fit"] + [
        f"{c}_{a}" for a in ("0.1", "0.3") for c in ("lwr", "upr", "t", "closed", "level", "rejected")
    ]


def test_predict_one_row_series_and_empty_frame(fitted, diamonds):
    new = diamonds.iloc[3000:3003]
    row = fitted.predict(new.iloc[1])
    pd.testing.assert_frame_equal(row, fitted.predict(new).iloc[[1]], check_index_type=False)
    empty = fitted.predict(new.iloc[:0])  # the default "gbm" model: scikit-learn refuses 0 rows itself
    assert empty.shape == (0, 3) and empty.columns.tolist() == ["fit", "lwr", "upr"]
    assert empty.dtypes.tolist() == [np.float64] * 3
    assert fitted.predict(new.iloc[:0], alpha=[0.1, 0.2]).shape == (0, 5)


def test_result_model_is_the_fitted_base_model(diamonds):
    d = diamonds.iloc[:600]
    from sklearn.ensemble import HistGradientBoostingRegressor

    gbm = cf.split_cp("price ~ carat", data=d, random_state=0)
    assert isinstance(gbm.model, HistGradientBoostingRegressor)
    X = gbm.design.transform(d.head(5))
    np.testing.assert_array_equal(gbm.model.predict(X), gbm.predict(d.head(5))["fit"])
    ols = cf.split_cp("price ~ carat", data=d, model="ols", random_state=0)
    assert hasattr(ols.model, "params") and len(ols.model.params) == 2  # statsmodels results, with intercept
    cqr = cf.split_cp("price ~ carat", data=d, score="quantile", random_state=0)
    assert isinstance(cqr.model, tuple) and len(cqr.model) == 2


def test_intercept_only_formulas_are_split_conformal_around_a_constant(diamonds):
    d = diamonds.iloc[:600]
    res = cf.split_cp("price ~ 1", data=d, random_state=0)
    cal_rows = res.estimator.calib_X_.shape[0]
    p = res.predict(d.head(3))
    assert np.allclose(p["fit"], p["fit"].iloc[0]) and res.nobs["calibration"] == cal_rows
    train_mean = res.model.constant_.ravel()[0]
    assert p["fit"].iloc[0] == pytest.approx(train_mean)
    zero = cf.split_cp("price ~ 0", data=d, random_state=0).predict(d.head(2))
    assert (zero["fit"] == 0).all() and (zero["lwr"] == -zero["upr"]).all()


def test_frames_that_convert_to_pandas(diamonds):
    class FrameLike:  # polars and pyarrow frames offer to_pandas()
        def __init__(self, frame):
            self.frame = frame

        def to_pandas(self):
            return self.frame

    d = diamonds.iloc[:600]
    a = cf.split_cp("price ~ carat", data=FrameLike(d), calib=FrameLike(diamonds.iloc[600:900]), model="ols")
    b = cf.split_cp("price ~ carat", data=d, calib=diamonds.iloc[600:900], model="ols")
    pd.testing.assert_frame_equal(a.predict(FrameLike(d.head(3))), b.predict(d.head(3)))

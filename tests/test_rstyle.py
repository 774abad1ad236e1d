"""R's vocabulary: level=, predict(interval=), fitted/residuals/coef/tidy/glance/augment, update, plot()."""

import ast
import doctest
import importlib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import confrf as cf
from confrf._levels import alpha_from_level, resolve_alpha
from confrf.exceptions import InputError, LevelWarning
from confrf.formula.update import update_formula

FAST = dict(n_estimators=30, min_samples_leaf=10, max_features=1.0)  # no tuning: fast, and still LCP-RF


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(500, random_state=0).frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def test_rows():
    return cf.datasets.make_sim(200, random_state=1).frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def ols(sim):
    return cf.split_cp("y ~ x1 + x2 + x3", data=sim, model="ols", random_state=0)


@pytest.fixture(scope="module")
def lcp(sim):
    return cf.lcp_rf("y ~ x1 + x2 + x3", data=sim, random_state=0, **FAST)


# -- level= ------------------------------------------------------------------------------
@pytest.mark.parametrize("level, alpha", [(0.95, 0.05), (0.9, 0.1), (0.8, 0.2), (0.99, 0.01), (0.7, 0.3)])
def test_level_is_one_minus_alpha_exactly(level, alpha):
    assert alpha_from_level(level) == alpha  # the float typed, not 1 - level's rounding (0.050000000000000044)
    assert resolve_alpha(None, level) == alpha


def test_level_fit_equals_alpha_fit(sim, test_rows, lcp):
    by_level = cf.lcp_rf("y ~ x1 + x2 + x3", data=sim, level=0.9, random_state=0, **FAST)
    assert by_level.alpha == 0.1
    pd.testing.assert_frame_equal(by_level.predict(test_rows), lcp.predict(test_rows))


def test_level_in_predict_equals_alpha(lcp, test_rows):
    pd.testing.assert_frame_equal(lcp.predict(test_rows, level=0.95), lcp.predict(test_rows, alpha=0.05))
    several = lcp.predict(test_rows, level=[0.95, 0.8])
    pd.testing.assert_frame_equal(several, lcp.predict(test_rows, alpha=[0.05, 0.2]))
    assert list(several.columns) == ["fit", "lwr_0.05", "upr_0.05", "lwr_0.2", "upr_0.2"]


def test_level_in_evaluate_compare_plots_and_pac(lcp, ols, test_rows):
    a, b = lcp.evaluate(test_rows, level=0.8, n_directions=20), lcp.evaluate(test_rows, alpha=0.2, n_directions=20)
    assert a.alpha == b.alpha == 0.2
    pd.testing.assert_series_equal(a.metrics.drop("predict_time"), b.metrics.drop("predict_time"))
    assert lcp.evaluate(test_rows, n_directions=20, conf_level=0.9).conf_level == 0.9
    cmp = cf.compare(lcp, ols, test=test_rows, level=0.8, n_directions=20)
    assert (cmp.frame.loc["alpha"] == 0.2).all()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert "0.8 intervals" in lcp.plot.intervals(test_rows, level=0.8).get_title()
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(alpha=0.1, level=0.9), "not both"),
        (dict(level=95), r"level=0\.95"),
        (dict(level=1.5), "probability in"),
        (dict(level=0.0), r"level must lie in \(0, 1\)"),
        (dict(level="0.9"), "level must be a number"),
        (dict(level=[0.9, 0.8]), "single number"),
    ],
)
def test_bad_levels(sim, kwargs, match):
    with pytest.raises(InputError, match=match):
        cf.split_cp("y ~ x1", data=sim, random_state=0, **kwargs)


def test_level_in_the_array_estimators(lcp, logit, wine, test_rows):
    est = lcp.estimator
    X = lcp.design.transform(test_rows)
    np.testing.assert_array_equal(est.predict_interval(X, level=0.95), est.predict_interval(X, alpha=0.05))
    Xw = logit.design.transform(wine)
    np.testing.assert_array_equal(logit.estimator.predict_sets(Xw, level=0.8), logit.estimator.predict_sets(Xw, 0.2))


def test_level_in_the_array_estimators_constructors(sim, wine, logit):
    X, y = sim[["x1", "x2", "x3"]].to_numpy(), sim["y"].to_numpy()
    by_alpha = cf.ConformalRegressor(model="ols", method="split", alpha=0.2, random_state=0)
    by_level = cf.ConformalRegressor(model="ols", method="split", level=0.8, random_state=0)
    for est in (by_alpha, by_level):
        est.fit(X[:250], y[:250]).conformalize(X[250:], y[250:])
    np.testing.assert_array_equal(by_level.predict_interval(X[:20]), by_alpha.predict_interval(X[:20]))
    assert by_level.get_params()["level"] == 0.8 and by_level.get_params()["alpha"] is None  # kept as given
    default = cf.ConformalRegressor(model="ols", method="split", random_state=0).fit(X[:250], y[:250])
    default.conformalize(X[250:], y[250:])
    ten = cf.ConformalRegressor(model="ols", method="split", alpha=0.1, random_state=0).fit(X[:250], y[:250])
    np.testing.assert_array_equal(
        default.predict_interval(X[:20]), ten.conformalize(X[250:], y[250:]).predict_interval(X[:20])
    )
    with pytest.raises(InputError, match="not both"):
        cf.ConformalRegressor(model="ols", alpha=0.1, level=0.9).fit(X[:250], y[:250])
    with pytest.raises(InputError, match=r"level=0\.95"):
        cf.ConformalRegressor(model="ols", level=95).fit(X[:250], y[:250])
    from confrf.classification import ConformalClassifier

    Xw = logit.design.transform(wine)
    yw = np.asarray(wine[logit.design.response_name])
    sets = {}
    for key, kw in (("alpha", dict(alpha=0.2)), ("level", dict(level=0.8))):
        clf = ConformalClassifier(model="rf", method="split", random_state=0, **kw)
        sets[key] = clf.fit(Xw[::2], yw[::2]).conformalize(Xw[1::2], yw[1::2]).predict_sets(Xw[:30])
    np.testing.assert_array_equal(sets["level"], sets["alpha"])
    with pytest.raises(InputError, match="not both"):
        ConformalClassifier(alpha=0.1, level=0.9).fit(Xw[::2], yw[::2])


def test_both_in_predict_is_an_error(ols, test_rows):
    with pytest.raises(InputError, match="not both"):
        ols.predict(test_rows, alpha=0.1, level=0.9)


def test_alpha_above_one_half_warns_and_names_the_fix(sim, ols, test_rows):
    with pytest.warns(LevelWarning, match=r"alpha=0.95 gives 5% prediction intervals.*level=0.95 or alpha=0.05") as w:
        cf.split_cp("y ~ x1", data=sim, alpha=0.95, random_state=0)
    assert w[0].filename == __file__  # points at the user's line, not into confrf
    with pytest.warns(LevelWarning, match=r"level=0.05 gives 5% prediction intervals"):
        ols.predict(test_rows.head(2), level=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LevelWarning)
        ols.predict(test_rows.head(2), alpha=0.5)  # 50%: no warning


# -- predict(interval=) ------------------------------------------------------------------
def test_interval_none_gives_the_fit_only(lcp, test_rows):
    fit = lcp.predict(test_rows, interval="none")
    assert list(fit.columns) == ["fit"]
    pd.testing.assert_series_equal(fit["fit"], lcp.predict(test_rows)["fit"])
    pd.testing.assert_frame_equal(lcp.predict(test_rows, interval="prediction"), lcp.predict(test_rows))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(interval="confidence"), "not give; its intervals are prediction intervals"),
        (dict(interval="tolerance"), "interval must be"),
        (dict(interval="none", level=0.9), "no effect"),
        (dict(interval="none", details=True), "no effect"),
    ],
)
def test_bad_intervals(ols, test_rows, kwargs, match):
    with pytest.raises(InputError, match=match):
        ols.predict(test_rows, **kwargs)


# -- fitted, residuals ------------------------------------------------------------------------
def test_fitted_and_residuals_on_the_training_rows(ols, sim):
    fit = ols.fitted(part="train")
    cal = ols.fitted(part="calibration")
    assert len(fit) == ols.nobs["train"] and len(cal) == ols.nobs["calibration"]
    assert set(fit.index).isdisjoint(cal.index) and set(fit.index) | set(cal.index) == set(sim.index)
    train = sim.loc[fit.index]
    expected = smf.ols("y ~ x1 + x2 + x3", data=train).fit()
    np.testing.assert_allclose(fit, expected.fittedvalues, rtol=1e-10)
    np.testing.assert_allclose(ols.residuals(part="train"), expected.resid, rtol=1e-8, atol=1e-12)
    # the calibration rows' residuals are the (signed) scores
    np.testing.assert_allclose(np.abs(ols.residuals(part="calibration")), ols.estimator.calib_scores_)
    both = ols.residuals(part="all")
    assert both.index.equals(sim.index)


def test_fitted_and_residuals_default_to_all_n_rows_as_r(ols, sim):
    # R's fitted(lm) and residuals(lm) have one value per observation; the part is augment()'s .part
    fit, res = ols.fitted(), ols.residuals()
    assert fit.index.equals(sim.index) and res.index.equals(sim.index)
    pd.testing.assert_series_equal(fit, ols.fitted(part="all"))
    pd.testing.assert_series_equal(res, ols.residuals(part="all"))
    aug = ols.augment()
    np.testing.assert_allclose(fit, aug[".fitted"])
    parts = aug[".part"]
    assert (parts == "train").sum() == ols.nobs["train"] and (parts == "calibration").sum() == ols.nobs["calibration"]
    pd.testing.assert_series_equal(fit[parts == "train"], ols.fitted(part="train"))
    np.testing.assert_allclose(res, sim["y"] - fit)


def test_fitted_with_dropped_rows_and_prefit(sim):
    df = sim.copy()
    df.loc[df.index[:5], "x1"] = np.nan
    res = cf.split_cp("y ~ x1", data=df, model="ols", random_state=0, na_action="drop")
    assert len(res.fitted(part="all")) == len(df) - 5 and not set(df.index[:5]) & set(res.fitted(part="all").index)
    model = smf.ols("y ~ x1", data=sim).fit()
    pre = cf.split_cp("y ~ x1", data=sim, model=model, prefit=True)
    with pytest.raises(InputError, match="part='calibration'"):
        pre.fitted(part="train")
    assert len(pre.fitted(part="calibration")) == len(pre.fitted()) == len(sim)
    assert pre.tidy().loc[0, ".part"] == "prefit" and pre.tidy().loc[0, ".nobs"] == len(sim)
    with pytest.raises(InputError, match="part must be"):
        res.fitted(part="test")


def test_a_changed_data_frame_is_detected(sim):
    df = sim.copy()
    res = cf.split_cp("y ~ x1", data=df, random_state=0)
    df.loc[10**6] = df.iloc[0]  # a row added in place: the positions of the fit's rows no longer hold
    with pytest.raises(InputError, match="changed since the fit"):
        res.fitted()


# -- coef, tidy, glance, and OLS's names -------------------------------------------------------
def test_ols_keeps_the_formulas_names(sim):
    df = sim.assign(g=np.where(sim.x2 > 0.5, "hi", "lo"))
    res = cf.split_cp("np.log(y + 5) ~ x1 + C(g)", data=df, model="ols", random_state=0)
    assert res.model.model.endog_names == "np.log(y + 5)"
    assert res.model.model.exog_names == ["Intercept", "x1", "C(g)[T.lo]"]
    text = str(res.model.summary())
    assert "np.log(y + 5)" in text and "C(g)[T.lo]" in text and "x1" in text


def test_coef_and_tidy_equal_statsmodels_on_the_training_rows(ols, sim):
    train = sim.loc[ols.fitted(part="train").index]
    expected = smf.ols("y ~ x1 + x2 + x3", data=train).fit()
    coef = ols.coef()
    assert coef.index.tolist() == ["Intercept", "x1", "x2", "x3"]
    np.testing.assert_allclose(coef, expected.params, rtol=1e-9)
    t = ols.tidy(conf_int=True, conf_level=0.9)
    assert t.columns.tolist() == [
        "term",
        "estimate",
        "std.error",
        "statistic",
        "p.value",
        "conf.low",
        "conf.high",
        ".part",
        ".nobs",
    ]
    # the model saw the training part only (R's lm sees all n): the table says so
    assert (t[".part"] == "train").all() and (t[".nobs"] == len(train)).all()
    assert len(train) == ols.nobs["train"] < len(sim)
    np.testing.assert_allclose(t["std.error"], expected.bse, rtol=1e-9)
    np.testing.assert_allclose(t["p.value"], expected.pvalues, rtol=1e-6)
    np.testing.assert_allclose(t[["conf.low", "conf.high"]], expected.conf_int(alpha=0.1), rtol=1e-9)


def test_coef_of_other_models(sim):
    from sklearn.linear_model import LinearRegression

    lin = cf.split_cp("y ~ x1 + x2 - 1", data=sim, model=LinearRegression(fit_intercept=False), random_state=0)
    assert lin.coef().index.tolist() == ["x1", "x2"]
    assert lin.tidy()["std.error"].isna().all()
    qr = cf.split_cp("y ~ x1", data=sim, score="quantile", model="qr", random_state=0)
    assert qr.coef().columns.tolist() == ["tau=0.05", "tau=0.95"]
    assert sorted(qr.tidy()["tau"].unique()) == [0.05, 0.95]
    const = cf.split_cp("y ~ 1", data=sim, model="ols", random_state=0)
    assert const.coef().index.tolist() == ["Intercept"]
    gbm = cf.split_cp("y ~ x1", data=sim, random_state=0)
    with pytest.raises(InputError, match="no coefficients.*glance"):
        gbm.coef()


def test_glance_is_one_row_of_broom_columns(ols, sim):
    g = ols.glance()
    assert g.shape[0] == 1
    train = sim.loc[ols.fitted(part="train").index]
    expected = smf.ols("y ~ x1 + x2 + x3", data=train).fit()
    assert g.loc[0, "nobs"] == len(sim) and g.loc[0, "n.train"] == ols.nobs["train"]
    assert g.loc[0, "level"] == 0.9 and g.loc[0, "guarantee"] == "marginal" and g.loc[0, "certified"]
    for col, value in [("r.squared", expected.rsquared), ("AIC", expected.aic), ("sigma", np.sqrt(expected.scale))]:
        assert g.loc[0, col] == pytest.approx(value, rel=1e-9)


# -- augment ----------------------------------------------------------------------------------
def test_augment_new_data(lcp, test_rows):
    aug = lcp.augment(test_rows)
    pred = lcp.predict(test_rows)
    assert aug.index.equals(test_rows.index)
    np.testing.assert_array_equal(aug[".fitted"], pred["fit"])
    np.testing.assert_array_equal(aug[".lower"], pred["lwr"])
    np.testing.assert_array_equal(aug[".upper"], pred["upr"])
    np.testing.assert_allclose(aug[".resid"], test_rows["y"] - pred["fit"])
    assert aug[".covered"].equals((pred["lwr"] <= test_rows["y"]) & (test_rows["y"] <= pred["upr"]))
    no_y = lcp.augment(test_rows.drop(columns="y"), interval="none")
    assert ".resid" not in no_y and ".lower" not in no_y and ".fitted" in no_y


def test_augment_defaults_to_the_fits_rows(lcp, sim):
    aug = lcp.augment()
    assert aug.index.equals(sim.index)
    assert (aug[".part"] == "train").sum() == lcp.nobs["train"]
    assert (aug[".part"] == "calibration").sum() == sum(v for k, v in lcp.nobs.items() if k != "train")


@pytest.mark.parametrize("method", ["cv+", "jackknife+", "jackknife+ab"])
def test_cross_conformal_rows_count_once(method):
    # each row trains (the point model, and the fold models) and is scored out of fold: one row, as broom
    df = cf.datasets.make_sim(200, random_state=0).frame[["y", "x1", "x2"]]
    res = cf.conformal("y ~ x1 + x2", data=df, method=method, model="ols", random_state=0)
    g = res.glance()
    assert g.loc[0, "nobs"] == 200 and g.loc[0, "n.train"] == 200
    aug = res.augment()
    assert aug.index.equals(df.index) and (aug[".part"] == "train+calibration").all()
    np.testing.assert_allclose(aug[".fitted"], res.predict(df)["fit"])
    for part in ("all", "train", "calibration"):
        assert res.fitted(part=part).index.equals(df.index)
        assert res.residuals(part=part).index.equals(df.index)
    full = smf.ols("y ~ x1 + x2", data=df).fit()  # the point model saw every row
    np.testing.assert_allclose(res.fitted(), full.fittedvalues, rtol=1e-9)
    t = res.tidy()
    assert (t[".part"] == "train+calibration").all() and (t[".nobs"] == 200).all()


# -- update ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("y ~ a + b*c", ". ~ . - b:c", "y ~ a + b + c"),
        ("y ~ a + b", ". ~ . + C(g)", "y ~ a + b + C(g)"),
        ("y ~ a + b", ". ~ . - 1", "y ~ a + b - 1"),
        ("y ~ a + b - 1", ". ~ . + 1", "y ~ a + b"),
        ("y ~ a", ". ~ . - a", "y ~ 1"),
        ("y ~ a", "~ . + b", "y ~ a + b"),
        ("y ~ a + b", "np.log(.) ~ .", "np.log(y) ~ a + b"),
        ("np.log(y) ~ a", "I(2 * .) ~ .", "I(2 * np.log(y)) ~ a"),
        ("y ~ a + b", "z ~ a", "z ~ a"),
        ("`Sepal.Length` ~ `Sepal.Width` + Species", ". ~ . - Species", "`Sepal.Length` ~ `Sepal.Width`"),
        ("y ~ a + I(x ** 2)", ". ~ . - I(x**2)", "y ~ a"),
        ("y ~ a + I(x^2)", ". ~ . - I(x ** 2)", "y ~ a"),  # R's ^ inside I() is the power, however written
        ("y ~ (a + b)^2", ". ~ . - a:b", "y ~ a + b"),
        ("y ~ a*b", ". ~ . - a", "y ~ b + a:b"),
    ],
)
def test_update_formula_follows_rs_rules(old, new, expected):
    assert update_formula(old, new) == expected


def test_update_formula_expands_the_old_dot(sim):
    assert update_formula("y ~ .", ". ~ . - x2", sim) == "y ~ x1 + x3"
    with pytest.raises(cf.FormulaError, match="one ~"):
        update_formula("y ~ a", ". - a")


def test_update_equals_a_fresh_fit(lcp, sim, test_rows):
    fresh = cf.lcp_rf("y ~ x1 + x2", data=sim, random_state=0, **FAST)
    upd = lcp.update(". ~ . - x3")
    assert upd.formula == "y ~ x1 + x2"
    pd.testing.assert_frame_equal(upd.predict(test_rows), fresh.predict(test_rows))
    by_level = lcp.update(level=0.8)
    pd.testing.assert_frame_equal(
        by_level.predict(test_rows),
        cf.lcp_rf("y ~ x1 + x2 + x3", data=sim, alpha=0.2, random_state=0, **FAST).predict(test_rows),
    )
    with pytest.warns(cf.exceptions.UnusedSettingWarning):  # the forest settings are kept, as R's update keeps them
        split = lcp.update(method="split")
    pd.testing.assert_frame_equal(
        split.predict(test_rows), cf.split_cp("y ~ x1 + x2 + x3", data=sim, random_state=0).predict(test_rows)
    )
    assert lcp.formula == "y ~ x1 + x2 + x3" and lcp.alpha == 0.1  # the original is unchanged


def test_update_reproduces_a_generator_seeded_fit(sim, test_rows):
    res = cf.split_cp("y ~ x1 + x2", data=sim, random_state=np.random.default_rng(7))
    again = res.update()
    pd.testing.assert_frame_equal(again.predict(test_rows), res.predict(test_rows))


# -- plot() --------------------------------------------------------------------------------------
def test_plot_panel(lcp, test_rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = lcp.plot(test_rows)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("Residuals vs fitted") and titles[2] == "Coverage by width decile"
    assert "held-out" in fig._suptitle.get_text()
    assert "calibration rows" in lcp.plot()._suptitle.get_text()
    with pytest.raises(InputError, match="needs the response"):
        lcp.plot(test_rows.drop(columns="y"))
    plt.close("all")


# -- classification results ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wine():
    from sklearn.datasets import load_wine

    return load_wine(as_frame=True).frame.astype({"target": "category"})


@pytest.fixture(scope="module")
def logit(wine):
    return cf.conformal("target ~ alcohol + hue + proline", data=wine, method="split", model="logit", random_state=0)


def test_classification_vocabulary(logit, wine):
    pd.testing.assert_frame_equal(logit.predict(wine, level=0.8), logit.predict(wine, alpha=0.2))
    assert logit.predict(wine.head(3), interval="none").columns.tolist() == ["pred"]
    probs = logit.fitted()
    assert probs.index.equals(wine.index) and np.allclose(probs.sum(axis=1), 1.0)  # all n rows, as R
    assert len(logit.fitted(part="train")) == logit.nobs["train"]
    t = logit.tidy()
    assert (t[".part"] == "train").all() and (t[".nobs"] == logit.nobs["train"]).all()
    with pytest.raises(InputError, match="no residuals; fitted"):
        logit.residuals()
    coef = logit.coef()
    assert coef.index.tolist() == ["Intercept", "alcohol", "hue", "proline"] and coef.shape[1] == 2
    aug = logit.augment(wine)
    pred = logit.predict(wine)
    assert (aug[".set_size"] == pred["size"]).all()
    assert aug[".covered"].tolist() == [y in s for y, s in zip(wine["target"], aug[".set"])]
    assert logit.glance().loc[0, "n.classes"] == 3
    assert logit.update(". ~ . - proline").formula == "target ~ alcohol + hue"
    assert logit.evaluate(wine, level=0.8).alpha == 0.2


def test_augment_with_a_bool_response(wine):
    df = wine.assign(big=wine["alcohol"] > 13)
    res = cf.conformal("big ~ hue + proline", data=df, method="split", model="logit", random_state=0)
    aug = res.augment(df.head(20))
    pred = res.predict(df.head(20))
    assert aug[".set_size"].tolist() == pred["size"].tolist()
    assert aug[".covered"].tolist() == [y in s for y, s in zip(df["big"].head(20), aug[".set"])]


def test_classification_plots_share_the_names(logit, wine):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert len(logit.plot(wine).axes) == 4
    assert logit.plot.coverage(wine, by="set_size").get_xlabel() == "set size"
    with pytest.raises(InputError, match=r"not intervals; plot\.set_sizes"):
        logit.plot.intervals(wine)
    with pytest.raises(InputError, match=r"sizes, not widths: use plot\.set_sizes"):
        logit.plot.widths(wine)
    with pytest.raises(InputError, match="interval='confidence' is not offered"):
        logit.predict(wine, interval="confidence")
    plt.close("all")


# -- structure ----------------------------------------------------------------------------------------
def test_the_two_formula_entries_do_not_import_each_other():
    root = Path(cf.__file__).parent
    tree = ast.parse((root / "classification" / "api.py").read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "api" not in modules and not any(m and m.endswith(".api") and m != "api" for m in modules if m)


@pytest.mark.parametrize(
    "module",
    ["confrf.results.rstyle", "confrf.classification.rstyle", "confrf.classification.plots", "confrf.results.base"],
)
def test_docstring_examples_run(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_a_low_level_in_an_array_estimator_warns(sim):
    X, y = sim[["x1", "x2", "x3"]].to_numpy(), sim["y"].to_numpy()
    with pytest.warns(LevelWarning, match=r"level=0.05 gives 5% prediction intervals"):
        cf.ConformalRegressor(model="ols", method="split", level=0.05, random_state=0).fit(X[:250], y[:250])

"""Bad input, argument by argument: each case gets a confrf error naming the argument and the fix.

The table is the audit of issue 14: every case used to fail inside a
dependency (numpy, scikit-learn, formulaic, statsmodels), name the wrong
argument, or pass silently. Each row is (id, call, error type, fragment of
the message).
"""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression, LogisticRegression

import confrf as cf
from confrf.exceptions import ArgumentTypeError, FormulaError, InputError

N = 300


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    out = pd.DataFrame({"x": rng.uniform(size=N), "z": rng.normal(size=N), "g": rng.choice(list("abc"), N)})
    out["y"] = out.x + rng.normal(size=N) * out.x
    return out


@pytest.fixture(scope="module")
def res(df):
    return cf.lcp_rf("y ~ x + z", data=df, model="ols", n_estimators=20, random_state=0)


def fit(df, formula="y ~ x", **kw):
    kw = {"model": "ols", "n_estimators": 20, "random_state": 0, **kw}
    return cf.lcp_rf(formula, data=df, **kw)


class TwoColumnModel:
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros((len(X), 2))

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self


class Plain:  # fit/predict, but no get_params: scikit-learn's clone cannot copy it
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X))


XY = (np.linspace(0, 1, 200).reshape(-1, 1), np.linspace(0, 1, 200))
CASES = [
    # -- formula API options ------------------------------------------------------------------
    ("honest='no'", lambda d, r: fit(d, honest="no"), InputError, "honest must be True or False"),
    ("prefit='False'", lambda d, r: fit(d, prefit="False"), InputError, "prefit must be True or False"),
    ("random_state=1.5", lambda d, r: fit(d, random_state=1.5), InputError, "random_state must be"),
    ("random_state=-1", lambda d, r: fit(d, random_state=-1), InputError, "non-negative"),
    ("random_state='0'", lambda d, r: fit(d, random_state="0"), InputError, "random_state must be"),
    ("random_state=True", lambda d, r: fit(d, random_state=True), InputError, "random_state must be"),
    ("alpha=nan", lambda d, r: fit(d, alpha=float("nan")), InputError, "alpha must lie in (0, 1)"),
    ("alpha=inf", lambda d, r: fit(d, alpha=float("inf")), InputError, "alpha must lie in (0, 1)"),
    ("alpha='0.1'", lambda d, r: fit(d, alpha="0.1"), InputError, "alpha must be a number"),
    ("alpha=[0.1] at fit", lambda d, r: fit(d, alpha=[0.1]), InputError, "predict(newdata, alpha=[0.05, 0.1])"),
    ("calib_size=nan", lambda d, r: fit(d, calib_size=float("nan")), InputError, "calib_size must lie in (0, 1)"),
    ("calib_size=1", lambda d, r: fit(d, calib_size=1), InputError, "calib_size must lie in (0, 1)"),
    ("calib_size='a'", lambda d, r: fit(d, calib_size="a"), InputError, "calib_size must be a number"),
    ("localizer_size=inf", lambda d, r: fit(d, localizer_size=float("inf")), InputError, "localizer_size"),
    ("n_estimators=0", lambda d, r: fit(d, n_estimators=0), InputError, "n_estimators must be an integer >= 1"),
    ("n_estimators=2.5", lambda d, r: fit(d, n_estimators=2.5), InputError, "n_estimators must be an integer"),
    ("n_estimators='10'", lambda d, r: fit(d, n_estimators="10"), InputError, "n_estimators must be an integer"),
    ("n_estimators='many'", lambda d, r: fit(d, n_estimators="many"), InputError, 'or "auto"'),
    ("max_depth=0", lambda d, r: fit(d, max_depth=0), InputError, "max_depth must be an integer >= 1 or None"),
    (
        "min_samples_leaf=0",
        lambda d, r: fit(d, min_samples_leaf=0),
        InputError,
        "min_samples_leaf must be an integer >= 1",
    ),
    ("min_samples_leaf=0.1", lambda d, r: fit(d, min_samples_leaf=0.1), InputError, '"tune" (the default)'),
    ("min_samples_leaf='Auto'", lambda d, r: fit(d, min_samples_leaf="Auto"), InputError, "min_samples_leaf"),
    ("max_features='x'", lambda d, r: fit(d, max_features="x"), InputError, "max_features"),
    ("max_features=1.5", lambda d, r: fit(d, max_features=1.5), InputError, "max_features must lie in (0, 1]"),
    ("n_jobs=0", lambda d, r: fit(d, n_jobs=0), InputError, "n_jobs must be None, a positive integer or -1"),
    ("n_jobs='a'", lambda d, r: fit(d, n_jobs="a"), InputError, "n_jobs"),
    # -- data and calib -----------------------------------------------------------------------
    (
        "calib=ndarray",
        lambda d, r: fit(d, calib=d.to_numpy()),
        ArgumentTypeError,
        "calib must be a pandas DataFrame, got a NumPy",
    ),
    ("data=ndarray", lambda d, r: fit(d.to_numpy()), ArgumentTypeError, "pd.DataFrame(array, columns="),
    ("calib=list", lambda d, r: fit(d, calib=[1, 2]), ArgumentTypeError, "calib must be"),
    ("calib lacks response", lambda d, r: fit(d, calib=d[["x"]]), InputError, "calib lacks the response"),
    ("calib NaN", lambda d, r: fit(d, calib=d.assign(x=np.nan)), InputError, "NaN or inf in calib"),
    (
        "calib NaN with na_action='drop'",
        lambda d, r: fit(d, calib=d.assign(x=np.nan), na_action="drop"),
        InputError,
        "na_action='drop' applies to the training data only",
    ),
    ("data is a Series", lambda d, r: fit(d.x), ArgumentTypeError, "data is a pandas Series (column 'x', 300 values)"),
    ("calib is a Series", lambda d, r: fit(d, calib=d.y), ArgumentTypeError, "calib is a pandas Series"),
    ("data empty", lambda d, r: fit(d.iloc[:0]), InputError, "0 row(s)"),
    ("data one row", lambda d, r: fit(d.iloc[:1]), InputError, "1 row(s)"),
    ("duplicated column", lambda d, r: fit(pd.concat([d, d[["x"]]], axis=1)), InputError, "several columns named"),
    (
        "datetime column",
        lambda d, r: fit(d.assign(t=pd.date_range("2020", periods=N)), "y ~ x + t"),
        InputError,
        "holds dates or times",
    ),
    (
        "timedelta column",
        lambda d, r: fit(d.assign(t=pd.to_timedelta(np.arange(N), unit="D")), "y ~ x + t"),
        InputError,
        "holds dates or times",
    ),
    (
        "datetime response",
        lambda d, r: fit(d.assign(t=pd.date_range("2020", periods=N)), "t ~ x"),
        InputError,
        "holds dates or times",
    ),
    (
        "numbers + stray string",
        lambda d, r: fit(d.assign(v=d.x.astype(object).where(d.index != 3, "oops")), "y ~ v"),
        InputError,
        "mixes numbers and other values (['oops']",
    ),
    (
        "text, a level per row",
        lambda d, r: fit(d.assign(v=[f"id{i}" for i in range(N)]), "y ~ x + v"),
        InputError,
        "leave it out of the formula",
    ),
    ("numbers as text", lambda d, r: fit(d.assign(v=d.x.astype(str)), "y ~ v"), InputError, "pd.to_numeric"),
    # a text response is a class label (prediction sets); a regression model with it is refused
    ("text response with a regression model", lambda d, r: fit(d, "g ~ x"), InputError, "is a class label"),
    ("y * 1e300", lambda d, r: fit(d.assign(y=d.y * 1e300)), InputError, "rescale it"),
    ("y * 1e-300", lambda d, r: fit(d.assign(y=d.y * 1e-300)), InputError, "rescale it"),
    (
        "1e39 feature with model='rf'",
        lambda d, r: cf.split_cp("y ~ v", data=d.assign(v=d.x * 1e39), model="rf"),
        InputError,
        "exceed float32's range",
    ),
    # -- formulas -----------------------------------------------------------------------------
    ("two responses", lambda d, r: fit(d, "y + x ~ z"), FormulaError, "I(y + x)"),
    ("y ~ 1 with lcp-rf", lambda d, r: fit(d, "y ~ 1"), InputError, "use method='split'"),
    (
        "y ~ 1 with a sklearn model",
        lambda d, r: cf.split_cp("y ~ 1", data=d, model=TwoColumnModel()),
        InputError,
        "cannot be fitted on zero columns",
    ),
    ("formula None", lambda d, r: fit(d, None), FormulaError, "must be a string"),
    ("response also a predictor", lambda d, r: fit(d, "y ~ x + y"), FormulaError, "cannot be its own predictor"),
    (
        "column named Intercept",
        lambda d, r: fit(d.assign(Intercept=d.x), "y ~ Intercept"),
        FormulaError,
        "clashes with the name of the formula's intercept",
    ),
    ("x * 1e-20 with OLS", lambda d, r: fit(d.assign(x=d.x * 1e-20)), InputError, "would silently drop them"),
    (
        "x * 1e20 with OLS, arrays",
        lambda d, r: cf.ConformalRegressor(model="ols").fit(XY[0] * 1e20, XY[1]),
        InputError,
        "X column(s) [0]",
    ),
    # -- models -------------------------------------------------------------------------------
    ("classifier as model", lambda d, r: fit(d, model=LogisticRegression()), InputError, "belongs to classification"),
    (
        "clusterer as prefit model",
        lambda d, r: fit(d, model=KMeans(2, n_init=1).fit(d[["x"]].to_numpy()), prefit=True),
        InputError,
        "is a clusterer",
    ),
    (
        "prefit sm.OLS with a constant, too few columns",
        lambda d, r: fit(
            d, "y ~ x + z", model=sm.OLS(d.y.to_numpy(), sm.add_constant(d[["x"]].to_numpy())).fit(), prefit=True
        ),
        InputError,
        "so it needs 3",
    ),
    (
        "prefit sklearn fitted on other columns",
        lambda d, r: fit(d, "y ~ x + z", model=LinearRegression().fit(d[["x", "y"]], d.y), prefit=True),
        InputError,
        "not in the design: ['y']",
    ),
    (
        "predict returns (n, 2)",
        lambda d, r: cf.split_cp("y ~ x", data=d, model=TwoColumnModel()),
        InputError,
        "returned an array of shape",
    ),
    (
        "prefit smf, other formula",
        lambda d, r: fit(
            d,
            model=__import__("statsmodels.formula.api", fromlist=["ols"]).ols("y ~ x + C(g)", data=d).fit(),
            prefit=True,
        ),
        InputError,
        "give confrf the same formula",
    ),
    (
        "quantile score, a pair of names",
        lambda d, r: fit(d, score="quantile", model=("ols", "rf")),
        InputError,
        "a name gives both quantiles by itself",
    ),
    (
        "unfitted statsmodels model",
        lambda d, r: fit(d, model=sm.OLS(d.y, d[["x"]])),
        InputError,
        "unfitted statsmodels OLS",
    ),
    (
        "unfitted statsmodels model, prefit",
        lambda d, r: fit(d, model=sm.OLS(d.y, d[["x"]]), prefit=True),
        InputError,
        "call .fit() on it",
    ),
    (
        "model without get_params",
        lambda d, r: cf.split_cp("y ~ x", data=d, model=Plain()),
        InputError,
        "cannot make a fresh copy",
    ),
    (
        "model is a class",
        lambda d, r: cf.split_cp(
            "y ~ x", data=d, model=__import__("sklearn.linear_model", fromlist=["x"]).LinearRegression
        ),
        InputError,
        "model=LinearRegression()",
    ),
    (
        "prefit model with calib=",
        lambda d, r: fit(d, model=LinearRegression().fit(d[["x"]].to_numpy(), d.y), prefit=True, calib=d),
        InputError,
        "drop calib=",
    ),
    (
        "prefit model not fitted",
        lambda d, r: cf.split_cp(
            "y ~ x", data=d, model=__import__("sklearn.linear_model", fromlist=["x"]).LinearRegression(), prefit=True
        ),
        InputError,
        "is not fitted",
    ),
    # -- predict ------------------------------------------------------------------------------
    ("predict ndarray", lambda d, r: r.predict(d.to_numpy()), ArgumentTypeError, "newdata must be"),
    ("predict alpha=[]", lambda d, r: r.predict(d.head(2), alpha=[]), InputError, "empty sequence"),
    ("predict alpha repeated", lambda d, r: r.predict(d.head(2), alpha=[0.1, 0.1]), InputError, "repeated"),
    ("predict alpha=[0.1, 2]", lambda d, r: r.predict(d.head(2), alpha=[0.1, 2]), InputError, "alpha must lie"),
    ("predict details='no'", lambda d, r: r.predict(d.head(2), details="no"), InputError, "details must be True"),
    ("predict chunk_size=0", lambda d, r: r.predict(d.head(2), chunk_size=0), InputError, "chunk_size"),
    ("predict chunk_size=2.5", lambda d, r: r.predict(d.head(2), chunk_size=2.5), InputError, "chunk_size"),
    ("predict n_jobs='2'", lambda d, r: r.predict(d.head(2), n_jobs="2"), InputError, "n_jobs"),
    ("predict progress='no'", lambda d, r: r.predict(d.head(2), progress="no"), InputError, "progress"),
    (
        "predict 1/0 for a True/False factor",
        lambda d, r: fit(d.assign(b=d.x > 0.5), "y ~ x + C(b)").predict(d.head(2).assign(b=[1, 0])),
        InputError,
        "level(s) [1, 0] not seen at fit",
    ),
    (
        "predict, duplicated column",
        lambda d, r: r.predict(pd.concat([d.head(2), d.head(2)[["x"]]], axis=1)),
        InputError,
        "newdata has several columns named ['x']",
    ),
    (
        "predict pd.NA in an object column",
        lambda d, r: r.predict(d.head(2).assign(x=pd.Series([0.1, pd.NA], dtype=object))),
        InputError,
        "NaN or inf in newdata: 'x'",
    ),
    (
        "predict complex column",
        lambda d, r: r.predict(d.head(2).assign(x=[1 + 1j, 2 + 0j])),
        InputError,
        "holds complex numbers",
    ),
    ("complex column at fit", lambda d, r: fit(d.assign(x=d.x + 0j)), InputError, "holds complex numbers"),
    (
        "predict text in numeric column",
        lambda d, r: r.predict(d.head(2).assign(x=["a", "b"])),
        InputError,
        "numeric at fit",
    ),
    (
        "forest_weights include_self='yes'",
        lambda d, r: r.forest_weights(d.head(2), include_self="yes"),
        InputError,
        "include_self",
    ),
    (
        "conditional_quantiles q=nan",
        lambda d, r: r.conditional_quantiles(d.head(2), q=[np.nan]),
        InputError,
        "q must lie in [0, 1]",
    ),
    ("evaluate random_state='a'", lambda d, r: r.evaluate(d.head(50), random_state="a"), InputError, "random_state"),
    ("evaluate level=nan", lambda d, r: r.evaluate(d.head(50), level=np.nan), InputError, "level"),
    ("evaluate alpha=[0.1, 0.2]", lambda d, r: r.evaluate(d.head(50), alpha=[0.1, 0.2]), InputError, "single number"),
    ("evaluate max_width=nan", lambda d, r: r.evaluate(d.head(50), max_width=np.nan), InputError, "max_width"),
    ("summary beta=inf", lambda d, r: r.summary(beta=float("inf")), InputError, "beta must lie in (1, inf)"),
    ("summary beta=nan", lambda d, r: r.summary(beta=float("nan")), InputError, "beta"),
    # -- arrays (ConformalRegressor, lcp_threshold) ---------------------------------------------
    (
        "sparse X",
        lambda d, r: cf.ConformalRegressor(model="ols").fit(sp.csr_matrix(XY[0]), XY[1]),
        ArgumentTypeError,
        "toarray()",
    ),
    (
        "string X",
        lambda d, r: cf.ConformalRegressor(model="ols").fit(np.array([["a"]] * 200), XY[1]),
        InputError,
        "X must hold numbers only",
    ),
    (
        "DataFrame X with text",
        lambda d, r: cf.ConformalRegressor(model="ols").fit(d[["x", "g"]], d.y),
        InputError,
        "non-numeric column(s): ['g']",
    ),
    (
        "DataFrame X, columns reordered at predict",
        lambda d, r: (
            cf.ConformalRegressor(model="ols", method="split")
            .fit(d[["x", "z"]], d.y)
            .conformalize(d[["x", "z"]], d.y)
            .predict_interval(d[["z", "x"]])
        ),
        InputError,
        "reorder them",
    ),
    (
        "DataFrame X, other columns at conformalize",
        lambda d, r: (
            cf.ConformalRegressor(model="ols", method="split").fit(d[["x", "z"]], d.y).conformalize(d[["x", "y"]], d.y)
        ),
        InputError,
        "give the same columns",
    ),
    (
        "prefit model fitted on a DataFrame, X columns reordered",
        lambda d, r: cf.ConformalRegressor(
            model=LinearRegression().fit(d[["x", "z"]], d.y), prefit=True, method="split"
        ).conformalize(d[["z", "x"]], d.y),
        InputError,
        "reorder them",
    ),
    (
        "one row as a 1-D X",
        lambda d, r: (
            cf.ConformalRegressor(model="ols", method="split")
            .fit(d[["x", "z"]], d.y)
            .conformalize(d[["x", "z"]], d.y)
            .predict_interval(np.array([0.1, 0.2]))
        ),
        InputError,
        "X.reshape(1, -1)",
    ),
    (
        "refit voids the calibration",
        lambda d, r: (
            cf.ConformalRegressor(model="ols", method="split")
            .fit(d[["x", "z"]], d.y)
            .conformalize(d[["x", "z"]], d.y)
            .fit(d[["x"]], d.y)
            .predict_interval(d[["x"]])
        ),
        cf.NotFittedError,
        "call conformalize()",
    ),
    ("complex y", lambda d, r: cf.ConformalRegressor(model="ols").fit(XY[0], XY[1] + 1j), InputError, "complex"),
    (
        "no training rows",
        lambda d, r: cf.ConformalRegressor(model="ols").fit(np.empty((0, 1)), np.empty(0)),
        InputError,
        "at least 2 training rows",
    ),
    (
        "estimator honest='no'",
        lambda d, r: cf.ConformalRegressor(model="ols", honest="no").fit(*XY),
        InputError,
        "honest must be True or False",
    ),
    (
        "estimator options='x'",
        lambda d, r: cf.ConformalRegressor(model="ols", options="x").fit(*XY),
        InputError,
        "options must be a dict",
    ),
    ("qrf-tc delta='0.1'", lambda d, r: cf.qrf_tc("y ~ x", data=d, delta="0.1"), InputError, "delta must be a number"),
    ("qrf-tc grid_size=2.5", lambda d, r: cf.qrf_tc("y ~ x", data=d, grid_size=2.5), InputError, "grid_size"),
    (
        "lcp bandwidth=True",
        lambda d, r: cf.conformal("y ~ x", data=d, method="lcp", bandwidth=True),
        InputError,
        "bandwidth must be a number",
    ),
    (
        "lcp bandwidth=1e-300",
        lambda d, r: cf.conformal("y ~ x", data=d, method="lcp", bandwidth=1e-300),
        InputError,
        "bandwidth must lie in (1e-150, 1e+150)",
    ),
    (
        "slcp bandwidth=1e-300",
        lambda d, r: cf.conformal("y ~ x", data=d, method="slcp", bandwidth=1e-300),
        InputError,
        "bandwidth must lie in",
    ),
    ("lcp cv=True", lambda d, r: cf.conformal("y ~ x", data=d, method="lcp", cv=True), InputError, "cv must be"),
    (
        "estimator random_state=1.5",
        lambda d, r: cf.ConformalRegressor(model="ols", random_state=1.5).fit(*XY),
        InputError,
        "random_state",
    ),
    # -- metrics and planning helpers -----------------------------------------------------------
    (
        "clopper_pearson lengths differ",
        lambda d, r: cf.metrics.clopper_pearson(np.array([1, 2, 3]), np.array([3, 3])),
        InputError,
        "k and n must have the same length",
    ),
    ("share_infinite of nothing", lambda d, r: cf.metrics.share_infinite([], []), InputError, "at least one row"),
    ("quantiles q=90 (percent)", lambda d, r: cf.metrics.quantiles([1.0, 2.0], 90), InputError, "not percents"),
    (
        "coverage_table is_covered=0.3",
        lambda d, r: cf.metrics.coverage_table([0.3, 1.0], ["a", "b"]),
        InputError,
        "is_covered must be booleans",
    ),
    ("width_bins NaN width", lambda d, r: cf.metrics.width_bins([np.nan, 1.0, 2.0]), InputError, "not NaN"),
    (
        "coverage_by_width NaN width",
        lambda d, r: cf.metrics.coverage_by_width([True, True], [np.nan, 1.0]),
        InputError,
        "not NaN",
    ),
    (
        "width_spearman NaN width",
        lambda d, r: cf.metrics.width_spearman([np.nan, 1.0], [0.0, 1.0], [0.0, 0.0]),
        InputError,
        "not NaN",
    ),
    ("width_spearman of nothing", lambda d, r: cf.metrics.width_spearman([], [], []), InputError, "at least one row"),
    (
        "pac_n2 alpha=1e-9 (used to exhaust memory)",
        lambda d, r: cf.pac_n2(alpha=1e-9, delta=0.1),
        InputError,
        "beyond any data set",
    ),
    ("pac_epsilon n2=1e9", lambda d, r: cf.pac_epsilon(10**9, alpha=0.1, delta=0.1), InputError, "beyond any data set"),
    (
        "lcp_threshold 2-D scores",
        lambda d, r: cf.lcp_threshold(np.full((20, 20), 0.05), np.ones((19, 1)), 0.1),
        InputError,
        "scores must be 1-D",
    ),
    (
        "lcp_threshold 3-D weights",
        lambda d, r: cf.lcp_threshold(np.zeros((2, 20, 20)), np.ones(19), 0.1),
        InputError,
        "weights must be a 2-D",
    ),
]


@pytest.mark.parametrize("call, error, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_gets_a_confrf_error(df, res, call, error, fragment):
    assert_confrf_error(call, error, fragment, df, res)


def assert_confrf_error(call, error, fragment, *args):
    with pytest.raises(error) as info:
        call(*args)
    assert isinstance(info.value, cf.ConfrfError)
    assert fragment in str(info.value)


GOOD_ALPHAS = [Decimal("0.1"), Fraction(1, 10), np.float32(0.1), np.float64(0.1), np.array(0.1), 0.1]


@pytest.mark.parametrize("alpha", GOOD_ALPHAS, ids=[type(a).__name__ for a in GOOD_ALPHAS])
def test_alpha_of_any_numeric_type_is_read_as_typed(df, alpha):
    assert fit(df, alpha=alpha).alpha == 0.1


@pytest.mark.parametrize("calib_size", [np.float32(0.5), Decimal("0.5"), Fraction(1, 2), np.float64(0.5)])
def test_calib_size_of_any_numeric_type(df, calib_size):
    assert fit(df, calib_size=calib_size).nobs["train"] == N // 2


@pytest.mark.parametrize("options", [{}, {"max_features": "tune"}, {"min_samples_leaf": "auto", "max_features": 1.0}])
def test_forest_defaults_pass_the_checks(df, options):
    # the defaults ("tune") must pass the shared checkers: a merge once made every default lcp_rf call fail. With
    # N = 300 rows (150 calibration points) a tuned leaf size takes LCP-RF's size rule (no localizer part below
    # ceil(10/alpha) localizer points), so the rows are doubled for the tuning to run
    big = pd.concat([df, df.assign(x=df.x + 1e-3)], ignore_index=True)
    assert fit(big, **options).estimator.localizer_.min_samples_leaf_ >= 1
    loc = fit(df, **options).estimator.localizer_
    assert (loc.skipped_ and loc.pooled) if "min_samples_leaf" not in options else loc.min_samples_leaf_ >= 1


def test_compare_says_when_responses_differ(df):
    pos = df.assign(y=np.exp(df.y))
    text = str(cf.compare(fit(pos, "np.log(y) ~ x"), fit(pos, "y ~ x"), test=pos, n_directions=20))
    assert "Response" in text and "np.log(y)" in text and "not comparable" in " ".join(text.split())


def test_point_predictions_between_fit_and_conformalize(df):
    reg = cf.ConformalRegressor(model="ols").fit(df[["x", "z"]], df.y)
    assert reg.predict(df[["x", "z"]].head(4)).shape == (4,)


def test_empty_set_has_width_zero():
    # CQR reports an empty set by lwr > upr: its length is 0, not negative (mean widths were pulled down)
    assert cf.metrics.interval_width([3.0, 0.0], [1.0, 2.0]).tolist() == [0.0, 2.0]


def _prefit(df, model):
    return fit(df, "y ~ x + z", model=model, prefit=True).predict(df.head(5))


def test_prefit_models_with_named_columns_are_matched_by_name(df):
    # fitted on the design's columns in another order: the names decide, not the positions
    want = _prefit(df, LinearRegression().fit(df[["x", "z"]].to_numpy(), df.y))
    for model in (
        LinearRegression().fit(df[["z", "x"]], df.y),
        sm.OLS(df.y, sm.add_constant(df[["z", "x"]], prepend=False)).fit(),
        sm.OLS(df.y.to_numpy(), sm.add_constant(df[["x", "z"]].to_numpy())).fit(),
    ):
        pd.testing.assert_frame_equal(_prefit(df, model), want, rtol=1e-9)


def test_scalar_dict_is_one_row_and_numpy_scalars_are_numbers(df, res):
    p = res.predict({"x": 0.5, "z": 0.1})
    assert p.shape == (1, 3)
    assert res.summary(tree_exponent=np.float32(1.0)) is not None


def test_float32_blurred_feature_with_rf_base_model_warns(df):
    with pytest.warns(cf.exceptions.ConfrfWarning, match="beyond float32 precision"):
        cf.split_cp("y ~ v", data=df.assign(v=1 + 1e-9 * df.x), model="rf", random_state=0)


def test_validation_docstring_examples_run():
    import doctest

    import confrf._validation as validation

    result = doctest.testmod(validation)
    assert result.attempted > 0 and result.failed == 0


# -- classification (issue 15's audit) ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cdf():
    rng = np.random.default_rng(1)
    out = pd.DataFrame({"x": rng.normal(size=N), "z": rng.normal(size=N)})
    out["y"] = np.where(out.x + rng.normal(size=N) > 0, "a", "b")
    return out


@pytest.fixture(scope="module")
def cres(cdf):
    return cf.conformal("y ~ x + z", data=cdf, method="split", model="logit", random_state=0)


class ProbaModel:
    """A user classifier whose predict_proba is broken in one way."""

    def __init__(self, kind="nan"):
        self.kind = kind

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = np.full((len(X), len(self.classes_)), 1 / len(self.classes_))
        if self.kind in ("nan", "inf"):
            p[3, 0] = np.nan if self.kind == "nan" else np.inf
        return {"shape": p[:, :1], "sum": 3 * p, "negative": p + [[-0.6, 0.6]]}.get(self.kind, p)

    def get_params(self, deep=True):
        return {"kind": self.kind}

    def set_params(self, **params):
        self.kind = params.get("kind", self.kind)
        return self


def cfit(d, formula="y ~ x + z", **kw):
    return cf.conformal(formula, data=d, **{"method": "split", "model": "logit", "random_state": 0, **kw})


def _absent_class_in_calibration(method):
    X = np.random.default_rng(0).normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = cf.classification.ConformalClassifier("rf", method=method, random_state=0)
    clf.fit(np.vstack([X, [[9.0, 9.0]] * 3]), np.append(y, ["c"] * 3))
    return clf.conformalize(X, y)


RAPS = cf.classification.RAPSScore
CLASS_CASES = [
    ("proba NaN", lambda d, r: cfit(d, model=ProbaModel("nan")), InputError, "gave NaN or inf in 1 of"),
    ("proba inf", lambda d, r: cfit(d, model=ProbaModel("inf")), InputError, "gave NaN or inf in 1 of"),
    ("proba wrong shape", lambda d, r: cfit(d, model=ProbaModel("shape")), InputError, "expected 2 columns"),
    ("proba not summing to 1", lambda d, r: cfit(d, model=ProbaModel("sum")), InputError, "summing to 1"),
    ("proba negative", lambda d, r: cfit(d, model=ProbaModel("negative")), InputError, "not probabilities"),
    (
        "label NaN (formula)",
        lambda d, r: cfit(d.assign(y=d.y.where(d.index != 5))),
        InputError,
        "NaN or inf in the columns used by the formula: 'y' (1 rows)",
    ),
    (
        "label None (arrays)",
        lambda d, r: cf.classification.ConformalClassifier(method="split").fit(
            d[["x"]].to_numpy(), d.y.where(d.index != 5).to_numpy()
        ),
        InputError,
        "1 missing value(s)",
    ),
    (
        "categorical with an unused level",
        lambda d, r: cfit(d.assign(y=pd.Categorical(d.y, ["a", "b", "zz"]))),
        InputError,
        "level(s) ['zz'] that no row has",
    ),
    ("alpha too small for split", lambda d, r: cfit(d, alpha=0.001), InputError, "at least 999 are needed"),
    (
        "score='raps' with a numeric response",
        lambda d, r: cfit(d.assign(y=d.x * 2.0), model="ols", score="raps"),
        InputError,
        "score='raps' belongs to classification",
    ),
    (
        "model='logit' with a numeric response",
        lambda d, r: cfit(d.assign(y=d.x * 2.0)),
        InputError,
        "model='logit' belongs to classification",
    ),
    (
        "score='absolute' with a label",
        lambda d, r: cfit(d, score="absolute"),
        InputError,
        "score='absolute' belongs to regression",
    ),
    ("raps lam=-1", lambda d, r: cfit(d, score=RAPS(lam=-1)), InputError, "lam must be a finite number >= 0"),
    ("raps k_reg=1.5", lambda d, r: cfit(d, score=RAPS(lam=0.1, k_reg=1.5)), InputError, "k_reg must be an integer"),
    ("raps lam as an option", lambda d, r: cfit(d, score="raps", lam=0.1), InputError, "unknown option(s) ['lam']"),
    ("classification random_state='x'", lambda d, r: cfit(d, random_state="x"), InputError, "random_state must be"),
    ("classification random_state=True", lambda d, r: cfit(d, random_state=True), InputError, "random_state must be"),
    ("classification random_state=-1", lambda d, r: cfit(d, random_state=-1), InputError, "non-negative"),
    (
        "class absent from calibration, split-g",
        lambda d, r: _absent_class_in_calibration("split-g"),
        InputError,
        "['c'] have no row in the calibration set",
    ),
    (
        "class absent from calibration, lcp-rf-g",
        lambda d, r: _absent_class_in_calibration("lcp-rf-g"),
        InputError,
        "['c'] have no row in the calibration set",
    ),
    (
        "evaluate without the response",
        lambda d, r: r.evaluate(d.drop(columns="y")),
        InputError,
        "lacks the response column 'y'",
    ),
    (
        "evaluate with a NaN label",
        lambda d, r: r.evaluate(d.assign(y=d.y.where(d.index != 5))),
        InputError,
        "missing in 1 row(s)",
    ),
    (
        "compare sets with intervals",
        lambda d, r: cf.compare(r, cf.split_cp("x ~ z", data=d, random_state=0), test=d),
        InputError,
        "are not classification results",
    ),
    ("compare given a list", lambda d, r: cf.compare([r, r], test=d), InputError, "cf.compare(*results, test=test)"),
    ("predict chunk_size=0", lambda d, r: r.predict(d, chunk_size=0), InputError, "chunk_size"),
    (
        "predict NaN predictor",
        lambda d, r: r.predict(d.assign(x=d.x.where(d.index != 5))),
        InputError,
        "rows are never dropped here",
    ),
    (
        "predict several alphas on Dask",
        lambda d, r: r.predict(
            __import__("dask.dataframe", fromlist=["x"]).from_pandas(d, npartitions=2), alpha=[0.1, 0.2]
        ),
        InputError,
        "Dask",
    ),
]


@pytest.mark.parametrize("call, error, fragment", [c[1:] for c in CLASS_CASES], ids=[c[0] for c in CLASS_CASES])
def test_bad_classification_input_gets_a_confrf_error(cdf, cres, call, error, fragment):
    assert_confrf_error(call, error, fragment, cdf, cres)


def test_label_kinds_keep_their_values(cdf):
    """Numeric-looking strings stay text, bool labels are False/True, C(int) keeps the integers: no coercion."""
    lab = cdf.y == "a"
    cases = {
        "y ~ x": (cdf.assign(y=np.where(lab, "1", "2")), ["1", "2"]),
        "y ~ x ": (cdf.assign(y=lab), [False, True]),
        "C(y) ~ x": (cdf.assign(y=np.where(lab, 10, 20)), [10, 20]),
    }
    for formula, (d, levels) in cases.items():
        res = cfit(d, formula=formula, method="split")
        assert res.levels == levels and all(type(a) is type(b) for a, b in zip(res.levels, levels))
        pred = res.predict(d.head(5))
        assert pred.columns.tolist() == ["pred", "size", *levels] and len(pred) == 5
        assert set(pred["pred"]) <= set(levels)


def test_tiny_alpha_gives_full_sets_reported_and_counted(cdf):
    res = cfit(cdf, method="split", alpha=0.1)
    with pytest.warns(cf.exceptions.InfiniteIntervalWarning, match="at least 999 conformal calibration points"):
        pred = res.predict(cdf, alpha=0.001)
    assert len(pred) == len(cdf) and (pred["size"] == 2).all()  # every row kept, every set full
    assert res.summary().frames["last_predict"].loc["Share full", "value"] == 1.0


@pytest.mark.parametrize(
    "seed",
    [lambda: np.random.default_rng(5), lambda: np.random.RandomState(5), lambda: np.int64(5), lambda: 5],
    ids=["Generator", "RandomState", "int64", "int"],
)
def test_classification_random_state_kinds_reproduce(cdf, seed):
    a = cfit(cdf, method="lcp-rf", model="rf", n_estimators=10, random_state=seed()).predict(cdf.head(20))
    b = cfit(cdf, method="lcp-rf", model="rf", n_estimators=10, random_state=seed()).predict(cdf.head(20))
    pd.testing.assert_frame_equal(a, b)

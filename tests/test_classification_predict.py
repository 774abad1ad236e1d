"""Classification predict as regression's: one-row inputs, empty frames, several alphas, chunks, Dask,
prefit statsmodels results, ``result.model``."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

import confrf as cf
from confrf.classification import ConformalClassifier
from confrf.exceptions import InfiniteIntervalWarning, InputError

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 900
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = np.where(df.x1 + rng.normal(size=n) > 0.5, "c", np.where(df.x2 > 0, "a", "b"))
    df["y01"] = (df.x1 + rng.normal(size=n) > 0).astype(int)
    df["yi"] = pd.Categorical(df.y).codes.astype(int)
    return df.iloc[:600], df.iloc[600:]


@pytest.fixture(scope="module", params=["split", "lcp-rf-g"])
def res(request, data):
    train, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InfiniteIntervalWarning)
        return cf.conformal(
            "y ~ x1 + x2", data=train, method=request.param, model="rf", random_state=0, n_estimators=20
        )


def test_one_row_inputs_and_empty_frame(res, data):
    _, test = data
    full = res.predict(test.head(3))
    pd.testing.assert_frame_equal(res.predict(test.iloc[1]), full.iloc[[1]], check_dtype=False)
    one = res.predict({"x1": float(test.x1.iloc[1]), "x2": float(test.x2.iloc[1])})
    assert one.drop(columns="pred").to_numpy().tolist() == full.iloc[[1]].drop(columns="pred").to_numpy().tolist()
    empty = res.predict(test.iloc[:0])
    assert empty.columns.tolist() == ["pred", "size", "a", "b", "c"] and len(empty) == 0
    assert [empty[c].dtype for c in ("a", "b", "c")] == [bool] * 3 and empty["size"].dtype == np.int64
    assert res.predict_proba(test.iloc[:0]).shape == (0, 3)
    assert res.estimator.predict(np.empty((0, 2))).shape == (0,)


def test_several_alphas_follow_the_regression_naming(res, data):
    _, test = data
    both = res.predict(test, alpha=[0.05, 0.2])
    per = [f"{c}_{a!r}" for a in (0.05, 0.2) for c in ("size", "a", "b", "c")]
    assert both.columns.tolist() == ["pred", *per]
    for a in (0.05, 0.2):
        single = res.predict(test, alpha=a)
        assert (both[f"size_{a!r}"] == single["size"]).all()
        assert (both[[f"{c}_{a!r}" for c in "abc"]].to_numpy() == single[list("abc")].to_numpy()).all()
    assert (both["size_0.05"] >= both["size_0.2"]).all()  # nested sets
    with pytest.raises(InputError, match="repeated"):
        res.predict(test, alpha=[0.1, 0.1])


def test_chunks_and_threads_do_not_change_sets(data):
    train, test = data
    res = cf.conformal(
        "y ~ x1 + x2",
        data=train,
        method="lcp-rf",
        model="rf",
        random_state=0,
        n_estimators=20,
        score=cf.classification.APSScore(randomized=True, random_state=3),
    )
    ref = res.predict(test)
    pd.testing.assert_frame_equal(res.predict(test, chunk_size=7, n_jobs=2, progress=False), ref)
    with pytest.raises(InputError, match="chunk_size"):
        res.predict(test, chunk_size=0)
    with pytest.raises(InputError, match="n_jobs"):
        res.predict(test, n_jobs="2")


def test_dask_frame_gives_the_pandas_sets(res, data):
    dd = pytest.importorskip("dask.dataframe")
    _, test = data
    lazy = res.predict(dd.from_pandas(test.head(50), npartitions=3))
    pd.testing.assert_frame_equal(lazy.compute(scheduler="synchronous"), res.predict(test.head(50)), check_dtype=False)
    with pytest.raises(InputError, match="Dask"):
        res.predict(dd.from_pandas(test.head(5), npartitions=1), alpha=[0.1, 0.2])


def test_result_model_is_the_fitted_classifier(data):
    train, test = data
    res = cf.conformal("y ~ x1 + x2", data=train, method="split", model="logit", random_state=0)
    assert type(res.model).__name__ == "MultinomialResultsWrapper"
    res = cf.conformal("y ~ x1 + x2", data=train, method="split", model="rf", random_state=0)
    X = res.design.transform(test)
    np.testing.assert_allclose(res.model.predict_proba(X), res.predict_proba(test).to_numpy())


def test_prefit_statsmodels_formula_results(data):
    train, cal = data
    logit = smf.logit("y01 ~ x1 + x2", data=train).fit(disp=0)
    res = cf.conformal("C(y01) ~ x1 + x2", data=cal, model=logit, prefit=True, method="split", random_state=0)
    assert res.levels == [0, 1] and res.model is logit and "Logit (statsmodels, prefit)" in res.model_title
    np.testing.assert_allclose(res.predict_proba(cal)[1].to_numpy(), logit.predict(cal).to_numpy())
    mn = smf.mnlogit("yi ~ x1 + x2", data=train).fit(disp=0)
    res = cf.conformal(
        "C(yi) ~ x1 + x2", data=cal, model=mn, prefit=True, method="lcp-rf", random_state=0, n_estimators=20
    )
    np.testing.assert_allclose(res.predict_proba(cal).to_numpy(), mn.predict(cal).to_numpy())
    assert res.predict(cal.head(4)).shape == (4, 5)
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(res)).predict(cal), res.predict(cal))


def test_prefit_statsmodels_array_results_match_levels_by_name(data):
    train, cal = data
    mn = sm.MNLogit(train.y, sm.add_constant(train[["x1", "x2"]])).fit(disp=0)  # classes named 'a', 'b', 'c'
    res = cf.conformal("y ~ x1 + x2", data=cal, model=mn, prefit=True, method="split", random_state=0)
    expected = mn.predict(sm.add_constant(cal[["x1", "x2"]]))
    np.testing.assert_allclose(res.predict_proba(cal).to_numpy(), np.asarray(expected))
    clf = ConformalClassifier(mn, method="split", prefit=True).conformalize(
        cal[["x1", "x2"]].to_numpy(), cal.y, classes=["a", "b", "c"]
    )
    assert clf.predict_sets(cal[["x1", "x2"]].to_numpy()[:3]).shape == (3, 3)
    with pytest.raises(InputError, match="classes=..."):
        ConformalClassifier(mn, method="split", prefit=True).conformalize(cal[["x1", "x2"]].to_numpy(), cal.y)


def test_prefit_statsmodels_that_cannot_be_matched(data):
    train, cal = data
    logit = smf.logit("y01 ~ x1 + x2", data=train).fit(disp=0)
    with pytest.raises(InputError, match="binary model cannot say which level was coded 1"):
        cf.conformal("y ~ x1 + x2", data=cal, model=logit, prefit=True, method="split")
    with pytest.raises(InputError, match="gives no class probabilities"):
        cf.conformal(
            "C(y01) ~ x1 + x2", data=cal, model=smf.ols("y01 ~ x1 + x2", data=train).fit(), prefit=True, method="split"
        )
    with pytest.raises(InputError, match="do not match this formula's design columns"):
        cf.conformal("C(y01) ~ x1", data=cal, model=logit, prefit=True, method="split")
    mn = sm.MNLogit(train.y01, sm.add_constant(train[["x1", "x2"]])).fit(disp=0)  # classes '0', '1'
    with pytest.raises(InputError, match=r"classes \['0', '1'\].*response \['a', 'b', 'c'\]"):
        cf.conformal("y ~ x1 + x2", data=cal, model=mn, prefit=True, method="split")


@pytest.mark.parametrize("module", ["api", "compare", "estimator", "evaluation", "models", "result", "scores"])
def test_classification_docstring_examples_run(module):
    import doctest
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small examples may warn about small classes; the outputs are checked
        result = doctest.testmod(importlib.import_module(f"confrf.classification.{module}"))
    assert result.attempted > 0 and result.failed == 0


def test_cli_refuses_the_interval_reject_option_for_sets(tmp_path, data, capsys):
    from confrf.__main__ import main

    train, test = data
    train[["y", "x1", "x2"]].to_csv(tmp_path / "train.csv", index=False)
    rc = main(
        [
            "fit",
            "y ~ x1 + x2",
            "--data",
            str(tmp_path / "train.csv"),
            "--newdata",
            str(tmp_path / "train.csv"),
            "--method",
            "split",
            "--max-width",
            "2",
        ]
    )
    assert rc != 0 and "--max-width is the reject option of prediction intervals" in capsys.readouterr().err


def test_prefit_statsmodels_with_fewer_classes_and_ambiguous_names(data):
    train, cal = data
    sub = train[train.y != "a"]
    mn = sm.MNLogit(sub.y, sm.add_constant(sub[["x1", "x2"]])).fit(disp=0)  # never saw 'a': probability 0
    res = cf.conformal("y ~ x1 + x2", data=cal, model=mn, prefit=True, method="split", random_state=0)
    assert (res.predict_proba(cal)["a"] == 0).all()
    separated = train[train.y != "c"]  # 'a' vs 'b' is x2 > 0 exactly: MNLogit's estimates are NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mn = sm.MNLogit(separated.y, sm.add_constant(separated[["x1", "x2"]])).fit(disp=0)
        with pytest.raises(InputError, match="gave NaN or inf"):
            cf.conformal("y ~ x1 + x2", data=cal, model=mn, prefit=True, method="split")
    codes = train.assign(v=train.yi * 1.0)
    mn = smf.mnlogit("v ~ x1 + x2", data=codes).fit(disp=0)  # classes '0', '1', '2' of a float response
    res = cf.conformal("C(v) ~ x1 + x2", data=cal.assign(v=cal.yi * 1.0), model=mn, prefit=True, method="split")
    assert res.levels == [0.0, 1.0, 2.0]
    from confrf.classification.models import _match_levels

    with pytest.raises(InputError, match="distinct level"):
        _match_levels(["1", "1.0"], [1.0, 2.0], "MNLogit", binary=False)

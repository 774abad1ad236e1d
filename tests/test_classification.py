"""Classification: formula entry, predict frame, summary, evaluate, errors, determinism, pickling."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

import confrf as cf
from confrf.classification import APSScore, ConformalClassifier, RAPSScore
from confrf.classification.result import ClassificationResult
from confrf.exceptions import InputError

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")


@pytest.fixture(scope="module")
def wine():
    df = load_wine(as_frame=True).frame
    df["target"] = df["target"].map({0: "barolo", 1: "grignolino", 2: "barbera"}).astype("category")
    rng = np.random.default_rng(0)
    test = rng.random(len(df)) < 0.3
    return df[~test], df[test]


FORMULA = "target ~ alcohol + flavanoids + color_intensity + proline"


@pytest.mark.parametrize("method", ["split", "lcp-rf", "split-g", "lcp-rf-g"])
def test_predict_frame(wine, method):
    train, test = wine
    res = cf.conformal(FORMULA, data=train, method=method, model="rf", random_state=0, n_estimators=20)
    assert isinstance(res, ClassificationResult)
    pred = res.predict(test)
    levels = list(train["target"].cat.categories)
    assert pred.columns.tolist() == ["pred", "size", *levels]
    assert pred.index.equals(test.index)
    sets = pred[levels].to_numpy()
    assert sets.dtype == bool
    assert (pred["size"].to_numpy() == sets.sum(axis=1)).all()
    assert set(pred["pred"]) <= set(levels)


def test_detection_of_label_responses():
    rng = np.random.default_rng(0)
    n = 300
    x = rng.normal(size=n)
    lab = np.where(x + rng.normal(size=n) > 0, "hi", "lo")
    frames = {
        "object": pd.DataFrame({"y": lab, "x": x}),
        "bool": pd.DataFrame({"y": lab == "hi", "x": x}),
        "string": pd.DataFrame({"y": pd.array(lab, dtype="string"), "x": x}),
    }
    for kind, df in frames.items():
        res = cf.conformal("y ~ x", data=df, method="split", model="logit", random_state=0)
        assert isinstance(res, ClassificationResult), kind
    res = cf.conformal(
        "C(y) ~ x",
        data=pd.DataFrame({"y": (lab == "hi").astype(int), "x": x}),
        method="split",
        model="logit",
        random_state=0,
    )
    assert res.levels == [0, 1]
    assert res.levels == sorted(res.levels)
    assert cf.conformal("y ~ x", data=pd.DataFrame({"y": x, "x": x}), method="split", random_state=0).method == "split"


@pytest.fixture(scope="module")
def flags():
    """A boolean response."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(600, 2))
    df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": x[:, 0] + rng.normal(size=600) > 0})
    return df.iloc[:450], df.iloc[450:]


@pytest.mark.filterwarnings("ignore::confrf.exceptions.InfiniteIntervalWarning")
@pytest.mark.parametrize(
    "entry, method",
    [(cf.conformal, "lcp-rf"), (cf.lcp_rf, "lcp-rf"), (cf.split_cp, "split"), (cf.qrf_tc, "qrf-tc")],
    ids=["conformal", "lcp_rf", "split_cp", "qrf_tc"],
)
def test_bool_response_gives_prediction_sets_through_every_formula_entry_point(flags, entry, method):
    """A bool response is a class label for conformal() and its aliases alike; the set columns are named
    False and True, which pandas would read as a row mask if selected as a list (evaluate() used to fail so);
    a pyarrow table is read as its pandas frame (it used to skip label detection and regress on 0/1)."""
    pa = pytest.importorskip("pyarrow")
    train, test = flags
    res = entry("y ~ x1 + x2", data=train, model="logit", random_state=0, n_estimators=20)
    assert isinstance(res, ClassificationResult) and res.method == method and res.levels == [False, True]
    pred = res.predict(test)
    assert pred.columns.tolist() == ["pred", "size", False, True]
    assert (pred["size"] == pred[False].astype(int) + pred[True].astype(int)).all()
    covered = np.where(test["y"], pred[True], pred[False])
    ev = res.evaluate(test)
    assert ev.metrics["n"] == len(test) and ev.metrics["coverage"] == covered.mean()
    assert ev.rows["covered"].tolist() == covered.tolist()
    arrow = entry("y ~ x1 + x2", data=pa.Table.from_pandas(train), model="logit", random_state=0, n_estimators=20)
    assert isinstance(arrow, ClassificationResult)
    pd.testing.assert_frame_equal(arrow.predict(test), pred)


def test_bool_response_with_regression_settings_names_the_classification_route_and_the_conversion(flags):
    """pd.to_numeric leaves a bool column bool, so the advice for a bool response is astype(int)."""
    train, test = flags
    for kw in ({"model": "ols"}, {"score": "absolute"}):
        with pytest.raises(InputError, match=r"boolean, which is a class label .* cf\.conformal\(\) .*\.astype\(int\)"):
            cf.lcp_rf("y ~ x1 + x2", data=train, **kw)
    numeric = train.assign(y=train["y"].astype(int))
    res = cf.lcp_rf("y ~ x1 + x2", data=numeric, model="ols", random_state=0, n_estimators=20)
    assert isinstance(res, cf.ConformalResult) and res.predict(test).columns.tolist() == ["fit", "lwr", "upr"]


def test_cli_bool_response_gives_prediction_sets(tmp_path, flags):
    from confrf.__main__ import main

    train, test = flags
    train.to_csv(tmp_path / "train.csv", index=False)
    test.drop(columns="y").to_csv(tmp_path / "new.csv", index=False)
    args = ["fit", "y ~ x1 + x2", "--data", str(tmp_path / "train.csv"), "--newdata", str(tmp_path / "new.csv")]
    rc = main(args + ["--method", "split", "--model", "logit", "--random-state", "0", "--out", str(tmp_path / "p.csv")])
    assert rc == 0
    pred = pd.read_csv(tmp_path / "p.csv")
    assert pred.columns.tolist() == ["row", "pred", "size", "False", "True"] and len(pred) == len(test)
    want = cf.split_cp("y ~ x1 + x2", data=pd.read_csv(tmp_path / "train.csv"), model="logit", random_state=0)
    sets = want.predict(test)
    assert pred["False"].tolist() == sets[False].tolist() and pred["True"].tolist() == sets[True].tolist()


@pytest.mark.parametrize(
    "entry", [cf.conformal, cf.lcp_rf, cf.split_cp, cf.qrf_tc], ids=["conformal", "lcp_rf", "split_cp", "qrf_tc"]
)
@pytest.mark.parametrize("lhs", ["I(v > 0)", "np.logical_not(y)"])
def test_boolean_response_expression_is_refused_through_every_formula_entry_point(flags, entry, lhs):
    """formulaic casts a bool-valued expression to 0/1, which used to give intervals like [0.9997, 1.0002]: a
    boolean response is a class label whether it is a column or an expression."""
    train, _ = flags
    data = train.assign(v=train["x1"] - 0.5)
    with pytest.raises(InputError, match=r"is boolean \(True/False\), which is a class label.*cf\.conformal\("):
        entry(f"{lhs} ~ x1 + x2", data=data, random_state=0, n_estimators=20)


@pytest.mark.filterwarnings("ignore::confrf.exceptions.InfiniteIntervalWarning")
def test_boolean_response_expression_fixes_named_in_the_message_work(flags):
    train, test = flags
    data, new = train.assign(v=train["x1"] - 0.5), test.assign(v=test["x1"] - 0.5)
    with pytest.raises(InputError) as info:
        cf.split_cp("I(v > 0) ~ x2", data=data)
    msg = str(info.value)
    assert "df['label'] = df['v'] > 0" in msg and "cf.conformal('label ~ x2', data=df)" in msg
    assert "I((v > 0) * 1)" in msg
    df = data.copy()  # the first fix, as written in the message: prediction sets
    df["label"] = df["v"] > 0
    sets = cf.conformal("label ~ x2", data=df, method="split", model="logit", random_state=0)
    assert isinstance(sets, ClassificationResult) and sets.levels == [False, True]
    intervals = cf.split_cp("I((v > 0) * 1) ~ x2", data=data, random_state=0)  # the second: intervals on 0/1
    assert isinstance(intervals, cf.ConformalResult)
    assert intervals.evaluate(new).metrics["n"] == len(new)
    # a response numeric at fit is not read as 0/1 when held-out rows (evaluate, calib=) give booleans
    numeric = cf.split_cp("yi ~ x1 + x2", data=train.assign(yi=train["y"].astype(int)), random_state=0)
    with pytest.raises(InputError, match=r"'yi' is boolean \(True/False\) in data, but it was numeric at fit"):
        numeric.evaluate(test.assign(yi=test["y"]))
    with pytest.raises(InputError, match=r"in calib, but it was numeric at fit"):
        cf.split_cp("yi ~ x1 + x2", data=train.assign(yi=train["y"].astype(int)), calib=test.assign(yi=test["y"]))


@pytest.mark.filterwarnings("ignore::confrf.exceptions.InfiniteIntervalWarning")
@pytest.mark.parametrize("kind", ["object", "category"])
def test_text_comparison_response_gets_both_ways_out_and_they_work(flags, kind):
    # I(default == 'Yes') ~ balance: the text column used to be refused with "convert it with pd.to_numeric"
    train, test = flags
    word = {True: "Yes", False: "No"}
    data = train.assign(default=train["y"].map(word).astype(kind))
    new = test.assign(default=test["y"].map(word).astype(kind))
    with pytest.raises(InputError) as info:
        cf.split_cp("I(default == 'Yes') ~ x1 + x2", data=data)
    msg = str(info.value)
    assert "pd.to_numeric" not in msg and "is boolean (True/False), which is a class label" in msg
    assert "df['label'] = df['default'] == 'Yes'" in msg and "cf.conformal('label ~ x1 + x2', data=df)" in msg
    assert "I((default == 'Yes') * 1)" in msg
    df = data.copy()  # the first way out, as written: prediction sets
    df["label"] = df["default"] == "Yes"
    sets = cf.conformal("label ~ x1 + x2", data=df, method="split", model="logit", random_state=0)
    assert isinstance(sets, ClassificationResult) and sets.levels == [False, True]
    # the second: intervals for the 0/1 values, on held-out rows too
    intervals = cf.split_cp("I((default == 'Yes') * 1) ~ x1 + x2", data=data, model="ols", random_state=0)
    assert isinstance(intervals, cf.ConformalResult)
    np.testing.assert_array_equal(intervals.augment(new)[".resid"] + intervals.predict(new)["fit"], new["y"] * 1.0)
    assert intervals.evaluate(new).metrics["n"] == len(new)
    with pytest.raises(InputError, match=r"'I\(default\)' gives text, not numbers.*I\(\(column == 'Yes'\) \* 1\)"):
        cf.split_cp("I(default) ~ x1 + x2", data=data, model="ols")
    with pytest.raises(InputError, match="pd.to_numeric"):  # a text column as the response itself: unchanged
        cf.split_cp("default2 ~ x1 + x2", data=data.assign(default2=data["x1"].astype(str)), model="ols")


def test_cli_boolean_response_expression_is_refused(tmp_path, flags, capsys):
    from confrf.__main__ import main

    train, test = flags
    train.assign(v=train["x1"] - 0.5).to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "new.csv", index=False)
    rc = main(["fit", "I(v > 0) ~ x2", "--data", str(tmp_path / "train.csv"), "--newdata", str(tmp_path / "new.csv")])
    assert rc == 2
    assert "is boolean (True/False), which is a class label" in capsys.readouterr().err


def test_conformal_classifier_takes_a_bool_y(flags):
    """The array-level mirror of a bool response: ConformalClassifier's classes are [False, True]."""
    train, test = flags
    X, y = train[["x1", "x2"]].to_numpy(), train["y"].to_numpy()
    clf = ConformalClassifier(model="logit", method="split", random_state=0).fit(X[:250], y[:250])
    clf.conformalize(X[250:], y[250:])
    assert clf.classes_ == [False, True]
    sets = clf.predict_sets(test[["x1", "x2"]].to_numpy())
    assert sets.shape == (len(test), 2) and sets.dtype == bool
    formula = cf.split_cp("y ~ x1 + x2", data=train, model="logit", calib=test)  # same classes by formula
    assert formula.levels == clf.classes_


def test_levels_follow_categorical_order(wine):
    train, _ = wine
    df = train.copy()
    df["target"] = df["target"].cat.reorder_categories(["grignolino", "barbera", "barolo"])
    res = cf.conformal(FORMULA, data=df, method="split", model="logit", random_state=0)
    assert res.levels == ["grignolino", "barbera", "barolo"]
    proba = res.predict_proba(df.head(20))
    # the model's column k is the probability of level k: argmax agrees with the true label mostly
    assert (proba.idxmax(axis=1) == df["target"].head(20).astype(object)).mean() > 0.8


def test_prefit_model_with_other_class_order(wine):
    train, test = wine
    train = train.sample(frac=1.0, random_state=0)  # the data set is sorted by class
    X = train[["alcohol", "flavanoids", "color_intensity", "proline"]].to_numpy()
    y = train["target"].astype(str).to_numpy()
    # a prefit sklearn model with classes_ sorted alphabetically; confrf maps them by value
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(X[:60], y[:60])
    res = cf.conformal(FORMULA, data=train.iloc[60:], method="split", model=model, prefit=True, random_state=0)
    proba = res.predict_proba(test)
    direct = model.predict_proba(test[["alcohol", "flavanoids", "color_intensity", "proline"]].to_numpy())
    order = [list(model.classes_).index(lv) for lv in res.levels]
    np.testing.assert_allclose(proba.to_numpy(), direct[:, order])


def test_summary_and_evaluate(wine):
    train, test = wine
    res = cf.conformal(FORMULA, data=train, method="lcp-rf-g", model="gbm", random_state=0, n_estimators=20)
    res.predict(test)
    s = res.summary()
    text = str(s)
    assert "class-conditional" in text and "Classes" in text and "Last predict" in text
    assert s.frames["classes"].index.tolist() == res.levels
    assert s.frames["last_predict"].loc["Last predict rows", "value"] == len(test)
    ev = res.evaluate(test)
    m = ev.metrics
    assert m["n"] == len(test)
    assert m["ci_lower"] <= m["coverage"] <= m["ci_upper"]
    assert ev.by_class.index.tolist() == [lv for lv in res.levels if lv in set(test["target"])]
    assert ev.by_size["n"].sum() == len(test)
    assert "Coverage by true class" in str(ev)
    assert "class-conditional" in repr(res)


def test_compare_classification(wine):
    train, test = wine
    a = cf.conformal(FORMULA, data=train, method="split", model="rf", random_state=0)
    b = cf.conformal(FORMULA, data=train, method="split-g", model="rf", random_state=0)
    cmp = cf.compare(a, b, test=test)
    assert list(cmp.frame.columns) == ["split", "split-g"]
    assert "mean_size" in cmp.frame.index and "Mean set size" in str(cmp)
    with pytest.raises(InputError, match="not classification results"):
        sim = cf.datasets.make_sim(300, random_state=0)
        cf.compare(a, cf.split_cp(sim.formula, data=sim.frame, random_state=0), test=test)


def test_plots(wine):
    import matplotlib

    matplotlib.use("Agg")
    train, test = wine
    res = cf.conformal(FORMULA, data=train, method="split-g", model="rf", random_state=0)
    assert res.plot.set_sizes(test).get_xlabel() == "set size"
    assert res.plot.coverage_by_class(test).get_xlabel() == "true class"


def test_determinism_and_pickle(wine):
    train, test = wine
    kw = dict(
        data=train, method="lcp-rf", model="gbm", score=APSScore(randomized=True), random_state=3, n_estimators=20
    )
    a = cf.conformal(FORMULA, **kw).predict(test)
    b = cf.conformal(FORMULA, **kw).predict(test)
    pd.testing.assert_frame_equal(a, b)
    res = cf.conformal(FORMULA, **kw)
    again = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(again.predict(test), a)
    pd.testing.assert_frame_equal(res.predict(test), res.predict(test))  # the same rows get the same U


def test_randomized_score_has_its_own_seed():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] + rng.normal(size=600) > 0).astype(int)
    sets = [
        ConformalClassifier("logit", method="split", score=APSScore(randomized=True, random_state=s), random_state=0)
        .fit(X[:200], y[:200])
        .conformalize(X[200:400], y[200:400])
        .predict_sets(X[400:])
        for s in (1, 1, 2)
    ]
    assert (sets[0] == sets[1]).all()
    assert not (sets[0] == sets[2]).all()


def test_array_level_models_and_raps():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(900, 3))
    y = np.array(["a", "b", "c"])[np.argmax(X + rng.normal(size=(900, 3)), axis=1)]
    for model in ("gbm", "rf", "logit", LogisticRegression(max_iter=1000)):
        clf = ConformalClassifier(model, method="split", score=RAPSScore(lam=0.05, k_reg=1), random_state=0)
        clf.fit(X[:300], y[:300]).conformalize(X[300:600], y[300:600])
        S = clf.predict_sets(X[600:])
        assert S.shape == (300, 3)
        assert clf.predict(X[:2]).tolist()[0] in ("a", "b", "c")


def test_pac_methods_carry_over():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2600, 2))
    y = np.argmax(np.column_stack([X, -X.sum(axis=1)]) + rng.normal(size=(2600, 3)), axis=1)
    for method, opts in (("qrf-tc", None), ("lcp-rf", {"guarantee": "pac"})):
        clf = ConformalClassifier("logit", method=method, options=opts, n_estimators=20, random_state=0)
        clf.fit(X[:600], y[:600]).conformalize(X[600:], y[600:])
        assert clf.guarantee().kind == "pac"
        assert "interval" not in clf.guarantee().sentence


# -- errors ----------------------------------------------------------------------------
def test_unseen_level_at_evaluate(wine):
    train, test = wine
    res = cf.conformal(FORMULA, data=train, method="split", model="rf", random_state=0)
    bad = test.copy()
    bad["target"] = bad["target"].astype(object)
    bad.iloc[0, bad.columns.get_loc("target")] = "nebbiolo"
    with pytest.raises(InputError, match="nebbiolo.*not seen at fit"):
        res.evaluate(bad)


def test_single_class_response():
    df = pd.DataFrame({"y": ["a"] * 50, "x": np.arange(50.0)})
    with pytest.raises(InputError, match="single class"):
        cf.conformal("y ~ x", data=df, method="split")
    with pytest.raises(InputError, match="single class"):
        ConformalClassifier(method="split").fit(np.zeros((10, 1)), np.zeros(10))


def test_class_absent_from_calibration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = ConformalClassifier("logit", method="split").fit(np.vstack([X, [[9, 9]]]), np.append(y, "c"))
    with pytest.raises(InputError, match=r"\['c'\] have no row in the calibration set"):
        clf.conformalize(X, y)


def test_model_without_predict_proba():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    with pytest.raises(InputError, match="no predict_proba"):
        ConformalClassifier(SVC(), method="split").fit(X, y)
    df = pd.DataFrame({"y": y, "x": X[:, 0]})
    with pytest.raises(InputError, match="no predict_proba"):
        cf.conformal("y ~ x", data=df, method="split", model=SVC())


def test_other_errors():
    df = pd.DataFrame({"y": ["a", "b"] * 50, "x": np.arange(100.0)})
    with pytest.raises(InputError, match="not offered for a class-label response"):
        cf.conformal("y ~ x", data=df, method="lcp")
    with pytest.raises(InputError, match="score='absolute' belongs to regression"):
        cf.conformal("y ~ x", data=df, method="split", score="absolute")
    with pytest.raises(InputError, match="unknown classification score"):
        cf.conformal("y ~ x", data=df, method="split", score="hinge")
    with pytest.raises(InputError, match="min_group_size does not apply"):
        cf.conformal("y ~ x", data=df, method="split-g", min_group_size=5)
    with pytest.raises(InputError, match="no predictors"):
        cf.conformal("y ~ 1", data=df, method="split")
    with pytest.raises(InputError, match="clash"):
        cf.conformal("y ~ x", data=df.assign(y=["pred", "b"] * 50), method="split")


def test_small_class_warns_and_is_always_in_the_set():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    y[:4] = "c"
    clf = ConformalClassifier("rf", method="split-g", random_state=0).fit(X[::2], y[::2])
    with pytest.warns(cf.exceptions.InfiniteIntervalWarning, match="'c' \\(2\\)"):
        clf.conformalize(X[1::2], y[1::2])
    assert clf.predict_sets(X[:50])[:, 2].all()


def test_cli_prediction_sets(tmp_path, wine):
    from confrf.__main__ import main

    train, test = wine
    cols = ["target", "alcohol", "flavanoids", "proline"]
    train[cols].to_csv(tmp_path / "train.csv", index=False)
    test[cols[1:]].to_csv(tmp_path / "new.csv", index=False)
    rc = main(
        [
            "fit",
            "target ~ alcohol + flavanoids + proline",
            "--data",
            str(tmp_path / "train.csv"),
            "--newdata",
            str(tmp_path / "new.csv"),
            "--method",
            "split",
            "--model",
            "rf",
            "--score",
            "aps",
            "--random-state",
            "0",
            "--out",
            str(tmp_path / "pred.csv"),
        ]
    )
    assert rc == 0
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns) == ["row", "pred", "size", "barbera", "barolo", "grignolino"] and len(pred) == len(test)
    assert (pred["size"] == pred[["barbera", "barolo", "grignolino"]].sum(axis=1)).all()


def test_missing_labels_follow_na_action():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = pd.Series(np.where(x + rng.normal(size=400) > 0, "hi", "lo"), dtype=object)
    y[:3] = None
    df = pd.DataFrame({"y": y, "x": x})
    with pytest.raises(InputError, match="NaN"):
        cf.conformal("y ~ x", data=df, method="split", model="logit")
    res = cf.conformal("y ~ x", data=df, method="split", model="logit", na_action="drop", random_state=0)
    assert res.design.n_dropped == 3 and res.levels == ["hi", "lo"]


def test_n_jobs_does_not_change_sets(wine):
    train, test = wine
    kw = dict(data=train, method="lcp-rf", model="rf", random_state=0, n_estimators=20)
    a = cf.conformal(FORMULA, n_jobs=1, **kw).predict(test)
    b = cf.conformal(FORMULA, n_jobs=2, **kw).predict(test)
    pd.testing.assert_frame_equal(a, b)


def test_object_numbers_stay_regression_and_mixed_text_is_refused():
    rng = np.random.default_rng(0)
    x = rng.normal(size=100)
    df = pd.DataFrame({"y": pd.Series(x + rng.normal(size=100), dtype=object), "x": x})
    assert cf.conformal("y ~ x", data=df, method="split", model="ols", random_state=0).method == "split"
    bad = df.assign(y=df["y"].where(np.arange(100) != 5, "n/a"))
    with pytest.raises(InputError, match="mixes numbers and other values"):
        cf.conformal("y ~ x", data=bad, method="split", model="ols")

"""Prediction sets under covariate shift: the weighted sets against the slow references, the API, bad input.

The weighted rule holds for any score (docs/theory.md, "Covariate shift"), so a label k
enters the set of x iff its score is accepted by the weighted rule with the test row's own
ratio w(x). The references (tests/reference_shift.py) work in exact rationals; ratios are
halves and small integers so that the code's floats are the same numbers. The code's stated
tolerance (1e-9 on the covered p-mass) is given to the reference as slack.
"""

import pickle
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference import forest_lcp_matrix
from reference_shift import weighted_lcp_accepts, weighted_split_reference
from test_classification_exact import _conformal_rows, _data, _GridModel

import confrf as cf
from confrf.classification import ConformalClassifier
from confrf.exceptions import InfiniteIntervalWarning, InputError

SLACK = Fraction(1, 10**9)  # shift/weighted.py: SHIFT_TOL
RATIOS = [0.5, 1.0, 2.0, 3.0]


def _ratios(rng, n, huge=False):
    w = rng.choice(RATIOS, size=n)
    if huge:
        w[0] = 64.0  # the test point's own mass at +inf dominates: every label in the set
    return w


def _frac(w):
    return [Fraction(float(x)) for x in w]


def _slack(w):
    """Equal ratios take the exact integer rule (no tolerance); others the stated tolerance."""
    return Fraction(0) if np.all(np.asarray(w) == w[0]) else SLACK


@pytest.mark.parametrize("alpha", ["0.1", "0.2", "0.35"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_lcp_rf_sets_match_reference(alpha, seed):
    rng = np.random.default_rng(seed)
    X, y = _data(rng, 26)
    Xt, _ = _data(rng, 5)
    w_cal, w_test = _ratios(rng, 26), _ratios(rng, 5, huge=seed == 1)
    clf = ConformalClassifier(
        _GridModel(),
        method="lcp-rf",
        alpha=float(alpha),
        prefit=True,
        n_estimators=4,
        min_samples_leaf=3,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny effective sample size warns
        clf.conformalize(X, y, likelihood_ratio=w_cal)
    conf = _conformal_rows(clf, X.shape[0])
    V = list(clf.calib_scores_[conf])
    loc = clf.calibrator_.localizer
    leaves_cal, leaves_test = loc.leaves(X[conf]), loc.leaves(Xt)
    d = clf.predict_details(Xt, likelihood_ratio=w_test)
    assert np.isin(d["scores"], V).any()  # the grid makes candidate scores tie with calibration scores
    for i in range(Xt.shape[0]):
        W = forest_lcp_matrix(leaves_cal, leaves_test[i])
        w = np.append(w_cal[conf], w_test[i])
        ref = [weighted_lcp_accepts(W, V, float(d["scores"][i, k]), _frac(w), alpha, _slack(w)) for k in range(3)]
        assert d["sets"][i].tolist() == ref, (i, w)
    if seed == 1:
        assert d["sets"][0].all() and np.isinf(d["t"][0])  # w(x) = 64 outweighs every calibration point
    # the rows' own ratios are used: w(x) = 64 outweighs the 13 conformal points' total (at most 39)
    assert clf.predict_sets(Xt, likelihood_ratio=np.full(5, 64.0)).all()


@pytest.mark.parametrize("alpha", ["0.1", "0.25"])
@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_mondrian_lcp_rf_sets_match_reference(alpha, seed):
    """Class-conditional: label k's threshold weights the conformal points of class k by their ratios, with w(x)."""
    rng = np.random.default_rng(10 + seed)
    X, y = _data(rng, 60)
    Xt, _ = _data(rng, 3)
    w_cal, w_test = _ratios(rng, 60), _ratios(rng, 3)
    clf = ConformalClassifier(
        _GridModel(),
        method="lcp-rf-g",
        alpha=float(alpha),
        prefit=True,
        n_estimators=3,
        min_samples_leaf=3,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.conformalize(X, y, likelihood_ratio=w_cal)
    conf = _conformal_rows(clf, X.shape[0])
    d = clf.predict_details(Xt, likelihood_ratio=w_test)
    for k in range(3):
        rows = conf[clf.calib_codes_[conf] == k]
        V = list(clf.calib_scores_[rows])
        loc = clf.calibrator_.group_localizers_[k]
        leaves_cal, leaves_test = loc.leaves(X[rows]), loc.leaves(Xt)
        for i in range(Xt.shape[0]):
            W = forest_lcp_matrix(leaves_cal, leaves_test[i])
            w = np.append(w_cal[rows], w_test[i])
            ref = weighted_lcp_accepts(W, V, float(d["scores"][i, k]), _frac(w), alpha, _slack(w))
            assert d["sets"][i, k] == ref, (k, i)


@pytest.mark.parametrize("score", ["lac", "aps"])
@pytest.mark.parametrize("alpha", ["0.1", "0.3"])
def test_weighted_split_and_mondrian_split_match_reference(score, alpha):
    rng = np.random.default_rng(5)
    X, y = _data(rng, 90)
    Xt, _ = _data(rng, 40)
    w_cal, w_test = _ratios(rng, 90), _ratios(rng, 40)
    w_test[:3] = [64.0, 0.0, 1.0]  # every label; the calibration points alone; an ordinary row
    common = dict(alpha=float(alpha), score=score, prefit=True, random_state=0)
    split = ConformalClassifier(_GridModel(), method="split", **common).conformalize(X, y, likelihood_ratio=w_cal)
    mond = ConformalClassifier(_GridModel(), method="split-g", **common).conformalize(X, y, likelihood_ratio=w_cal)
    d = split.predict_details(Xt, likelihood_ratio=w_test)
    S = d["scores"]
    V = list(split.calib_scores_)
    for i in range(Xt.shape[0]):
        w = np.append(w_cal, w_test[i])
        t = weighted_split_reference(V, _frac(w), alpha, _slack(w))
        assert d["t"][i] == t and d["sets"][i].tolist() == (S[i] <= t).tolist()
        sets = mond.predict_sets(Xt[i : i + 1], likelihood_ratio=w_test[i : i + 1])[0]
        for k in range(3):
            rows = mond.calib_codes_ == k
            wk = np.append(w_cal[rows], w_test[i])
            t_k = weighted_split_reference(list(mond.calib_scores_[rows]), _frac(wk), alpha, _slack(wk))
            assert sets[k] == (S[i, k] <= t_k), (i, k)
    assert np.isinf(d["t"][0]) and d["sets"][0].all()


@pytest.mark.parametrize(
    "method, opts",
    [("split", {}), ("lcp-rf", {"n_estimators": 10}), ("split-g", {}), ("lcp-rf-g", {"n_estimators": 10})],
)
def test_equal_ratios_give_todays_sets_bit_for_bit(method, opts):
    rng = np.random.default_rng(2)
    X, y = _data(rng, 300)
    Xt, _ = _data(rng, 60)
    plain = ConformalClassifier(_GridModel(), method=method, prefit=True, random_state=1, **opts).conformalize(X, y)
    a = plain.predict_details(Xt)
    for c in (1.0, 2.5):
        clf = ConformalClassifier(_GridModel(), method=method, prefit=True, random_state=1, **opts)
        b = clf.conformalize(X, y, likelihood_ratio=np.full(300, c)).predict_details(
            Xt, likelihood_ratio=np.full(60, c)
        )
        for key in ("t", "closed", "level", "sets"):
            assert np.array_equal(a[key], b[key]), (method, c, key)


def _exp_ratio(Z):
    return np.exp(Z[:, 0])


def test_array_level_ratio_function_and_checks():
    rng = np.random.default_rng(3)
    X, y = _data(rng, 400)
    Xt, _ = _data(rng, 30)
    ratio = _exp_ratio
    clf = ConformalClassifier(_GridModel(), method="split", prefit=True, random_state=0)
    clf.conformalize(X, y, likelihood_ratio=ratio)  # a function: the new rows' ratios come from it
    np.testing.assert_array_equal(clf.predict_sets(Xt), clf.predict_details(Xt, likelihood_ratio=ratio(Xt))["sets"])
    assert clf.guarantee().kind == "marginal (target)" and clf.guarantee().certified
    assert "Y in C(X)" in clf.guarantee().sentence
    assert pickle.loads(pickle.dumps(clf)).predict_sets(Xt).tolist() == clf.predict_sets(Xt).tolist()
    arr = ConformalClassifier(_GridModel(), method="split", prefit=True, random_state=0)
    arr.conformalize(X, y, likelihood_ratio=ratio(X))
    with pytest.raises(InputError, match="give the new rows' likelihood ratios"):
        arr.predict_sets(Xt)
    with pytest.raises(InputError, match="one number per row"):
        arr.predict_details(Xt, likelihood_ratio=np.ones(3))
    plain = ConformalClassifier(_GridModel(), method="split", prefit=True, random_state=0).conformalize(X, y)
    with pytest.raises(InputError, match="the calibration used no ratios"):
        plain.predict_details(Xt, likelihood_ratio=np.ones(30))
    bad = ConformalClassifier(_GridModel(), method="split", prefit=True, random_state=0)
    for values, message in ((-ratio(X), "negative"), (np.full(400, np.nan), "missing"), (np.zeros(400), "0 in every")):
        with pytest.raises(InputError, match=message):
            bad.conformalize(X, y, likelihood_ratio=values)
    one_heavy = np.ones(400)
    one_heavy[0] = 1e6  # one point carries all the weight: an effective sample of about 1
    with pytest.warns(InfiniteIntervalWarning, match="effective sample size of 1.0 .* expect many full sets"):
        ConformalClassifier(_GridModel(), method="split", prefit=True).conformalize(X, y, likelihood_ratio=one_heavy)
    mond = ConformalClassifier(_GridModel(), method="split-g", prefit=True, random_state=0)
    g = mond.conformalize(X, y, likelihood_ratio=ratio).guarantee()
    assert g.kind == "class-conditional (target)" and "P(Y in C(X) | Y = k) >= 0.9 for every class k" in g.sentence


def test_pac_refuses_ratios():
    rng = np.random.default_rng(4)
    X, y = _data(rng, 600)
    for method, options in (("qrf-tc", None), ("lcp-rf", {"guarantee": "pac"})):
        clf = ConformalClassifier(_GridModel(), method=method, prefit=True, random_state=0, options=options)
        with pytest.raises(InputError, match="i.i.d. draws"):
            clf.conformalize(X, y, likelihood_ratio=np.ones(600) * np.exp(X[:, 0]))


def _label_frame(n, seed, tilt=0.0):
    """Binary labels, noisier with x1; ``tilt`` draws x1 with density proportional to exp(tilt * x1)."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(size=4 * n)
    if tilt:
        x1 = x1[rng.random(4 * n) < np.exp(tilt * (x1 - 1))]
    x1 = x1[:n]
    x2 = rng.uniform(size=n)
    p = 1 / (1 + np.exp(-(x2 - 0.5) * 12 * (1.2 - x1)))
    df = pd.DataFrame({"x1": x1, "x2": x2, "y": np.where(rng.random(n) < p, "a", "b")})
    df["w"] = np.exp(3.0 * df.x1)
    return df


def test_formula_sets_known_and_estimated_ratio():
    df, target = _label_frame(1200, 0), _label_frame(300, 1, tilt=3.0)
    known = cf.conformal("y ~ x1 + x2", data=df, method="split", likelihood_ratio="w", random_state=0)
    assert known.guarantee.kind == "marginal (target)" and known.guarantee.certified
    p = known.predict(target)
    assert p.shape[0] == 300 and set(p.columns) >= {"pred", "size", "a", "b"}
    frames = known.summary().frames
    assert frames["shift"]["value"]["conformal points weighted"] == known.nobs["calibration"]
    assert frames["shift"]["value"]["last predict rows"] == 300
    with pytest.raises(InputError, match="newdata has no column 'w'"):
        known.predict(target.drop(columns="w"))
    est = cf.lcp_rf("y ~ x1 + x2", data=df, shift=target.drop(columns="y"), random_state=0, n_estimators=20)
    assert est.guarantee.kind == "marginal (target, estimated ratio)" and not est.guarantee.certified
    assert est.summary().frames["shift"]["value"]["target rows (shift=)"] == 300
    assert est.predict(target).shape[0] == 300
    again = pickle.loads(pickle.dumps(est))
    pd.testing.assert_frame_equal(again.predict(target), est.predict(target))
    # the class-conditional version, and the unweighted sets are those of a constant ratio
    mond = cf.conformal("y ~ x1 + x2", data=df, method="split-g", likelihood_ratio="w", random_state=0)
    assert mond.guarantee.kind == "class-conditional (target)"
    df["one"] = 1.0
    target["one"] = 1.0
    plain = cf.conformal("y ~ x1 + x2", data=df, method="lcp-rf", random_state=0, n_estimators=20)
    ones = cf.conformal(
        "y ~ x1 + x2", data=df, method="lcp-rf", random_state=0, n_estimators=20, likelihood_ratio="one"
    )
    pd.testing.assert_frame_equal(plain.predict(target), ones.predict(target))


def test_formula_sets_refusals():
    df = _label_frame(600, 0)
    with pytest.raises(InputError, match="prediction intervals only"):
        cf.conformal("y ~ x1 + x2", data=df, weights="w", random_state=0)
    with pytest.raises(InputError, match="i.i.d. draws"):
        cf.conformal("y ~ x1 + x2", data=df, method="qrf-tc", likelihood_ratio="w", random_state=0)
    with pytest.raises(InputError, match="not both"):
        cf.conformal("y ~ x1 + x2", data=df, likelihood_ratio="w", shift=df, random_state=0)
    with pytest.raises(InputError, match="shift= rows cannot be read"):
        cf.conformal("y ~ x1 + x2", data=df, method="split", shift=df.drop(columns="x2"), random_state=0)


def test_cli_sets_with_likelihood_ratio(tmp_path, capsys):
    from confrf.__main__ import main

    df, target = _label_frame(600, 0), _label_frame(100, 1, tilt=3.0)
    df.to_csv(tmp_path / "train.csv", index=False)
    target.drop(columns="y").to_csv(tmp_path / "target.csv", index=False)
    common = ["fit", "C(y) ~ x1 + x2", "--data", str(tmp_path / "train.csv"), "--newdata", str(tmp_path / "target.csv")]
    common += ["--method", "split", "--random-state", "0", "--out", str(tmp_path / "sets.csv")]
    for extra in (["--likelihood-ratio", "w"], ["--shift", str(tmp_path / "target.csv")]):
        assert main(common + extra) == 0
        assert len(pd.read_csv(tmp_path / "sets.csv")) == 100
    capsys.readouterr()

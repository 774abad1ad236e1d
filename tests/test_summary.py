"""summary(): every method renders; every printed number is the value computed directly."""

import pickle
import re

import numpy as np
import pytest
from reference_diagnostics import ess_reference, leaf_masses_reference

import confrf as cf
from confrf._tables import WIDTH, _fmt
from confrf.calibrators import METHODS
from confrf.localizers.diagnostics import within_leaf_variance_ratio
from confrf.results.diagnostics import LEVEL_LABEL

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")

FORMULA = "y ~ x1 + x2 + x3"
#: options that keep the slow tuning of some methods short in tests
FAST = {"lcp": {"bandwidth": 1.0, "cv": 2}, "slcp": {"cv": 2}}
QUANTILES = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]


@pytest.fixture(scope="module")
def frame():
    return cf.datasets.make_sim(2000, random_state=0).frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def lcp(frame):
    # a localized forest (its leaves, ESS and masses are what these tests recompute): without the patch, the 900
    # conformal points would be too few for the tuned leaves and the forest would give sigma(x) only
    # (test_normalized_localizer.py checks that mode's summary)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("confrf.localizers.sources.NORMALIZED_LEAF_MASS", 0.0)
        return cf.lcp_rf(FORMULA, data=frame, model="ols", random_state=0, n_estimators=8)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _variants():
    out = [(m, FAST.get(m, {})) for m in sorted(METHODS)]
    return out + [("lcp-rf", {"guarantee": "pac"}), ("lcp-rf", {"honest": False})]


@pytest.mark.parametrize(
    "method,opts", _variants(), ids=[m + "".join(f"-{k}={v}" for k, v in o.items()) for m, o in _variants()]
)
def test_every_method_renders_text_html_latex(frame, method, opts):
    res = cf.conformal(FORMULA, data=frame, method=method, model="ols", random_state=0, n_estimators=8, **opts)
    s = res.summary()
    text = str(s)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    g = res.guarantee
    assert _flat(g.sentence) in _flat(text)
    assert ("NOT certified" in text) == (not g.certified)
    assert "<table" in s.as_html() and s._repr_html_() == s.as_html()
    latex = s.as_latex()
    assert latex.count(r"\begin{tabular}") == len(s.tables) and "Calibration diagnostics" in latex
    for name in ("formula", "setup", "guarantee", "calibration", "last_predict"):
        assert name in s.frames
    assert len(str(res).splitlines()) <= 6 and ".summary()" in str(res)


def _conformal_rows(res):
    """The conformal calibration rows, recovered by their (distinct, continuous) scores."""
    est = res.estimator
    loc = est.localizer_
    pos = {v: i for i, v in enumerate(loc.index_.scores)}
    rows = np.array([pos.get(v, -1) for v in est.calib_scores_])
    keep = rows >= 0
    X = np.empty((loc.index_.n, est.calib_X_.shape[1]))
    X[rows[keep]] = est.calib_X_[keep]
    return X


def test_calibration_numbers_are_computed_directly(lcp):
    est = lcp.estimator
    s = lcp.summary()
    text = str(s)
    table = s.frames["calibration"]
    loc = est.localizer_
    Xc = _conformal_rows(lcp)
    ess = ess_reference(loc.forest_, Xc, np.ones((Xc.shape[0], loc.n_estimators)))
    d = est.predict_details(est.calib_X_)
    width = d["upr"] - d["lwr"]
    for row, values in (("ESS 1/sum(w^2)", ess), ("alpha-tilde", d["level"]), ("width", width)):
        with np.errstate(invalid="ignore"):
            # numpy gives NaN when it interpolates towards an infinite width; the summary shows +inf there
            q = np.quantile(values, QUANTILES)
        expected = np.r_[values.mean(), np.where(np.isnan(q), np.inf, q)]
        got = table.loc[row, ["mean", "min", "10%", "25%", "median", "75%", "90%", "max"]].to_numpy(dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-10)
        shown = LEVEL_LABEL if row == "alpha-tilde" else row  # the printed name of the frame's row
        line = next(ln for ln in text.splitlines() if ln.startswith(shown))
        assert line.split()[-8:] == [_fmt(v) for v in got]
    n_inf = int(np.isinf(width).sum())
    assert s.frames["calibration_facts"].loc["infinite intervals", "value"] == n_inf
    assert f"{n_inf} of {est.calib_X_.shape[0]}" in text


def test_assumption_numbers_are_computed_directly(lcp):
    s = lcp.summary(beta=1.2, tree_exponent=0.5)
    text = str(s)
    t = s.frames["assumptions"].set_index("check")
    loc = lcp.estimator.localizer_
    Xc = _conformal_rows(lcp)
    n = Xc.shape[0]
    N = leaf_masses_reference(loc.forest_, Xc, np.ones((n, loc.n_estimators)))
    thr = np.sqrt(n) * np.log(n) ** 1.2
    assert t.loc["leaf mass N, min", "value"] == N.min()
    assert t.loc["leaf mass N, median", "value"] == np.median(N)
    assert t.loc["share of leaves below", "value"] == np.mean(N < thr)
    assert t.loc["leaf mass N, min", "reference_value"] == pytest.approx(thr)
    assert t.loc["trees k", "value"] == 8 and t.loc["trees k", "reference_value"] == pytest.approx(n**0.5)
    V = lcp.estimator.calib_scores_
    assert t.loc["share of tied scores", "value"] == np.mean([np.sum(V == v) > 1 for v in V])
    assert t.loc["within-leaf / total variance", "value"] == within_leaf_variance_ratio(loc)
    for check, row in t.iterrows():
        line = next(ln for ln in text.splitlines() if check in ln and ln.startswith(row["assumption"]))
        assert _fmt(row["value"]) in line and row["status"] in line
    assert f"= {thr:.4g} at n = {n}" in _flat(text)
    assert s.frames["assumption_status"].loc["A2", "status"] == "unverifiable"


def test_header_layout_and_numbers(lcp):
    s = lcp.summary()
    text = str(s)
    assert "max_features: 1.0 (all features)" in re.sub(r" {2,}", " ", text)
    for k, v in lcp.nobs.items():
        assert re.search(rf"No\. {k}:\s+{v}\b", text)
    setup = s.frames["setup"]["value"]
    assert setup["alpha"] == 0.1 and setup["Method"] == "lcp-rf"
    assert s.frames["localizer"].loc["min_samples_leaf", "value"] == lcp.estimator.localizer_.min_samples_leaf_


def test_summary_survives_pickle_and_rejects_bad_beta(lcp):
    again = pickle.loads(pickle.dumps(lcp))
    assert str(again.summary()) == str(lcp.summary())
    with pytest.raises(cf.InputError, match="beta"):
        lcp.summary(beta=0.5)


def test_split_gets_the_sections_that_apply(frame):
    res = cf.split_cp(FORMULA, data=frame, model="ols", random_state=0)
    s = res.summary()
    assert "ESS 1/sum(w^2)" not in s.frames["calibration"].index
    assert "assumptions" not in s.frames and "Not applicable" in str(s)
    width = s.frames["calibration"].loc["width"]
    assert width["min"] == pytest.approx(width["max"])


def test_summary_predicts_the_calibration_rows_once(frame, monkeypatch):
    res = cf.lcp_rf("y ~ x1 + x2", data=frame, random_state=0, n_estimators=30)
    calls = []
    real = type(res.estimator).predict_details

    def counting(self, X, *args, **kwargs):
        calls.append(X.shape[0])
        return real(self, X, *args, **kwargs)

    monkeypatch.setattr(type(res.estimator), "predict_details", counting)
    first = str(res.summary())
    assert calls == [res.estimator.calib_X_.shape[0]]
    assert str(res.summary()) == first and len(calls) == 1  # the second summary reuses the diagnostics
    again = pickle.loads(pickle.dumps(res))
    assert str(again.summary()) == first and len(calls) == 1  # and so does the unpickled result

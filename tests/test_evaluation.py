"""evaluate(), compare() and the reject option: every number against a direct computation."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import confrf as cf
from confrf._format import format_interval
from confrf._tables import _fmt
from confrf.calibrators import METHODS
from confrf.metrics import worst_slab_coverage

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")

FORMULA = "y ~ x1 + x2 + x3"


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(2000, random_state=0)


@pytest.fixture(scope="module")
def test_sim():
    return cf.datasets.make_sim(600, random_state=1)


@pytest.fixture(scope="module")
def lcp(sim):
    return cf.lcp_rf(FORMULA, data=sim.frame, model="ols", random_state=0, n_estimators=10)


@pytest.fixture(scope="module")
def split(sim):
    return cf.split_cp(FORMULA, data=sim.frame, model="ols", random_state=0)


def test_evaluate_numbers_are_computed_directly(lcp, test_sim):
    df = test_sim.frame
    ev = lcp.evaluate(df, n_directions=40, random_state=5)
    p = lcp.predict(df)
    y = df["y"].to_numpy()
    lwr, upr = p["lwr"].to_numpy(), p["upr"].to_numpy()
    cov = (lwr <= y) & (y <= upr)
    m = ev.metrics
    assert m["n"] == 600 and m["covered"] == cov.sum() and m["coverage"] == cov.mean() == ev.coverage
    ci = stats.binomtest(int(cov.sum()), 600).proportion_ci(0.95, method="exact")
    assert ev.coverage_ci == pytest.approx((ci.low, ci.high), rel=1e-9)
    w = upr - lwr
    assert m["width_median"] == np.median(w) and m["width_q90"] == pytest.approx(np.quantile(w, 0.9))
    assert m["share_infinite"] == np.mean(np.isinf(w))
    err = np.abs(y - p["fit"].to_numpy())
    assert m["fidelity_median"] == pytest.approx(np.median(np.abs(w / 2 - err) / err))
    # upr - lwr carries rounding noise; the absolute score's exact width is 2t (ties stay ties)
    t = lcp.predict(df, details=True)["t"].to_numpy()
    assert m["spearman"] == pytest.approx(stats.spearmanr(2 * t, err).statistic)
    slab = worst_slab_coverage(df[["x1", "x2", "x3"]].to_numpy(), cov, n_directions=40, random_state=5)
    assert m["worst_slab_coverage"] == slab.coverage and ev.slab.n_in_slab == slab.n_in_slab
    dec = ev.by_width
    assert dec["n"].sum() == 600 and dec["covered"].sum() == cov.sum()
    text = str(ev)
    for v in (m["coverage"], m["share_infinite"], slab.coverage, m["spearman"]):
        assert _fmt(v) in text
    assert f"[{ci.low:.4f}, {ci.high:.4f}]" in text
    assert "<table" in ev._repr_html_() and r"\begin{tabular}" in ev.as_latex()
    assert set(ev.frames) >= {"metrics", "distributions", "by_width", "slab", "rows"}


def test_evaluate_with_oracle(lcp, test_sim):
    ev = lcp.evaluate(test_sim.frame, oracle=test_sim, n_directions=10)
    p = lcp.predict(test_sim.frame)
    fit, lwr, upr = (p[c].to_numpy() for c in ("fit", "lwr", "upr"))
    q_star = test_sim.oracle_score_quantile(fit, 0.9)
    cc = test_sim.conditional_coverage(fit, lwr, upr)
    np.testing.assert_allclose(ev.rows["conditional_coverage"], cc)
    np.testing.assert_allclose(ev.rows["oracle_error"], np.abs((upr - lwr) / 2 - q_star) / q_star)
    assert ev.oracle["conditional_coverage_mean"] == pytest.approx(cc.mean())
    assert ev.oracle["share_below_target"] == np.mean(cc < 0.9)
    assert "Oracle (exact, simulated data)" in str(ev)
    with pytest.raises(cf.InputError, match="oracle"):
        lcp.evaluate(test_sim.frame.iloc[:100], oracle=test_sim)
    with pytest.raises(cf.InputError, match="oracle"):
        lcp.evaluate(test_sim.frame, oracle=test_sim.frame)


def test_reject_option(lcp, test_sim):
    df = test_sim.frame
    p = lcp.predict(df, max_width=1.0)
    width = p["upr"] - p["lwr"]
    assert (p["rejected"] == (width > 1.0)).all()
    ev = lcp.evaluate(df, max_width=1.0, n_directions=5)
    acc = ~p["rejected"].to_numpy()
    y = df["y"].to_numpy()
    cov = (p["lwr"] <= y) & (y <= p["upr"])
    r = ev.reject
    assert r["n_accepted"] == acc.sum() and r["acceptance_rate"] == acc.mean()
    assert r["coverage_accepted"] == cov[acc].mean() and r["coverage_rejected"] == cov[~acc].mean()
    assert (r["ci_lower"], r["ci_upper"]) == cf.metrics.clopper_pearson(int(cov[acc].sum()), int(acc.sum()))
    assert "does not transfer to the accepted rows" in " ".join(str(ev).split())
    assert not lcp.predict(df.head(5), max_width=np.inf)["rejected"].any()
    for bad in (-1.0, np.nan, "wide"):
        with pytest.raises(cf.InputError, match="max_width"):
            lcp.predict(df.head(5), max_width=bad)


def test_infinite_intervals_are_rejected_and_counted(sim, test_sim):
    res = cf.lcp_rf(FORMULA, data=sim.frame.iloc[:300], model="ols", random_state=0, min_samples_leaf=1, n_estimators=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.exceptions.InfiniteIntervalWarning)
        p = res.predict(test_sim.frame, max_width=1e9)
        ev = res.evaluate(test_sim.frame, max_width=1e9, n_directions=5)
    inf = np.isinf(p["upr"])
    assert inf.any() and p.loc[inf, "rejected"].all()
    assert ev.metrics["share_infinite"] == inf.mean() and ev.metrics["width_mean"] == np.inf
    assert ev.by_width.index[-1] == "inf" and ev.by_width.loc["inf", "n"] == inf.sum()


def test_evaluate_by_group(sim, test_sim):
    half = lambda f: f.assign(half=np.where(f.x1 > 0.5, "high", "low"))  # noqa: E731
    res = cf.conformal(FORMULA, data=half(sim.frame), method="split-g", groups="half", model="ols", random_state=0)
    test = half(test_sim.frame)
    ev = res.evaluate(test, n_directions=5)
    p = res.predict(test)
    cov = (p["lwr"] <= test["y"]) & (test["y"] <= p["upr"])
    for g in ("high", "low"):
        s = test["half"] == g
        assert ev.by_group.loc[g, "n"] == s.sum() and ev.by_group.loc[g, "coverage"] == cov[s].mean()
    assert "Coverage by group" in str(ev)


def test_compare_side_by_side(lcp, split, test_sim):
    cmp = cf.compare(split, lcp, test=test_sim.frame, oracle=test_sim, n_directions=20)
    assert list(cmp.frame.columns) == ["split", "lcp-rf"]
    for name, res in (("split", split), ("lcp-rf", lcp)):
        ev = res.evaluate(test_sim.frame, oracle=test_sim, n_directions=20)
        col = cmp.frame[name]
        for key in ("coverage", "ci_lower", "ci_upper", "width_mean", "worst_slab_coverage", "fidelity_median"):
            assert col[key] == ev.metrics[key]
        assert col["oracle_error_median"] == ev.oracle["oracle_error_median"]
        assert (
            col["fit_time"] == res.estimator.fit_time_ and col["conformalize_time"] == res.estimator.conformalize_time_
        )
        assert col["predict_time"] > 0
    text = str(cmp)
    assert "Comparison on 600 test rows" in text and "split" in text and "lcp-rf" in text
    assert format_interval(cmp.frame.loc["ci_lower", "split"], cmp.frame.loc["ci_upper", "split"], 3) in text
    assert r"\begin{tabular}" in cmp.as_latex() and "<table" in cmp._repr_html_()
    same = cf.compare(lcp, lcp, test=test_sim.frame, n_directions=5)
    assert list(same.frame.columns) == ["lcp-rf #1", "lcp-rf #2"]  # nothing tells them apart: numbered
    with pytest.raises(cf.InputError, match="names"):
        cf.compare(lcp, split, test=test_sim.frame, names=["a"])
    with pytest.raises(cf.InputError):
        cf.compare(test=test_sim.frame)


@pytest.mark.filterwarnings("ignore::confrf.exceptions.InfiniteIntervalWarning")
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_evaluates(sim, test_sim, method):
    fast = {"lcp": {"bandwidth": 1.0, "cv": 2}, "slcp": {"cv": 2}}.get(method, {})
    res = cf.conformal(FORMULA, data=sim.frame, method=method, model="ols", random_state=0, n_estimators=8, **fast)
    ev = res.evaluate(test_sim.frame.head(200), oracle=None, n_directions=5)
    assert 0.0 <= ev.coverage <= 1.0 and str(ev) and ev.as_latex()


def _ci_misses(reps: int) -> int:
    """Fits whose exact held-out CI misses the fit's true (oracle) coverage on the test rows."""
    misses = 0
    for r in range(reps):
        train = cf.datasets.make_sim(400, random_state=10_000 + r).frame[["y", "x1", "x2"]]
        test = cf.datasets.make_sim(200, random_state=20_000 + r)
        res = cf.split_cp("y ~ x1 + x2", data=train, model="ols", random_state=r)
        ev = res.evaluate(test.frame, oracle=test, n_directions=1)
        truth = ev.oracle["conditional_coverage_mean"]
        misses += not (ev.metrics["ci_lower"] <= truth <= ev.metrics["ci_upper"])
    return misses


def test_held_out_ci_covers_the_true_coverage_quick():
    # 95% intervals: P(>= 7 misses of 40) < 0.004 when each misses with probability <= 0.05
    assert _ci_misses(40) <= 6


@pytest.mark.long
def test_held_out_ci_covers_the_true_coverage_long(mc_reps):
    reps = mc_reps or 600
    assert _ci_misses(reps) / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_evaluate_bad_input(lcp, test_sim):
    with pytest.raises(cf.InputError):
        lcp.evaluate(test_sim.frame.drop(columns="y"))
    with pytest.raises(cf.InputError):
        lcp.evaluate(pd.DataFrame(columns=test_sim.frame.columns))
    with pytest.raises(cf.InputError, match="level"):
        lcp.evaluate(test_sim.frame, level=1.5)

"""Monte Carlo: the training-conditional (PAC) statement of QRF-TC and LCP-RF (guarantee="pac").

Both bounds: the exact binomial order statistic (default) and the paper's Hoeffding grid.

The base model is fixed. Every repetition draws a fresh calibration set; the
coverage of an interval map is the toy model's exact conditional coverage
averaged over a large fresh test sample (no test-label noise). Checked per draw:

* the statement: P(coverage >= 1 - alpha) >= 1 - delta over calibration draws
  (paper's form: P(coverage >= 1 - alpha - epsilon) >= 1 - delta);
* the Hoeffding event of the proof: coverage(a) > D2 coverage(a) - epsilon for
  every grid value a at once, in at least a 1 - delta share of the draws;
* that a D2 point is scored exactly like a test point: for a fixed grid value
  a, the D2 coverage is an unbiased estimate of the coverage of new points
  (checked on the average over the grid, one z-test).
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import confrf as cf

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")


def _draws(method, reps, n_cal, n_test, alpha, seed, **options):
    rng = np.random.default_rng(seed)
    train = cf.datasets.make_toy(400, random_state=rng)
    model = LinearRegression().fit(np.asarray(train.X), train.y)
    base = "lcp-rf" if method == "lcp-rf-pac" else method
    if method == "lcp-rf-pac":
        options = {"guarantee": "pac", **options}
    out = {"cover": [], "d2": [], "grid_cover": [], "share_inf": []}
    for _ in range(reps):
        cal = cf.datasets.make_toy(n_cal, random_state=rng)
        test = cf.datasets.make_toy(n_test, random_state=rng)
        Xt = np.asarray(test.X)
        reg = cf.ConformalRegressor(
            model=model,
            prefit=True,
            method=base,
            alpha=alpha,
            n_estimators=30,
            random_state=int(rng.integers(2**31)),
            options=options,
        )
        reg.conformalize(np.asarray(cal.X), cal.y)
        lo, hi = reg.predict_interval(Xt).T
        out["cover"].append(test.conditional_coverage(None, lo, hi).mean())
        out["share_inf"].append(np.mean(np.isinf(hi)))
        c = reg.calibrator_._correction(alpha)
        if c.grid is None:  # binomial: no grid
            continue
        # the interval map at every grid value, applied to the test points
        W, b = reg.calibrator_.map_.rows(Xt, alpha)
        Q = reg.calibrator_.map_.quantiles(W, np.minimum(1.0, b[:, None] + c.grid[None, :]))
        pred = reg.model_.predict(Xt)
        out["grid_cover"].append(
            [test.conditional_coverage(None, *reg.score_.interval(pred, Q[:, k])).mean() for k in range(Q.shape[1])]
        )
        out["d2"].append(c.counts / reg.calibrator_.n2_)
    rep = reg.calibrator_.pac_report(alpha)
    return {k: np.asarray(v) for k, v in out.items()}, rep


def _check_binomial(method, reps, alpha, delta, n_cal, seed=7):
    d, rep = _draws(method, reps, n_cal=n_cal, n_test=2000, alpha=alpha, seed=seed, delta=delta)
    se = np.sqrt(delta * (1 - delta) / reps)
    frac = np.mean(d["cover"] >= 1 - alpha)
    print(
        f"{method} (binomial): P(coverage >= {1 - alpha:g}) = {frac:.3f} over {reps} draws (need >= {1 - delta:g}); "
        f"mean coverage {d['cover'].mean():.4f}, min {d['cover'].min():.4f}; k={rep.k} of n2={rep.n2}; "
        f"share infinite {d['share_inf'].mean():.4f}"
    )
    assert rep.bound == "binomial"
    assert frac >= 1 - delta - 3 * se
    # not trivially met by infinite intervals, and tighter than Hoeffding's target would be
    assert d["share_inf"].mean() < 0.02 and d["cover"].mean() < rep.target + 0.03


def _check(method, reps, alpha, delta, n_cal, grid_size, form="inflated", seed=7):
    d, rep = _draws(
        method, reps, n_cal=n_cal, n_test=2000, alpha=alpha, seed=seed, delta=delta, grid_size=grid_size, pac_form=form
    )
    level = 1 - alpha if form == "inflated" else 1 - alpha - rep.epsilon
    se = np.sqrt(delta * (1 - delta) / reps)
    frac = np.mean(d["cover"] >= level)
    event = np.mean(np.all(d["grid_cover"] > d["d2"] - rep.epsilon, axis=1))
    diff = (d["d2"] - d["grid_cover"]).mean(axis=1)  # one number per draw: mean over the grid
    bias_z = abs(diff.mean()) / max(diff.std(ddof=1) / np.sqrt(reps), 1e-12)
    print(
        f"{method} ({form}): P(coverage >= {level:.4f}) = {frac:.3f} over {reps} draws (need >= {1 - delta:g}); "
        f"Hoeffding event {event:.3f}; mean coverage {d['cover'].mean():.4f}, min {d['cover'].min():.4f}; "
        f"epsilon {rep.epsilon:.4f}; share infinite {d['share_inf'].mean():.4f}; bias z {bias_z:.2f}"
    )
    assert frac >= 1 - delta - 3 * se
    assert event >= 1 - delta - 3 * se
    assert bias_z < 4.0
    # not trivially met by infinite intervals
    assert d["share_inf"].mean() < 0.05 and d["cover"].mean() < 1 - alpha + rep.epsilon + 0.05


@pytest.mark.parametrize("method", ["qrf-tc", "lcp-rf-pac"])
def test_pac_statement_quick(method):
    _check(method, reps=25, alpha=0.2, delta=0.1, n_cal=900, grid_size=10)


@pytest.mark.parametrize("method", ["qrf-tc", "lcp-rf-pac"])
def test_binomial_statement_quick(method):
    _check_binomial(method, reps=25, alpha=0.2, delta=0.1, n_cal=600)


@pytest.mark.long
@pytest.mark.parametrize("method", ["qrf-tc", "lcp-rf-pac"])
def test_binomial_statement_long(mc_reps, method):
    # small D2 (n2 = 267): where the binomial bound matters; delta = 0.2 so that failures are frequent
    # enough for the check to have power
    _check_binomial(method, reps=mc_reps or 120, alpha=0.1, delta=0.2, n_cal=800, seed=13)


@pytest.mark.long
# the Hoeffding bound (kept to reproduce the paper): each form once, on a different method, so both
# forms and both methods are covered at half the cost of the full cross (the shared correction
# machinery is the same; the binomial tests above cover both methods at the default bound)
@pytest.mark.parametrize("method, form", [("qrf-tc", "inflated"), ("lcp-rf-pac", "paper")])
def test_pac_statement_long(mc_reps, method, form):
    _check(method, reps=mc_reps or 40, alpha=0.1, delta=0.1, n_cal=2400, grid_size=20, form=form, seed=11)


# ------------------------------------------------------- groupwise PAC ---
def _group_draws(method, reps, n_cal, n_test, alpha, seed, options):
    """Per draw: the smallest within-group coverage (groups holding test points) and the overall coverage."""
    rng = np.random.default_rng(seed)
    train = cf.datasets.make_toy(400, random_state=rng)
    model = LinearRegression().fit(np.asarray(train.X), train.y)
    labels = lambda X: (
        np.where(X[:, 0] < 2.5, "low", np.where(X[:, 0] < 5.0, "mid", "high"))
        if options.get("groups") == "labels"
        else None
    )
    worst, overall, share_inf = [], [], []
    for _ in range(reps):
        cal = cf.datasets.make_toy(n_cal, random_state=rng)
        test = cf.datasets.make_toy(n_test, random_state=rng)
        Xc, Xt = np.asarray(cal.X), np.asarray(test.X)
        reg = cf.ConformalRegressor(
            model=model,
            prefit=True,
            method=method,
            alpha=alpha,
            n_estimators=30,
            random_state=int(rng.integers(2**31)),
            options={"guarantee": "pac", **options},
        )
        gc = None if labels is None else labels(Xc)
        gt = None if labels is None else labels(Xt)
        reg.conformalize(Xc, cal.y, groups=gc)
        d = reg.predict_details(Xt, groups=gt)  # intervals and each row's group from one pass
        lo, hi, g = d["lwr"], d["upr"], d["group"]
        cover = test.conditional_coverage(None, lo, hi)
        worst.append(min(cover[g == name].mean() for name in np.unique(g) if (g == name).sum() >= 200))
        overall.append(cover.mean())
        share_inf.append(np.mean(np.isinf(hi)))
    return np.asarray(worst), np.asarray(overall), np.asarray(share_inf), reg.calibrator_.pac_report(alpha)


def _check_groups(method, reps, alpha, delta, n_cal, options, seed=3):
    worst, overall, share_inf, rep = _group_draws(method, reps, n_cal, 6000, alpha, seed, {"delta": delta, **options})
    se = np.sqrt(delta * (1 - delta) / reps)
    frac = np.mean(worst >= 1 - alpha)
    print(
        f"{method} {options}: P(every group's coverage >= {1 - alpha:g}) = {frac:.3f} over {reps} draws "
        f"(need >= {1 - delta:g}); overall coverage mean {overall.mean():.4f}; worst group mean "
        f"{worst.mean():.4f}, min {worst.min():.4f}; share infinite {share_inf.mean():.4f}; groups\n{rep.groups}"
    )
    assert rep.bound == "binomial" and rep.groups is not None
    assert frac >= 1 - delta - 3 * se
    assert np.mean(overall >= 1 - alpha) >= 1 - delta - 3 * se
    assert share_inf.mean() < 0.05  # not met by infinite intervals


@pytest.mark.parametrize("method", ["split-g", "lcp-rf-g"])
def test_group_pac_statement_quick(method):
    _check_groups(method, reps=12, alpha=0.2, delta=0.2, n_cal=1500, options={"groups": "labels"})


@pytest.mark.long
@pytest.mark.parametrize("method", ["split-g", "lcp-rf-g"])
@pytest.mark.parametrize("groups", ["labels", "components"])
def test_group_pac_statement_long(mc_reps, method, groups):
    _check_groups(method, reps=mc_reps or 60, alpha=0.1, delta=0.2, n_cal=2400, options={"groups": groups}, seed=5)

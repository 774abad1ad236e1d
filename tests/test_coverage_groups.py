"""Monte Carlo: coverage within every group (and marginally) of SPLIT-G and LCP-RF-G.

Simulation with heterogeneous groups: x ~ U[0, 1]^3, three regions of x1
(30%, 40%, 30%) with noise sd 0.1, 1.0 and 0.3, y = 2 x1 + sd * N(0, 1), and a
fixed linear model. Exact theory: within every group, P(Y in C(X) | group) >= 1 - alpha.

* Given groups (Mondrian): every repetition draws fresh calibration and test sets.
* Groups from the forest graph: the guarantee holds conditionally on the
  localizer part (which fixes the groups), so the localizer part, the forest
  and the groups are learned once and every repetition draws fresh conformal
  and test points; coverage is then checked for each of those fixed groups.
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import confrf as cf
from confrf.calibrators.lcp_rf_g import LCPForestGroupCalibrator
from confrf.calibrators.split_g import SplitGroupCalibrator
from confrf.localizers import ForestLocalizer

# these tests pass one set of forest settings to every method on purpose
pytestmark = pytest.mark.filterwarnings("ignore::confrf.exceptions.UnusedSettingWarning")

ALPHA = 0.1
SD = np.array([0.1, 1.0, 0.3])
LABELS = np.array(["a", "b", "c"], dtype=object)


def _draw(n, rng):
    X = rng.uniform(size=(n, 3))
    region = np.digitize(X[:, 0], [0.3, 0.7])
    return X, 2 * X[:, 0] + SD[region] * rng.normal(size=n), LABELS[region]


MODEL = LinearRegression().fit(*_draw(400, np.random.default_rng(99))[:2])


def _summarise(cover_by_group: dict, marginal: list, name: str, alpha: float):
    rows = {}
    for g, vals in cover_by_group.items():
        v = np.asarray(vals)
        rows[g] = (v.mean(), v.std(ddof=1) / np.sqrt(len(v)), len(v))
    m = np.asarray(marginal)
    mean, se = m.mean(), m.std(ddof=1) / np.sqrt(len(m))
    print(
        f"{name}: marginal {mean:.4f} (se {se:.4f}); "
        + "; ".join(f"{g}: {c:.4f} (se {s:.4f}, {r} draws)" for g, (c, s, r) in rows.items())
    )
    assert mean >= 1 - alpha - 3 * se
    for g, (c, s, _) in rows.items():
        assert c >= 1 - alpha - 3 * s, (name, g, c, s)
    return rows


def _mc_given_groups(method, reps, alpha=ALPHA, n_cal=300, n_test=300, seed=2024):
    rng = np.random.default_rng(seed)
    by_group, marginal = {g: [] for g in LABELS}, []
    for _ in range(reps):
        X, y, g = _draw(n_cal, rng)
        Xt, yt, gt = _draw(n_test, rng)
        reg = cf.ConformalRegressor(
            model=MODEL,
            prefit=True,
            method=method,
            alpha=alpha,
            n_estimators=50,
            random_state=int(rng.integers(2**31)),
            options=None if method == "split" else {"groups": "labels"},
        )
        reg.conformalize(X, y, groups=None if method == "split" else g)
        lo, hi = reg.predict_interval(Xt, groups=None if method == "split" else gt).T
        cover = (yt >= lo) & (yt <= hi)
        marginal.append(cover.mean())
        for lab in LABELS:
            by_group[lab].append(cover[gt == lab].mean())
    return by_group, marginal


def _mc_fixed_graph_groups(cls, reps, alpha=ALPHA, n_cal=800, n_test=300, seed=7):
    """Learn forest and groups once; redraw the conformal and test points each time."""
    pytest.importorskip("igraph")
    rng = np.random.default_rng(seed)
    X, y, _ = _draw(n_cal, rng)
    cal = cls(ForestLocalizer(n_estimators=50, random_state=1), groups="leiden", min_group_size="auto")
    with np.errstate(all="ignore"):
        cal.calibrate(X, np.abs(y - MODEL.predict(X)), alpha=alpha, rng=rng)
    n_conf = cal.n_conformal_
    by_group, marginal = {}, []
    for _ in range(reps):
        Xp, yp, _ = _draw(n_conf, rng)
        cal._fit_groups(Xp, np.abs(yp - MODEL.predict(Xp)), cal.assign(Xp), None)  # fresh conformal part
        Xt, yt, _ = _draw(n_test, rng)
        th, names = cal.grouped_thresholds(Xt, alpha)
        cover = np.abs(yt - MODEL.predict(Xt)) <= th.t  # closed sets: continuous scores never hit t
        marginal.append(cover.mean())
        for g in np.unique(names):
            by_group.setdefault(g, []).append(cover[names == g].mean())
    groups = cal.grouping_.names
    assert len(groups) >= 3, groups  # the forest graph does split this simulation
    return {g: v for g, v in by_group.items() if len(v) >= 2}, marginal


# -- quick --------------------------------------------------------------------------
def test_split_g_given_groups_coverage_quick():
    rows = _summarise(*_mc_given_groups("split-g", 150), "split-g", ALPHA)
    assert set(rows) == set(LABELS)
    # power: plain split conformal under-covers the noisy group, which SPLIT-G fixes
    split_b = np.mean(_mc_given_groups("split", 10)[0]["b"])
    assert split_b < 1 - ALPHA - 0.05


def test_lcp_rf_g_given_groups_coverage_quick():
    _summarise(*_mc_given_groups("lcp-rf-g", 60), "lcp-rf-g", ALPHA)


@pytest.mark.parametrize("cls", [SplitGroupCalibrator, LCPForestGroupCalibrator])
def test_graph_groups_coverage_within_fixed_groups_quick(cls):
    _summarise(*_mc_fixed_graph_groups(cls, 100), f"{cls.name} (leiden)", ALPHA)


# -- long ---------------------------------------------------------------------------
@pytest.mark.long
@pytest.mark.parametrize("method", ["split-g", "lcp-rf-g"])
@pytest.mark.parametrize("alpha", [0.1, 0.2])
def test_given_groups_coverage_long(mc_reps, method, alpha):
    reps = mc_reps or (400 if method == "split-g" else 200)
    _summarise(*_mc_given_groups(method, reps, alpha=alpha), method, alpha)


@pytest.mark.long
@pytest.mark.parametrize("cls", [SplitGroupCalibrator, LCPForestGroupCalibrator])
def test_graph_groups_coverage_long(mc_reps, cls):
    _summarise(*_mc_fixed_graph_groups(cls, mc_reps or 400), f"{cls.name} (leiden)", ALPHA)


@pytest.mark.long
def test_lcp_rf_g_full_pipeline_marginal_coverage_long(mc_reps):
    """Groups relearned every repetition: marginal coverage over everything."""
    pytest.importorskip("igraph")
    rng = np.random.default_rng(11)
    cover = []
    for _ in range(mc_reps or 200):
        X, y, _ = _draw(600, rng)
        Xt, yt, _ = _draw(200, rng)
        reg = cf.ConformalRegressor(
            model=MODEL,
            prefit=True,
            method="lcp-rf-g",
            alpha=ALPHA,
            n_estimators=50,
            random_state=int(rng.integers(2**31)),
        ).conformalize(X, y)
        lo, hi = reg.predict_interval(Xt).T
        cover.append(np.mean((yt >= lo) & (yt <= hi)))
    _summarise({}, cover, "lcp-rf-g full pipeline", ALPHA)

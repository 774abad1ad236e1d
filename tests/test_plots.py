"""result.plot.*: every plot draws with the Agg backend and returns its Axes."""

import sys

import numpy as np
import pytest

import confrf as cf

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMULA = "y ~ x1 + x2 + x3"


@pytest.fixture(scope="module")
def data():
    sim = cf.datasets.make_sim(1200, random_state=0)
    test = cf.datasets.make_sim(300, random_state=1).frame
    return sim.frame.assign(half=np.where(sim.frame.x1 > 0.5, "high", "low")), test.assign(
        half=np.where(test.x1 > 0.5, "high", "low")
    )


@pytest.fixture(scope="module")
def lcp(data):
    return cf.lcp_rf(FORMULA, data=data[0], model="ols", random_state=0, n_estimators=10)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_intervals_against_fit_and_predictor(lcp, data):
    test = data[1]
    ax = lcp.plot.intervals(test)
    assert isinstance(ax, plt.Axes) and ax.get_xlabel() == "fitted value" and ax.get_ylabel() == "y"
    ax = lcp.plot.intervals(test.drop(columns="y"), x="x1", max_points=50)  # no response: intervals only
    assert ax.get_xlabel() == "x1" and len(ax.collections[0].get_segments()) == 50
    with pytest.raises(cf.InputError, match="x="):
        lcp.plot.intervals(test, x="nope")


def test_coverage_widths_alpha_tilde(lcp, data):
    test = data[1]
    ax = lcp.plot.coverage(test)
    ev = lcp.evaluate(test, n_directions=2)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), ev.by_width["coverage"].to_numpy(dtype=float))
    assert ax.lines[-1].get_ydata()[0] == pytest.approx(0.9)  # the target line
    _, existing = plt.subplots()
    assert lcp.plot.widths(test, ax=existing) is existing
    ax = lcp.plot.alpha_tilde(test, bins=10)
    assert len(ax.patches) == 10
    with pytest.raises(cf.InputError, match="no groups"):
        lcp.plot.coverage(test, by="group")
    with pytest.raises(cf.InputError, match="by must be"):
        lcp.plot.coverage(test, by="decile")


def test_coverage_by_group(data):
    res = cf.conformal(FORMULA, data=data[0], method="split-g", groups="half", model="ols", random_state=0)
    ax = res.plot.coverage(data[1], by="group")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["high", "low"]


def test_clear_message_without_matplotlib(lcp, data, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'confrf\[plot\]'"):
        lcp.plot.widths(data[1])

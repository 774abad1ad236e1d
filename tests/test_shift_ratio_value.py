"""The likelihood ratio is read and checked once where it enters, then carried as a ShiftRatio (issue 38).

At fit, a known ratio is read from the calibration rows (an estimated one from
the ratio classifier at those rows) and the estimator and calibrator take that
value as it is; at predict the new rows' ratios are read once and reach the
calibrator as their own argument, apart from the group labels.
"""

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.exceptions import InputError
from confrf.shift import ShiftRatio
from confrf.shift.value import as_ratio, new_row_ratios, ratio_values

FAST = {"n_estimators": 20, "min_samples_leaf": 10, "max_features": 1.0}


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(size=n), "x2": rng.uniform(size=n)})
    df["g"] = np.where(rng.random(n) < 0.5, "a", "b")
    df["y"] = df.x1 + df.x1 * rng.normal(size=n)
    df["k"] = np.where(df.y > 0.5, "hi", "lo")
    df["w"] = np.exp(2.0 * df.x1)
    return df


@pytest.fixture
def reads(monkeypatch):
    """Every ShiftRatio.read call, by the rows it names."""
    calls = []
    original = ShiftRatio.read.__func__

    def counting(cls, values, n, what, **kw):
        calls.append(what)
        return original(cls, values, n, what, **kw)

    monkeypatch.setattr(ShiftRatio, "read", classmethod(counting))
    return calls


@pytest.mark.parametrize(
    "formula, method, opts",
    [
        ("y ~ x1 + x2", "split", {}),
        ("y ~ x1 + x2", "lcp-rf", FAST),
        ("y ~ x1 + x2", "split-g", {"groups": "g"}),
        ("y ~ x1 + x2", "slcp", {}),
        ("k ~ x1 + x2", "split", {}),
        ("k ~ x1 + x2", "lcp-rf-g", FAST),
    ],
)
@pytest.mark.parametrize("given", ["likelihood_ratio", "shift"])
def test_the_ratio_is_read_once_at_fit_and_once_at_predict(reads, formula, method, opts, given):
    df, new = _frame(600, 0), _frame(80, 1)
    ratio = {"likelihood_ratio": "w"} if given == "likelihood_ratio" else {"shift": new}
    res = cf.conformal(formula, data=df, method=method, random_state=2, **ratio, **opts)
    assert len(reads) == 1 and reads[0].startswith("the calibration rows"), reads
    reads.clear()
    res.predict(new)
    assert len(reads) == 1 and reads[0].startswith(("newdata", "the new rows")), reads
    reads.clear()
    res.summary()  # the calibration rows' own ratios are carried, not read again
    assert reads == []


def test_at_predict_the_ratio_is_its_own_argument_not_a_group_label(monkeypatch):
    df, new = _frame(600, 0), _frame(80, 1)
    X, Xn = df[["x1", "x2"]].to_numpy(), new[["x1", "x2"]].to_numpy()
    est = cf.ConformalRegressor(method="split-g", options={"groups": "labels"}, random_state=2).fit(X[:300], df.y[:300])
    est.conformalize(X[300:], df.y[300:], groups=df.g[300:].to_numpy(), likelihood_ratio=df.w[300:].to_numpy())
    cal = est.calibrator_
    seen = []
    original = cal.predict_rows

    def spy(X, alpha, **kw):
        seen.append(kw)
        return original(X, alpha, **kw)

    monkeypatch.setattr(cal, "predict_rows", spy)
    est.predict_details(Xn, groups=new.g.to_numpy(), likelihood_ratio=new.w.to_numpy(), chunk_size=30)
    assert seen and all(isinstance(kw["likelihood_ratio"], ShiftRatio) for kw in seen)
    assert all(set(kw) == {"interval", "labels", "likelihood_ratio"} for kw in seen)
    got = np.concatenate([kw["likelihood_ratio"].values for kw in seen])
    np.testing.assert_array_equal(got, new.w.to_numpy())


def test_a_shift_ratio_is_taken_as_it_is_and_its_use_still_compared():
    r = ShiftRatio.read([0.0, 0.0], 2, "the new rows", allow_all_zero=True)
    assert as_ratio(r, 2, "the new rows", allow_all_zero=True) is r
    assert new_row_ratios(r, 2, weighted=True) is r.values
    with pytest.raises(InputError, match=r"one number per row \(3\)"):
        as_ratio(r, 3, "the new rows", allow_all_zero=True)
    with pytest.raises(InputError, match="0 in every row"):
        ratio_values(r, 2, "the calibration rows")  # new rows' ratios given as the calibration's
    with pytest.raises(InputError, match="negative"):
        ratio_values(np.array([1.0, -1.0]), 2, "the calibration rows")  # raw numbers are read where they enter
    assert r[1:].values.tolist() == [0.0]

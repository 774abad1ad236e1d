"""save_fit / load_fit: a fit read back predicts and reports as the original; other files get clear errors."""

import pickle

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.exceptions import ArgumentTypeError, InputError
from confrf.persist import FORMAT_VERSION


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(800, random_state=0)


@pytest.mark.filterwarnings("ignore::confrf.exceptions.InfiniteIntervalWarning")  # pac at alpha 0.05, 800 rows
def test_round_trip_predicts_and_reports_as_the_original(sim, tmp_path):
    res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=20, guarantee="pac")
    cf.save_fit(res, tmp_path / "model.joblib")
    again = cf.load_fit(tmp_path / "model.joblib")
    assert type(again) is type(res) and again.formula == res.formula
    new = sim.frame.head(50)
    pd.testing.assert_frame_equal(again.predict(new, alpha=[0.1, 0.05]), res.predict(new, alpha=[0.1, 0.05]))
    assert str(again.pac_report()) == str(res.pac_report())
    assert str(again.summary().tables[0]) == str(res.summary().tables[0])
    cf.save_fit(again, tmp_path / "model.joblib")  # replaces the file
    pd.testing.assert_frame_equal(cf.load_fit(str(tmp_path / "model.joblib")).predict(new), res.predict(new))


def test_classification_round_trip(sim, tmp_path):
    df = sim.frame.assign(c=np.where(sim.frame["y"] > sim.frame["y"].median(), "hi", "lo"))
    res = cf.conformal("c ~ x1 + x2 + x3", data=df, method="split", model="logit", random_state=0)
    cf.save_fit(res, tmp_path / "c.joblib")
    pd.testing.assert_frame_equal(cf.load_fit(tmp_path / "c.joblib").predict(df.head(20)), res.predict(df.head(20)))


def test_files_that_are_not_fits(sim, tmp_path):
    res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    cf.save_fit(res, tmp_path / "m.joblib")
    envelope = pickle.loads((tmp_path / "m.joblib").read_bytes())
    assert envelope["format"] == "confrf fit" and envelope["confrf"] == cf.__version__
    (tmp_path / "old.joblib").write_bytes(pickle.dumps({**envelope, "confrf": "0.0.1"}))
    (tmp_path / "newer.joblib").write_bytes(pickle.dumps({**envelope, "format_version": FORMAT_VERSION + 1}))
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps(res))
    (tmp_path / "array.pkl").write_bytes(pickle.dumps(np.arange(3)))
    (tmp_path / "dict.pkl").write_bytes(pickle.dumps({"a": 1}))
    (tmp_path / "data.csv").write_text("y,x\n1,2\n")
    cases = {
        "old.joblib": f"saved by confrf 0.0.1 .*this is confrf {cf.__version__}.*install confrf==0.0.1",
        "newer.joblib": "A fit is read by the confrf version that saved it",
        "plain.pkl": r"pickled confrf object, not a file of confrf.save_fit\(\)",
        "array.pkl": "not a confrf fit file .*it holds a pickled numpy",
        "dict.pkl": "not a confrf fit file",
        "data.csv": "not a confrf fit file .*not a pickle",
        "missing.joblib": "no such file",
        ".": "is a directory",
    }
    for name, message in cases.items():
        with pytest.raises(InputError, match=message):
            cf.load_fit(tmp_path / name)


def test_save_checks_its_arguments(sim, tmp_path):
    res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    with pytest.raises(ArgumentTypeError, match="fitted result"):
        cf.save_fit(res.estimator, tmp_path / "m.joblib")
    with pytest.raises(InputError, match="does not exist"):
        cf.save_fit(res, tmp_path / "no" / "m.joblib")
    with pytest.raises(InputError, match="is a directory"):
        cf.save_fit(res, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing half-written left behind

"""The command line: ``python -m confrf fit`` on CSV files."""

import numpy as np
import pandas as pd

import confrf as cf
from confrf.__main__ import main


def test_fit_writes_predictions(tmp_path, capsys):
    sim = cf.datasets.make_sim(600, random_state=0).frame[["y", "x1", "x2"]]
    sim.iloc[:500].to_csv(tmp_path / "train.csv", index=False)
    sim.iloc[500:].drop(columns="y").to_csv(tmp_path / "new.csv", index=False)
    rc = main(["fit", "y ~ x1 + x2", "--data", str(tmp_path / "train.csv"), "--newdata", str(tmp_path / "new.csv"),
               "--method", "split", "--random-state", "0", "--out", str(tmp_path / "pred.csv")])
    assert rc == 0
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns) == ["row", "fit", "lwr", "upr"] and len(pred) == 100
    assert np.all(pred["lwr"] < pred["upr"])


def test_fit_reports_errors(tmp_path, capsys):
    pd.DataFrame({"y": [1.0, 2.0, 3.0], "x": [1.0, 2.0, 3.0]}).to_csv(tmp_path / "d.csv", index=False)
    rc = main(["fit", "y ~ z", "--data", str(tmp_path / "d.csv"), "--newdata", str(tmp_path / "d.csv")])
    assert rc == 2
    assert "z" in capsys.readouterr().err

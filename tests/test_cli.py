"""The command line: ``confrf fit`` on CSV files, ``confrf demo``, and errors in argparse's convention."""

import argparse
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.__main__ import main


def test_fit_writes_predictions(tmp_path, capsys):
    sim = cf.datasets.make_sim(600, random_state=0).frame[["y", "x1", "x2"]]
    sim.iloc[:500].to_csv(tmp_path / "train.csv", index=False)
    sim.iloc[500:].drop(columns="y").to_csv(tmp_path / "new.csv", index=False)
    rc = main(
        [
            "fit",
            "y ~ x1 + x2",
            "--data",
            str(tmp_path / "train.csv"),
            "--newdata",
            str(tmp_path / "new.csv"),
            "--method",
            "split",
            "--random-state",
            "0",
            "--out",
            str(tmp_path / "pred.csv"),
        ]
    )
    assert rc == 0
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns) == ["row", "fit", "lwr", "upr"] and len(pred) == 100
    assert np.all(pred["lwr"] < pred["upr"])


def test_fit_reports_errors(tmp_path, capsys):
    pd.DataFrame({"y": [1.0, 2.0, 3.0], "x": [1.0, 2.0, 3.0]}).to_csv(tmp_path / "d.csv", index=False)
    rc = main(["fit", "y ~ z", "--data", str(tmp_path / "d.csv"), "--newdata", str(tmp_path / "d.csv")])
    assert rc == 2
    assert "z" in capsys.readouterr().err


# -- errors: argparse's convention (``confrf: error: ...``, status 2, no traceback), checked before fitting --
@pytest.fixture
def csvs(tmp_path):
    sim = cf.datasets.make_sim(600, random_state=0).frame[["y", "x1", "x2"]]
    sim.iloc[:500].to_csv(tmp_path / "train.csv", index=False)
    sim.iloc[500:].drop(columns="y").to_csv(tmp_path / "new.csv", index=False)
    return tmp_path


@pytest.fixture
def no_fitting(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the command fitted a model before checking its files")

    monkeypatch.setattr(cf, "conformal", refuse)


def _run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _error_line(err):
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("confrf: error: "), err  # a line of its own, not glued to a progress line
    assert "Traceback" not in err
    return lines[0]


def _fit_args(csvs, **files):
    paths = {"data": csvs / "train.csv", "newdata": csvs / "new.csv", **files}
    argv = ["fit", "y ~ x1 + x2", "--method", "split", "--random-state", "0"]
    for k, v in paths.items():
        argv += [f"--{k}", str(v)]
    return argv


@pytest.mark.parametrize("option", ["data", "newdata", "calib"])
def test_missing_file(csvs, capsys, no_fitting, option):
    rc, _, err = _run(_fit_args(csvs, **{option: csvs / "nope.csv"}), capsys)
    assert rc == 2
    assert f"--{option} {csvs / 'nope.csv'}: no such file" in _error_line(err)


def test_directory_as_data(csvs, capsys, no_fitting):
    rc, _, err = _run(_fit_args(csvs, data=csvs), capsys)
    assert rc == 2 and "is a directory" in _error_line(err)


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the file is empty"),
        ("y,x1,x2\n", "no data rows"),
        ("y,x1\n1,2\n3,4,5,6\n", "not a readable CSV file (Error tokenizing data"),
        ("y;x1;x2\n1;2;3\n4;5;6\n", "seems separated by ';', not commas"),
        ("y\tx1\n1\t2\n", "seems separated by '\\t'"),
    ],
)
def test_malformed_or_empty_csv(csvs, capsys, no_fitting, content, message):
    (csvs / "bad.csv").write_text(content)
    rc, _, err = _run(_fit_args(csvs, data=csvs / "bad.csv"), capsys)
    assert rc == 2 and message in _error_line(err)


@pytest.mark.parametrize("content", [b"\xff\xfe\x00\x81\x00 y,x\n\x92\x93\n", "y,x\n1,caf\xe9\n".encode("latin-1")])
def test_file_that_is_not_utf8_text(csvs, capsys, no_fitting, content):
    (csvs / "bad.csv").write_bytes(content)
    rc, _, err = _run(_fit_args(csvs, data=csvs / "bad.csv"), capsys)
    assert rc == 2 and "not a readable CSV file (not UTF-8 text" in _error_line(err)
    assert "save it as UTF-8 text" in err


def test_out_folder_checked_before_fitting(csvs, capsys, no_fitting):
    rc, _, err = _run(_fit_args(csvs, out=csvs / "missing" / "pred.csv"), capsys)
    assert rc == 2 and f"the folder {csvs / 'missing'} does not exist" in _error_line(err)
    rc, _, err = _run(_fit_args(csvs, out=csvs), capsys)
    assert rc == 2 and "is a directory" in _error_line(err)


def test_library_error_on_its_own_line(csvs, capsys):
    argv = _fit_args(csvs)
    argv[1] = "y ~ x1 + z"
    rc, _, err = _run(argv, capsys)
    assert rc == 2 and "z" in _error_line(err)
    assert err.splitlines()[-1].startswith("confrf: error: ")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--alpha", "1.5"], "argument --alpha: must be in (0, 1), got 1.5"),
        (["--level", "nan"], "argument --level: must be in (0, 1), got nan"),
        (["--alpha", "0.1", "--level", "0.9"], "not allowed with argument"),
        (["--n-jobs", "0"], "0 is not a number of threads"),
        (["--max-width", "-1"], "must be a positive number"),
    ],
)
def test_bad_options_are_argparse_errors(csvs, capsys, no_fitting, extra, message):
    with pytest.raises(SystemExit) as exc:
        main(_fit_args(csvs) + extra)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "confrf fit: error: " in err and message in err and "Traceback" not in err


def test_console_exit_status_and_no_traceback(tmp_path):
    # the real process, on the confrf under test: exit status 2 and one error line
    env = {**os.environ, "PYTHONPATH": str(Path(cf.__file__).resolve().parents[1])}
    proc = subprocess.run(
        [sys.executable, "-m", "confrf", "fit", "y ~ x", "--data", "nope.csv", "--newdata", "nope.csv"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    # the last line (an environment may add its own warnings above it, e.g. libgomp's)
    assert proc.stderr.splitlines()[-1] == "confrf: error: --data nope.csv: no such file"
    assert "Traceback" not in proc.stderr


# -- the options that matter ---------------------------------------------------------
def test_level_is_one_minus_alpha(csvs, capsys):
    out = {}
    for flag, value in (("--alpha", "0.2"), ("--level", "0.8")):
        assert main(_fit_args(csvs, out=csvs / f"{flag[2:]}.csv") + [flag, value, "--summary"]) == 0
        out[flag] = pd.read_csv(csvs / f"{flag[2:]}.csv")
        assert re.search(r"^alpha: +0\.2 ", capsys.readouterr().err, re.MULTILINE)
    pd.testing.assert_frame_equal(out["--alpha"], out["--level"])


def test_max_width_adds_the_rejected_column(csvs):
    assert main(_fit_args(csvs, out=csvs / "pred.csv") + ["--max-width", "2.0"]) == 0
    pred = pd.read_csv(csvs / "pred.csv")
    assert list(pred.columns) == ["row", "fit", "lwr", "upr", "rejected"]
    assert (pred["rejected"] == (pred["upr"] - pred["lwr"] > 2.0)).all()


def test_groups_option(tmp_path):
    sim = cf.datasets.make_sim(1000, random_state=0).frame[["y", "x1", "x2"]]
    sim["half"] = np.where(sim["x1"] > 0.5, "high", "low")
    sim.to_csv(tmp_path / "d.csv", index=False)
    argv = [
        "fit",
        "y ~ x1 + x2",
        "--data",
        str(tmp_path / "d.csv"),
        "--newdata",
        str(tmp_path / "d.csv"),
        "--method",
        "split-g",
        "--groups",
        "half",
        "--random-state",
        "0",
        "--out",
        str(tmp_path / "p.csv"),
    ]
    assert main(argv) == 0
    pred = pd.read_csv(tmp_path / "p.csv")
    assert (pred["group"] == sim["half"]).all()


def test_guarantee_and_delta(tmp_path, capsys):
    sim = cf.datasets.make_sim(2000, random_state=0).frame[["y", "x1", "x2"]]
    sim.to_csv(tmp_path / "d.csv", index=False)
    argv = [
        "fit",
        "y ~ x1 + x2",
        "--data",
        str(tmp_path / "d.csv"),
        "--newdata",
        str(tmp_path / "d.csv"),
        "--guarantee",
        "pac",
        "--delta",
        "0.05",
        "--random-state",
        "0",
        "--out",
        str(tmp_path / "p.csv"),
        "--summary",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "Training-conditional (PAC) calibration" in err and "0.05" in err


def test_scale_option(tmp_path, capsys):
    sim = cf.datasets.make_sim(1500, random_state=0).frame[["y", "x1", "x2"]]
    sim.to_csv(tmp_path / "d.csv", index=False)
    base = [
        "fit",
        "y ~ x1 + x2",
        "--data",
        str(tmp_path / "d.csv"),
        "--newdata",
        str(tmp_path / "d.csv"),
        "--random-state",
        "0",
        "--out",
        str(tmp_path / "p.csv"),
        "--summary",
    ]
    assert main(base + ["--scale", "forest"]) == 0
    assert "V / sigma(x)" in " ".join(capsys.readouterr().err.split())
    assert main(base + ["--method", "split", "--scale", "none"]) == 2
    assert "--scale does not apply to --method split" in capsys.readouterr().err


def test_cv_option_for_cv_plus(tmp_path, capsys):
    sim = cf.datasets.make_sim(300, random_state=0).frame[["y", "x1", "x2"]]
    sim.to_csv(tmp_path / "d.csv", index=False)
    base = ["fit", "y ~ x1 + x2", "--data", str(tmp_path / "d.csv"), "--newdata", str(tmp_path / "d.csv")]
    base += ["--model", "ols", "--random-state", "0", "--out", str(tmp_path / "p.csv"), "--summary"]
    assert main(base + ["--method", "cv+", "--cv", "10"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "K = 10 folds of 30 rows" in err and "1 - 2 alpha - epsilon" in err
    assert pd.read_csv(tmp_path / "p.csv").shape == (300, 4)  # row, fit, lwr, upr: every row, no calibration split
    assert main(base + ["--method", "jackknife+ab", "--cv", "10"]) == 2
    assert "--cv does not apply to --method jackknife+ab" in capsys.readouterr().err


# -- the demo -------------------------------------------------------------------------
@pytest.fixture
def small_california(monkeypatch):
    full = cf.datasets.load_california()
    monkeypatch.setattr(cf.datasets, "load_california", lambda: full.iloc[:3000])


def test_demo_leads_with_the_comparison(small_california, capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Held-out comparison")
    assert out[2].startswith("SPLIT") and out[3].startswith("LCP-RF")
    assert out[5].startswith("On ") and "SPLIT covers" in out[5] and "LCP-RF covers" in out[5]
    assert out[-1].strip() == "confrf demo --summary"
    assert len(out) < 12


def test_demo_summary(small_california, capsys):
    assert main(["demo", "--summary"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Held-out comparison")
    assert out.index("LCP-RF covers") < out.index("Guarantee (certified)")


def test_method_option_for_another_method(csvs, capsys, no_fitting):
    rc, _, err = _run(_fit_args(csvs) + ["--groups", "x1"], capsys)  # --method split
    assert rc == 2
    assert "--groups does not apply to --method split; it applies to --method lcp-rf-g, split-g" in _error_line(err)


# -- saving a fit, predicting later, several levels, an id column -------------------------------
def _env():
    return {**os.environ, "PYTHONPATH": str(Path(cf.__file__).resolve().parents[1]), "OMP_NUM_THREADS": "1"}


def _process(args, cwd):
    proc = subprocess.run(
        [sys.executable, "-m", "confrf", *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_round_trip_in_a_new_process_equals_the_in_process_prediction(csvs):
    # fit and save in one process, predict in another: the same numbers as one fit in this process
    _process(["fit", "y ~ x1 + x2", "--data", "train.csv", "--save", "model.joblib", "--random-state", "0"], csvs)
    levels = ["--level", "0.9", "0.8", "0.95"]  # the fit's own level (alpha 0.1) and two others
    _process(["predict", "--fit", "model.joblib", "--newdata", "new.csv", *levels, "--out", "pred.csv"], csvs)
    res = cf.conformal("y ~ x1 + x2", data=pd.read_csv(csvs / "train.csv"), random_state=0)
    new = pd.read_csv(csvs / "new.csv")
    # round_trip: pandas 2's default float parser can miss the last digit that the CSV keeps (pandas 3 does not)
    pred = pd.read_csv(csvs / "pred.csv", index_col="row", float_precision="round_trip")
    assert pred.columns.tolist() == ["fit", "lwr_90", "upr_90", "lwr_80", "upr_80", "lwr_95", "upr_95"]
    for level, alpha in (("90", None), ("80", 0.2), ("95", 0.05)):
        p = res.predict(new, alpha)
        np.testing.assert_array_equal(pred[f"lwr_{level}"], p["lwr"])  # exactly: CSV keeps every digit
        np.testing.assert_array_equal(pred[f"upr_{level}"], p["upr"])
        np.testing.assert_array_equal(pred["fit"], p["fit"])


def test_several_levels_in_one_call(csvs):
    assert main(_fit_args(csvs, out=csvs / "a.csv") + ["--level", "0.8", "0.95", "--max-width", "1.5"]) == 0
    assert main(_fit_args(csvs, out=csvs / "b.csv") + ["--alpha", "0.2", "--alpha", "0.05", "--max-width", "1.5"]) == 0
    a, b = (pd.read_csv(csvs / name, float_precision="round_trip") for name in ("a.csv", "b.csv"))
    pd.testing.assert_frame_equal(a, b)
    assert a.columns.tolist() == ["row", "fit", "lwr_80", "upr_80", "rejected_80", "lwr_95", "upr_95", "rejected_95"]
    # the fit itself is at the first level; each level's interval is the library's at that alpha
    res = cf.split_cp("y ~ x1 + x2", data=pd.read_csv(csvs / "train.csv"), alpha=0.2, random_state=0)
    p = res.predict(pd.read_csv(csvs / "new.csv"), alpha=[0.2, 0.05])
    np.testing.assert_array_equal(a["lwr_95"], p["lwr_0.05"])
    np.testing.assert_array_equal(a["upr_80"], p["upr_0.2"])
    assert (a["rejected_95"] == (a["upr_95"] - a["lwr_95"] > 1.5)).all()


def test_level_labels():
    from confrf.__main__ import level_label

    assert [level_label(Decimal(v)) for v in ("0.9", "0.95", "0.975", "0.5", "1E-1")] == [
        "90",
        "95",
        "97.5",
        "50",
        "10",
    ]


def test_id_column_is_passed_through(csvs):
    new = pd.read_csv(csvs / "new.csv")
    new.insert(0, "id", [f"{i:04d}" for i in range(len(new))])  # "0002" stays "0002", not the number 2
    new.to_csv(csvs / "new_id.csv", index=False)
    assert (
        main(_fit_args(csvs, newdata=csvs / "new_id.csv", out=csvs / "p.csv", save=csvs / "m.joblib") + ["--id", "id"])
        == 0
    )
    pred = pd.read_csv(csvs / "p.csv", dtype={"id": str})
    assert pred.columns.tolist() == ["id", "fit", "lwr", "upr"] and pred["id"].tolist() == new["id"].tolist()
    argv = ["predict", "--fit", str(csvs / "m.joblib"), "--newdata", str(csvs / "new_id.csv"), "--id", "id"]
    assert main(argv + ["--out", str(csvs / "q.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(csvs / "q.csv", dtype={"id": str}), pred)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--id", "nope"], "--id nope: no such column in --newdata"),
        (["--id", "x1", "--level", "0.9", "0.9"], "--level 0.9 is given twice"),
    ],
)
def test_id_and_level_errors(csvs, capsys, no_fitting, extra, message):
    rc, _, err = _run(_fit_args(csvs) + extra, capsys)
    assert rc == 2 and message in _error_line(err)


def test_fit_needs_something_to_do(csvs, capsys, no_fitting):
    base = ["fit", "y ~ x1", "--data", str(csvs / "train.csv")]
    rc, _, err = _run(base, capsys)
    assert rc == 2 and "nothing to do with the fit: give --newdata" in _error_line(err)
    rc, _, err = _run(base + ["--out", str(csvs / "p.csv")], capsys)
    assert rc == 2 and "--out is about predictions: give --newdata" in _error_line(err)
    rc, _, err = _run(base + ["--save", str(csvs)], capsys)
    assert rc == 2 and f"--save {csvs}: is a directory" in _error_line(err)


def test_an_id_named_like_an_output_column(csvs, capsys):
    new = pd.read_csv(csvs / "new.csv").assign(fit=range(100))
    new.to_csv(csvs / "new_fit.csv", index=False)
    rc, _, err = _run(_fit_args(csvs, newdata=csvs / "new_fit.csv") + ["--id", "fit"], capsys)
    assert rc == 2 and "the output already has a column 'fit'" in _error_line(err)


def test_predict_refuses_files_that_are_not_fits(csvs, capsys):
    import pickle

    res = cf.split_cp("y ~ x1", data=pd.read_csv(csvs / "train.csv"), random_state=0)
    cf.save_fit(res, csvs / "m.joblib")
    with open(csvs / "m.joblib", "rb") as f:
        envelope = pickle.load(f)
    with open(csvs / "old.joblib", "wb") as f:
        pickle.dump({**envelope, "confrf": "0.0.1"}, f)
    with open(csvs / "plain.pkl", "wb") as f:
        pickle.dump(res, f)
    cases = {
        "train.csv": "is not a confrf fit file",
        "old.joblib": f"was saved by confrf 0.0.1 (python {envelope['python']}",
        "plain.pkl": "holds a pickled confrf object, not a file of confrf.save_fit()",
        "nope.joblib": "--fit " + str(csvs / "nope.joblib") + ": no such file",
    }
    for name, message in cases.items():
        rc, _, err = _run(["predict", "--fit", str(csvs / name), "--newdata", str(csvs / "new.csv")], capsys)
        assert rc == 2 and message in _error_line(err), name
    assert (
        f"this is confrf {cf.__version__}"
        in _run(["predict", "--fit", str(csvs / "old.joblib"), "--newdata", str(csvs / "new.csv")], capsys)[2]
    )


def test_classification_at_several_levels(tmp_path):
    sim = cf.datasets.make_sim(600, random_state=0).frame[["y", "x1", "x2"]]
    sim["c"] = np.where(sim["y"] > sim["y"].median(), "hi", "lo")
    sim.drop(columns="y").to_csv(tmp_path / "d.csv", index=False)
    argv = ["fit", "c ~ x1 + x2", "--data", str(tmp_path / "d.csv"), "--newdata", str(tmp_path / "d.csv")]
    assert main(argv + ["--method", "split", "--level", "0.8", "0.95", "--out", str(tmp_path / "p.csv")]) == 0
    pred = pd.read_csv(tmp_path / "p.csv")
    assert pred.columns.tolist() == ["row", "pred", "size_80", "hi_80", "lo_80", "size_95", "hi_95", "lo_95"]
    assert (pred["size_95"] >= pred["size_80"]).all()


# -- --help: every default shown, and fast (no library imported) ----------------------------------
def test_help_shows_every_default_as_the_library_has_it():
    import inspect

    from confrf.__main__ import METHOD_NAMES, MODEL_NAMES, build_parser
    from confrf.calibrators import METHODS
    from confrf.calibrators.forest_setup import PAC_DEFAULTS

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in subs.items():
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if action.default not in (None, False, argparse.SUPPRESS) and action.help:
                assert f"(default: {action.default}" in " ".join(sub._get_formatter()._get_help_string(action).split())
        if name != "demo":
            assert "--level LEVEL [LEVEL ...]" in text
    fit_help = " ".join(subs["fit"].format_help().split())
    signature = inspect.signature(cf.conformal).parameters
    assert (
        f"(default: {signature['method'].default})" in fit_help
        and f"(default: {signature['model'].default})" in fit_help
    )
    sim = cf.datasets.make_sim(200, random_state=0)
    assert f"(default: {cf.split_cp(sim.formula, data=sim.frame, random_state=0).alpha})" in fit_help
    assert f"(default: {PAC_DEFAULTS['delta']})" in fit_help
    assert f"(default: {METHODS['lcp-rf'].options['guarantee']})" in fit_help
    assert f"(default: {METHODS['split-g'].options['groups']})" in fit_help
    assert METHOD_NAMES == tuple(sorted(METHODS))
    assert set(MODEL_NAMES) >= {"gbm", "rf", "ols", "qr", "qgbm", "logit"}
    assert "(default: the saved fit's)" in " ".join(subs["predict"].format_help().split())


def test_help_imports_no_numerical_library(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "confrf", "fit", "--help"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "(default: lcp-rf)" in proc.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    heavy = {"numpy", "pandas", "scipy", "sklearn", "statsmodels", "formulaic", "narwhals"}
    assert "confrf" in imported and imported & heavy == set()

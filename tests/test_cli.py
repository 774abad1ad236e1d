"""The command line: ``confrf fit`` on CSV files, ``confrf demo``, and errors in argparse's convention."""

import os
import re
import subprocess
import sys
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

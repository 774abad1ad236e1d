"""Printed output: one number rule for every report, and the glitches of issue 29 (each pinned here)."""

import re
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf import _parallel
from confrf._format import format_interval, format_number, format_percent, format_value
from confrf.calibrators.grouping import REST
from confrf.exceptions import InfiniteIntervalWarning
from confrf.metrics import coverage_by_width, width_bins

FORMULA = "y ~ x1 + x2 + x3"


@pytest.fixture(scope="module")
def sim():
    return cf.datasets.make_sim(1500, random_state=0)


@pytest.fixture(scope="module")
def frame(sim):
    return sim.frame[["y", "x1", "x2", "x3"]]


@pytest.fixture(scope="module")
def test_frame():
    return cf.datasets.make_sim(400, random_state=1).frame[["y", "x1", "x2", "x3"]]


# -- the number rule -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, text",
    [
        (0.07999999999999996, "0.08"),  # the epsilon
        (1.00047747864096e-12, "1e-12"),  # the a_hat
        (0.3333333333333333, "0.3333"),  # the max_features
        (20000, "20000"),
        (np.int64(158), "158"),
        (1.0, "1.0"),  # a share is not the count 1
        (38.0, "38.0"),
        (123456.7, "123457"),
        (9999.5, "10000"),
        (-12345.6, "-12346"),
        (1e16, "1e+16"),
        (0.00012345, "0.0001234"),
        (-0.0, "0.0"),
        (float("nan"), "n/a"),
        (float("inf"), "inf"),
        (-float("inf"), "-inf"),
        (np.float32(0.1), "0.1"),
        (Decimal("0.1"), "0.1"),
        (Fraction(2, 3), "0.6667"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_format_value_percent_interval():
    assert [format_value(v) for v in (True, np.bool_(False), None, pd.NA, "auto", 0.9)] == [
        "yes",
        "no",
        "-",
        "n/a",
        "auto",
        "0.9",
    ]
    assert [format_percent(v) for v in (0.9249, 1.0, 0.0, 0.00031)] == ["92.5%", "100%", "0%", "0.031%"]
    assert format_interval(0.90281234, 0.94623) == "[0.9028, 0.9462]" and format_interval(np.nan, 1.0) == "-"
    with pytest.raises(TypeError, match="format_value"):
        format_number(True)
    with pytest.raises(ValueError, match="digits"):
        format_number(0.5, digits=0)


#: a printed decimal number; float noise shows as more than 4 significant digits
_NUMBER = re.compile(r"(?<![\w.])-?(\d+\.\d+|\d+(?:\.\d+)?e[-+]?\d+)(?![\w.])")


def _noisy(text: str) -> list[str]:
    out = []
    for m in _NUMBER.finditer(text):
        number = m.group(1)[:-2] if m.group(1).endswith(".0") else m.group(1)  # 1337.0: a float, 4 digits
        mantissa = number.split("e")[0].replace(".", "").lstrip("0")
        if len(mantissa.rstrip("0") if "e" in number else mantissa) > 4:
            out.append(m.group(0))
    return out


def test_no_float_noise_in_any_report(frame, test_frame):
    pac = cf.lcp_rf(FORMULA, data=frame, guarantee="pac", random_state=0, n_estimators=20, max_features=1 / 3)
    split = cf.split_cp(FORMULA, data=frame, random_state=0)
    texts = {
        "summary": str(pac.summary()),
        "pac_report": str(pac.pac_report()),
        "evaluation": str(pac.evaluate(test_frame, n_directions=20)),
        "compare": str(cf.compare(split, pac, test=test_frame, n_directions=20)),
        "repr": repr(pac.pac_report()) + repr(pac.evaluate(test_frame, n_directions=20)),
    }
    for name, text in texts.items():
        assert _noisy(text) == [], name
    # the checker itself finds noise
    assert _noisy("epsilon 0.07999999999999996, a_hat 1.00047747864096e-12, ok 0.08") == [
        "0.07999999999999996",
        "1.00047747864096e-12",
    ]


# -- pac_report() prints as a report -----------------------------------------------------------
def test_pac_report_prints_as_a_report(frame):
    res = cf.lcp_rf(FORMULA, data=frame, guarantee="pac", random_state=0, n_estimators=20)
    rep = res.pac_report()
    text = str(rep)
    assert "PACReport(" not in text and "Training-conditional (PAC) calibration: lcp-rf" in text
    flat = " ".join(text.split())
    assert " ".join(rep.sentence.split()) in flat
    for label, value in rep.items():
        assert f"{label}:" in text and format_value(value) in text
    # the fields stay attributes, the repr is one line, HTML and LaTeX render
    assert rep.k <= rep.n2 and isinstance(rep.epsilon, float) and rep.to_frame().loc["k", "value"] == rep.k
    assert "\n" not in repr(rep) and repr(rep).startswith("<PACReport lcp-rf: binomial")
    assert "<table" in rep._repr_html_() and r"\begin{tabular}" in rep.as_latex()


def test_groupwise_pac_report_lists_its_groups(frame):
    labels = np.where(frame["x1"] > 0.5, "high", "low")
    res = cf.conformal(
        FORMULA, data=frame.assign(half=labels), method="split-g", groups="half", guarantee="pac", random_state=0
    )
    text = str(res.pac_report())
    assert "Per group" in text and "high" in text and "low" in text


# -- the summary's settings, groups and progress -------------------------------------------------
def test_max_features_prints_readably(frame):
    res = cf.lcp_rf(FORMULA, data=frame, random_state=0, n_estimators=10, min_samples_leaf=20, max_features=1 / 3)
    text = str(res.summary())
    assert "max_features:" in text and "0.3333 (share of features)" in text and "0.33333" not in text
    assert res.summary().frames["localizer"].loc["max_features", "value"] == 1 / 3  # the frame keeps the number


def test_empty_rest_group_is_explained_not_listed(sim):
    pytest.importorskip("igraph")
    res = cf.conformal(sim.formula, data=sim.frame, method="split-g", groups="leiden", random_state=0)
    table = res.summary().frames["groups"]
    assert REST in table.index and table.loc[REST, ["localizer", "conformal"]].sum() == 0  # the case of the issue
    text = str(res.summary())
    groups = text[text.index("Group sizes") : text.index("Calibration diagnostics")]
    assert not re.search(r"^\(rest\)", groups, re.MULTILINE)
    assert "'(rest)' (the points no group claims" in " ".join(groups.split())
    for g in table.index.drop(REST):
        assert re.search(rf"^{re.escape(g)} ", groups, re.MULTILINE)


def test_summary_shows_no_progress_bar(frame, monkeypatch, capsys):
    res = cf.lcp_rf(FORMULA, data=frame, random_state=0, n_estimators=10)
    monkeypatch.setattr(_parallel, "DEFAULT_CHUNK_SIZE", 50)  # many chunks: a bar would show
    monkeypatch.setattr(_parallel, "PROGRESS_DELAY", 0.0)  # at once
    res.predict(frame.head(200))
    assert "predict" in capsys.readouterr().err  # the precondition: a bar shows for a predict of the user's
    res.summary()
    assert "predict" not in capsys.readouterr().err


# -- coverage by width: labels without gaps ------------------------------------------------------
def test_width_bins_have_no_gaps_when_widths_repeat():
    w = np.array([1.0] * 30 + [2.0] * 40 + [3.0] * 30 + list(np.linspace(4.0, 5.0, 12)))
    # more distinct widths than bins: quantile bins, whose edges 1, ..., 2, 2.3, ... leave (2, 2.3] empty
    assert sorted(set(width_bins(w))) == [1, 2, 3]
    table = coverage_by_width(np.ones(w.size, dtype=bool), w)
    assert table.index.tolist() == ["1", "2", "3"] and table["n"].tolist() == [70, 30, 12]
    # at most n_bins distinct widths: one bin each (quantile edges could put two widths in one bin)
    two = np.array([0.8] * 188 + [1.6] * 212)
    assert coverage_by_width(np.ones(400, dtype=bool), two)["n"].tolist() == [188, 212]


def test_evaluation_says_why_there_are_fewer_bins(frame, test_frame):
    labels = np.where(frame["x1"] > 0.5, "high", "low")
    res = cf.conformal(FORMULA, data=frame.assign(half=labels), method="split-g", groups="half", random_state=0)
    ev = res.evaluate(test_frame.assign(half=np.where(test_frame["x1"] > 0.5, "high", "low")), n_directions=10)
    assert ev.by_width.index.tolist() == ["1", "2"]
    assert "Coverage by width (2 bins, 1 = narrowest; equal widths share a bin)" in str(ev)


# -- warnings point at the user's line --------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    return cf.datasets.make_sim(40, random_state=0).frame[["y", "x1", "x2"]]


@pytest.fixture(scope="module")
def small_leaves():
    # leaves of 3 grown points: a sixth of the intervals are infinite, and predict warns of them
    d = cf.datasets.make_sim(300, random_state=0).frame[["y", "x1", "x2"]]
    res = cf.lcp_rf("y ~ x1 + x2", data=d, random_state=0, min_samples_leaf=3, max_features=1.0, n_estimators=20)
    return res, d


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, InfiniteIntervalWarning)]


@pytest.mark.parametrize("entry", ["predict", "evaluate", "compare", "fit-groups", "classification"])
def test_warnings_point_at_the_callers_line(tiny, small_leaves, entry):
    if entry == "fit-groups":
        df = tiny.assign(g=["a"] * 36 + ["b"] * 4)  # group "b" is too small: warned at fit
        caught = _caught(lambda: cf.conformal("y ~ x1", data=df, method="split-g", groups="g", random_state=0))
    elif entry == "classification":
        df = tiny.assign(c=np.where(tiny["y"] > tiny["y"].median(), "hi", "lo"))
        res = cf.conformal("c ~ x1 + x2", data=df, method="split", model="logit", random_state=0)
        caught = _caught(lambda: res.predict(df, alpha=0.02))  # 20 calibration rows: no finite threshold
    else:
        res, d = small_leaves
        call = {
            "predict": lambda: res.predict(d),
            "evaluate": lambda: res.evaluate(d, n_directions=5),
            "compare": lambda: cf.compare(res, test=d, n_directions=5),
        }[entry]
        caught = _caught(call)
    assert caught, "the entry point warned of nothing: the test has lost its point"
    assert {w.filename for w in caught} == {__file__}


# -- compare: columns named by what differs ------------------------------------------------------------
def test_compare_names_fits_by_what_differs(frame, test_frame):
    fits = [
        cf.split_cp(FORMULA, data=frame, random_state=0),
        cf.lcp_rf(FORMULA, data=frame, random_state=0, n_estimators=10),
        cf.split_cp(FORMULA, data=frame, random_state=0, model="ols"),
        cf.lcp_rf(FORMULA, data=frame, random_state=0, n_estimators=10, model="ols"),
    ]
    cmp = cf.compare(*fits, test=test_frame, n_directions=5)
    assert cmp.frame.columns.tolist() == ["split (gbm)", "lcp-rf (gbm)", "split (ols)", "lcp-rf (ols)"]
    other = cf.split_cp(FORMULA, data=frame, random_state=0, alpha=0.2)
    names = cf.compare(fits[0], other, fits[1], test=test_frame, n_directions=5).frame.columns.tolist()
    assert names == ["split (alpha=0.1)", "split (alpha=0.2)", "lcp-rf"]  # a method alone keeps its name
    assert cf.compare(fits[0], fits[0], test=test_frame, n_directions=5).frame.columns.tolist() == [
        "split #1",
        "split #2",
    ]

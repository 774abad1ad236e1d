"""Every report prints, renders in a notebook and as LaTeX, from one summary (confrf._report.Report)."""

import numpy as np
import pytest
from sklearn.datasets import load_wine

import confrf as cf
from confrf._report import Report
from confrf.calibrators import PACReport
from confrf.classification.compare import ClassComparison
from confrf.classification.evaluation import ClassEvaluation
from confrf.results import Comparison, Evaluation


@pytest.fixture(scope="module")
def reports():
    sim = cf.datasets.make_sim(800, random_state=0)
    test = cf.datasets.make_sim(200, random_state=1).frame
    split = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    pac = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, guarantee="pac", n_estimators=20)
    df = load_wine(as_frame=True).frame.astype({"target": "category"})
    held = np.random.default_rng(0).random(len(df)) < 0.3
    kw = dict(data=df[~held], model="rf", random_state=0)
    a = cf.conformal("target ~ .", method="split", **kw)
    b = cf.conformal("target ~ .", method="split-g", **kw)
    return {
        Evaluation: split.evaluate(test, n_directions=20),
        Comparison: cf.compare(split, pac, test=test, n_directions=20),
        PACReport: pac.pac_report(),
        ClassEvaluation: a.evaluate(df[held]),
        ClassComparison: cf.compare(a, b, test=df[held]),
    }


def test_every_report_is_a_report(reports):
    for cls, rep in reports.items():
        assert type(rep) is cls and isinstance(rep, Report), cls


@pytest.mark.parametrize("cls", [Evaluation, Comparison, PACReport, ClassEvaluation, ClassComparison])
def test_every_report_prints_in_three_formats(reports, cls):
    rep = reports[cls]
    s = rep.summary()
    # the three formats show the same summary: its first table's title in each
    title = str(s.tables[0].title)
    assert str(rep) == str(s) and title in str(rep)
    assert rep._repr_html_() == s.as_html() and "<table" in rep._repr_html_()
    latex = rep.as_latex()
    assert latex == s.as_latex() and r"\begin{tabular}" in latex and latex.count(r"\begin{tabular}") == len(s.tables)


def test_a_report_needs_its_summary():
    class NoSummary(Report):
        pass

    with pytest.raises(TypeError, match="summary"):
        NoSummary()

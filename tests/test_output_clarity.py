"""What a first-time user reads: titles that say when nothing is localized, alpha-tilde named as a level,
one warning per low level, whole formulas, 78-character reports, HTML notes that survive a notebook's CSS,
and the command line's --na-action and ratio expressions (issue 37)."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.__main__ import main
from confrf._tables import WIDTH, two_column_table
from confrf.exceptions import LevelWarning
from confrf.results.diagnostics import LEVEL_LABEL


@pytest.fixture(scope="module")
def small():
    """150 rows: the localizer part would be below ceil(10/alpha), so the size rule skips the forest."""
    sim = cf.datasets.make_sim(150, random_state=0)
    return sim, cf.lcp_rf(sim.formula, data=sim.frame, random_state=0)


@pytest.fixture(scope="module")
def localized():
    sim = cf.datasets.make_sim(1200, random_state=0)
    return sim, cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, n_estimators=30, min_samples_leaf=20)


# -- item 4: no localization is said where the method is named -------------------------------------------
def test_titles_say_when_the_size_rule_skipped_localization(small):
    sim, res = small
    assert res.estimator.calibrator_.localizer.pooled
    said = "LCP-RF, no localization (size rule): split conformal's intervals"
    assert str(res).splitlines()[0] == f"{said}, alpha=0.1"
    assert str(res.summary()).splitlines()[0].strip() == said
    assert f"Held-out evaluation: {said}" in str(res.evaluate(sim.frame, n_directions=20))
    assert "forest weights" not in str(res) + str(res.summary())


def test_titles_say_when_one_leaf_holds_every_point():
    sim = cf.datasets.make_sim(600, random_state=1)
    res = cf.lcp_rf(sim.formula, data=sim.frame, random_state=0, min_samples_leaf=10_000)
    assert str(res).startswith("LCP-RF, no localization (one leaf): split conformal's intervals")


def test_plot_titles_say_no_localization(small):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim, res = small
    for ax in (res.plot.widths(sim.frame), res.plot.alpha_tilde(sim.frame)):
        assert ax.get_title().startswith("lcp-rf (no localization: split conformal's intervals)")
    plt.close("all")


def test_a_localized_fit_keeps_its_title(localized):
    _, res = localized
    assert not res.estimator.calibrator_.localizer.pooled
    assert str(res).startswith("LCP-RF (exact localized conformal, forest weights), alpha=0.1")
    assert "no localization" not in str(res).splitlines()[0]


# -- item 8: alpha-tilde is named and explained as a level, not a miscoverage -------------------------------
def test_alpha_tilde_is_named_a_level_and_explained(localized):
    sim, res = localized
    text = str(res.summary())
    row = next(line for line in text.splitlines() if line.startswith(LEVEL_LABEL))
    assert float(row.split()[-6]) > 0.5  # the median-ish quantiles sit near 1 - alpha, far from alpha
    assert "not a miscoverage like alpha = 0.1" in re.sub(r"\s+", " ", text)
    assert "alpha-tilde" in res.summary().frames["calibration"].index  # the tidy frame keeps its row name
    ev = str(res.evaluate(sim.frame.head(300), n_directions=20))
    assert any(line.startswith(LEVEL_LABEL) for line in ev.splitlines())
    assert "not a miscoverage" in re.sub(r"\s+", " ", ev)


# -- item 9: HTML notes carry their own styles -----------------------------------------------------------------
def test_html_notes_are_paragraphs_not_table_cells(localized):
    _, res = localized
    s = res.summary()
    html = s._repr_html_()
    notes = [line for t in s.tables for line in getattr(t, "confrf_lines", [])]
    assert notes
    for line in notes:
        escaped = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#x27;")
        escaped = escaped.replace('"', "&quot;")
        assert '<p style="text-align: left;' in html
        assert f">{escaped}</p>" in html, line  # the whole note in one left-aligned paragraph
    # no prose left in a table cell: every <td> holds a short value or a key
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells and max(len(c) for c in cells) < 40
    assert all('style="margin-left: 0;' in t for t in re.findall(r"<table[^>]*>", html))


# -- item 10: one warning for a low level, quoting what was given ----------------------------------------------
@pytest.mark.parametrize("kwargs, quoted", [({"level": 0.05}, "level=0.05"), ({"alpha": 0.9}, "alpha=0.9")])
def test_a_low_level_warns_once(small, kwargs, quoted):
    sim, res = small
    for call in (lambda: res.predict(sim.frame.head(), **kwargs), lambda: res.evaluate(sim.frame, **kwargs)):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            call()
        msgs = [str(w.message) for w in got if issubclass(w.category, LevelWarning)]
        assert len(msgs) == 1 and msgs[0].startswith(f"{quoted} gives"), msgs
    with warnings.catch_warnings(record=True) as got:  # two calls: two warnings (the scope ends with the call)
        warnings.simplefilter("always")
        res.predict(sim.frame.head(), **kwargs)
        res.predict(sim.frame.head(), **kwargs)
    assert sum(issubclass(w.category, LevelWarning) for w in got) == 2


# -- item 11: every line within the report's width --------------------------------------------------------------
def test_jackknife_ab_summary_keeps_to_the_width():
    sim = cf.datasets.make_sim(80, random_state=0)
    res = cf.conformal(sim.formula, data=sim.frame, method="jackknife+ab", random_state=0, n_bootstrap=10)
    lines = str(res.summary()).splitlines()
    assert max(len(line) for line in lines) == WIDTH
    assert "No. scored out of fold:" in "\n".join(lines)


def test_two_column_table_with_a_long_key_and_a_long_value_keeps_to_the_width():
    items = [("Method", "jackknife+ab"), ("Base model", "HistGradientBoostingRegressor"), ("Target coverage", 0.9)]
    items += [("Design columns", 11), ("No. scored out of fold", 200)]
    lines = str(two_column_table(items)).splitlines()
    assert {len(line) for line in lines} == {WIDTH}
    assert any(
        re.fullmatch(r"Base model: +HistGradientBoostingRegressor +No\. scored out of fold: +200", ln) for ln in lines
    )
    # too long for two pairs a row: one pair a row, still the width
    lines = str(two_column_table([("a", "x" * 40), ("b", 1), ("c" * 30, 2)])).splitlines()
    assert {len(line) for line in lines} == {WIDTH} and len(lines) == 5


# -- item 12: print shows the whole formula ---------------------------------------------------------------------
def test_print_shows_the_whole_formula_after_update():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(300, 12)), columns=[f"variable_{i}" for i in range(12)])
    df["y"] = df.sum(axis=1) + rng.normal(size=300)
    res = cf.split_cp("y ~ " + " + ".join(f"variable_{i}" for i in range(12)), data=df, random_state=0)
    new = res.update(". ~ . - variable_11")
    for r in (res, new):
        lines = str(r).splitlines()
        formula_lines = lines[1 : lines.index(next(x for x in lines if "data:" in x))]
        assert len(formula_lines) > 1  # wrapped, not cut
        assert " ".join(line.strip() for line in formula_lines) == r.formula
        assert max(len(line) for line in formula_lines) <= WIDTH
    assert "variable_11" in str(res) and "variable_11" not in str(new)


# -- item 6: the command line drops rows with --na-action drop and reads ratio expressions --------------------
@pytest.fixture
def na_csvs(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.uniform(20, 60, 400), "x": rng.normal(size=400)})
    df["y"] = df.x + rng.normal(size=400) * df.age / 30
    df.loc[[3, 7], "x"] = np.nan
    df.to_csv(tmp_path / "train.csv", index=False)
    df.drop(columns="y").head(20).fillna(0.0).to_csv(tmp_path / "new.csv", index=False)
    return tmp_path


def _fit(na_csvs, *extra):
    argv = ["fit", "y ~ x + age", "--data", str(na_csvs / "train.csv"), "--newdata", str(na_csvs / "new.csv")]
    return argv + ["--method", "split", "--random-state", "0", "--out", str(na_csvs / "pred.csv"), *extra]


def test_cli_na_action_drop(na_csvs, capsys):
    assert main(_fit(na_csvs)) == 2
    err = capsys.readouterr().err
    assert "--na-action drop" in err and "na_action='drop'" not in err  # the fix in the command line's words
    assert main(_fit(na_csvs, "--na-action", "drop", "--summary")) == 0
    assert "Rows dropped (NA):        2" in capsys.readouterr().err
    assert len(pd.read_csv(na_csvs / "pred.csv")) == 20


def test_cli_likelihood_ratio_expression(na_csvs, capsys):
    expr = "np.exp(0.02 * age)"
    assert main(_fit(na_csvs, "--na-action", "drop", "--likelihood-ratio", expr)) == 0
    got = pd.read_csv(na_csvs / "pred.csv")
    data = pd.read_csv(na_csvs / "train.csv")
    ref = cf.split_cp("y ~ x + age", data=data, na_action="drop", likelihood_ratio=expr, random_state=0)
    want = ref.predict(pd.read_csv(na_csvs / "new.csv"))
    np.testing.assert_allclose(got[["fit", "lwr", "upr"]].to_numpy(), want[["fit", "lwr", "upr"]].to_numpy())
    capsys.readouterr()
    assert main(_fit(na_csvs, "--na-action", "drop", "--likelihood-ratio", "np.exp(0.02 * agee)")) == 2
    err = capsys.readouterr().err
    assert "--data has no column 'agee'. Did you mean 'age'?" in err


# -- item 14: cf.compare's cells with spaces do not run into each other ------------------------------------------
def test_compare_guarantee_cells_stay_apart():
    sim = cf.datasets.make_sim(300, random_state=0)
    test = cf.datasets.make_sim(200, random_state=1)
    fits = [cf.split_cp(sim.formula, data=sim.frame, model="ols", random_state=0)]
    fits.append(cf.cv_plus(sim.formula, data=sim.frame, model="ols", cv=5, random_state=0))
    fits.append(cf.conformal(sim.formula, data=sim.frame, method="jackknife+ab", model="ols", random_state=0))
    text = str(cf.compare(*fits, test=test.frame, n_directions=20))
    row = next(line for line in text.splitlines() if line.startswith("Guarantee"))
    cells = re.split(r" {2,}", row.strip())
    assert cells == ["Guarantee", "marginal", "marginal (1 - 2 alpha - eps)", "marginal (1 - 2 alpha)"]

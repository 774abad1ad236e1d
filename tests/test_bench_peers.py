"""Smoke test of benchmarks/bench_peers.py at its --quick settings on one small data set.

The script is imported by path (benchmarks/ is not a package). The confrf part
needs no peer package (CI installs only ``.[test]``); the peer part is skipped
unless MAPIE and quantile-forest are installed.
"""

import json
import sys

import pytest
from benchscript import benchmark_script

pytest.importorskip("matplotlib")  # the script writes PNG plots


@pytest.fixture(scope="module")
def bench():
    with benchmark_script("bench_peers.py") as mod:
        yield mod


def run_quick(bench, out, methods, capsys, datasets=("toy",)):
    # quick settings (2 seeds) on toy only, fewer points and slab directions to stay fast
    argv = [
        "--quick",
        "--datasets",
        *datasets,
        "--n-sim",
        "500",
        "--wsc-directions",
        "50",
        "--load-probe",
        "0",
        "--out",
        str(out),
        "--methods",
        *methods,
    ]
    assert bench.main(argv) == 0
    printed = capsys.readouterr().out
    res = json.loads((out / "peers.json").read_text())
    return res, printed


def check_outputs(out, res):
    assert (out / "peers.md").stat().st_size > 0
    for name in ("coverage", "width", "oracle_error", "fidelity", "time"):
        assert (out / f"peers_{name}.png").stat().st_size > 0
    text = (out / "peers.md").read_text()
    assert "### toy" in text and "![peers_coverage](peers_coverage.png)" in text
    for row in res["rows"]:
        assert 0.0 <= row["coverage"] <= 1.0
        assert 0.0 <= row["worst_slab_coverage"] <= row["coverage"] + 1e-12  # the whole set is a slab
        assert row["share_infinite"] < 1.0 and row["mean_width"] > 0
        assert row["oracle_error"] is not None  # toy has exact oracles
    assert res["machine"]["numpy"] and "wall_seconds" in res["machine"]


def test_confrf_methods_only(bench, tmp_path, capsys):
    methods = ["split", "lcp-rf", "split-g"]
    res, _ = run_quick(bench, tmp_path, methods, capsys)
    check_outputs(tmp_path, res)
    assert res["args"]["seeds"] == 2 and res["args"]["docs"] is None  # --quick never writes the docs
    assert sorted((r["method"], r["seed"]) for r in res["rows"]) == sorted((m, s) for m in methods for s in (0, 1))
    info = res["splits"]["toy"]["0"]
    assert (info["n_train"], info["n_cal"], info["n_test"]) == (200, 200, 100)  # 40/40/20
    text = (tmp_path / "peers.md").read_text()
    for label in ("| SPLIT |", "| LCP-RF |", "| SPLIT-G |"):
        assert label in text
    # the issue-12 targets: LCP-RF against the other certified rows (SPLIT, SPLIT-G)
    assert "### Targets for LCP-RF" in text and "| toy |" in text and "of 3 |" in text


def test_missing_peer_is_skipped_with_a_note(bench, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "crepes", None)  # makes "import crepes" raise ImportError
    res, printed = run_quick(bench, tmp_path, ["split", "crepes-normalized"], capsys)
    assert "NOTE: crepes is not installed" in printed
    assert {r["method"] for r in res["rows"]} == {"split"}
    assert any("crepes" in n for n in res["notes"])
    check_outputs(tmp_path, res)


def test_missing_data_package_is_skipped_with_a_note(bench, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ISLP", None)  # the bike-sharing data come from ISLP
    res, printed = run_quick(bench, tmp_path, ["split"], capsys, datasets=("toy", "bikes"))
    assert "NOTE: data set 'bikes' needs ISLP" in printed
    assert {r["dataset"] for r in res["rows"]} == {"toy"}
    check_outputs(tmp_path, res)


def test_peers(bench, tmp_path, capsys):
    pytest.importorskip("mapie")
    pytest.importorskip("quantile_forest")
    res, _ = run_quick(bench, tmp_path, ["split", "mapie-split", "qrf", "qrf-normalized"], capsys)
    check_outputs(tmp_path, res)
    rows = {(r["method"], r["seed"]): r for r in res["rows"]}
    assert len(rows) == 8
    assert [rows[("qrf", s)]["certified"] for s in (0, 1)] == [False, False]
    assert all(rows[(m, s)]["certified"] for m in ("split", "mapie-split", "qrf-normalized") for s in (0, 1))
    assert "### Targets" not in (tmp_path / "peers.md").read_text()  # no LCP-RF row, no targets
    for seed in (0, 1):
        # same fitted model and the same conformal quantile: MAPIE's split intervals are SPLIT's
        for key in ("coverage", "mean_width"):
            assert rows[("mapie-split", seed)][key] == pytest.approx(rows[("split", seed)][key], rel=1e-9)
        assert rows[("qrf", seed)]["extra"]["min_samples_leaf"] == 15  # max(5, ceil(sqrt(200)))


def test_lcp_rf_fit_records_the_training_check(bench, tmp_path, capsys):
    # toy has no hole: the training rows look like the calibration rows, and the verdict is recorded per seed
    res, _ = run_quick(bench, tmp_path, ["split", "lcp-rf", "lcp-rf-fit"], capsys)
    check_outputs(tmp_path, res)
    fit = [r for r in res["rows"] if r["method"] == "lcp-rf-fit"]
    assert len(fit) == 2
    for r in fit:
        assert r["extra"]["training_check"] in ("passed", "rejected", "not run")
        assert r["extra"]["forest_source"] in ("calibration", "training", "pooled", "no localization")
        # passing means the forest was tuned on the training part alone, without comparing sources
        if r["extra"]["training_check"] == "passed":
            assert r["extra"]["forest_source"] in ("training", "no localization")
    assert all("training_check" not in r["extra"] for r in res["rows"] if r["method"] == "lcp-rf")
    text = (tmp_path / "peers.md").read_text()
    assert "### Issue 36's targets under the hole" in text
    counts = [c for c in "".join(fit_line(text)).split("|") if " / " in c]
    assert sum(int(x) for x in counts[0].split(" / ")) == 2  # passed / rejected / not run over the 2 seeds
    # --report renders the same page from the stored JSON without running anything
    (tmp_path / "peers.md").unlink()
    assert bench.main(["--report", "--out", str(tmp_path), "--no-docs"]) == 0
    assert (tmp_path / "peers.md").read_text() == text


def fit_line(text):
    return [ln for ln in text.splitlines() if ln.startswith("| toy | LCP-RF (fit on the training rows) |")]


def test_training_verdict_reads_the_check(bench):
    # the verdict against the calibrator's own reasons: a training part like the calibration rows passes the
    # check; one with a hole (its large responses removed, the model never saw them) is rejected
    import numpy as np
    from peerbench.methods import training_verdict

    import confrf as cf

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1600, 3))
    y = X[:, 0] + rng.normal(scale=0.5 + np.abs(X[:, 1]), size=1600)
    X_tr, y_tr, X_cal, y_cal = X[:800], y[:800], X[800:], y[800:]
    hole = y_tr < np.quantile(y_tr, 0.7)
    seen = {}
    for name, keep in (("whole", slice(None)), ("hole", hole)):
        est = cf.ConformalRegressor(method="lcp-rf", alpha=0.1, random_state=0, n_jobs=1)
        est.fit(X_tr[keep], y_tr[keep]).conformalize(X_cal, y_cal)
        check, source = training_verdict(est.calibrator_)
        choice = est.calibrator_.localizer.source_choice_
        assert (check == "passed") == ("look like the training part" in choice.reason)
        loc, where = est.calibrator_.localizer, est.calibrator_.localizer_source_
        # normalized: the forest grew on the training part and gives sigma(x) only (uniform weights)
        expected = f"normalized ({where})" if loc.normalized else "no localization" if loc.pooled else where
        assert source == expected
        seen[name] = check
    assert seen == {"whole": "passed", "hole": "rejected"}
    prefit = cf.ConformalRegressor(method="lcp-rf", alpha=0.1, random_state=0, n_jobs=1)
    prefit.fit(X_tr, y_tr)
    prefit2 = cf.ConformalRegressor(model=prefit.model_, prefit=True, method="lcp-rf", alpha=0.1, random_state=0)
    assert training_verdict(prefit2.conformalize(X_cal, y_cal).calibrator_) is None  # no training rows


def test_hole_targets_rank_and_coverage(bench):
    from peerbench.hole_targets import hole_targets
    from peerbench.report import summarize

    def row(name, seed, method, cov, fid, check=None):
        extra = {} if check is None else {"training_check": check, "forest_source": "training"}
        return {
            "dataset": name,
            "seed": seed,
            "method": method,
            "certified": True,
            "extra": extra,
            **dict.fromkeys(
                [
                    "worst_slab_coverage",
                    "mean_width",
                    "median_width",
                    "width_cv",
                    "share_infinite",
                    "calib_seconds",
                    "predict_seconds",
                ],
                0.0,
            ),
            "oracle_error": None,
            "coverage": cov,
            "fidelity_error": fid,
        }

    rows = []
    for seed, jitter in ((0, -0.01), (1, 0.01)):
        for name in ("a", "b", "c"):
            rows.append(row(name, seed, "split", 0.9, 2.0))
            rows.append(row(name, seed, "lcp-rf", 0.885 + jitter, 1.0))  # below 0.9, within 3 s.e.
            # the fitted row loses on c (err^ 3 > SPLIT's 2) and under-covers on b (0.85 < 0.9 - 3 * 0.01)
            rows.append(
                row(
                    name,
                    seed,
                    "lcp-rf-fit",
                    (0.85 if name == "b" else 0.9) + jitter,
                    3.0 if name == "c" else 1.0,
                    "passed" if seed == 0 else "rejected",
                )
            )
    res = {
        "args": {"datasets": ["a", "b", "c"], "alpha": 0.1, "no_hole": False, "seeds": 2},
        "methods": ["split", "lcp-rf", "lcp-rf-fit"],
        "rows": rows,
    }
    text = "\n".join(hole_targets(res, summarize(res)))
    assert "| b | LCP-RF | 1.000 | 2.000 (SPLIT) | 1 of 2 | 0.885 (0.010) | 0.870 |" in text
    assert (
        "| b | LCP-RF (fit on the training rows) | 1.000 | 2.000 (SPLIT) | 1 of 2 | 0.850 (0.010) | 0.870 ✗ |" in text
    )
    assert "| c | LCP-RF (fit on the training rows) | 3.000 | 2.000 (SPLIT) | 2 of 2 ✗ |" in text
    assert "1 / 1 / 0 | training 2 |" in text
    # each miss with its seeds: the value, the best competitor's and the training check's verdict
    assert (
        "- miss: LCP-RF (fit on the training rows) on c: err^ 3.000 vs 2.000 (SPLIT); per seed "
        "0: 3.000 vs 2.000 (passed, training), 1: 3.000 vs 2.000 (rejected, training)"
    ) in text
    assert "- miss: LCP-RF (fit on the training rows) on b: coverage 0.850 < 0.870; per seed 0: 0.840 (passed" in text
    assert (
        "**LCP-RF**: fidelity rank 1 on 3 of 3 data sets (target >= 2), "
        "coverage at or above 0.9 − 3 s.e. on 3 of 3 — **met**" in text
    )
    assert "rank 1 on 2 of 3 data sets (target >= 2), coverage at or above 0.9 − 3 s.e. on 2 of 3 — **not met**" in text


def test_merge_joins_runs_of_other_data_sets(bench, tmp_path, capsys):
    res_toy, _ = run_quick(bench, tmp_path / "a", ["split"], capsys)
    res_sim, _ = run_quick(bench, tmp_path / "b", ["split"], capsys, datasets=("sim",))
    out = tmp_path / "joined"
    argv = ["--merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--no-docs"]  # toy, sim
    assert bench.main(argv) == 0
    res = json.loads((out / "peers.json").read_text())
    assert res["datasets"] == ["sim", "toy"]  # the benchmark's order, whatever the order of the runs
    assert len(res["rows"]) == len(res_toy["rows"]) + len(res_sim["rows"]) == 4
    assert res["rows"][0]["dataset"] == "sim" and res["rows"][-1] == res_toy["rows"][-1]
    assert set(res["splits"]) == {"sim", "toy"} and "joined with --merge" in res["command"]
    text = (out / "peers.md").read_text()
    assert "### sim" in text and "### toy" in text
    with pytest.raises(ValueError, match="several runs"):
        bench.merge_runs([res_toy, res_toy])
    other = json.loads(json.dumps(res_sim))
    other["args"]["alpha"] = 0.2
    with pytest.raises(ValueError, match="alpha"):
        bench.merge_runs([res_toy, other])

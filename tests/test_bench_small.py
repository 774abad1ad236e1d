"""Smoke test of benchmarks/bench_small.py: two splits of sim-300 with OLS, the report and its targets.

MAPIE's rows run only when MAPIE is installed (the ``bench`` extra); the real
data sets need ISLP and are not used here.
"""

import importlib.util
import json

import pytest
from benchscript import benchmark_script


@pytest.mark.long  # 300 leave-one-out fits per implementation
def test_two_splits_of_sim_300(tmp_path, capsys):
    with benchmark_script("bench_small.py") as bench:
        argv = ["--datasets", "sim-300", "--models", "ols", "--splits", "2", "--n-bootstrap", "10"]
        assert bench.main([*argv, "--out", str(tmp_path), "--docs", ""]) == 0
    capsys.readouterr()
    res = json.loads((tmp_path / "bench_small.json").read_text())
    methods = {r["method"] for r in res["rows"]}
    assert {"split", "lcp-rf", "cv+", "jackknife+", "jackknife+ab"} <= methods
    if importlib.util.find_spec("mapie") is not None:
        assert {"mapie-cv+", "mapie-jackknife+", "mapie-jackknife+ab"} <= methods
        by = {(r["method"], r["split"]): r for r in res["rows"]}
        for s in (0, 1):  # the same folds and base model: the same estimator
            assert abs(by["cv+", s]["mean_width"] / by["mapie-cv+", s]["mean_width"] - 1) < 1e-9
            assert abs(by["jackknife+", s]["mean_width"] / by["mapie-jackknife+", s]["mean_width"] - 1) < 1e-9
    for r in res["rows"]:
        assert 0.5 < r["coverage"] <= 1.0 and r["mean_width"] > 0 and r["fit_s"] >= 0
        if r["method"] == "lcp-rf":  # what the localizer did, kept for the report
            assert isinstance(r["pooled"], bool) and isinstance(r["normalized"], bool)
    text = (tmp_path / "bench_small.md").read_text()
    assert "### sim-300" in text and "### Targets" in text and "LCP-RF" in text
    assert "| normalized |" in text

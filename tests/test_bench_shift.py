"""Smoke test of benchmarks/bench_shift.py: one seed of a small problem per mode, and the report from its rows.

The script is imported by path (benchmarks/ is not a package). It needs MAPIE (its unweighted
peer row); conditionalconformal is skipped (``--cc-seeds 0``).
"""

import json

import pandas as pd
import pytest
from benchscript import benchmark_script

pytest.importorskip("mapie")


@pytest.mark.long  # a benchmark smoke run: several forests
def test_bench_shift_both_modes_and_report_only(tmp_path, capsys):
    with benchmark_script("bench_shift.py") as bench:
        common = ["--seeds", "2", "--n-source", "800", "--n-target", "200", "--cc-seeds", "0"]
        csv = tmp_path / "shift.csv"
        assert (
            bench.main([*common, "--settings", "sim+", "star-", "--out", str(tmp_path / "a.md"), "--csv", str(csv)])
            == 0
        )
        rows = pd.read_csv(csv)
        assert set(rows["method"]) == {"split", "lcp-rf", "mapie", "w-split", "w-lcp-rf", "w-split-est", "w-lcp-rf-est"}
        assert rows["coverage"].between(0, 1).all() and (rows["interval_score"] >= rows["mean_width"]).all()
        text = (tmp_path / "a.md").read_text()
        assert "### sim: x1 ~ density ∝ exp(+3 x1)" in text and "Oracle check" in text and "### Targets" in text
        assert json.loads((tmp_path / "shift.csv.meta.json").read_text())["seconds"] > 0
        # the tables again from the rows alone
        assert bench.main(["--report-only", str(csv), "--out", str(tmp_path / "b.md")]) == 0
        assert (tmp_path / "b.md").read_text() == text
        levers = tmp_path / "levers.csv"
        assert (
            bench.main(
                [*common, "--levers", "--settings", "toy-", "--csv", str(levers), "--out", str(tmp_path / "l.md")]
            )
            == 0
        )
        assert set(pd.read_csv(levers)["method"]) == {"w-split", "cal-0.5", "target-0.5", "cal-0.3", "target-0.3"}
        assert "tuned for target" in (tmp_path / "l.md").read_text()
    capsys.readouterr()

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

"""benchmarks/bench_slab_at_coverage.py: the interpolation against its definition, and a smoke run on toy."""

import numpy as np
import pytest
from benchscript import benchmark_script


@pytest.fixture(scope="module")
def bench():
    with benchmark_script("bench_slab_at_coverage.py") as mod:
        yield mod


def _slow_at_coverage(curve, cov):
    # the definition: the segment between the two nearest points on either side, clamped at the ends
    pts = sorted(curve)
    if cov <= pts[0][0]:
        return pts[0][1], cov == pts[0][0]
    if cov >= pts[-1][0]:
        return pts[-1][1], cov == pts[-1][0]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= cov <= x1:
            return y0 + (y1 - y0) * (cov - x0) / (x1 - x0), True


def test_at_coverage_is_linear_interpolation_clamped(bench):
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        xs = np.sort(rng.choice(np.linspace(0.85, 0.97, 121), size=k, replace=False))
        curve = list(zip(rng.permutation(xs), rng.uniform(0.6, 0.9, size=k)))
        cov = float(rng.uniform(0.83, 0.99))
        got, inside = bench.at_coverage(curve, cov)
        want, want_inside = _slow_at_coverage(curve, cov)
        assert got == pytest.approx(want, abs=1e-12)
        assert inside == (xs[0] <= cov <= xs[-1]) and (not inside or want_inside)


def test_smoke_toy(bench, tmp_path, capsys):
    # 2,200 points: QRF-TC's paper form needs about 800 calibration points
    argv = [
        "--datasets",
        "toy",
        "--seeds",
        "2",
        "--alphas",
        "0.1",
        "0.065",
        "--n-sim",
        "2200",
        "--wsc-directions",
        "50",
        "--out",
        str(tmp_path),
    ]
    assert bench.main(argv) == 0
    text = (tmp_path / "slab_at_coverage.md").read_text()
    assert text in capsys.readouterr().out
    for label in (
        "| toy | LCP-RF, alpha = 0.1 |",
        "| toy | LCP-RF, alpha = 0.065 |",
        "| toy | QRF-TC (alpha = 0.1) |",
        "| toy | QRF-TC (paper form) (alpha = 0.1) |",
    ):
        assert label in text
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| toy | QRF-TC")]
    for r in rows:
        cov, wsc = float(r[3]), float(r[4])
        assert 0.0 <= wsc <= cov <= 1.0 and 0.0 <= float(r[7]) < 1.0
        # the interpolated worst-slab coverage is the PAC method's plus the mean paired difference
        assert float(r[5].split()[0]) == pytest.approx(wsc + float(r[6].split()[0]), abs=2e-3)

import os
import sys

import numpy as np
import pytest

# the slow references in tests/reference.py are imported by name
sys.path.insert(0, os.path.dirname(__file__))


def pytest_addoption(parser):
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="also run the long (expensive) tests: Monte Carlo, notebooks, docs build",
    )
    parser.addoption("--mc-reps", type=int, default=None, help="repetitions of the Monte Carlo tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long (expensive) test: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _single_openmp_thread():
    # OpenMP busy-waiting makes HistGradientBoosting 50x slower when the 2 cores are shared. confrf's
    # own calls follow n_jobs (default: one thread); this also covers models the tests fit directly
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.fixture
def mc_reps(request):
    return request.config.getoption("--mc-reps")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_report_header(config):
    import confrf
    from confrf._kernels import _forest

    return f"confrf {confrf.__version__} from {confrf.__file__} (kernel: {_forest.__file__})"

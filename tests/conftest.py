import os
import sys

import numpy as np
import pytest

# the slow references in tests/reference.py are imported by name
sys.path.insert(0, os.path.dirname(__file__))


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False, help="also run the long Monte Carlo tests")
    parser.addoption("--mc-reps", type=int, default=None, help="repetitions of the Monte Carlo tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long Monte Carlo test: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def mc_reps(request):
    return request.config.getoption("--mc-reps")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)

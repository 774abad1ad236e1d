import importlib.util
import os
import sys
from pathlib import Path

# Idle OpenMP threads sleep instead of spinning, in this process and in every process it starts (the documentation
# build, its Jupyter kernels, the vignettes' kernels, the CLI): on the 2 cores busy with other jobs (load about 6), a
# spinning pool of 2 threads made the docs' n_jobs=2 fit of 5,000 diamonds take 80 s of CPU instead of 14 s.
# Results are the same (only how idle threads wait changes). Read once, when the OpenMP runtime loads: before
# anything below imports scikit-learn or confrf. A value already set (e.g. OMP_WAIT_POLICY=active) is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

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


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: only a build that will run counts
def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        _pages_left_to_the_build(items)
        config._confrf_notebooks = _notebooks_wanted(items)
        return
    skip = pytest.mark.skip(reason="long (expensive) test: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


def _notebooks_wanted(items) -> set[str]:
    """The vignettes (file names) this session runs: all of them for the documentation build, else those of the
    selected ``test_vignette_executes``. The first run then executes them all, ``VignetteRuns.KERNELS`` at a time."""
    if any(item.name == "test_docs_build_without_warnings" for item in items):
        return {p.name for p in (Path(__file__).resolve().parent.parent / "vignettes").glob("*.ipynb")}
    return {item.callspec.params["path"].name for item in items if item.originalname == "test_vignette_executes"}


def _pages_left_to_the_build(items):
    """With the documentation build selected, a page it executes (code cells only) is not also run by
    ``test_page_code_runs``: the build fails on any cell's error, a failed assert of a hidden cell included."""
    if not any(item.name == "test_docs_build_without_warnings" for item in items):
        return
    from test_docs import code_blocks

    for item in items:
        if item.originalname != "test_page_code_runs":
            continue
        path = item.callspec.params["path"]
        runs = [b for b in code_blocks(path) if b["run"]]
        if runs and all(b["kind"] == "code-cell" for b in runs):
            item.add_marker(pytest.mark.skip(reason="executed by the documentation build in this session"))


@pytest.fixture(scope="session", autouse=True)
def _single_openmp_thread():
    # OpenMP busy-waiting makes HistGradientBoosting 50x slower when the 2 cores are shared. confrf's
    # own calls follow n_jobs (default: one thread); this also covers models the tests fit directly
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


class VignetteRuns:
    """Every vignette executed at most once per test session, at the test sizes of
    ``vignettes/run_all.py``, in a real Jupyter kernel with one OpenMP thread.

    ``tests/test_vignettes.py`` checks each run, and the documentation build
    (``tests/test_docs.py``) shows the executed copies instead of executing the notebooks again.
    A failed run is kept and raised again to every test that asks for it.
    """

    #: one OpenMP thread in the kernel, as in this session: busy-waiting OpenMP threads make
    #: HistGradientBoosting many times slower on shared cores
    KERNEL_ENV = {"OMP_NUM_THREADS": "1"}

    def __init__(self, base: Path, wanted=()):
        root = Path(__file__).resolve().parent.parent
        self._wanted = sorted(root / "vignettes" / name for name in wanted)
        spec = importlib.util.spec_from_file_location("confrf_vignette_runner", root / "vignettes" / "run_all.py")
        self.runner = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.runner)
        self.folder = base / "executed"  # the executed copies, under the notebooks' own names
        self.folder.mkdir()
        self._base = base
        self._runs: dict = {}

    def run(self, path: Path) -> dict:
        """The run of the notebook at ``path``: ``nb`` (executed), ``confrf_file`` (the kernel's
        ``confrf.__file__``), ``left`` (what it left in its working directory), ``file`` (the
        executed copy)."""
        if path.name not in self._runs:
            # with the other notebooks this session will ask for, KERNELS at a time
            self._execute_all([path, *(p for p in self._wanted if p.name != path.name)])
        run = self._runs[path.name]
        if isinstance(run, Exception):
            raise run
        return run

    def _execute(self, path: Path) -> None:
        import nbformat

        cwd = self._base / f"cwd-{path.stem}"
        cwd.mkdir()
        sizes = {**self.KERNEL_ENV, **self.runner.TEST_SIZES[path.stem]}
        try:
            nb, confrf_file = self.runner.execute(path, sizes, cwd=cwd, timeout=600)
        except Exception as exc:  # kept, and raised to every test that asks for this run
            self._runs[path.name] = exc
        else:
            nbformat.write(nb, self.folder / path.name)
            left = sorted(p.name for p in cwd.iterdir())
            self._runs[path.name] = {
                "nb": nb,
                "confrf_file": confrf_file,
                "left": left,
                "file": self.folder / path.name,
            }

    #: notebooks executed at once (each in its own kernel with one OpenMP thread): the notebooks' xdist worker
    #: spreads them over both cores, as the documentation build's ``-j 2`` does with the pages
    KERNELS = 2

    def _execute_all(self, paths) -> None:
        from concurrent.futures import ThreadPoolExecutor

        todo = [path for path in paths if path.name not in self._runs]
        with ThreadPoolExecutor(max_workers=self.KERNELS) as pool:
            list(pool.map(self._execute, todo))  # _execute keeps a failure for run() to raise

    def all(self, paths) -> Path:
        """Run every notebook in ``paths`` (``KERNELS`` at a time); the folder of the executed copies."""
        self._execute_all(paths)
        for path in paths:
            self.run(path)
        return self.folder


@pytest.fixture(scope="session")
def vignette_runs(tmp_path_factory, pytestconfig):
    return VignetteRuns(tmp_path_factory.mktemp("vignettes"), getattr(pytestconfig, "_confrf_notebooks", ()))


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

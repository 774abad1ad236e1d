"""The built distributions: what the wheel and the sdist hold, and their metadata.

Where the sdist and the wheel under test come from, in this order:

* ``CONFRF_DIST_DIR``: ``.ci/run`` builds them with ``python -m build`` (the sdist from a fresh
  clone, then the wheel from that sdist, so the sdist is shown to build a working wheel) and
  exports the folder before it runs the suite;
* with ``--long``, this module builds them the same way, once per session, from a copy of the
  files git knows (about a minute: build isolation fetches setuptools, Cython and numpy);
* otherwise the tests are skipped, saying how to run them. Under CI (``CI`` set), a missing
  ``CONFRF_DIST_DIR`` is a failure, never a skip.

The installed wheel itself runs ``confrf demo`` and ``.ci/smoke.py`` in a fresh venv outside the
clone; that is ``.ci/run``'s job.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

# the sdist and the wheel are built once per session for all these tests: one pytest-xdist worker (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("distributions")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "confrf"
KERNELS = ("_forest", "_quantile", "_pvalue")
#: written by Cython or the compiler at build time, never shipped as sources
BUILD_PRODUCTS = (".so", ".pyd", ".c", ".html", ".pyc")
#: what setuptools adds to an sdist besides the files MANIFEST.in takes
SDIST_GENERATED = re.compile(r"^(PKG-INFO|setup\.cfg|confrf\.egg-info/.+)$")


def _source_version() -> str:
    text = (PACKAGE / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE).group(1)


def _git_files() -> list[str] | None:
    """Tracked and untracked-but-not-ignored files of the checkout (None outside a git checkout)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    proc = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return sorted(f for f in proc.stdout.decode().split("\0") if f and (ROOT / f).is_file())


def _build(out: Path, tmp: Path) -> None:
    """``python -m build`` (sdist, then the wheel from the sdist) from a copy holding only git's files."""
    files = _git_files()
    src = ROOT
    if files is not None:  # a clean tree, as a fresh clone: no in-place kernels, caches or stray files
        src = tmp / "src"
        for f in files:
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, f"python -m build failed (pip install build?):\n{proc.stdout[-3000:]}\n{proc.stderr}"


@pytest.fixture(scope="session")
def dists(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = os.environ.get("CONFRF_DIST_DIR")
    if where:
        folder = Path(where)
    elif os.environ.get("CI"):
        pytest.fail("CI is set but CONFRF_DIST_DIR is not: .ci/run exports it after building the distributions")
    elif request.config.getoption("--long"):
        folder = tmp_path_factory.mktemp("dist")
        _build(folder, tmp_path_factory.mktemp("build"))
    else:
        pytest.skip("distribution checks: set CONFRF_DIST_DIR to a folder from `python -m build`, or run with --long")
    sdists, wheels = sorted(folder.glob("confrf-*.tar.gz")), sorted(folder.glob("confrf-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, f"expected one sdist and one wheel in {folder}: {sdists + wheels}"
    return sdists[0], wheels[0]


@pytest.fixture(scope="session")
def wheel_names(dists: tuple[Path, Path]) -> set[str]:
    with zipfile.ZipFile(dists[1]) as zf:
        return {n for n in zf.namelist() if not n.endswith("/")}


@pytest.fixture(scope="session")
def sdist_names(dists: tuple[Path, Path]) -> set[str]:
    with tarfile.open(dists[0]) as tf:
        names = [m.name for m in tf.getmembers() if m.isfile()]
    top = {n.split("/", 1)[0] for n in names}
    assert top == {f"confrf-{_source_version()}"}, top
    return {n.split("/", 1)[1] for n in names}


def _dist_info(names: set[str]) -> str:
    (info,) = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    return info


def _metadata(text: str) -> email.message.Message:
    return email.parser.HeaderParser().parsestr(text)


def _source_files() -> list[str]:
    """Every file of the source package (relative to the repository root), build products left out."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in BUILD_PRODUCTS
    )


def test_wheel_holds_the_compiled_kernels_and_their_sources(wheel_names):
    for kernel in KERNELS:
        compiled = [n for n in wheel_names if re.fullmatch(rf"confrf/_kernels/{kernel}\.[^/]*(so|pyd)", n)]
        assert len(compiled) == 1, f"compiled kernel {kernel} missing from the wheel: {sorted(wheel_names)}"
        assert f"confrf/_kernels/{kernel}.pyx" in wheel_names
        assert f"confrf/_kernels/{kernel}.pyi" in wheel_names  # its typed signatures, read by type checkers
    assert "confrf/_kernels/_gather.pxd" in wheel_names  # the gather both kernels cimport


def test_wheel_holds_the_data_their_readme_and_licenses(wheel_names):
    data = sorted(p.name for p in (PACKAGE / "datasets" / "data").glob("*.csv.gz"))
    assert len(data) == 3, data
    for name in data:
        assert f"confrf/datasets/data/{name}" in wheel_names
    assert "confrf/datasets/README.md" in wheel_names
    texts = sorted(p.name for p in (PACKAGE / "datasets" / "licenses").glob("*.txt"))
    assert {"california_housing.txt", "diamonds.txt", "star.txt", "GPL-3.0.txt"} <= set(texts), texts
    info = _dist_info(wheel_names)
    assert f"{info}/licenses/LICENSE" in wheel_names
    for name in texts:  # beside the data (importlib.resources) and in the metadata's license folder
        assert f"confrf/datasets/licenses/{name}" in wheel_names
        assert f"{info}/licenses/confrf/datasets/licenses/{name}" in wheel_names


def test_wheel_holds_every_source_file_and_nothing_else(wheel_names):
    info = _dist_info(wheel_names)
    missing = sorted(set(_source_files()) - wheel_names)
    assert not missing, f"in confrf/ but not in the wheel (package-data in pyproject.toml?): {missing}"
    compiled = {n for n in wheel_names if n.startswith("confrf/_kernels/") and n.endswith((".so", ".pyd"))}
    stray = sorted(n for n in wheel_names - set(_source_files()) - compiled if not n.startswith(f"{info}/"))
    assert not stray, f"files in the wheel that are not confrf's sources or kernels: {stray}"
    assert "confrf/py.typed" in wheel_names


def test_wheel_metadata(dists, wheel_names):
    info = _dist_info(wheel_names)
    with zipfile.ZipFile(dists[1]) as zf:
        meta = _metadata(zf.read(f"{info}/METADATA").decode())
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
    assert meta["Name"] == "confrf"
    assert meta["Version"] == _source_version() == info.removesuffix(".dist-info").split("-")[1]
    assert meta["License-Expression"] == "BSD-3-Clause AND MIT AND GPL-3.0-only"
    assert not [c for c in meta.get_all("Classifier") if c.startswith("License ::")]  # PEP 639: the expression only
    files = set(meta.get_all("License-File"))
    assert {"LICENSE", "confrf/datasets/licenses/star.txt", "confrf/datasets/licenses/GPL-3.0.txt"} <= files, files
    assert meta["Requires-Python"] == ">=3.10"
    required = {
        re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in meta.get_all("Requires-Dist") if "extra ==" not in r
    }
    assert {"numpy", "scipy", "pandas", "formulaic", "statsmodels", "scikit-learn"} <= required, required
    assert re.search(r"^confrf = confrf\.__main__:main$", entry_points, flags=re.MULTILINE), entry_points


def test_sdist_holds_the_sources_tests_and_documents(sdist_names):
    for name in (
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "MANIFEST.in",
        "pyproject.toml",
        "setup.py",
        "confrf/_version.py",
        "confrf/datasets/README.md",
        "confrf/datasets/licenses/GPL-3.0.txt",
        "tests/conftest.py",
        "tests/reference.py",
        "tests/test_distribution.py",
        ".ci/run",
        ".ci/requirements-tools.txt",
        "docs/conf.py",
    ):
        assert name in sdist_names, f"{name} missing from the sdist"
    for kernel in KERNELS:
        assert f"confrf/_kernels/{kernel}.pyx" in sdist_names
        assert f"confrf/_kernels/{kernel}.pyi" in sdist_names
    assert "confrf/_kernels/_gather.pxd" in sdist_names  # a build from the sdist cimports it
    for data in (PACKAGE / "datasets" / "data").glob("*.csv.gz"):
        assert f"confrf/datasets/data/{data.name}" in sdist_names
    built = sorted(n for n in sdist_names if n.endswith(BUILD_PRODUCTS) or "__pycache__" in n)
    assert not built, f"build products in the sdist: {built}"


def test_sdist_is_exactly_the_files_git_knows(sdist_names):
    # check-manifest's rule: the sdist holds every file of the repository and nothing else but metadata
    files = _git_files()
    if files is None:
        pytest.skip("not a git checkout: nothing to compare the sdist with")
    extra = sorted(n for n in sdist_names - set(files) if not SDIST_GENERATED.match(n))
    missing = sorted(set(files) - sdist_names)
    assert not missing, f"files of the repository missing from the sdist (MANIFEST.in): {missing}"
    assert not extra, f"files in the sdist that git does not know: {extra}"


def test_sdist_metadata(dists):
    version = _source_version()
    with tarfile.open(dists[0]) as tf:
        meta = _metadata(tf.extractfile(f"confrf-{version}/PKG-INFO").read().decode())
    assert meta["Version"] == version
    assert meta["License-Expression"] == "BSD-3-Clause AND MIT AND GPL-3.0-only"
    assert "LICENSE" in meta.get_all("License-File")

"""confrf.show_versions(), the kernels' build details, and the one source of the version."""

from __future__ import annotations

import doctest
import importlib.metadata
import platform
import re
import sys
from pathlib import Path

import pytest

import confrf
from confrf import _show_versions
from confrf._kernels import _forest

ROOT = Path(__file__).resolve().parents[1]


def _shown(capsys: pytest.CaptureFixture[str]) -> str:
    confrf.show_versions()
    return capsys.readouterr().out


def _value(text: str, key: str) -> str:
    """The value printed after ``key:`` (the first such line)."""
    match = re.search(rf"^\s+{re.escape(key)}: (.*)$", text, flags=re.MULTILINE)
    assert match, f"no line {key!r} in:\n{text}"
    return match.group(1)


def _section(text: str, title: str) -> str:
    """The lines of the section headed ``title:``, up to the next blank line."""
    text = "\n" + text
    start = text.index(f"\n{title}:\n") + len(title) + 3
    end = text.find("\n\n", start)
    return text[start : None if end < 0 else end]


def test_show_versions_is_public():
    assert "show_versions" in confrf.__all__
    assert confrf.show_versions is _show_versions.show_versions


def test_show_versions_names_confrf_python_and_the_installed_versions(capsys):
    text = _shown(capsys)
    about, system = _section(text, "confrf"), _section(text, "System")
    assert _value(about, "version") == confrf.__version__
    assert _value(about, "path") == str(Path(confrf.__file__).resolve().parent)
    assert _value(system, "python").startswith(platform.python_version())
    assert _value(system, "executable") == sys.executable
    required, optional = _section(text, "Python dependencies"), _section(text, "Optional dependencies")
    for name in _show_versions.REQUIRED:
        assert _value(required, name) == importlib.metadata.version(name), name
    for name in _show_versions.OPTIONAL:
        try:
            expected = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            expected = "not installed"
        assert _value(optional, name).split()[0] == expected, name


def test_show_versions_reports_the_kernels_build_and_the_threads(capsys):
    text = _shown(capsys)
    info = _forest.build_info()
    kernels = _section(text, "Compiled kernels")
    assert _value(kernels, "path") == str(Path(_forest.__file__).resolve().parent)
    assert _value(kernels, "OpenMP") == (
        f"on (_OPENMP {info['openmp_version']})" if info["openmp"] else "off: the kernels run on one thread"
    )
    assert _value(kernels, "Cython used") == info["cython"]
    assert _value(kernels, "C compiler") == str(info["compiler"])
    # confrf's own default: one thread for every pool
    assert _value(_section(text, "Threads"), "n_jobs default") == "None (1 thread for joblib, OpenMP and BLAS)"
    pools = text[text.index("Thread pools (threadpoolctl):") :]
    apis = set(re.findall(r"user_api: (\w+)", pools))
    assert "blas" in apis  # numpy's BLAS is always loaded
    if info["openmp"]:
        assert "openmp" in apis  # the kernels' own OpenMP runtime


def test_build_info_reads_the_kernels_compilation():
    info = _forest.build_info()
    assert set(info) == {"openmp", "openmp_version", "openmp_max_threads", "compiler", "cython"}
    # setup.py compiles the kernels with -fopenmp everywhere but macOS
    assert info["openmp"] is (sys.platform != "darwin")
    if info["openmp"]:
        assert isinstance(info["openmp_version"], int) and info["openmp_version"] >= 200505  # OpenMP 2.5 or later
    else:
        assert info["openmp_version"] is None
    assert isinstance(info["openmp_max_threads"], int) and info["openmp_max_threads"] >= 1
    assert re.fullmatch(r"3\.\d+\.\d+", info["cython"]), info["cython"]  # pyproject asks Cython >= 3
    if sys.platform.startswith("linux"):
        assert info["compiler"], info


def test_required_list_is_pyprojects_dependencies():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in deps]
    assert list(_show_versions.REQUIRED) == names


def test_version_has_one_source():
    text = (ROOT / "confrf" / "_version.py").read_text()
    assert re.findall(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE) == [confrf.__version__]
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "confrf._version.__version__"}
    # an installed confrf's metadata carries the same version (a source tree has none, or an older install's)
    try:
        installed = importlib.metadata.version("confrf")
    except importlib.metadata.PackageNotFoundError:
        return
    if Path(confrf.__file__).resolve().parent.parent != ROOT:
        assert installed == confrf.__version__


def test_show_versions_docstring_example():
    result = doctest.testmod(_show_versions, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0

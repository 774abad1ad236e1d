"""The documentation: it builds without a warning, executing its pages and notebooks in a kernel
that imports the same confrf as the tests; it lists the public API; and every code block of
README.md and of every page under docs/ runs.

Code blocks. A page written as a MyST-NB text notebook (front matter ``file_format: mystnb``) has
code cells (```` ```{code-cell} ipython3 ````), which the documentation build executes; any page
may also have plain ```` ```python ```` fences. Both are run here, in the order of the page, in
one fresh namespace per page, in a temporary working directory. A cell tagged
``raises-exception`` must raise (it shows an error message); the value of a block's last
expression is rendered as Jupyter would (``_repr_html_``, else ``repr``). Fences in another
language (``bash``, ``text``, ...) are not Python and are not run; a Python illustration that
is not meant to run is a ```` ```{code-block} python ```` with a ``:caption:`` that says why.
What a page says its code shows is asserted on the page itself, in code cells hidden from the
reader (tag ``remove-cell``, asserts only): the build and these tests both fail if it stops being true.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import confrf

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: what the build needs (the "docs" extra, also in the "test" extra)
DOC_PACKAGES = ("sphinx", "myst_nb", "numpydoc", "furo")


VIGNETTES = sorted((ROOT / "vignettes").glob("*.ipynb"))


@pytest.mark.long  # a full Sphinx build, executing every page (the vignettes' runs are shared)
# the build reads the notebooks that tests/test_vignettes.py executes (one session fixture): one xdist worker
@pytest.mark.xdist_group("notebooks")
def test_docs_build_without_warnings(tmp_path, vignette_runs):
    missing = [p for p in DOC_PACKAGES if importlib.util.find_spec(p) is None]
    assert not missing, f"the docs build needs {missing}: pip install '.[docs]'"
    # the notebooks run once per session (tests/test_vignettes.py checks the same runs): the build
    # shows those executed copies and executes only the pages
    env = {**os.environ, "CONFRF_DOCS_VIGNETTES": str(vignette_runs.all(VIGNETTES)), "OMP_NUM_THREADS": "1"}
    # the README's command, run from the repository root: docs/conf.py then imports an installed
    # confrf whenever the source tree has no compiled kernels (CI installs the package)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        # two processes read (and execute) the pages: the build is the suite's longest test, and with
        # -n 2 it would otherwise keep one worker busy long after the other has finished
        "-j",
        "2",
        "-b",
        "html",
        "-d",
        str(tmp_path / "doctrees"),
        "docs",
        str(tmp_path / "html"),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"sphinx failed (rc {proc.returncode}):\n{proc.stderr}\n{proc.stdout[-3000:]}"
    # Sphinx's warnings (the kernels' own log lines, "[IPKernelApp] WARNING | ...", are not the build's)
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line and not line.startswith("[IPKernelApp]")]
    assert not warnings, proc.stderr
    html = tmp_path / "html"
    # every notebook is rendered with the outputs of the session's run, and the API pages were
    # generated from the docstrings
    for nb in VIGNETTES:
        page = html / "_generated" / "vignettes" / f"{nb.stem}.html"
        assert page.is_file(), nb.name
        assert "cell_output" in page.read_text(), f"{nb.name} is rendered without its outputs"
    assert (
        "N = 3000 rows, 3 Monte Carlo repetitions"
        in (html / "_generated/vignettes/03-guarantees-in-practice.html").read_text()
    )
    assert (html / "_generated" / "api" / "confrf.conformal.html").is_file()
    assert "Parameters" in (html / "_generated" / "api" / "confrf.conformal.html").read_text()
    # the pages were executed: printed reports, frames and plots are on them
    for rel, shown in [
        ("index.html", "guarantee: marginal, certified"),
        ("quickstart.html", "Held-out evaluation"),
        ("summary.html", "Assumption checks"),
        ("guide/classification.html", "Share singletons"),
    ]:
        text = (html / rel).read_text()
        assert "cell_output" in text and shown in text, f"{rel} does not show what its code prints"
    for rel in ["index.html", "quickstart.html", "summary.html", "guide/classification.html"]:
        assert re.search(r'<img[^>]+src="[^"]+\.png"', (html / rel).read_text()), f"{rel} shows no plot"
    # the kernel the build started imports the confrf of this session
    assert _kernel_confrf(DOCS / "_generated" / "jupyter") == Path(confrf.__file__).resolve()


def _kernel_confrf(jupyter_path: Path) -> Path:
    """``confrf.__file__`` in a kernel named python3 started as the build starts it."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "JUPYTER_PATH": str(jupyter_path)}
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(jupyter_path)  # where the kernelspec is looked up
    try:
        km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(jupyter_path))
    finally:
        if saved is None:
            del os.environ["JUPYTER_PATH"]
        else:
            os.environ["JUPYTER_PATH"] = saved
    out = []
    try:
        kc.execute_interactive(
            "import confrf; print(confrf.__file__)",
            timeout=120,
            output_hook=lambda msg: out.append(msg["content"].get("text", "")),
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return Path("".join(out).strip()).resolve()


def test_every_benchmark_section_is_on_the_benchmark_page():
    # docs/conf.py excludes docs/benchmarks/*.md from the pages: index.md includes them
    index = (DOCS / "benchmarks" / "index.md").read_text()
    included = set(re.findall(r"^```\{include\} (\S+)$", index, flags=re.MULTILINE))
    sections = {p.name for p in (DOCS / "benchmarks").glob("*.md") if p.name != "index.md"}
    assert sections <= included, f"include them in docs/benchmarks/index.md: {sorted(sections - included)}"


def test_api_page_lists_the_public_api():
    text = (DOCS / "api.rst").read_text()
    entries = set(re.findall(r"^   ([A-Za-z_][\w.]*)\s*$", text, flags=re.MULTILINE))
    public = {name for name in confrf.__all__ if name != "__version__"}
    assert public - entries == set(), f"missing from docs/api.rst: {sorted(public - entries)}"


# -- every code block of README.md and docs/ runs ----------------------------------------------

#: fence languages that are Python, run by the tests
PYTHON = {"python", "py", "python3", "ipython3", "ipython"}
#: fence languages that are not Python (shell commands, file contents, printed output): not run
NOT_PYTHON = {"bash", "sh", "shell", "console", "text", "none", "toml", "yaml", "json", "ini", "latex", "output"}
#: directives that show code; any other directive (``{toctree}``, ``{include}``, ``{math}``, ...) holds none
CODE_DIRECTIVES = {"{code-cell}", "{code-block}", "{code}", "{sourcecode}"}

#: pages whose code takes more than a few seconds (the reason is shown). The documentation build
#: (test_docs_build_without_warnings, --long) executes the code cells of every MyST-NB page and
#: fails on any error, so such a page is not run a second time here; the others run with --long.
LONG_PAGES = {
    "README.md": "fits LCP-RF on all 53,940 diamonds",
    "docs/guide/methods.md": "fits every method, kernel LCP and SLCP with their out-of-fold model fits",
    "docs/guide/guarantees.md": "fits 16 configurations to print their guarantees",
    "docs/guide/scale.md": "predicts 53,940 rows three times, once on a Dask cluster",
}


def _pages() -> list[Path]:
    skip = {"_build", "_generated", "_static", "_templates"}
    docs = [p for p in sorted(DOCS.rglob("*.md")) if not skip & set(p.relative_to(DOCS).parts)]
    return [ROOT / "README.md", *docs]


PAGES = _pages()


def _fences(text: str) -> list[tuple[int, str, str]]:
    """(line, info, content) of every fenced block of a markdown text, in order."""
    from markdown_it import MarkdownIt

    return [
        (tok.map[0] + 1, tok.info.strip(), tok.content)
        for tok in MarkdownIt("commonmark").parse(text)
        if tok.type == "fence"
    ]


def code_blocks(path: Path) -> list[dict]:
    """The blocks of a page in order: ``line`` (of its first line of code), ``code``, ``run``
    (False for blocks that are not run), ``raises`` (a cell tagged ``raises-exception``), ``hidden``
    (a cell tagged ``remove-cell``, not shown on the page) and
    ``kind`` (what it is: "python", "code-cell", or why it is not run)."""
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

    text = path.read_text()
    blocks = []

    def from_markdown(md: str, offset: int):
        for line, info, content in _fences(md):
            lang = info.split()[0] if info else ""
            if lang in PYTHON:
                kind, run = "python", True
            elif lang in {"{code-block}", "{code}", "{sourcecode}"} or lang in NOT_PYTHON:
                kind, run = info, False  # an illustration, or not Python
            elif lang.startswith("{") and lang not in CODE_DIRECTIVES:
                continue  # a directive without code
            elif lang == "{code-cell}":  # in a page that is not a text notebook
                raise AssertionError(f"{path}:{offset + line}: a code-cell in a page without MyST-NB front matter")
            else:
                raise AssertionError(
                    f"{path}:{offset + line}: fence {info!r}: say its language (```python runs, "
                    "```bash / ```text do not; a Python illustration is a {code-block} python with a :caption:)"
                )
            block = {"line": offset + line + 1, "code": content, "run": run, "raises": False, "hidden": False}
            blocks.append({**block, "kind": kind})

    if is_myst_markdown_notebook(text):
        nb = read_myst_markdown_notebook(text, add_source_map=True)
        starts = nb.metadata["source_map"]
        for cell, start in zip(nb.cells, starts):
            if cell.cell_type == "markdown":
                from_markdown(cell.source, start)
            elif cell.cell_type == "code":
                tags = set(cell.metadata.get("tags", []))
                assert "skip-execution" not in tags, f"{path}:{start + 1}: every code cell runs (no skip-execution)"
                # the line of the cell's code: after the fence and the cell's options
                line = text[: text.index(cell.source, _offset(text, start))].count("\n") + 1 if cell.source else start
                blocks.append(
                    {
                        "line": line,
                        "code": cell.source,
                        "run": True,
                        "raises": "raises-exception" in tags,
                        "hidden": "remove-cell" in tags,
                        "kind": "code-cell",
                    }
                )
    else:
        from_markdown(text, 0)
    return blocks


def _offset(text: str, line0: int) -> int:
    """Character offset of the start of 0-based line ``line0``."""
    pos = 0
    for _ in range(line0):
        pos = text.index("\n", pos) + 1
    return pos


def _render(value):
    """What Jupyter shows for the last expression of a cell (its HTML, else its repr)."""
    if value is None:
        return None
    html = getattr(value, "_repr_html_", None)
    return html() if callable(html) else repr(value)


def run_page(path: Path) -> dict:
    """Run the page's blocks in order in one fresh namespace; the namespace."""
    import ast

    ns: dict = {"__name__": "__main__"}
    for block in code_blocks(path):
        if not block["run"]:
            continue
        where = f"{path.relative_to(ROOT)}, line {block['line']}"
        # padded so that a traceback gives the page's own line numbers
        tree = ast.parse("\n" * (block["line"] - 1) + block["code"], str(path))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None

        def run(tree=tree, last=last):
            exec(compile(tree, str(path), "exec"), ns)
            if last is not None:
                _render(eval(compile(ast.Expression(last.value), str(path), "eval"), ns))

        if block["raises"]:
            with pytest.raises(Exception):  # noqa: B017 - the cell shows an error message, whichever it is
                run()
        else:
            try:
                run()
            except Exception as exc:
                raise AssertionError(f"the code block starting at {where} failed: {type(exc).__name__}: {exc}") from exc
    return ns


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _page_param(path: Path):
    marks = []
    if _rel(path) in LONG_PAGES:
        marks.append(pytest.mark.long)
        if all(b["kind"] == "code-cell" for b in code_blocks(path) if b["run"]):
            reason = f"{LONG_PAGES[_rel(path)]}: executed by the documentation build (--long) instead"
            marks.append(pytest.mark.skip(reason=reason))
    return pytest.param(path, id=_rel(path), marks=marks)


@pytest.mark.parametrize("path", [_page_param(p) for p in PAGES])
def test_page_code_runs(path, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)  # whatever a page writes lands here
    try:
        run_page(path)
    finally:
        plt.close("all")


def test_hidden_cells_only_assert():
    """A code cell hidden from the page (tag ``remove-cell``) only asserts what the page says its code
    shows: it runs wherever the page runs (the build, test_page_code_runs) and changes nothing it shows."""
    import ast

    hidden = 0
    for path in PAGES:
        for block in code_blocks(path):
            if not block["hidden"]:
                continue
            hidden += 1
            body = ast.parse(block["code"]).body
            assert body and all(isinstance(s, ast.Assert) for s in body), (
                f"{_rel(path)}, line {block['line']}: a hidden cell holds only assert statements"
            )
    assert hidden >= 5  # docs/quickstart.md and docs/guide/distribution.md check what they print


def test_long_pages_exist():
    assert set(LONG_PAGES) <= {_rel(p) for p in PAGES}, sorted(set(LONG_PAGES) - {_rel(p) for p in PAGES})


def test_every_code_block_is_run_or_marked():
    """A Python block that does not run says why on the page: a {code-block} with a :caption:."""
    problems = []
    for path in PAGES:
        for block in code_blocks(path):
            words = block["kind"].split()
            if block["run"] or words[0] not in CODE_DIRECTIVES or (words[1:] or [""])[0] not in PYTHON:
                continue
            options = [line for line in block["code"].splitlines() if line.startswith(":")]
            if not any(line.startswith(":caption:") for line in options):
                problems.append(f"{_rel(path)}:{block['line']}")
    assert not problems, f"Python illustrations without a :caption: saying why they do not run: {problems}"


def test_the_pages_have_code_and_the_guide_pages_run_it():
    """The pages that teach the API execute it: their code blocks are code cells."""
    counted = {p: code_blocks(p) for p in PAGES}
    for rel in ["index.md", "quickstart.md", "summary.md"]:
        blocks = counted[DOCS / rel]
        assert any(b["kind"] == "code-cell" for b in blocks), f"{rel} shows no executed output"
        assert not any(b["kind"] == "python" for b in blocks), f"{rel}: make its ```python blocks code cells"

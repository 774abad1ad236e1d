"""The documentation's layout rules (docs/_static/confrf.css) and what it says about offline formulas.

The pages were checked as screenshots in headless Chromium (issue 37): benchmark tables broke their
headers mid-word ("cover age") and wrapped "0.899 ± 0.004" over three lines, and outputs wider than
the column hid past its right edge. These tests keep the rules that fixed it.
"""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _rules(css: str) -> dict[str, str]:
    """Selector (one per comma-separated part) -> its declarations, media queries flattened."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@media[^{]*\{", "", css)  # the rules inside a media query are read as rules
    out: dict[str, str] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        for sel in selectors.split(","):
            out[" ".join(sel.split())] = out.get(" ".join(sel.split()), "") + body
    return out


def _decl(body: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in re.findall(r"([\w-]+)\s*:\s*([^;]+);", body)}


def test_table_headers_never_break_inside_a_word_and_numbers_stay_on_one_line():
    rules = _rules((DOCS / "_static" / "confrf.css").read_text())
    for sel, body in rules.items():
        if "table" in sel:  # "anywhere" lets a header break inside a word ("cover age")
            assert _decl(body).get("overflow-wrap") != "anywhere", sel
            assert _decl(body).get("word-break") not in {"break-all", "break-word"}, sel
    assert _decl(rules["article table.docutils th"])["overflow-wrap"] == "normal"
    assert _decl(rules["article table.docutils td.text-right"])["white-space"] == "nowrap"


def test_outputs_wrap_instead_of_hiding_past_the_edge():
    rules = _rules((DOCS / "_static" / "confrf.css").read_text())
    pre = _decl(rules[".cell_output pre"])  # both rules: the size, and (beside the navigation) the wrapping
    assert pre["white-space"] == "pre-wrap"
    assert pre["font-size"].endswith("rem") and float(pre["font-size"][:-3]) < 0.8125  # below furo's code size
    main = _decl(rules[".main"])  # a wide table scrolls in its own box, the page does not widen
    assert main["min-width"] == "0"


def test_offline_formulas_are_explained():
    conf = (DOCS / "conf.py").read_text()
    assert "mathjax_path" not in conf  # MathJax comes from Sphinx's default CDN: say so where the build is described
    text = " ".join((DOCS / "installation.md").read_text().split())
    assert "MathJax" in text and "CDN" in text and "offline" in text
    assert "-D mathjax_path=" in text

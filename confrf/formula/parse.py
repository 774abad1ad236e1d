"""Formula parsing with formulaic, and which data columns a formula uses."""

from __future__ import annotations

import ast
import builtins
import contextlib
import difflib
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pandas as pd
from formulaic import Formula, ModelSpec, model_matrix
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.transforms import TRANSFORMS

from ..exceptions import FormulaError, InputError
from .messages import clean, show

# `C(g)`, `C(g, levels=...)`, `` C(`my col`) ``: a categorical made of one raw column.
_C_OF_COLUMN = re.compile(r"^C\(\s*(`?)(?P<name>.+?)\1\s*(?:,.*)?\)$", re.S)
_DOT = re.compile(r"(?<![\w.`])\.(?![\w.`])")


#: R functions a formula may use, and their spelling in formulaic/Python
_R_FUNCTIONS = {
    "factor": "C(x)",
    "as.factor": "C(x)",
    "ordered": "C(x)",
    "sqrt": "np.sqrt(x)",
    "sin": "np.sin(x)",
    "cos": "np.cos(x)",
    "ifelse": "np.where(cond, a, b)",
    "as.numeric": "x (already numeric)",
}


def r_hint(formula: str, exc: Exception | None = None) -> str:
    """The Python spelling of R idioms that make formulaic fail (``as.factor(x)``)."""
    hints = [
        f"R's {name}() is {py}"
        for name, py in _R_FUNCTIONS.items()
        if "." in name and re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", formula)
    ]
    return "; " + "; ".join(hints) if hints else ""


def r_power(formula: str) -> str:
    """R's ``^`` as a power inside calls: ``I(x^2)`` -> ``I(x**2)``, ``(a + b)^2`` kept.

    Inside ``I()``, ``np.log()`` or any other call (and formulaic's ``{...}``)
    the text is Python, where ``^`` is the bitwise xor: ``I(x^2)`` would give
    ``x xor 2`` on integers (120 -> 122) and fail on floats. R reads ``^``
    there as the power, so it is rewritten to ``**`` on every dtype. Outside
    calls, ``^`` stays the formula's interaction power (``(a + b)^2``).
    Quoted text (strings, backquoted names) is left as written.
    """
    if "^" not in formula:
        return formula
    out: list[str] = []
    python = [False]  # per open bracket: is the text inside it Python?
    i, n = 0, len(formula)
    while i < n:
        c = formula[i]
        if c in "'\"`":
            j = formula.find(c, i + 1)
            j = n - 1 if j < 0 else j
            out.append(formula[i : j + 1])
            i = j + 1
            continue
        if c == "(":
            before = "".join(out).rstrip()
            python.append(python[-1] or bool(before) and (before[-1].isalnum() or before[-1] in "_.`"))
        elif c == "{":
            python.append(True)
        elif c == "[":
            python.append(python[-1])
        elif c in ")}]" and len(python) > 1:
            python.pop()
        elif c == "^" and python[-1]:
            c = "**"
        out.append(c)
        i += 1
    return "".join(out)


def expand_dot(formula: Any, data: pd.DataFrame) -> Any:
    """R's ``y ~ .``: the dot stands for every column not used in the response."""
    if not isinstance(formula, str) or "~" not in formula:
        return formula
    lhs, rhs = formula.split("~", 1)
    if not _DOT.search(rhs):
        return formula
    used = expr_names(lhs.strip())
    cols = [c for c in data.columns if str(c) not in used]
    if not cols:
        raise FormulaError(f"'.' in {formula!r} stands for no column: data has only the response")
    return lhs + "~" + _DOT.sub(lambda m: "(" + " + ".join(f"`{c}`" for c in cols) + ")", rhs)


def parse(formula: Any) -> Any:
    """Parse once with formulaic, after the checks formulaic does not make."""
    if not isinstance(formula, str):
        raise FormulaError(f"the formula must be a string like 'y ~ x1 + C(g)', got {type(formula).__name__}")
    n_tilde = formula.count("~")
    if n_tilde == 0 or not formula.split("~", 1)[0].strip():
        raise FormulaError(f"the formula needs a response on the left of ~ (got {formula!r}); write e.g. 'y ~ x1 + x2'")
    if n_tilde > 1:
        raise FormulaError(f"the formula must contain exactly one ~, got {formula!r}")
    try:
        parsed = Formula(r_power(formula))
    except (FormulaicError, SyntaxError) as exc:  # formulaic lets Python's SyntaxError through
        raise FormulaError(f"cannot parse formula {formula!r}: {clean(exc)}" + r_hint(formula)) from None
    if len(parsed.lhs) != 1:
        lhs = formula.split("~", 1)[0].strip()
        raise FormulaError(
            f"the formula must have a single response on the left of ~, got "
            f"{str(parsed.lhs)!r} in {formula!r}; for a response computed from several "
            f"columns wrap it in I(): 'I({lhs}) ~ ...'"
        )
    return parsed


def parse_expression(expr: str) -> tuple[ast.Expression, dict[str, str]]:
    """``expr`` parsed as Python, with backquoted names (`` `Sepal.Length` ``) as placeholders.

    Returns the tree and ``{placeholder: name}``; raises SyntaxError when the
    expression is not Python (e.g. the interaction ``a:b``).
    """
    quoted: dict[str, str] = {}

    def _sub(m: re.Match) -> str:
        key = f"_confrf_quoted_{len(quoted)}"
        quoted[key] = m.group(1)
        return key

    return ast.parse(re.sub(r"`([^`]*)`", _sub, expr), mode="eval"), quoted


def q_name(node: ast.AST) -> str | None:
    """The column named by ``Q('name')`` (formulaic's and patsy's quoting), or None for any other node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Q"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def expr_names(expr: str) -> set[str]:
    """Names read by a Python factor expression: bare names, backquoted names and ``Q('name')``.

    Names with dots (R's ``Sepal.Length``) can be written `` `Sepal.Length` ``
    or ``Q('Sepal.Length')``, as formulaic (and patsy) read them.
    """
    try:
        tree, quoted = parse_expression(expr)
    except SyntaxError:
        return set()
    names = set()
    q_calls = set()
    for node in ast.walk(tree):
        q = q_name(node)
        if q is not None and isinstance(node, ast.Call):  # the second test only narrows the type
            names.add(q)
            q_calls.add(id(node.func))
        elif isinstance(node, ast.Name) and id(node) not in q_calls:
            names.add(quoted.get(node.id, node.id))
    return names


def used_columns(part: Any, data: pd.DataFrame) -> set[str]:
    """Names one side of the formula needs from the data.

    Read from the factors, not from formulaic 1.2.2's ``required_variables``,
    which misses the arguments of its stateful transforms (``center(x)`` ->
    ``set()``) and cuts dotted names (`` `Sepal.Length` `` -> ``{"Sepal"}``):
    a lookup factor is one column, a Python factor is read with :mod:`ast`.
    Names that formulaic resolves itself (``np``, ``C``, ``center``,
    builtins) are left out unless the data has such a column.
    """
    names: set[str] = set()
    for term in part:
        for factor in term.factors:
            if factor.eval_method.value == "python":
                names |= expr_names(factor.expr)
            elif factor.eval_method.value == "lookup":
                names.add(factor.expr)
    return {n for n in names if n in data.columns or (n not in TRANSFORMS and not hasattr(builtins, n))}


def bare_columns(part: Any) -> set[str]:
    """Columns used as a term on their own (``x``, not ``C(x)`` or ``np.log(x)``)."""
    return {f.expr for term in part for f in term.factors if f.eval_method.value == "lookup"}


def seen_columns(spec: ModelSpec, data: pd.DataFrame) -> list[str]:
    """The data columns formulaic read when it built `spec` (``Q('a.b')`` is listed without a source)."""
    by_source = spec.variables_by_source
    return ordered(data, set(by_source.get("data", set())) | set(by_source.get(None, set())))


def ordered(data: pd.DataFrame, names: Any) -> list[str]:
    """`names` that are columns of `data`, in the data's column order."""
    names = set(names)
    return [c for c in data.columns if c in names]


def check_columns(formula: str, required: set[str], data: pd.DataFrame) -> None:
    """Name every column the formula uses that `data` lacks (with close matches)."""
    columns = [str(c) for c in data.columns]
    missing = sorted(v for v in required if v not in data.columns)
    if not missing:
        return
    hints = []
    for name in missing:
        close = difflib.get_close_matches(name, columns, n=3)
        dotted = [c for c in columns if c.startswith(name + ".")]
        if dotted:  # R's Sepal.Length, read by Python as attribute Length of Sepal
            hints.append(f"names with dots need backquotes, e.g. `{dotted[0]}` or Q('{dotted[0]}')")
        elif name in _R_FUNCTIONS:
            hints.append(f"{name!r}: R's {name}() is {_R_FUNCTIONS[name]} here")
        elif close:
            hints.append(f"{name!r}: did you mean {', '.join(map(repr, close))}?")
    raise FormulaError(
        f"formula {formula!r} uses name(s) {show(missing)} that are not columns of data"
        + (f" ({'; '.join(hints)})" if hints else "")
        + f"; available columns: {show(columns, 30)}"
    )


def materialize(formula: str, parsed: Any, frame: pd.DataFrame) -> Any:
    # na_action="ignore": our own checks (before and after) decide about
    # NaN/inf; formulaic's default "drop" would lose rows silently.
    try:
        return evaluate(parsed, frame, na_action="ignore")
    except FormulaicError as exc:
        raise FormulaError(
            f"cannot evaluate formula {formula!r} on data: {clean(exc)}" + r_hint(formula, exc)
        ) from None


def evaluate(spec_or_formula: Any, frame: pd.DataFrame, **kwargs: Any) -> Any:
    """Run formulaic with unseen/out-of-range levels escalated to errors.

    formulaic only warns (DataMismatchWarning) and codes such values as all
    zeros, i.e. as the base level; that must never pass silently.
    """
    with _mismatch_is_error():
        if isinstance(spec_or_formula, ModelSpec):
            return spec_or_formula.get_model_matrix(frame, context={}, **kwargs)
        return model_matrix(spec_or_formula, frame, context={}, **kwargs)


def evaluate_factors(spec: ModelSpec, frame: pd.DataFrame) -> tuple[Any, list[Any]]:
    """:func:`evaluate` of a fitted spec, with the values of its factors as evaluated, before encoding.

    Encoding casts: a factor of booleans (``I(price > 3000)``) becomes 0/1 integers in the
    matrix, so what the expression gave can only be read from the factors.
    """
    with _mismatch_is_error():
        materializer = spec.get_materializer(frame, context={})
        matrix = materializer.get_model_matrix(spec)
    values = [getattr(f.values, "__wrapped__", f.values) for f in materializer.factor_cache.values()]
    return matrix, values


@contextlib.contextmanager
def _mismatch_is_error() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            yield
        except DataMismatchWarning as exc:
            raise InputError(
                f"a categorical term has values outside its levels: {clean(exc)}; "
                "map them to a known level or refit with data that contains them"
            ) from None


def categorical_levels(spec: ModelSpec, variables: list[str]) -> list[tuple[str, str, list]]:
    """(factor, raw column, fit levels) for categoricals made of one raw column.

    Other categoricals (e.g. ``C(np.round(x))``) are still guarded: their
    unseen values make formulaic warn, which `evaluate` turns into an error.
    """
    out = []
    for expr, (_kind, state) in spec.encoder_state.items():
        if not isinstance(state, dict) or "categories" not in state:
            continue
        column = expr if expr in variables else None
        m = _C_OF_COLUMN.match(expr)
        if column is None and m and m.group("name") in variables:
            column = m.group("name")
        if column is not None:
            out.append((expr, column, list(state["categories"])))
    return out

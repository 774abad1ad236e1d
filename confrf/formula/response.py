"""The response (left-hand side): type checks and evaluation on held-out rows.

Every rule about what a response may be lives here, so that other response
types (e.g. classification labels) have one place to hook into.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np
import pandas as pd
from formulaic import ModelSpec
from formulaic.errors import FormulaicError

from .._validation import is_boolean
from ..exceptions import InputError
from .frame import bad_rows, prepare_columns
from .messages import clean, describe_bad, show
from .parse import evaluate_factors, parse_expression, q_name

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def check_numeric_response(col: pd.Series, name: str, response_name: str | None = None) -> None:
    """Raise unless the response column `name` is numeric.

    A text column inside a response expression (``I(default == 'Yes')``) is
    let through: what the expression gives is checked once evaluated
    (:func:`refuse_boolean_response`, :func:`refuse_text_values`).
    """
    if pd.api.types.is_numeric_dtype(col):
        return
    in_expression = response_name is not None and response_name not in (name, f"`{name}`", f"Q({name!r})")
    text = (
        pd.api.types.is_object_dtype(col)
        or pd.api.types.is_string_dtype(col)
        or isinstance(col.dtype, pd.CategoricalDtype)
    )
    if not (in_expression and text):
        raise InputError(
            f"the response must be numeric; column {name!r} has dtype {col.dtype} (convert it, e.g. with pd.to_numeric)"
        )


def evaluate_response(
    lhs_spec: ModelSpec,
    frame: pd.DataFrame,
    variables: list[str],
    response_name: str,
    formula: str,
    what: str = "data",
) -> np.ndarray:
    """The fitted left-hand side evaluated on `frame`, float64 1-D; NaN/inf raise."""
    missing = [v for v in variables if v not in frame.columns]
    if missing:
        raise InputError(f"{what} lacks the response column(s) {show(missing)} of formula {formula!r}")
    frame = prepare_columns(frame[variables], variables, what)
    for name in variables:
        check_numeric_response(frame[name], name, response_name)
    bad, per_col = bad_rows(frame, variables)
    if bad.any():
        raise InputError(describe_bad(per_col, int(bad.sum()), "the response") + "; drop or impute these rows first")
    if len(frame) == 0:
        return np.empty(0, dtype=np.float64)
    try:
        matrix, factors = evaluate_factors(lhs_spec, frame)
    except FormulaicError as exc:
        raise InputError(f"cannot evaluate the response {response_name!r} on {what}: {clean(exc)}") from None
    refuse_text_values(factors, response_name)
    if _all_boolean(factors):
        flags = [v for v in variables if is_boolean(frame[v])]
        fix = f", e.g. {what}[{flags[0]!r}] = {what}[{flags[0]!r}].astype(int)" if flags else ""
        raise InputError(
            f"the response {response_name!r} is boolean (True/False) in {what}, but it was numeric at fit: a "
            f"boolean is a class label, and this fit builds intervals for numbers. Convert it to numbers{fix}."
        )
    y = matrix.to_numpy(dtype=np.float64)
    bad_y = ~np.isfinite(y).all(axis=1)
    if bad_y.any():
        raise InputError(
            f"the response {response_name!r} is NaN or inf in {int(bad_y.sum())} row(s); drop or fix these rows first"
        )
    return np.ascontiguousarray(y[:, 0])


def refuse_boolean_response(
    lhs_spec: ModelSpec, frame: pd.DataFrame, response_name: str, formula: str, columns: Any
) -> None:
    """At fit: raise if the response evaluates to booleans, which are class labels, naming both ways out.

    A bool column is detected by its dtype before any fit (:func:`confrf.formula.labels.label_column`);
    an expression (``I(price > 3000)``, ``np.logical_not(big)``) only once evaluated, and formulaic
    casts its booleans to 0/1 integers, so the factors' own values decide: a numeric 0/1 response
    stays a regression.
    """
    _, factors = evaluate_factors(lhs_spec, frame)
    refuse_text_values(factors, response_name)
    if not _all_boolean(factors):
        return
    rhs = formula.split("~", 1)[1].strip()
    calls = "(or lcp_rf, split_cp, qrf_tc)"
    if response_name in columns:  # a bool column the label detection did not see, e.g. "(big) ~ x"
        sets = f"call cf.conformal({f'{_quoted(response_name)} ~ {rhs}'!r}, data=df) {calls} on the column itself"
        numbers = f"convert it: df[{response_name!r}] = df[{response_name!r}].astype(int)"
    else:
        inner = _inner(response_name)
        pandas = _with_columns(inner, columns)
        label = next(f"label{k or ''}" for k in range(len(columns) + 1) if f"label{k or ''}" not in columns)
        sets = (
            f"put the labels in a column first, df[{label!r}] = {pandas or '... (computed with pandas)'}, and call "
            f"cf.conformal({f'{label} ~ {rhs}'!r}, data=df) {calls}"
        )
        numbers = (
            f"write the response as I(({inner}) * 1)"
            if pandas
            else "compute it as numbers, e.g. I((condition) * 1), or as a column with .astype(int)"
        )
    raise InputError(
        f"the response {response_name!r} is boolean (True/False), which is a class label, not a number to build "
        f"intervals on. For prediction sets, {sets}; for prediction intervals of the 0/1 values, {numbers}."
    )


def refuse_text_values(factors: list[Any], response_name: str) -> None:
    """Raise if a response expression gives text (``I(default)``): only numbers (or True/False) are checked further."""
    for v in factors:
        values = pd.Series(np.asarray(v).ravel()) if not isinstance(v, pd.Series) else v
        if is_boolean(values) or pd.api.types.is_numeric_dtype(values):
            continue
        raise InputError(
            f"the response {response_name!r} gives text, not numbers; compare the text to make a 0/1 response, "
            f"e.g. I((column == 'Yes') * 1), or put a class-label column on the left of ~ for prediction sets."
        )


def _all_boolean(factors: list[Any]) -> bool:
    # a product of boolean factors (a:b) is their logical "and", still boolean
    return bool(factors) and all(is_boolean(v) for v in factors)


def _quoted(name: str) -> str:
    return name if _IDENTIFIER.match(name) else f"`{name}`"


def _inner(expr: str) -> str:
    """The expression inside ``I(...)``, or `expr` itself."""
    m = re.fullmatch(r"I\((?P<inner>.*)\)", expr.strip(), re.S)
    if m is None:
        return expr
    try:  # I(a):I(b) matches too, and is not one call
        ast.parse(re.sub(r"`[^`]*`", "_", m.group("inner")), mode="eval")
    except SyntaxError:
        return expr
    return m.group("inner").strip()


def _with_columns(expr: str, columns: Any) -> str | None:
    """`expr` in pandas, ``price > 3000`` -> ``df['price'] > 3000`` (also `name` and Q('name')); None if not Python."""
    try:
        tree, quoted = parse_expression(expr)
    except SyntaxError:  # not Python, e.g. the interaction a:b
        return None
    names = set(columns)

    def column(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            name = quoted.get(node.id, node.id)
            return name if name in names else None
        q = q_name(node)  # Q("Sepal.Length")
        return q if q in names else None

    class _ToPandas(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            name = column(node)
            if name is None:
                if isinstance(node, ast.Name) and node.id in quoted:  # not a column: as written
                    return ast.Name(id=f"`{quoted[node.id]}`", ctx=ast.Load())
                return self.generic_visit(node)
            return ast.Subscript(value=ast.Name(id="df", ctx=ast.Load()), slice=ast.Constant(name), ctx=ast.Load())

    return ast.unparse(ast.fix_missing_locations(_ToPandas().visit(tree.body)))

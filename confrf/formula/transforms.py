"""Monotone transforms of the response (``np.log(y) ~ x``), read from the formula and inverted exactly.

A formula's left-hand side g(y) puts the intervals on g's scale. When g is
strictly monotone, {y : g(y) in [l, u]} is an interval with the ends
g^-1(l), g^-1(u) (swapped when g decreases), so it holds y exactly when [l, u]
holds g(y): the coverage carries over unchanged. Whether g is monotone is
read from the parsed expression, never guessed from numbers: g must be a
chain of known steps applied to the one response column,

* numpy functions: ``log``, ``log2``, ``log10``, ``log1p``, ``exp``,
  ``exp2``, ``expm1``, ``sqrt``, ``cbrt``, ``sinh``, ``arcsinh``, ``tanh``,
  ``arctanh``, ``arctan``, ``arcsin`` (as ``np.f`` or ``numpy.f``; formulaic's
  ``log``, ``log2``, ``log10``, ``exp``, ``exp2``, ``exp10`` also bare);
* ``+ c``, ``- c``, ``* c``, ``/ c``, ``c - y``, unary minus, ``y ** p``,
  ``c ** y``, ``np.power(y, p)``, ``I(...)``, and formulaic's ``center``,
  ``scale`` and ``standardize`` (affine, with the state learned at fit);
* functions monotone only where their argument keeps one sign: ``c / y``,
  ``np.reciprocal``, ``np.square``, ``np.abs``, ``np.cosh``, even powers. They
  need the response's range (``support=``) to lie on one side; otherwise the
  inverse is not unique and the transform is refused.

Anything else (``np.sin(y)``, ``I(a + b)``, ``y + y``) is refused with the
reason. :func:`response_transform` also checks the reading numerically on the
fit's rows (g as read here must reproduce formulaic's values), as a safety net.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .monotone import (
    BARE,
    FUNCTIONS,
    INF,
    NOT_MONOTONE,
    NotInvertible,
    Step,
    affine,
    exponential,
    power,
    reciprocal,
)
from .parse import parse_expression

__all__ = ["ResponseTransform", "response_transform"]

#: formulaic's stateful transforms: affine, with the center and scale learned at fit
_STATEFUL = {"center", "scale", "standardize"}
#: the constants a left-hand side may name (np.pi, np.e)
_CONSTANTS = {"pi": math.pi, "e": math.e}


class _Reader:
    """Reads the left-hand side's Python expression into a chain of steps (innermost first)."""

    def __init__(self, variable: str, quoted: dict[str, str], state: dict[str, Any], text: str) -> None:
        self.variable = variable
        self.quoted = quoted  # placeholder name -> backquoted column name
        self.state = state  # formulaic's stateful-transform state, by expression
        self.text = text
        self.seen = 0

    def _src(self, node: ast.AST) -> str:
        src = ast.unparse(node)
        for key, name in self.quoted.items():
            src = src.replace(key, f"`{name}`")
        return src

    def constant(self, node: ast.AST) -> float | None:
        """The value of a constant subexpression (numbers, np.pi, np.e, + - * / **), else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Attribute) and _module(node.value) and node.attr in _CONSTANTS:
            return _CONSTANTS[node.attr]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.constant(node.operand)
            return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.BinOp):
            a, b = self.constant(node.left), self.constant(node.right)
            if a is None or b is None:
                return None
            try:
                ops: dict[type, Callable[[float, float], float]] = {
                    ast.Add: lambda x, y: x + y,
                    ast.Sub: lambda x, y: x - y,
                    ast.Mult: lambda x, y: x * y,
                    ast.Div: lambda x, y: x / y,
                    ast.Pow: lambda x, y: float(x**y),
                }
                op = ops.get(type(node.op))
                return None if op is None else op(a, b)
            except (ZeroDivisionError, OverflowError, TypeError):
                return None
        return None

    def chain(self, node: ast.AST) -> list[Any]:
        text = self._src(node)
        if isinstance(node, ast.Name):
            name = self.quoted.get(node.id, node.id)
            if name != self.variable:
                raise NotInvertible(f"{text!r} is not the response column {self.variable!r}")
            self.seen += 1
            if self.seen > 1:
                raise NotInvertible(f"the response column {self.variable!r} appears more than once")
            return []
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.chain(node.operand)
            return inner + ([affine(text, -1.0, 0.0)] if isinstance(node.op, ast.USub) else [])
        if isinstance(node, ast.BinOp):
            return self._binop(node, text)
        if isinstance(node, ast.Call):
            return self._call(node, text)
        raise NotInvertible(f"{text!r} is not a transform confrf can invert")

    def _binop(self, node: ast.BinOp, text: str) -> list[Any]:
        left, right = self.constant(node.left), self.constant(node.right)
        if left is None and right is None:
            raise NotInvertible(f"{text!r} combines the response with another non-constant term")
        op = node.op
        if right is not None:  # y (op) c
            inner = self.chain(node.left)
            c = right
            if isinstance(op, ast.Add):
                return inner + [affine(text, 1.0, c)]
            if isinstance(op, ast.Sub):
                return inner + [affine(text, 1.0, -c)]
            if isinstance(op, ast.Mult):
                return inner + [affine(text, c, 0.0)]
            if isinstance(op, ast.Div):
                if c == 0:
                    raise NotInvertible(f"{text!r} divides by zero")
                return inner + [affine(text, 1.0 / c, 0.0)]
            if isinstance(op, ast.Pow):
                step = power(text, c)
                return inner + ([] if step is None else [step])
        else:  # c (op) y
            assert left is not None
            inner = self.chain(node.right)
            c = left
            if isinstance(op, ast.Add):
                return inner + [affine(text, 1.0, c)]
            if isinstance(op, ast.Sub):
                return inner + [affine(text, -1.0, c)]
            if isinstance(op, ast.Mult):
                return inner + [affine(text, c, 0.0)]
            if isinstance(op, ast.Div):
                return inner + [reciprocal(text, c)]
            if isinstance(op, ast.Pow):
                return inner + [exponential(text, c)]
        raise NotInvertible(f"the operator in {text!r} is not one confrf can invert (+, -, *, /, **)")

    def _call(self, node: ast.Call, text: str) -> list[Any]:
        func = node.func
        if isinstance(func, ast.Attribute) and _module(func.value):
            name, bare = func.attr, False
        elif isinstance(func, ast.Name):
            name, bare = func.id, True
        else:
            raise NotInvertible(f"{text!r} calls a function confrf does not know")
        if bare and name == "Q" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            return self.chain(ast.Name(id=_quote_key(self.quoted, str(node.args[0].value))))
        if bare and name == "I" and len(node.args) == 1 and not node.keywords:
            return self.chain(node.args[0])
        if bare and name in _STATEFUL:
            return self._stateful(node, name, text)
        if name in ("power", "float_power") and not bare and len(node.args) == 2 and not node.keywords:
            p = self.constant(node.args[1])
            if p is None:
                raise NotInvertible(f"{text!r} raises the response to a non-constant power")
            step = power(text, p)
            return self.chain(node.args[0]) + ([] if step is None else [step])
        if (bare and name not in BARE) or name not in FUNCTIONS:
            why = "is not monotone" if name in NOT_MONOTONE else "is not one of the transforms confrf can invert"
            raise NotInvertible(f"{'np.' if not bare else ''}{name} {why}")
        if len(node.args) != 1 or node.keywords:
            raise NotInvertible(f"{text!r} passes arguments confrf cannot read besides the response")
        return self.chain(node.args[0]) + [FUNCTIONS[name](text)]

    def _stateful(self, node: ast.Call, name: str, text: str) -> list[Any]:
        key = "".join(text.split())
        found = [v for k, v in self.state.items() if "".join(k.split()) == key]
        if not found:
            same = [v for k, v in self.state.items() if k.split("(", 1)[0].strip() == name]
            found = same if len(same) == 1 else []
        if not found or not isinstance(found[0], dict):
            raise NotInvertible(f"the state formulaic learned for {text!r} was not found")
        center = found[0].get("center")
        scale = found[0].get("scale")
        center = 0.0 if center is None else float(center)
        scale = 1.0 if scale is None else float(scale)
        return self.chain(node.args[0]) + [affine(text, 1.0 / scale, -center / scale)]


def _module(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("np", "numpy")


def _quote_key(quoted: dict[str, str], name: str) -> str:
    for key, value in quoted.items():
        if value == name:
            return key
    key = f"_confrf_quoted_{len(quoted)}"
    quoted[key] = name
    return key


class ResponseTransform:
    """A strictly monotone g of the response column, read from the formula's left-hand side.

    ``forward`` is g; :meth:`inverse_interval` maps an interval on g's scale
    to the exact set of responses it holds; :meth:`inverse` maps points
    (clipped to g's range). The identity (``y ~ x``) has no steps.

    Examples
    --------
    >>> import numpy as np
    >>> g = ResponseTransform("np.log(y)", "y", [FUNCTIONS["log"]("np.log(y)").step])
    >>> lwr, upr = g.inverse_interval(np.array([0.0]), np.array([1.0]))
    >>> round(float(lwr[0]), 6), round(float(upr[0]), 6)
    (1.0, 2.718282)
    """

    def __init__(self, expression: str, variable: str, steps: list[Step]) -> None:
        self.expression = expression
        self.variable = variable
        self.steps = steps
        self.increasing = sum(not s.increasing for s in steps) % 2 == 0

    @property
    def is_identity(self) -> bool:
        return not self.steps

    def __repr__(self) -> str:
        return (
            f"ResponseTransform({self.expression!r} of {self.variable!r}, {'in' if self.increasing else 'de'}creasing)"
        )

    def forward(self, y: Any) -> np.ndarray:
        v = np.asarray(y, dtype=np.float64)
        with np.errstate(all="ignore"):
            for s in self.steps:
                v = np.asarray(s.forward(v), dtype=np.float64)
        return v

    def image(self, lo: float, hi: float) -> tuple[float, float]:
        """g([lo, hi]) as (low, high): the response's range on the model's scale."""
        for s in self.steps:
            lo, hi = s.image(lo, hi)
        return lo, hi

    def inverse(self, v: Any) -> np.ndarray:
        """g^-1(v), v clipped to g's range first (a center outside it maps to the range's end)."""
        out = np.asarray(v, dtype=np.float64)
        for s in reversed(self.steps):
            out = s.invert(out)
        return out

    def inverse_interval(self, lwr: Any, upr: Any) -> tuple[np.ndarray, np.ndarray]:
        """{y : g(y) in [lwr, upr]} as (lower, upper); an empty set is reported with lower > upper."""
        lo = np.array(lwr, dtype=np.float64)
        hi = np.array(upr, dtype=np.float64)
        empty = lo > hi
        for s in reversed(self.steps):
            r_lo, r_hi = s.range
            empty |= (hi < r_lo) | (lo > r_hi)  # entirely outside g's range: no response maps there
            a, b = s.invert(lo), s.invert(hi)
            lo, hi = (a, b) if s.increasing else (b, a)
        if empty.any():
            lo, hi = _empty_pairs(lo, empty, hi)
        return lo, hi


def _empty_pairs(lo: np.ndarray, empty: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empty sets as finite (a, b) with a > b, placed where the set vanished (widths then count 0)."""
    big = np.finfo(np.float64).max
    anchor = np.clip(np.where(np.isnan(lo), 0.0, lo), -big, big)
    anchor = np.where(anchor == -big, np.nextafter(-big, 0.0), anchor)
    return np.where(empty, anchor, lo), np.where(empty, np.nextafter(anchor, -np.inf), hi)


def _lhs_expression(design: Any) -> tuple[str, str, ast.AST | None, dict[str, str]]:
    """(text, factor kind, parsed expression, backquote placeholders) of the left-hand side's single factor."""
    spec = design._lhs_spec
    terms = list(spec.formula)
    if len(terms) != 1 or len(terms[0].factors) != 1:
        raise NotInvertible(f"the response {design.response_name!r} is not a single expression")
    factor = terms[0].factors[0]
    if factor.eval_method.value == "lookup":
        return factor.expr, "lookup", None, {}
    try:
        parsed, quoted = parse_expression(factor.expr)
    except SyntaxError as exc:  # pragma: no cover - formulaic parsed it already
        raise NotInvertible(f"the response {factor.expr!r} cannot be read ({exc})") from None
    tree = parsed.body
    return factor.expr, "python", tree, quoted


def response_transform(
    design: Any, support: tuple[float, float] | None = None, y_raw: Any = None, y_model: Any = None
) -> ResponseTransform | str:
    """The monotone transform of the response column in ``design``, or the reason there is none.

    ``support``: the response column's range (lower, upper), which decides
    the piece of functions monotone on one side of 0 only (``1 / y``,
    ``y ** 2``). ``y_raw`` and ``y_model``: the response column and the
    left-hand side on the fit's rows; g as read here must map one to the
    other (else the reading is refused, never trusted).
    """
    variables = list(design._response_variables)
    if len(variables) != 1:
        return (
            f"the response {design.response_name!r} combines the columns {variables}, so it has no single "
            "original scale to map intervals back to"
        )
    variable = variables[0]
    try:
        text, kind, tree, quoted = _lhs_expression(design)
        if kind == "lookup":
            return ResponseTransform(text, variable, [])
        assert tree is not None  # a Python factor
        reader = _Reader(variable, quoted, dict(design._lhs_spec.transform_state or {}), text)
        specs = reader.chain(tree)
        if reader.seen != 1:
            raise NotInvertible(f"the response column {variable!r} is not found in {text!r}")
        lo, hi = support if support is not None else (-INF, INF)
        steps = []
        for spec in specs:
            try:
                step = spec.resolve(lo, hi)
            except NotInvertible as exc:
                hint = (
                    f"; declare the range of {variable!r} with support= (e.g. support='nonnegative' or "
                    "support=(0, None)) if it keeps one sign"
                )
                raise NotInvertible(str(exc) + hint) from None
            steps.append(step)
            lo, hi = step.image(lo, hi)
    except NotInvertible as exc:
        return (
            f"the response {design.response_name!r} is not a monotone transform of {variable!r} that confrf can "
            f"invert: {exc}"
        )
    g = ResponseTransform(text, variable, steps)
    if y_raw is not None and y_model is not None and steps:
        raw = np.asarray(y_raw, dtype=np.float64)
        model = np.asarray(y_model, dtype=np.float64)
        with np.errstate(all="ignore"):
            same = np.allclose(g.forward(raw), model, rtol=1e-7, atol=1e-12 * (1.0 + np.abs(model).max(initial=0.0)))
            back = g.inverse(model)
            ok = np.isfinite(back)
            same &= np.allclose(back[ok], raw[ok], rtol=1e-6, atol=1e-9 * (1.0 + np.abs(raw).max(initial=0.0)))
        if not same:
            return (
                f"confrf's reading of the response {design.response_name!r} does not reproduce its values on the "
                "data (a column or name shadows a numpy function?), so it is not used to map intervals back"
            )
    return g

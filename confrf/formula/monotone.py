"""The strictly monotone steps a response transform is built from, with their inverses and domains.

A :class:`Step` is one map g, strictly monotone on [dom_lo, dom_hi], with g^-1. The builders
(:func:`affine`, :func:`power`, :func:`reciprocal`, :func:`exponential`) and the table
:data:`FUNCTIONS` of numpy functions give a step, or pieces monotone only on one side of 0
(``1 / y``, ``y ** 2``) that the argument's range resolves; :mod:`confrf.formula.transforms`
reads a formula's left-hand side into a chain of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

INF = math.inf


class NotInvertible(Exception):
    """The left-hand side is not a transform this module can invert (the message says why)."""


def _pow_inv(p: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda v: np.power(v, 1.0 / p)


@dataclass(frozen=True)
class Step:
    """One strictly monotone map on the interval [dom_lo, dom_hi], with its inverse."""

    text: str
    forward: Callable[[np.ndarray], np.ndarray]
    inverse: Callable[[np.ndarray], np.ndarray]
    increasing: bool
    dom_lo: float = -INF
    dom_hi: float = INF

    @property
    def range(self) -> tuple[float, float]:
        with np.errstate(all="ignore"):
            a, b = (float(self.forward(np.array([v], dtype=float))[0]) for v in (self.dom_lo, self.dom_hi))
        return (a, b) if self.increasing else (b, a)

    def image(self, a: float, b: float) -> tuple[float, float]:
        """g([a, b] within the domain), as (low, high)."""
        a, b = max(a, self.dom_lo), min(b, self.dom_hi)
        with np.errstate(all="ignore"):
            fa, fb = (float(self.forward(np.array([v], dtype=float))[0]) for v in (a, b))
        return (fa, fb) if self.increasing else (fb, fa)

    def invert(self, v: np.ndarray) -> np.ndarray:
        """g^-1 of v clipped to g's range; the range's ends go to the domain's ends exactly."""
        lo, hi = self.range
        vc = np.clip(v, lo, hi)
        with np.errstate(all="ignore"):
            out = np.asarray(self.inverse(vc), dtype=np.float64)
        at_lo, at_hi = (self.dom_lo, self.dom_hi) if self.increasing else (self.dom_hi, self.dom_lo)
        return np.where(vc <= lo, at_lo, np.where(vc >= hi, at_hi, out))


@dataclass(frozen=True)
class _Monotone:
    """A step monotone on its whole domain."""

    step: Step

    def resolve(self, a: float, b: float) -> Step:
        return self.step


@dataclass(frozen=True)
class _Pieces:
    """A function monotone on each of a few pieces: which one applies is read from the argument's range."""

    text: str
    pieces: tuple[Step, ...]

    def resolve(self, a: float, b: float) -> Step:
        for piece in self.pieces:
            if piece.dom_lo <= a and b <= piece.dom_hi:
                return piece
        raise NotInvertible(
            f"{self.text} is monotone only where its argument keeps one sign, and the argument may range over "
            f"[{a:g}, {b:g}]"
        )


def affine(text: str, a: float, b: float) -> _Monotone:
    if a == 0 or not math.isfinite(a) or not math.isfinite(b):
        raise NotInvertible(f"{text} multiplies the response by {a:g}, which is not invertible")
    return _Monotone(Step(text, lambda v: v * a + b, lambda v: (v - b) / a, a > 0))


def power(text: str, p: float) -> Any:
    if not math.isfinite(p) or p == 0:
        raise NotInvertible(f"{text} is constant or undefined (power {p:g})")
    if p == 1:
        return None
    f: Callable[[np.ndarray], np.ndarray] = lambda v: np.power(v, p)  # noqa: E731
    if p == int(p):
        if int(p) % 2:  # odd: one piece over the reals (p < 0: each side of 0)
            odd_inv: Callable[[np.ndarray], np.ndarray] = lambda v: np.sign(v) * np.power(np.abs(v), 1.0 / p)  # noqa: E731
            if p > 0:
                return _Monotone(Step(text, f, odd_inv, True))
            return _Pieces(text, (Step(text, f, odd_inv, False, 0.0, INF), Step(text, f, odd_inv, False, -INF, -0.0)))
        neg_inv: Callable[[np.ndarray], np.ndarray] = lambda v: -np.power(v, 1.0 / p)  # noqa: E731
        return _Pieces(text, (Step(text, f, _pow_inv(p), p > 0, 0.0, INF), Step(text, f, neg_inv, p < 0, -INF, -0.0)))
    return _Monotone(Step(text, f, _pow_inv(p), p > 0, 0.0, INF))  # numpy gives NaN below 0


def reciprocal(text: str, c: float) -> _Pieces:
    if c == 0 or not math.isfinite(c):
        raise NotInvertible(f"{text} is constant")
    f: Callable[[np.ndarray], np.ndarray] = lambda v: c / v  # noqa: E731
    return _Pieces(text, (Step(text, f, f, c < 0, 0.0, INF), Step(text, f, f, c < 0, -INF, -0.0)))


def exponential(text: str, c: float) -> _Monotone:
    if not (c > 0 and c != 1 and math.isfinite(c)):
        raise NotInvertible(f"{text} with base {c:g} is not invertible (the base must be positive and not 1)")
    lc = math.log(c)
    return _Monotone(Step(text, lambda v: np.power(c, v), lambda v: np.log(v) / lc, c > 1))


def _m(text: str, f: Any, inv: Any, lo: float = -INF, hi: float = INF, increasing: bool = True) -> _Monotone:
    return _Monotone(Step(text, f, inv, increasing, lo, hi))


#: numpy functions (called as np.f) that are monotone on their domain, with inverses and domains
FUNCTIONS: dict[str, Callable[[str], Any]] = {
    "log": lambda t: _m(t, np.log, np.exp, 0.0),
    "log2": lambda t: _m(t, np.log2, np.exp2, 0.0),
    "log10": lambda t: _m(t, np.log10, lambda v: np.power(10.0, v), 0.0),
    "log1p": lambda t: _m(t, np.log1p, np.expm1, -1.0),
    "exp": lambda t: _m(t, np.exp, np.log),
    "exp2": lambda t: _m(t, np.exp2, np.log2),
    "exp10": lambda t: _m(t, lambda v: np.power(10.0, v), np.log10),  # formulaic's (numpy has none)
    "expm1": lambda t: _m(t, np.expm1, np.log1p),
    "sqrt": lambda t: _m(t, np.sqrt, np.square, 0.0),
    "cbrt": lambda t: _m(t, np.cbrt, lambda v: np.power(v, 3)),
    "sinh": lambda t: _m(t, np.sinh, np.arcsinh),
    "arcsinh": lambda t: _m(t, np.arcsinh, np.sinh),
    "tanh": lambda t: _m(t, np.tanh, np.arctanh),
    "arctanh": lambda t: _m(t, np.arctanh, np.tanh, -1.0, 1.0),
    "arctan": lambda t: _m(t, np.arctan, np.tan),
    "arcsin": lambda t: _m(t, np.arcsin, np.sin, -1.0, 1.0),
    "negative": lambda t: affine(t, -1.0, 0.0),
    "square": lambda t: power(t, 2.0),
    "reciprocal": lambda t: reciprocal(t, 1.0),
    "abs": lambda t: _Pieces(
        t, (Step(t, np.abs, lambda v: v, True, 0.0), Step(t, np.abs, np.negative, False, dom_hi=-0.0))
    ),
    "cosh": lambda t: _Pieces(
        t, (Step(t, np.cosh, np.arccosh, True, 0.0), Step(t, np.cosh, lambda v: -np.arccosh(v), False, dom_hi=-0.0))
    ),
}
FUNCTIONS["absolute"] = FUNCTIONS["fabs"] = FUNCTIONS["abs"]
#: formulaic's transforms usable without "np." in a formula
BARE = {"log", "log2", "log10", "exp", "exp2", "exp10"}
#: numpy functions a user may try that are not monotone (a clearer refusal than "unknown")
NOT_MONOTONE = {"sin", "cos", "tan", "sign", "round", "floor", "ceil", "rint", "trunc", "mod", "fmod", "clip"}

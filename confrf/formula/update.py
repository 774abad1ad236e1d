"""R's ``update.formula``: a new formula from an old one, with ``.`` standing for the old side.

``update_formula("y ~ a + b*c", ". ~ . - b:c")`` is ``"y ~ a + b + c"``: each
``.`` on the left of the new formula is the old left-hand side, each ``.`` on
the right is the old right-hand side (in parentheses), and the right-hand side
is then simplified on formulaic's parsed terms (``-`` removes terms, ``- 1``
the intercept, ``a*b`` expands), as R's ``update`` simplifies with
``terms.formula``. A new formula without ``.`` replaces the old one as typed.
"""

from __future__ import annotations

import re
from typing import Any

from formulaic import Formula
from formulaic.errors import FormulaicError

from ..exceptions import FormulaError
from .messages import clean
from .parse import _DOT, expand_dot, r_power

__all__ = ["update_formula"]

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_ATOM = re.compile(r"^(?:[A-Za-z_][\w.]*(?:\(.*\))?|`[^`]*`)$", re.S)


def _factor_text(factor: Any) -> str:
    expr = str(factor.expr)
    if factor.eval_method.value == "lookup" and not _IDENTIFIER.match(expr):
        return f"`{expr}`"  # a column name that is not a Python name (Sepal.Length, "my col")
    return expr


def simplify_rhs(rhs: str, formula: str = "") -> str:
    """The right-hand side ``rhs`` as formulaic's terms, written back: ``(a + b*c) - b:c`` -> ``a + b + c``."""
    try:
        terms = list(Formula(r_power(rhs)))
    except (FormulaicError, SyntaxError) as exc:
        raise FormulaError(f"cannot parse the updated formula's right-hand side {rhs!r}: {clean(exc)}") from None
    intercept = False
    parts = []
    for term in terms:
        text = str(term)
        if text == "1":
            intercept = True
            continue
        if any(f.eval_method.value == "literal" for f in term.factors):
            raise FormulaError(f"the updated formula {formula or rhs!r} has a constant term {text!r}; remove it")
        parts.append(":".join(_factor_text(f) for f in term.factors))
    if not parts:
        return "1" if intercept else "0"
    return " + ".join(parts) + ("" if intercept else " - 1")


def update_formula(old: str, new: str, data: Any = None) -> str:
    """R's ``update(old, new)`` rule for formulas (``.`` is the old side).

    Parameters
    ----------
    old : str
        The fitted formula, e.g. ``"y ~ a + b"``.
    new : str
        The change, e.g. ``". ~ . - b"``, ``". ~ . + c"``, ``"np.log(.) ~ ."``
        or ``"~ . + c"`` (an empty left side keeps the old one).
    data : DataFrame, optional
        The fit's data, needed when ``old`` itself uses ``.`` for every
        other column (``y ~ .``): that dot is expanded first, so that
        ``- x`` can remove one of them.

    Returns
    -------
    str

    Examples
    --------
    >>> update_formula("y ~ a + b*c", ". ~ . - b:c")
    'y ~ a + b + c'
    >>> update_formula("y ~ a + b", "np.log(.) ~ . - 1")
    'np.log(y) ~ a + b - 1'
    """
    if not isinstance(new, str) or new.count("~") != 1:
        raise FormulaError(
            f"the updated formula must be a string with one ~, e.g. '. ~ . - x' or '. ~ . + z', got {new!r}."
        )
    old_lhs, old_rhs = (part.strip() for part in old.split("~", 1))
    new_lhs, new_rhs = (part.strip() for part in new.split("~", 1))
    if not new_rhs:
        raise FormulaError(f"the updated formula {new!r} has nothing on the right of ~; write e.g. '. ~ . - x'.")
    new_lhs = new_lhs or "."
    if new_lhs == ".":
        lhs = old_lhs
    else:
        wrapped = old_lhs if _ATOM.match(old_lhs) else f"({old_lhs})"
        lhs = _DOT.sub(lambda m: wrapped, new_lhs)
    if not _DOT.search(new_rhs):
        return f"{lhs} ~ {new_rhs}"
    if _DOT.search(old_rhs):  # "y ~ ." stood for every other column of the data: spell them out first
        if data is None:
            raise FormulaError(f"formula {old!r} uses '.', which needs the fit's data to be updated.")
        old_rhs = expand_dot(f"{old_lhs} ~ {old_rhs}", data).split("~", 1)[1].strip()
    rhs = _DOT.sub(lambda m: f"({old_rhs})", new_rhs)
    return f"{lhs} ~ {simplify_rhs(rhs, new)}"

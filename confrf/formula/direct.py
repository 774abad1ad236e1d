"""A design matrix read straight from numeric columns: the fast path of :meth:`confrf.formula.Design.transform`.

formulaic spends most of a prediction's design time on per-term
bookkeeping; for formulas whose every design column is a numeric
column or a product of numeric columns (``y ~ x1 + x2 + x1:x2``),
the matrix is those columns, computed here exactly as formulaic
computes them (same factor order, same float64 arithmetic), so the
result is bit for bit the same (tests/test_formula_direct.py checks
it on many formulas). Anything else, including a design value that
is NaN/inf (whose error formulaic's path words), is left to formulaic.
"""

from __future__ import annotations

import numpy as np
from formulaic import ModelSpec

from .frame import NumericBlock


def direct_plan(spec: ModelSpec, variables: list[str], keep: np.ndarray) -> list[tuple[str, ...]] | None:
    """Per kept design column (positions ``keep``), the numeric data columns it multiplies; None if any is more."""
    structure = getattr(spec, "structure", None)
    if not structure or spec.output not in ("pandas", "numpy"):
        return None
    columns: list[tuple[str, ...] | None] = []
    for entry in structure:
        scoped = list(entry.scoped_terms)
        plan: tuple[str, ...] | None = None
        if len(scoped) == 1 and scoped[0].scale == 1 and len(entry.columns) == 1 and scoped[0].factors:
            factors = [sf.factor.factor for sf in scoped[0].factors]
            if all(
                f.eval_method.value == "lookup"
                and f.expr in variables
                and f.expr in spec.encoder_state
                and spec.encoder_state[f.expr][0].value == "numerical"
                and not spec.encoder_state[f.expr][1]
                for f in factors
            ):
                plan = tuple(f.expr for f in factors)
        columns.extend([plan] * len(entry.columns))
    if len(columns) != len(spec.column_names):
        return None
    kept = [columns[i] for i in keep]
    if any(c is None for c in kept):
        return None
    return [c for c in kept if c is not None]


def direct_matrix(plan: list[tuple[str, ...]], block: NumericBlock) -> np.ndarray | None:
    """The design matrix of ``plan`` (:func:`direct_plan`) from the rows of ``block``; None where formulaic decides."""
    where: list[list[int]] = []
    for factors in plan:
        pos = [block.position.get(f, -1) for f in factors]
        if min(pos) < 0:
            return None  # a column that is not plain NumPy numbers (bool, nullable, ...): formulaic decides
        where.append(pos)
    singles = [pos[0] if len(pos) == 1 else 0 for pos in where]
    X = np.ascontiguousarray(np.take(block.values, singles, axis=1))  # one gather for the plain columns
    for j, pos in enumerate(where):
        if len(pos) == 1:
            continue
        # formulaic multiplies the raw columns in their own dtype: only float64 gives the same products here
        if any(block.dtypes[p] != np.float64 for p in pos):
            return None
        prod = block.values[:, pos[0]]
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow goes to formulaic, which warns
            for p in pos[1:]:
                prod = np.multiply(prod, block.values[:, p])
        X[:, j] = prod
    if not np.isfinite(X).all():
        return None
    return X

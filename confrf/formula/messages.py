"""Message helpers of the formula layer: clean formulaic text, show values, name bad cells."""

from __future__ import annotations

import re

import numpy as np
from formulaic import ModelSpec

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def clean(msg: object) -> str:
    # formulaic colours the offending token with ANSI escapes.
    return _ANSI.sub("", str(msg)).strip()


def show(values: list, limit: int = 10) -> str:
    # numpy scalars print as np.int64(1); show plain Python values.
    shown = ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in values[:limit])
    more = f", ... ({len(values) - limit} more)" if len(values) > limit else ""
    return f"[{shown}{more}]"


def describe_bad(per_col: dict[str, int], n_rows: int, where: str) -> str:
    cols = "; ".join(f"{name!r} ({k} rows)" for name, k in per_col.items())
    return f"NaN or inf in {where}: {cols}; {n_rows} row(s) affected in total"


def describe_matrix(spec: ModelSpec, bad_x: np.ndarray, bad_y: np.ndarray, response: str, variables: list[str]) -> str:
    """Name the design columns (and their raw columns) holding NaN/inf."""
    parts = []
    names = list(spec.column_names)
    term_vars = {str(t): v for t, v in spec.term_variables.items()}
    col_term = {}
    for term, sl in spec.term_slices.items():
        for i in range(len(names))[sl]:
            col_term[i] = str(term)
    for j in np.flatnonzero(bad_x.any(axis=0)):
        raw = [v for v in variables if v in term_vars.get(col_term.get(j, ""), set())]
        src = f" (from column(s) {show(raw)})" if raw else ""
        parts.append(f"design column {names[j]!r}{src} ({int(bad_x[:, j].sum())} rows)")
    if bad_y.any():
        parts.append(f"response {response!r} ({int(bad_y.sum())} rows)")
    n_rows = int((bad_x.any(axis=1) | bad_y).sum())
    return "the formula's transforms give NaN or inf in " + "; ".join(parts) + f"; {n_rows} row(s) affected in total"

"""R-style formulas (``"price ~ carat + C(cut)"``) turned into design matrices.

A thin wrapper over formulaic: the formula is parsed once at fit, and the
fitted right-hand-side ``ModelSpec`` (levels, stateful-transform state such
as the mean used by ``center(x)``) is re-applied to new data.  On top of
formulaic this module adds the checks formulaic leaves out: no row is ever
dropped silently, NaN/inf raise, and unseen categorical levels raise
instead of being coded as zeros.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import re
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, ModelSpec, model_matrix
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.transforms import TRANSFORMS

from .exceptions import FormulaError, InputError

__all__ = ["Design"]

_NA_ACTIONS = ("raise", "drop")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# `C(g)`, `C(g, levels=...)`, `` C(`my col`) ``: a categorical made of one raw column.
_C_OF_COLUMN = re.compile(r"^C\(\s*(`?)(?P<name>.+?)\1\s*(?:,.*)?\)$", re.S)


def _as_frame(data: Any, what: str) -> pd.DataFrame:
    """Accept a DataFrame or a dict of arrays; anything else is a TypeError."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        try:
            return pd.DataFrame(dict(data))
        except (ValueError, TypeError) as exc:
            raise InputError(
                f"cannot turn the dict passed as {what} into a DataFrame: {exc}"
            ) from exc
    raise TypeError(
        f"{what} must be a pandas DataFrame (or a dict of equal-length arrays), "
        f"got {type(data).__name__}"
    )


def _clean(msg: object) -> str:
    # formulaic colours the offending token with ANSI escapes.
    return _ANSI.sub("", str(msg)).strip()


def _show(values: list, limit: int = 10) -> str:
    # numpy scalars print as np.int64(1); show plain Python values.
    shown = ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in values[:limit])
    more = f", ... ({len(values) - limit} more)" if len(values) > limit else ""
    return f"[{shown}{more}]"


def _bad_mask(col: pd.Series) -> np.ndarray:
    """True where a raw value is missing, or infinite for numeric columns."""
    # pandas 3 (copy-on-write) hands out read-only arrays: never update in place.
    bad = col.isna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = bad | ~np.isfinite(vals)
    return bad


def _bad_rows(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Rows with NaN/inf in any of `columns`, and the count per offending column."""
    mask = np.zeros(len(frame), dtype=bool)
    per_col: dict[str, int] = {}
    for name in columns:
        bad = _bad_mask(frame[name])
        if bad.any():
            per_col[name] = int(bad.sum())
            mask |= bad
    return mask, per_col


def _drop_unused_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Remove unused categories of pandas ``category`` columns.

    At fit, an unused category would become an all-zero design column that
    new rows could then silently use; at transform, pandas 3 warns (and will
    raise) when formulaic recodes a categorical that has extra categories.
    """
    cats = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return frame
    frame = frame.copy()
    for c in cats:
        frame[c] = frame[c].cat.remove_unused_categories()
    return frame


def _describe_bad(per_col: dict[str, int], n_rows: int, where: str) -> str:
    cols = "; ".join(f"{name!r} ({k} rows)" for name, k in per_col.items())
    return f"NaN or inf in {where}: {cols}; {n_rows} row(s) affected in total"


def _evaluate(spec_or_formula: Any, frame: pd.DataFrame, **kwargs: Any) -> Any:
    """Run formulaic with unseen/out-of-range levels escalated to errors.

    formulaic only warns (DataMismatchWarning) and codes such values as all
    zeros, i.e. as the base level; that must never pass silently.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            if isinstance(spec_or_formula, ModelSpec):
                return spec_or_formula.get_model_matrix(frame, context={}, **kwargs)
            return model_matrix(spec_or_formula, frame, context={}, **kwargs)
        except DataMismatchWarning as exc:
            raise InputError(
                f"a categorical term has values outside its levels: {_clean(exc)}; "
                "map them to a known level or refit with data that contains them"
            ) from None


class Design:
    """Fitted design: the formula, the fitted right-hand-side ModelSpec, the response name.

    Build one with :meth:`Design.fit`; then :meth:`transform` gives the
    design matrix of new rows and :meth:`response` the response of
    held-out rows.  The intercept column is never part of the matrix (base
    models add their own); :attr:`has_intercept` says whether the formula
    had one.

    Attributes
    ----------
    formula : str
        The formula as given.
    response_name : str
        The left-hand side, e.g. ``"price"`` or ``"np.log(price)"``.
    column_names : list of str
        Names of the design columns (no intercept), in matrix order.
    variables : list of str
        Raw data columns used on the right-hand side.
    has_intercept : bool
        Whether the formula had an intercept (``"y ~ x"`` yes, ``"y ~ 0 + x"`` no).
    na_action : str
        ``"raise"`` or ``"drop"``, as passed to :meth:`fit`.
    n_dropped : int
        Rows dropped at fit (0 unless ``na_action="drop"``).
    dropped_index : pandas.Index
        Index labels of those rows.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 4.0],
    ...                    "g": ["a", "b", "a", "b"]})
    >>> design, X, y, idx = Design.fit("y ~ center(x) + C(g)", df)
    >>> design.column_names
    ['center(x)', 'C(g)[T.b]']
    >>> design.transform(pd.DataFrame({"x": [2.5], "g": ["b"]})).tolist()
    [[0.0, 1.0]]
    """

    formula: str
    response_name: str
    column_names: list[str]
    variables: list[str]
    has_intercept: bool
    na_action: str
    n_dropped: int
    dropped_index: pd.Index

    def __init__(
        self,
        *,
        formula: str,
        rhs_spec: ModelSpec,
        lhs_spec: ModelSpec,
        response_name: str,
        variables: list[str],
        response_variables: list[str],
        na_action: str,
        dropped_index: pd.Index,
        levels: list[tuple[str, str, list]],
        numeric: list[str],
    ) -> None:
        self.formula = formula
        self.response_name = response_name
        self.variables = variables
        self.na_action = na_action
        self.dropped_index = dropped_index
        self.n_dropped = len(dropped_index)
        self._rhs_spec = rhs_spec
        self._lhs_spec = lhs_spec
        self._response_variables = response_variables
        self._levels = levels  # (factor expression, raw column, levels seen at fit)
        self._numeric = numeric  # RHS columns that were numeric at fit
        names = list(rhs_spec.column_names)
        slices = {str(term): sl for term, sl in rhs_spec.term_slices.items()}
        self.has_intercept = "1" in slices
        drop = set(range(len(names))[slices["1"]]) if self.has_intercept else set()
        self._keep = np.array([i for i in range(len(names)) if i not in drop], dtype=np.intp)
        self.column_names = [names[i] for i in self._keep]

    def __repr__(self) -> str:
        return (
            f"Design({self.formula!r}, columns={len(self.column_names)}, "
            f"intercept={self.has_intercept})"
        )

    # ------------------------------------------------------------------ fit
    @classmethod
    def fit(
        cls, formula: str, data: pd.DataFrame, *, na_action: str = "raise"
    ) -> tuple["Design", np.ndarray, np.ndarray, pd.Index]:
        """Parse `formula` on `data` and build the design matrix and response.

        Parameters
        ----------
        formula : str
            An R/statsmodels-style formula with one response, e.g.
            ``"price ~ carat + C(cut) + np.log(depth)"``.
        data : pandas.DataFrame or dict of arrays
            The training data.
        na_action : {"raise", "drop"}, default "raise"
            What to do with rows having NaN/inf in a used column (or whose
            design row is NaN/inf, e.g. ``np.log(0)``): raise an
            :class:`~confrf.exceptions.InputError`, or drop them and record
            it in :attr:`n_dropped` / :attr:`dropped_index`.

        Returns
        -------
        design : Design
        X : numpy.ndarray
            Float64, C-contiguous, shape ``(n_used, len(design.column_names))``,
            without the intercept column.
        y : numpy.ndarray
            Float64, shape ``(n_used,)``.
        index_used : pandas.Index
            Index labels of the rows kept (all rows unless ``na_action="drop"``).

        Raises
        ------
        FormulaError
            Bad formula: syntax error, no/several responses, unknown column.
        InputError
            Bad data: NaN/inf, non-numeric response, fewer than 2 rows.
        TypeError
            `data` is not a DataFrame or a dict.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 9.0], "x": [1.0, 2.0, np.nan, 4.0]})
        >>> design, X, y, idx = Design.fit("y ~ x", df, na_action="drop")
        >>> X.tolist(), y.tolist(), list(idx), design.n_dropped
        ([[1.0], [2.0], [4.0]], [1.0, 2.0, 9.0], [0, 1, 3], 1)
        """
        if na_action not in _NA_ACTIONS:
            raise InputError(f"na_action must be 'raise' or 'drop', got {na_action!r}")
        data = _as_frame(data, "data")
        parsed = _parse(_expand_dot(formula, data))
        if len(data) < 2:
            raise InputError(f"data has {len(data)} row(s); at least 2 are needed to fit")
        rhs_vars = _used_columns(parsed.rhs, data)
        lhs_vars = _used_columns(parsed.lhs, data)
        _check_columns(formula, rhs_vars | lhs_vars, data)
        rhs_vars, lhs_vars = _ordered(data, rhs_vars), _ordered(data, lhs_vars)
        if not lhs_vars:
            raise FormulaError(
                f"the response {str(parsed.lhs)!r} in formula {formula!r} does not use "
                "any data column; put a numeric column on the left of ~"
            )
        dup = sorted(set(data.columns[data.columns.duplicated()]) & set(rhs_vars + lhs_vars))
        if dup:
            raise InputError(f"data has several columns named {_show(dup)}; rename them")
        for name in lhs_vars:
            _check_numeric_response(data[name], name)

        fix = (
            "; drop or impute these rows, or pass na_action='drop' to drop them "
            "at fit (the summary will report it)"
        )
        keep = np.ones(len(data), dtype=bool)
        for attempt in range(3):
            used = list(dict.fromkeys(rhs_vars + lhs_vars))
            bad, per_col = _bad_rows(data, used)
            if bad.any() and na_action == "raise":
                raise InputError(
                    _describe_bad(per_col, int(bad.sum()), "the columns used by the formula")
                    + fix
                )
            keep = keep & ~bad
            if keep.sum() < 2:
                break
            mm = _materialize(formula, parsed, _drop_unused_categories(data.loc[keep, used]))
            # Safety net: formulaic knows best which data columns it read.
            seen_rhs = _ordered(data, mm.rhs.model_spec.variables_by_source.get("data", set()))
            seen_lhs = _ordered(data, mm.lhs.model_spec.variables_by_source.get("data", set()))
            if not set(seen_rhs + seen_lhs) <= set(used):
                rhs_vars = _ordered(data, set(rhs_vars) | set(seen_rhs))
                lhs_vars = _ordered(data, set(lhs_vars) | set(seen_lhs))
                continue
            rhs_vars, lhs_vars = seen_rhs, seen_lhs
            # NaN/inf made by the transforms themselves (np.log(0)) show up
            # only in the matrices.
            X_full = mm.rhs.to_numpy(dtype=np.float64)
            y2 = mm.lhs.to_numpy(dtype=np.float64)
            bad_x = ~np.isfinite(X_full)
            bad_y = ~np.isfinite(y2).all(axis=1)
            rows = bad_x.any(axis=1) | bad_y
            if not rows.any():
                break
            if na_action == "raise" or attempt == 2:
                raise InputError(
                    _describe_matrix(mm.rhs.model_spec, bad_x, bad_y, str(parsed.lhs), rhs_vars)
                    + fix
                )
            # Refit on the remaining rows so stateful transforms (center,
            # scale, poly, ...) learn their state from the rows actually used.
            keep[np.flatnonzero(keep)[rows]] = False
        else:  # pragma: no cover - only if formulaic keeps finding new columns
            raise FormulaError(f"could not settle which columns formula {formula!r} uses")
        if keep.sum() < 2:
            raise InputError(
                f"only {int(keep.sum())} row(s) left after dropping rows with NaN/inf "
                f"(of {len(data)}); at least 2 are needed to fit"
            )
        if y2.shape[1] != 1:
            raise FormulaError(
                f"the response {str(parsed.lhs)!r} gives {y2.shape[1]} columns; "
                "it must be a single numeric column"
            )

        rhs_spec = mm.rhs.model_spec
        design = cls(
            formula=formula,
            rhs_spec=rhs_spec,
            lhs_spec=mm.lhs.model_spec,
            response_name=str(parsed.lhs),
            variables=rhs_vars,
            response_variables=lhs_vars,
            na_action=na_action,
            dropped_index=data.index[~keep],
            levels=_categorical_levels(rhs_spec, rhs_vars),
            numeric=[v for v in rhs_vars if pd.api.types.is_numeric_dtype(data[v])],
        )
        X = np.ascontiguousarray(X_full[:, design._keep])
        return design, X, np.ascontiguousarray(y2[:, 0]), data.index[keep]

    # ------------------------------------------------------------ transform
    def transform(self, newdata: pd.DataFrame) -> np.ndarray:
        """Design matrix for new rows: same columns, same order, no intercept.

        Uses the fit-time ModelSpec, so levels and stateful transforms
        (``center``, ``scale``, ``poly``, ...) are those learned at fit.
        One row per input row, in input order, always: rows with NaN/inf
        raise (``na_action="drop"`` applies to fit only).

        Parameters
        ----------
        newdata : pandas.DataFrame or dict of arrays
            Must contain :attr:`variables`; the response and other columns
            may be absent or present (they are ignored).

        Returns
        -------
        numpy.ndarray
            Float64, C-contiguous, shape ``(len(newdata), len(column_names))``.

        Raises
        ------
        InputError
            A missing column, NaN/inf, or a categorical level not seen at fit.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0], "g": ["a", "b", "c"]})
        >>> design, *_ = Design.fit("y ~ g", df)
        >>> design.transform({"g": ["c", "a"]}).tolist()
        [[0.0, 1.0], [0.0, 0.0]]
        """
        frame = _as_frame(newdata, "newdata")
        missing = [v for v in self.variables if v not in frame.columns]
        if missing:
            raise InputError(
                f"newdata lacks column(s) {_show(missing)} used by formula "
                f"{self.formula!r}; it needs {_show(self.variables)}"
            )
        frame = frame[self.variables]
        bad, per_col = _bad_rows(frame, self.variables)
        if bad.any():
            raise InputError(
                _describe_bad(per_col, int(bad.sum()), "newdata")
                + "; drop or impute these rows before predicting (one prediction "
                "is made per row, so rows are never dropped here)"
            )
        # A numeric column arriving as strings would be re-coded as categorical.
        wrong = [v for v in self._numeric if not pd.api.types.is_numeric_dtype(frame[v])]
        if wrong:
            raise InputError(
                "column(s) "
                + ", ".join(f"{v!r} (dtype {frame[v].dtype})" for v in wrong)
                + " were numeric at fit but are not in newdata; convert them, "
                "e.g. with pd.to_numeric"
            )
        self._check_levels(frame)
        if len(frame) == 0:
            return np.empty((0, len(self.column_names)), dtype=np.float64)
        try:
            mm = _evaluate(self._rhs_spec, _drop_unused_categories(frame))
        except FormulaicError as exc:
            raise InputError(
                f"cannot apply formula {self.formula!r} to newdata: {_clean(exc)}; "
                "check that its columns have the same types as at fit"
            ) from None
        X = mm.to_numpy(dtype=np.float64)
        bad_x = ~np.isfinite(X)
        if bad_x.any():
            no_y = np.zeros(len(X), dtype=bool)
            raise InputError(
                _describe_matrix(self._rhs_spec, bad_x, no_y, self.response_name, self.variables)
                + " in newdata; fix or remove these rows before predicting"
            )
        return np.ascontiguousarray(X[:, self._keep])

    def response(self, data: pd.DataFrame) -> np.ndarray:
        """The response evaluated on `data` (e.g. held-out rows), float64 1-D.

        Any transform on the left (``np.log(price)``) is applied.  NaN/inf
        raise; no row is dropped.

        Parameters
        ----------
        data : pandas.DataFrame or dict of arrays
            Must contain the response column(s).

        Returns
        -------
        numpy.ndarray
            Float64, shape ``(len(data),)``.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0], "x": [0.0, 1.0, 2.0]})
        >>> design, *_ = Design.fit("y ~ x", df)
        >>> design.response({"y": [5.0, 6.0]}).tolist()
        [5.0, 6.0]
        """
        frame = _as_frame(data, "data")
        missing = [v for v in self._response_variables if v not in frame.columns]
        if missing:
            raise InputError(
                f"data lacks the response column(s) {_show(missing)} of formula "
                f"{self.formula!r}"
            )
        for name in self._response_variables:
            _check_numeric_response(frame[name], name)
        frame = frame[self._response_variables]
        bad, per_col = _bad_rows(frame, self._response_variables)
        if bad.any():
            raise InputError(
                _describe_bad(per_col, int(bad.sum()), "the response")
                + "; drop or impute these rows first"
            )
        if len(frame) == 0:
            return np.empty(0, dtype=np.float64)
        try:
            y = _evaluate(self._lhs_spec, frame).to_numpy(dtype=np.float64)
        except FormulaicError as exc:
            raise InputError(
                f"cannot evaluate the response {self.response_name!r} on data: {_clean(exc)}"
            ) from None
        bad_y = ~np.isfinite(y).all(axis=1)
        if bad_y.any():
            raise InputError(
                f"the response {self.response_name!r} is NaN or inf in "
                f"{int(bad_y.sum())} row(s); drop or fix these rows first"
            )
        return np.ascontiguousarray(y[:, 0])

    def _check_levels(self, frame: pd.DataFrame) -> None:
        """Raise on categorical values not seen at fit, before formulaic codes them as 0."""
        problems = []
        for expr, column, levels in self._levels:
            values = frame[column]
            unseen = ~values.isin(levels).to_numpy(dtype=bool)
            if unseen.any():
                new = list(pd.unique(values[unseen]))
                problems.append(
                    f"column {column!r} (term {expr!r}) has level(s) {_show(new)} not "
                    f"seen at fit in {int(unseen.sum())} row(s); levels seen at fit: "
                    f"{_show(list(levels), 30)}"
                )
        if problems:
            raise InputError(
                "; ".join(problems)
                + "; map them to a seen level or refit with data that contains them"
            )


# ---------------------------------------------------------------- helpers
_DOT = re.compile(r"(?<![\w.`])\.(?![\w.`])")


def _expand_dot(formula: Any, data: pd.DataFrame) -> Any:
    """R's ``y ~ .``: the dot stands for every column not used in the response."""
    if not isinstance(formula, str) or "~" not in formula:
        return formula
    lhs, rhs = formula.split("~", 1)
    if not _DOT.search(rhs):
        return formula
    used = _expr_names(lhs.strip())
    cols = [c for c in data.columns if str(c) not in used]
    if not cols:
        raise FormulaError(f"'.' in {formula!r} stands for no column: data has only the response")
    return lhs + "~" + _DOT.sub(lambda m: "(" + " + ".join(f"`{c}`" for c in cols) + ")", rhs)


def _parse(formula: Any) -> Any:
    """Parse once with formulaic, after the checks formulaic does not make."""
    if not isinstance(formula, str):
        raise FormulaError(
            f"the formula must be a string like 'y ~ x1 + C(g)', got {type(formula).__name__}"
        )
    n_tilde = formula.count("~")
    if n_tilde == 0 or not formula.split("~", 1)[0].strip():
        raise FormulaError(
            f"the formula needs a response on the left of ~ (got {formula!r}); "
            "write e.g. 'y ~ x1 + x2'"
        )
    if n_tilde > 1:
        raise FormulaError(f"the formula must contain exactly one ~, got {formula!r}")
    try:
        parsed = Formula(formula)
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse formula {formula!r}: {_clean(exc)}") from None
    if len(parsed.lhs) != 1:
        raise FormulaError(
            f"the formula must have a single response on the left of ~, got "
            f"{str(parsed.lhs)!r} in {formula!r}"
        )
    return parsed


def _expr_names(expr: str) -> set[str]:
    """Bare names read by a Python factor expression (backticks allowed)."""
    quoted: dict[str, str] = {}

    def _sub(m: re.Match) -> str:
        key = f"_confrf_quoted_{len(quoted)}"
        quoted[key] = m.group(1)
        return key

    try:
        tree = ast.parse(re.sub(r"`([^`]*)`", _sub, expr), mode="eval")
    except SyntaxError:
        return set()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return {quoted.get(n, n) for n in names}


def _used_columns(part: Any, data: pd.DataFrame) -> set[str]:
    """Names one side of the formula needs from the data.

    formulaic 1.2.2's ``required_variables`` misses the arguments of its
    stateful transforms (``center(x)`` -> ``set()``), so the factor
    expressions are also read with :mod:`ast`.  Names that formulaic
    resolves itself (``np``, ``C``, ``center``, builtins) are left out
    unless the data has such a column.
    """
    names = set(part.required_variables)
    for term in part:
        for factor in term.factors:
            if factor.eval_method.value == "python":
                names |= _expr_names(factor.expr)
    return {
        n for n in names
        if n in data.columns or (n not in TRANSFORMS and not hasattr(builtins, n))
    }


def _ordered(data: pd.DataFrame, names: Any) -> list[str]:
    """`names` that are columns of `data`, in the data's column order."""
    names = set(names)
    return [c for c in data.columns if c in names]


def _check_columns(formula: str, required: set[str], data: pd.DataFrame) -> None:
    """Name every column the formula uses that `data` lacks (with close matches)."""
    columns = [str(c) for c in data.columns]
    missing = sorted(v for v in required if v not in data.columns)
    if not missing:
        return
    hints = []
    for name in missing:
        close = difflib.get_close_matches(name, columns, n=3)
        if close:
            hints.append(f"{name!r}: did you mean {', '.join(map(repr, close))}?")
    raise FormulaError(
        f"formula {formula!r} uses name(s) {_show(missing)} that are not columns of data"
        + (f" ({'; '.join(hints)})" if hints else "")
        + f"; available columns: {_show(columns, 30)}"
    )


def _check_numeric_response(col: pd.Series, name: str) -> None:
    if not pd.api.types.is_numeric_dtype(col):
        raise InputError(
            f"the response must be numeric; column {name!r} has dtype {col.dtype} "
            "(convert it, e.g. with pd.to_numeric)"
        )


def _materialize(formula: str, parsed: Any, frame: pd.DataFrame) -> Any:
    # na_action="ignore": our own checks (before and after) decide about
    # NaN/inf; formulaic's default "drop" would lose rows silently.
    try:
        return _evaluate(parsed, frame, na_action="ignore")
    except FormulaicError as exc:
        raise FormulaError(
            f"cannot evaluate formula {formula!r} on data: {_clean(exc)}"
        ) from None


def _describe_matrix(
    spec: ModelSpec, bad_x: np.ndarray, bad_y: np.ndarray, response: str, variables: list[str]
) -> str:
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
        src = f" (from column(s) {_show(raw)})" if raw else ""
        parts.append(f"design column {names[j]!r}{src} ({int(bad_x[:, j].sum())} rows)")
    if bad_y.any():
        parts.append(f"response {response!r} ({int(bad_y.sum())} rows)")
    n_rows = int((bad_x.any(axis=1) | bad_y).sum())
    return (
        "the formula's transforms give NaN or inf in " + "; ".join(parts)
        + f"; {n_rows} row(s) affected in total"
    )


def _categorical_levels(spec: ModelSpec, variables: list[str]) -> list[tuple[str, str, list]]:
    """(factor, raw column, fit levels) for categoricals made of one raw column.

    Other categoricals (e.g. ``C(np.round(x))``) are still guarded: their
    unseen values make formulaic warn, which `_evaluate` turns into an error.
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

"""The fitted design: a formula, its fitted formulaic ModelSpec, and the response."""

from __future__ import annotations

import numpy as np
import pandas as pd
from formulaic import ModelSpec
from formulaic.errors import FormulaicError

from ..exceptions import FormulaError, InputError
from .direct import direct_matrix, direct_plan
from .frame import (
    NumericBlock,
    as_frame,
    as_training_frame,
    bad_rows,
    drop_unused_categories,
    prepare_columns,
)
from .messages import clean, describe_bad, describe_matrix, show
from .parse import (
    bare_columns,
    categorical_levels,
    check_columns,
    evaluate,
    expand_dot,
    materialize,
    ordered,
    parse,
    seen_columns,
    used_columns,
)
from .response import check_numeric_response, evaluate_response, refuse_boolean_response

__all__ = ["Design"]

_NA_ACTIONS = ("raise", "drop")


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
        self.kept_positions: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"Design({self.formula!r}, columns={len(self.column_names)}, intercept={self.has_intercept})"

    # ------------------------------------------------------------------ fit
    @classmethod
    def fit(
        cls, formula: str, data: pd.DataFrame, *, na_action: str = "raise"
    ) -> tuple[Design, np.ndarray, np.ndarray, pd.Index]:
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
        data = as_training_frame(data, "data")
        parsed = parse(expand_dot(formula, data))
        if len(data) < 2:
            raise InputError(f"data has {len(data)} row(s); at least 2 are needed to fit")
        rhs_used = used_columns(parsed.rhs, data)
        lhs_used = used_columns(parsed.lhs, data)
        check_columns(formula, rhs_used | lhs_used, data)
        rhs_vars, lhs_vars = ordered(data, rhs_used), ordered(data, lhs_used)
        if not lhs_vars:
            raise FormulaError(
                f"the response {str(parsed.lhs)!r} in formula {formula!r} does not use "
                "any data column; put a numeric column on the left of ~"
            )
        both = [v for v in lhs_vars if v in rhs_vars]
        if both:  # y ~ x + y: the response would predict itself
            raise FormulaError(
                f"column(s) {show(both)} of the response {str(parsed.lhs)!r} also appear on the right of ~ in "
                f"formula {formula!r}; a response cannot be its own predictor: remove it from the right-hand side"
            )
        if "Intercept" in rhs_vars:  # formulaic names the intercept column "Intercept" too
            raise FormulaError(
                "data has a column named 'Intercept', which clashes with the name of the formula's intercept; "
                "rename it, e.g. data.rename(columns={'Intercept': 'intercept_'})"
            )
        _check_unique(data, rhs_vars + lhs_vars, "data")
        # R/statsmodels users expect numbers-as-objects to stay numbers and dates to be refused
        data = prepare_columns(data, rhs_vars + lhs_vars, "data", bare=bare_columns(parsed.rhs) & set(rhs_vars))
        for name in lhs_vars:
            check_numeric_response(data[name], name, str(parsed.lhs))

        fix = "; drop or impute these rows, or pass na_action='drop' to drop them at fit (the summary will report it)"
        keep = np.ones(len(data), dtype=bool)
        for attempt in range(3):
            used = list(dict.fromkeys(rhs_vars + lhs_vars))
            bad, per_col = bad_rows(data, used)
            if bad.any() and na_action == "raise":
                raise InputError(describe_bad(per_col, int(bad.sum()), "the columns used by the formula") + fix)
            keep = keep & ~bad
            if keep.sum() < 2:
                break
            frame = drop_unused_categories(data.loc[keep, used])
            mm = materialize(formula, parsed, frame)
            # Safety net: formulaic knows best which data columns it read.
            seen_rhs = seen_columns(mm.rhs.model_spec, data)
            seen_lhs = seen_columns(mm.lhs.model_spec, data)
            if not set(seen_rhs + seen_lhs) <= set(used):
                rhs_vars = ordered(data, set(rhs_vars) | set(seen_rhs))
                lhs_vars = ordered(data, set(lhs_vars) | set(seen_lhs))
                continue
            rhs_vars, lhs_vars = seen_rhs, seen_lhs
            refuse_boolean_response(mm.lhs.model_spec, frame, str(parsed.lhs), formula, data.columns)
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
                raise InputError(describe_matrix(mm.rhs.model_spec, bad_x, bad_y, str(parsed.lhs), rhs_vars) + fix)
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
                f"the response {str(parsed.lhs)!r} gives {y2.shape[1]} columns; it must be a single numeric column"
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
            levels=categorical_levels(rhs_spec, rhs_vars),
            numeric=[v for v in rhs_vars if pd.api.types.is_numeric_dtype(data[v])],
        )
        # positions of the kept rows, for finding a fit's rows again (None: every row was kept)
        design.kept_positions = None if keep.all() else np.flatnonzero(keep)
        X = np.ascontiguousarray(X_full[:, design._keep])
        return design, X, np.ascontiguousarray(y2[:, 0]), data.index[keep]

    # ------------------------------------------------------------ transform
    def transform(self, newdata: pd.DataFrame, what: str = "newdata") -> np.ndarray:
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
        what : str, default "newdata"
            The argument's name, used in error messages (e.g. ``"calib"``).

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
        frame = as_frame(newdata, what)
        missing = [v for v in self.variables if v not in frame.columns]
        if missing:
            raise InputError(
                f"{what} lacks column(s) {show(missing)} used by formula "
                f"{self.formula!r}; it needs {show(self.variables)}"
            )
        _check_unique(frame, self.variables, what)
        frame = prepare_columns(frame[self.variables], self.variables, what)
        block = NumericBlock(frame, self.variables)  # read once: NaN/inf check and design columns
        bad, per_col = bad_rows(frame, self.variables, block)
        if bad.any():
            raise InputError(
                describe_bad(per_col, int(bad.sum()), what)
                + (
                    "; drop or impute these rows before predicting (one prediction "
                    "is made per row, so rows are never dropped here)"
                    if what == "newdata"
                    else f"; drop or impute these rows of {what} first (na_action='drop' applies to the "
                    "training data only, so no row of it is dropped silently)"
                )
            )
        # A numeric column arriving as strings would be re-coded as categorical.
        dtypes = frame.dtypes
        wrong = [v for v in self._numeric if not pd.api.types.is_numeric_dtype(dtypes[v])]
        if wrong:
            raise InputError(
                "column(s) "
                + ", ".join(f"{v!r} (dtype {dtypes[v]})" for v in wrong)
                + f" were numeric at fit but are not numeric in {what}; convert them, "
                "e.g. with pd.to_numeric"
            )
        self._check_levels(frame)
        if len(frame) == 0:
            return np.empty((0, len(self.column_names)), dtype=np.float64)
        X = self._direct_matrix(block)
        return X if X is not None else self._formulaic_matrix(frame, what)

    def _formulaic_matrix(self, frame: pd.DataFrame, what: str) -> np.ndarray:
        """The design matrix of checked, prepared rows, built by formulaic from the fitted ModelSpec."""
        try:
            mm = evaluate(self._rhs_spec, drop_unused_categories(frame))
        except FormulaicError as exc:
            raise InputError(
                f"cannot apply formula {self.formula!r} to {what}: {clean(exc)}; " + _transform_hint(exc)
            ) from None
        X = mm.to_numpy(dtype=np.float64)
        bad_x = ~np.isfinite(X)
        if bad_x.any():
            no_y = np.zeros(len(X), dtype=bool)
            raise InputError(
                describe_matrix(self._rhs_spec, bad_x, no_y, self.response_name, self.variables)
                + f" in {what}; fix or remove these rows before predicting"
            )
        return np.ascontiguousarray(X[:, self._keep])

    def _direct_matrix(self, block: NumericBlock) -> np.ndarray | None:
        """The design matrix read straight from the numeric columns, or None where formulaic must build it.

        For formulas whose every design column is a numeric column or a product of
        numeric columns; see :mod:`confrf.formula.direct`.
        """
        plan = self._direct_plan()
        return None if plan is None else direct_matrix(plan, block)

    def _direct_plan(self) -> list[tuple[str, ...]] | None:
        """Per kept design column, the numeric data columns it is the product of; None if any is more.

        Read once from the fitted ModelSpec's structure and cached; the cache
        is not pickled (``__getstate__``): a loaded result rebuilds it on first use.
        """
        try:
            return self._direct_plan_cache
        except AttributeError:
            pass
        self._direct_plan_cache: list[tuple[str, ...]] | None = direct_plan(self._rhs_spec, self.variables, self._keep)
        return self._direct_plan_cache

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_direct_plan_cache", None)
        return state

    def response(self, data: pd.DataFrame, what: str = "data") -> np.ndarray:
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
        return evaluate_response(
            self._lhs_spec,
            as_frame(data, what),
            self._response_variables,
            self.response_name,
            self.formula,
            what,
        )

    def _check_levels(self, frame: pd.DataFrame) -> None:
        """Raise on categorical values not seen at fit, before formulaic codes them as 0."""
        problems = []
        for expr, column, levels in self._levels:
            values = frame[column]
            unseen = ~values.isin(levels).to_numpy(dtype=bool)
            # 1 == True for isin, but formulaic codes 1 against levels [False, True] as no level at all
            unseen |= _is_bool(values) != all(isinstance(v, (bool, np.bool_)) for v in levels)
            if unseen.any():
                new = list(pd.unique(values[unseen]))
                problems.append(
                    f"column {column!r} (term {expr!r}) has level(s) {show(new)} not "
                    f"seen at fit in {int(unseen.sum())} row(s); levels seen at fit: "
                    f"{show(list(levels), 30)}"
                )
        if problems:
            raise InputError("; ".join(problems) + "; map them to a seen level or refit with data that contains them")


def _check_unique(frame: pd.DataFrame, used: list[str], what: str) -> None:
    """Several columns with one name: which one the formula would read is undefined."""
    dup = sorted(set(frame.columns[frame.columns.duplicated()]) & set(used))
    if dup:
        raise InputError(f"{what} has several columns named {show(dup)}; rename them")


def _is_bool(values: pd.Series) -> np.ndarray:
    """Which values are booleans (bool dtype, or bools inside an object column)."""
    if pd.api.types.is_bool_dtype(values):
        return np.ones(len(values), dtype=bool)
    if values.dtype == object:
        return values.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    return np.zeros(len(values), dtype=bool)


def _transform_hint(exc: Exception) -> str:
    """The fix for a formulaic failure on new rows, by its cause."""
    if "beyond upper and/or lower bounds" in str(exc):
        return (
            "a spline term (bs, cr, cc) is only defined within the range its column had at fit; "
            "keep newdata within that range, or fit with bounds covering the values you will "
            "predict on, e.g. bs(x, df=4, lower_bound=0, upper_bound=100)"
        )
    return "check that its columns have the same types as at fit"

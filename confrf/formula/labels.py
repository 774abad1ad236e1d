"""Class-label responses: detecting classification and coding the labels.

A response is a class label (classification) when the left-hand side is
``C(y)`` or a bare column whose dtype is categorical, bool, string or
object (an object column holding only numbers stays a numeric response, and
one mixing numbers with text is an error, as for predictors). The levels are stored at fit: the
categories of a Categorical (in
their order, unused ones dropped), ``[False, True]`` for bool, otherwise the
sorted distinct values. The design of the right-hand side is built by
:class:`confrf.formula.Design` with the label column replaced by its codes,
so every check of the predictors (NaN/inf, ``na_action``, unseen levels of
factors) is the same as for regression.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from .design import Design
from .frame import as_frame, prepare_columns
from .parse import _C_OF_COLUMN

_BACKTICKED = re.compile(r"^`(?P<name>[^`]+)`$")


def label_column(formula: Any, data: Any) -> str | None:
    """The response column when ``formula`` has a class-label response, else None.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": ["a", "b"], "z": [1.0, 2.0], "x": [0.0, 1.0]})
    >>> label_column("y ~ x", df), label_column("C(z) ~ x", df), label_column("z ~ x", df)
    ('y', 'z', None)
    """
    if not isinstance(formula, str) or formula.count("~") != 1 or not isinstance(data, (pd.DataFrame, dict)):
        return None
    lhs = formula.split("~", 1)[0].strip()
    frame = data if isinstance(data, pd.DataFrame) else None
    columns = frame.columns if frame is not None else list(data)
    m = _C_OF_COLUMN.match(lhs)
    if m and m.group("name") in columns:
        return m.group("name")
    b = _BACKTICKED.match(lhs)
    name = b.group("name") if b else lhs
    if name not in columns:
        return None
    col = frame[name] if frame is not None else pd.Series(data[name])
    if isinstance(col, pd.DataFrame):  # duplicated column names: Design.fit reports them
        return None
    if isinstance(col.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(col):
        return name
    if pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col):
        # numbers stored as objects stay a numeric response; numbers mixed with text raise (a stray "n/a"
        # must not turn a numeric response into class labels)
        prepared = prepare_columns(pd.DataFrame({name: col}), [name], "data")
        return None if pd.api.types.is_numeric_dtype(prepared[name]) else name
    return None


def response_levels(col: pd.Series) -> list:
    """Class levels of a label column (see the module docstring)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        # as R's randomForest ("Can't have empty classes"): a class without rows can be neither fitted nor calibrated
        unused = [c for c in col.cat.categories if c not in set(col.cat.remove_unused_categories().cat.categories)]
        if unused:
            raise InputError(
                f"the response {col.name!r} is a categorical with level(s) {unused[:10]} that no row has; a class "
                "without rows can be neither fitted nor calibrated, so its sets would carry no guarantee. Drop the "
                f"unused levels first: df[{col.name!r}] = df[{col.name!r}].cat.remove_unused_categories()."
            )
        return list(col.cat.categories)
    if pd.api.types.is_bool_dtype(col):
        return [v for v in (False, True) if (col == v).any()]
    values = [v.item() if isinstance(v, np.generic) else v for v in pd.unique(col.dropna())]  # plain Python values
    try:
        return sorted(values)
    except TypeError:  # mixed types: order of first appearance
        return values


class LabelDesign:
    """A fitted formula with a class-label response: the design, the response column and its levels.

    Attributes
    ----------
    formula : str
        The formula as given.
    design : Design
        The right-hand side (and NA handling), built on the label codes.
    response_name : str
        The label column.
    levels : list
        Class levels stored at fit.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": ["b", "a", "b", "a"], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> ld, X, codes, idx = LabelDesign.fit("y ~ x", df)
    >>> ld.levels, codes.tolist()
    (['a', 'b'], [1, 0, 1, 0])
    >>> ld.codes(pd.DataFrame({"y": ["a"]})).tolist()
    [0]
    """

    def __init__(self, formula: str, design: Design, response_name: str, levels: list) -> None:
        self.formula = formula
        self.design = design
        self.response_name = response_name
        self.levels = levels

    @classmethod
    def fit(
        cls, formula: str, data: Any, *, na_action: str = "raise"
    ) -> tuple[LabelDesign, np.ndarray, np.ndarray, pd.Index]:
        """Like :meth:`Design.fit`, for a label response: (design, X, codes, index of kept rows)."""
        data = as_frame(data, "data")
        name = label_column(formula, data)
        if name is None:
            raise InputError(
                f"the response of {formula!r} is not a class label; use C(y) or a categorical, bool or string column."
            )
        col = data[name]
        levels = response_levels(col)
        if len(levels) < 2:
            raise InputError(
                f"the response {name!r} has a single class ({levels!r}); classification needs at least two classes."
            )
        reserved = [lv for lv in levels if lv in ("pred", "size")]
        if reserved:
            raise InputError(
                f"class level(s) {reserved} clash with the prediction columns 'pred' and 'size'; rename "
                "them (e.g. with cat.rename_categories)."
            )
        codes = pd.Index(levels, dtype=object).get_indexer(pd.Index(col.astype(object), dtype=object))
        surrogate = data.copy()
        surrogate[name] = np.where(codes >= 0, codes, np.nan).astype(np.float64)  # missing labels stay missing
        rhs = formula.split("~", 1)[1]
        design, X, y, kept = Design.fit(f"`{name}` ~{rhs}", surrogate, na_action=na_action)
        design.formula = formula
        return cls(formula, design, name, levels), X, y.astype(np.int64), kept

    @property
    def column_names(self) -> list[str]:
        return self.design.column_names

    @property
    def n_dropped(self) -> int:
        return self.design.n_dropped

    @property
    def has_intercept(self) -> bool:
        return self.design.has_intercept

    def transform(self, newdata: Any, what: str = "newdata") -> np.ndarray:
        """Design matrix of new rows (see :meth:`Design.transform`); ``what`` names them in errors."""
        return self.design.transform(newdata, what=what)

    def codes(self, data: Any) -> np.ndarray:
        """Codes 0..K-1 of the labels of held-out rows; a missing or unseen label is an error."""
        frame = as_frame(data, "data")
        if self.response_name not in frame.columns:
            raise InputError(f"data lacks the response column {self.response_name!r} of formula {self.formula!r}.")
        col = frame[self.response_name]
        missing = col.isna().to_numpy()
        if missing.any():
            raise InputError(
                f"the response {self.response_name!r} is missing in {int(missing.sum())} row(s); drop these rows first."
            )
        codes = pd.Index(self.levels, dtype=object).get_indexer(pd.Index(col.astype(object), dtype=object))
        if (codes < 0).any():
            unseen = list(pd.unique(col[codes < 0].astype(object)))
            raise InputError(
                f"the response {self.response_name!r} has level(s) {unseen[:10]} in "
                f"{int((codes < 0).sum())} row(s) that were not seen at fit (levels: "
                f"{self.levels[:30]}); no set can contain them. Drop these rows or refit with data "
                "that contains them."
            )
        return codes.astype(np.int64)

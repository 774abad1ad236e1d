"""Tests of confrf.formula: formulas -> design matrices, and their checks."""

from __future__ import annotations

import doctest
import pickle
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import confrf.formula as formula_mod
from confrf.exceptions import FormulaError, InputError
from confrf.formula import Design


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 24
    return pd.DataFrame(
        {
            "price": rng.normal(10, 2, n),
            "carat": rng.uniform(0.2, 2.0, n),
            "cut": np.tile(["fair", "good", "ideal"], n // 3),
            "color": pd.Categorical(np.tile(["D", "E", "F", "G"], n // 4)),
            "flag": np.tile([True, False], n // 2),
            "region": np.tile([1, 2, 3, 4], n // 4),
        },
        index=pd.RangeIndex(100, 100 + n),
    )


# ----------------------------------------------------------------- basics
def test_fit_shapes_dtypes_and_attributes(df):
    design, X, y, idx = Design.fit("price ~ carat + C(cut) + C(color)", df)
    assert X.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous
    assert y.dtype == np.float64 and y.ndim == 1 and y.flags.c_contiguous
    assert X.shape == (len(df), 1 + 2 + 3)
    np.testing.assert_array_equal(y, df["price"].to_numpy())
    assert idx.equals(df.index)
    assert design.has_intercept
    assert "Intercept" not in design.column_names
    assert design.column_names[0] == "carat"
    assert len(design.column_names) == X.shape[1]
    assert design.variables == ["carat", "cut", "color"]
    assert design.response_name == "price"
    assert design.formula == "price ~ carat + C(cut) + C(color)"
    assert design.na_action == "raise"
    assert design.n_dropped == 0 and len(design.dropped_index) == 0
    # transform on the training data reproduces X
    np.testing.assert_array_equal(design.transform(df), X)


def test_no_intercept_recorded(df):
    design, X, _, _ = Design.fit("price ~ 0 + carat", df)
    assert not design.has_intercept
    assert design.column_names == ["carat"]
    design2, *_ = Design.fit("price ~ carat - 1", df)
    assert not design2.has_intercept


def test_intercept_only_formula(df):
    design, X, y, _ = Design.fit("price ~ 1", df)
    assert X.shape == (len(df), 0)
    assert design.transform(df.iloc[:3]).shape == (3, 0)


def test_docstring_examples_run():
    result = doctest.testmod(formula_mod.design, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --------------------------------------------------------- formula checks
@pytest.mark.parametrize("bad", [None, 3, ["y ~ x"]])
def test_formula_must_be_a_string(df, bad):
    with pytest.raises(FormulaError, match="must be a string"):
        Design.fit(bad, df)


@pytest.mark.parametrize("f", ["~ carat", "carat", "  ~ carat + cut"])
def test_formula_needs_a_response(df, f):
    with pytest.raises(FormulaError, match="needs a response on the left of ~"):
        Design.fit(f, df)


def test_formula_with_two_tildes(df):
    with pytest.raises(FormulaError, match="exactly one ~"):
        Design.fit("price ~ carat ~ cut", df)


def test_formula_with_two_responses(df):
    with pytest.raises(FormulaError, match="single response"):
        Design.fit("price + carat ~ cut", df)


def test_formula_syntax_error_names_formula_and_formulaic_message(df):
    with pytest.raises(FormulaError) as info:
        Design.fit("price ~ carat +", df)
    msg = str(info.value)
    assert "price ~ carat +" in msg
    assert "insuffient arguments" in msg or "misplaced" in msg  # formulaic's words
    assert "\x1b[" not in msg  # formulaic's ANSI colours stripped


def test_missing_column_named_with_close_match(df):
    with pytest.raises(FormulaError) as info:
        Design.fit("price ~ carrat + C(cutt)", df)
    msg = str(info.value)
    assert "'carrat'" in msg and "'cutt'" in msg
    assert "did you mean 'carat'" in msg
    assert "available columns" in msg


def test_missing_column_inside_stateful_transform(df):
    # formulaic 1.2.2's required_variables misses center()'s argument.
    with pytest.raises(FormulaError, match="'nope'"):
        Design.fit("price ~ center(nope)", df)


def test_missing_response_column(df):
    with pytest.raises(FormulaError, match="'cost'"):
        Design.fit("cost ~ carat", df)


def test_bad_function_is_a_formula_error(df):
    with pytest.raises(FormulaError, match=r"np\.lgo"):
        Design.fit("price ~ np.lgo(carat)", df)


def test_bad_na_action(df):
    with pytest.raises(InputError, match="na_action"):
        Design.fit("price ~ carat", df, na_action="omit")


# ------------------------------------------------------------ categoricals
def test_categoricals_str_category_bool_and_C(df):
    assert df["cut"].dtype == "str"  # pandas 3 default string dtype
    design, X, _, _ = Design.fit("price ~ cut + color + flag + C(region)", df)
    assert design.column_names == [
        "cut[T.good]",
        "cut[T.ideal]",
        "color[T.E]",
        "color[T.F]",
        "color[T.G]",
        "flag",
        "C(region)[T.2]",
        "C(region)[T.3]",
        "C(region)[T.4]",
    ]
    new = pd.DataFrame({"cut": ["ideal"], "color": ["F"], "flag": [True], "region": [4]})
    np.testing.assert_array_equal(design.transform(new), [[0, 1, 0, 1, 0, 1, 0, 0, 1]])


def test_object_dtype_strings_work(df):
    obj = df.assign(cut=df["cut"].astype(object))
    design, X, _, _ = Design.fit("price ~ cut", obj)
    np.testing.assert_array_equal(design.transform(df), X)  # str dtype at transform


@pytest.mark.parametrize("dtype", ["string", "string[pyarrow]", "large_string[pyarrow]", "str", "category"])
def test_text_in_any_string_dtype_is_a_factor(df, dtype):
    # formulaic casts pandas' nullable "string" and Arrow strings to float; every text dtype must give one factor
    if "pyarrow" in dtype:
        pytest.importorskip("pyarrow")
    typed = df.assign(cut=df["cut"].astype(dtype))
    ref, X_ref, _, _ = Design.fit("price ~ carat + cut + C(cut):carat", df)
    design, X, _, _ = Design.fit("price ~ carat + cut + C(cut):carat", typed)
    assert design.column_names == ref.column_names
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(design.transform(typed.iloc[:5]), X_ref[:5])  # the typed column at transform,
    np.testing.assert_array_equal(ref.transform(typed.iloc[:5]), X_ref[:5])  # also after a fit on object text
    with pytest.raises(InputError, match=r"'cut'.*'premium'"):
        design.transform(typed.iloc[:2].assign(cut=pd.array(["premium", "fair"], dtype="string")))
    with pytest.raises(InputError, match=r"NaN.*'cut'"):
        Design.fit("price ~ cut", typed.assign(cut=pd.array([None] + ["fair"] * 23, dtype="string")))


def test_unseen_level_with_C_raises(df):
    design, *_ = Design.fit("price ~ carat + C(cut)", df)
    new = pd.DataFrame({"carat": [1.0, 1.0, 1.0], "cut": ["good", "premium", "premium"]})
    with pytest.raises(InputError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and formulaic must not even be reached
            design.transform(new)
    msg = str(info.value)
    assert "'cut'" in msg and "'premium'" in msg
    assert "2 row(s)" in msg
    assert "levels seen at fit" in msg and "'fair'" in msg
    assert "refit" in msg


def test_unseen_level_plain_string_column_raises(df):
    design, *_ = Design.fit("price ~ cut", df)
    with pytest.raises(InputError, match=r"'cut'.*'excellent'.*1 row"):
        design.transform({"cut": ["excellent", "fair"]})


def test_unseen_level_in_categorical_dtype_and_int_C(df):
    design, *_ = Design.fit("price ~ color + C(region)", df)
    new = pd.DataFrame({"color": pd.Categorical(["D", "Z"]), "region": [1, 9]})
    with pytest.raises(InputError) as info:
        design.transform(new)
    msg = str(info.value)
    assert "'Z'" in msg and "9" in msg and "'region'" in msg and "'color'" in msg


def test_unused_categories_of_new_categorical_are_fine(df):
    design, X, _, _ = Design.fit("price ~ color", df)
    new = pd.DataFrame({"color": pd.Categorical(["E", "D"], categories=["Q", "E", "D"])})
    np.testing.assert_array_equal(design.transform(new), [[1, 0, 0], [0, 0, 0]])


def test_unseen_value_of_computed_categorical_raises(df):
    # Not a plain column: guarded by turning formulaic's warning into an error.
    design, *_ = Design.fit("price ~ C(np.round(carat))", df)
    with pytest.raises(InputError, match="outside its levels"):
        design.transform({"carat": [40.0]})


def test_values_outside_given_levels_at_fit_raise(df):
    with pytest.raises(InputError, match="outside its levels"):
        Design.fit("price ~ C(cut, levels=['fair', 'good'])", df)


# ------------------------------------------------------------- transform
def test_transform_missing_column(df):
    design, *_ = Design.fit("price ~ carat + cut", df)
    with pytest.raises(InputError, match=r"lacks column\(s\) \['cut'\]"):
        design.transform(df[["carat"]])


def test_transform_without_response_and_with_extra_columns(df):
    design, X, _, _ = Design.fit("price ~ carat + cut", df)
    new = df.drop(columns="price").assign(junk=np.nan, more="x")
    np.testing.assert_array_equal(design.transform(new), X)


def test_transform_preserves_row_order(df):
    design, X, _, _ = Design.fit("price ~ carat + cut", df)
    shuffled = df.sample(frac=1.0, random_state=1)
    pos = df.index.get_indexer(shuffled.index)
    np.testing.assert_array_equal(design.transform(shuffled), X[pos])


def test_transform_empty_newdata(df):
    design, *_ = Design.fit("price ~ carat + cut", df)
    out = design.transform(df.iloc[:0])
    assert out.shape == (0, 3) and out.dtype == np.float64


def test_transform_nan_always_raises_even_with_drop(df):
    design, *_ = Design.fit("price ~ carat + cut", df, na_action="drop")
    new = df.iloc[:4].copy()
    new.loc[new.index[[0, 2]], "carat"] = np.nan
    new.loc[new.index[3], "cut"] = None
    with pytest.raises(InputError) as info:
        design.transform(new)
    msg = str(info.value)
    assert "'carat' (2 rows)" in msg and "'cut' (1 rows)" in msg
    assert "3 row(s)" in msg and "drop or impute" in msg


def test_transform_inf_raises(df):
    design, *_ = Design.fit("price ~ carat", df)
    with pytest.raises(InputError, match="'carat'"):
        design.transform({"carat": [1.0, np.inf]})


def test_transform_inf_made_by_transform_names_design_column(df):
    design, *_ = Design.fit("price ~ np.log(carat)", df)
    with pytest.raises(InputError, match=r"np\.log\(carat\).*'carat'"):
        design.transform({"carat": [1.0, 0.0]})


# ------------------------------------------------------------- NaN / inf
def test_fit_nan_raises_naming_columns_and_fix(df):
    bad = df.copy()
    bad.loc[bad.index[[1, 5]], "carat"] = np.nan
    bad.loc[bad.index[5], "price"] = np.inf
    bad.loc[bad.index[7], "cut"] = None
    with pytest.raises(InputError) as info:
        Design.fit("price ~ carat + cut", bad)
    msg = str(info.value)
    assert "'carat' (2 rows)" in msg and "'price' (1 rows)" in msg
    assert "'cut' (1 rows)" in msg and "3 row(s)" in msg
    assert "na_action='drop'" in msg


def test_fit_nan_in_unused_column_is_ignored(df):
    _, X, _, idx = Design.fit("price ~ carat", df.assign(other=np.nan))
    assert len(idx) == len(df)


def test_fit_inf_made_by_transform(df):
    bad = df.copy()
    bad.loc[bad.index[0], "carat"] = 0.0
    with pytest.raises(InputError, match=r"design column 'np\.log\(carat\)'.*1 rows"):
        Design.fit("price ~ np.log(carat)", bad)
    with pytest.raises(InputError, match=r"response 'np\.log\(price\)'"):
        Design.fit("np.log(price) ~ carat", bad.assign(price=-1.0))


def test_fit_drop_records_dropped_rows(df):
    bad = df.copy()
    bad.loc[bad.index[[1, 5]], "carat"] = np.nan
    bad.loc[bad.index[8], "price"] = np.nan
    design, X, y, idx = Design.fit("price ~ carat + cut", bad, na_action="drop")
    assert design.n_dropped == 3
    assert list(design.dropped_index) == list(bad.index[[1, 5, 8]])
    assert idx.equals(bad.index.delete([1, 5, 8]))
    assert X.shape[0] == y.shape[0] == len(df) - 3
    np.testing.assert_array_equal(y, bad.loc[idx, "price"].to_numpy())


def test_fit_drop_also_drops_transform_made_inf_and_refits_state(df):
    bad = df.copy()
    bad.loc[bad.index[0], "carat"] = 0.0  # np.log(0) = -inf
    design, X, _, idx = Design.fit("price ~ np.log(carat) + center(carat)", bad, na_action="drop")
    assert design.n_dropped == 1 and bad.index[0] not in idx
    # center() learnt its mean from the kept rows only
    kept_mean = bad["carat"].iloc[1:].mean()
    np.testing.assert_allclose(X[:, 1], bad["carat"].iloc[1:] - kept_mean)


def test_fit_drop_too_few_rows_left(df):
    bad = df.copy()
    bad.loc[bad.index[1:], "carat"] = np.nan
    with pytest.raises(InputError, match="at least 2"):
        Design.fit("price ~ carat", bad, na_action="drop")


def test_nullable_integer_with_na(df):
    bad = df.assign(region=pd.array([1, None] * 12, dtype="Int64"))
    with pytest.raises(InputError, match="'region'"):
        Design.fit("price ~ region", bad)


# ---------------------------------------------------------------- response
def test_non_numeric_response(df):
    with pytest.raises(InputError, match=r"response must be numeric.*'cut'"):
        Design.fit("cut ~ carat", df)


def test_response_on_new_data(df):
    design, _, y, _ = Design.fit("np.log(price) ~ carat", df)
    np.testing.assert_allclose(y, np.log(df["price"]))
    np.testing.assert_allclose(design.response(df.iloc[:5]), np.log(df["price"].iloc[:5]))
    assert design.response_name == "np.log(price)"
    with pytest.raises(InputError, match="'price'"):
        design.response(df.drop(columns="price"))
    with pytest.raises(InputError, match="NaN or inf"):
        design.response({"price": [1.0, np.nan]})


@pytest.mark.parametrize(
    "lhs",
    [
        "I(price > 10)",
        "np.logical_not(flag)",
        "I(flag & (region > 1))",
        "(flag)",  # a bool column the label detection (by column name) does not see
        "flag:I(price > 10)",  # a product of booleans is their "and"
        "np.where(flag, True, False)",  # a numpy bool array, not a Series
    ],
)
def test_boolean_response_expression_is_refused_as_a_class_label(df, lhs):
    """formulaic casts a boolean response to int64 0/1 (the matrix cannot tell), so it used to be regressed on 0/1:
    the factor's own values decide. The message says boolean/class label and names both fixes."""
    with pytest.raises(InputError, match=r"is boolean \(True/False\), which is a class label.*cf\.conformal\("):
        Design.fit(f"{lhs} ~ carat + C(cut)", df)
    nullable = df.assign(flag=df["flag"].astype("boolean"))  # pandas' nullable boolean dtype too
    with pytest.raises(InputError, match="is boolean"):
        Design.fit(f"{lhs} ~ carat + C(cut)", nullable)


def test_boolean_response_message_names_the_column_to_create_and_the_0_1_response(df):
    with pytest.raises(InputError) as info:
        Design.fit("I(price > 10) ~ carat + C(cut)", df)
    msg = str(info.value)
    assert "df['label'] = df['price'] > 10" in msg and "cf.conformal('label ~ carat + C(cut)', data=df)" in msg
    assert "I((price > 10) * 1)" in msg
    with pytest.raises(InputError) as info:  # backquoted names, Q(), and a "label" column already taken
        Design.fit("I(`my price` > 10) ~ carat", df.rename(columns={"price": "my price", "cut": "label"}))
    assert "df['label1'] = df['my price'] > 10" in str(info.value) and "I((`my price` > 10) * 1)" in str(info.value)
    with pytest.raises(InputError, match=r"df\['label'\] = np\.logical_not\(df\['flag'\]\)"):
        Design.fit("np.logical_not(Q('flag')) ~ carat", df)
    with pytest.raises(InputError, match=r"cf\.conformal\('flag ~ carat', data=df\).*df\['flag'\]\.astype\(int\)"):
        Design.fit("(flag) ~ carat", df)
    # following the advice: a numeric 0/1 response
    design, _, y, _ = Design.fit("I((price > 10) * 1) ~ carat + C(cut)", df)
    assert y.tolist() == (df["price"] > 10).astype(float).tolist()


@pytest.mark.parametrize("values", [[0, 1], [0.0, 1.0]], ids=["int", "float"])
def test_numeric_0_1_response_stays_a_regression(df, values):
    """No 0/1 heuristic: numbers that happen to be 0 and 1 are a numeric response."""
    frame = df.assign(y=np.resize(np.asarray(values), len(df)))
    for lhs in ("y", "I(y * 1)", "np.where(flag, 1, 0)"):
        design, _, y, _ = Design.fit(f"{lhs} ~ carat", frame)
        assert set(y.tolist()) == {0.0, 1.0}
        np.testing.assert_array_equal(design.response(frame), y)


def test_boolean_response_on_held_out_rows_is_refused(df):
    """A response numeric at fit but boolean in held-out rows (calib=, evaluate) is not read as 0/1 either."""
    frame = df.assign(y=df["flag"].astype(int))
    for lhs in ("y", "I(y)", "np.asarray(y)"):
        design, *_ = Design.fit(f"{lhs} ~ carat", frame)
        with pytest.raises(
            InputError,
            match=r"boolean \(True/False\) in calib, but it was numeric at fit.*"
            r"calib\['y'\] = calib\['y'\]\.astype\(int\)",
        ):
            design.response(frame.assign(y=df["flag"]), what="calib")
        np.testing.assert_array_equal(design.response(frame), frame["y"].to_numpy(dtype=float))


# -------------------------------------------------------------- data type
def test_too_few_rows(df):
    with pytest.raises(InputError, match="at least 2"):
        Design.fit("price ~ carat", df.iloc[:1])
    with pytest.raises(InputError, match="at least 2"):
        Design.fit("price ~ carat", df.iloc[:0])


def test_dict_data_accepted():
    data = {"y": [1.0, 2.0, 3.0], "x": [0.0, 1.0, 5.0]}
    design, X, y, idx = Design.fit("y ~ x", data)
    np.testing.assert_array_equal(X, [[0.0], [1.0], [5.0]])
    np.testing.assert_array_equal(design.transform({"x": [2.0]}), [[2.0]])


@pytest.mark.parametrize("bad", [np.ones((3, 2)), [[1, 2]], "y,x"])
def test_non_frame_data_is_type_error(bad):
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        Design.fit("y ~ x", bad)


def test_non_frame_newdata_is_type_error(df):
    design, *_ = Design.fit("price ~ carat", df)
    with pytest.raises(TypeError, match="newdata must be a pandas DataFrame"):
        design.transform(np.ones((2, 1)))


# -------------------------------------------------- transforms, interactions
def test_stateful_transforms_reuse_fit_state(df):
    design, X, _, _ = Design.fit("price ~ center(carat) + scale(carat)", df)
    mean, sd = df["carat"].mean(), df["carat"].std()
    new = pd.DataFrame({"carat": [mean, mean + sd]})
    # with a refit on `new`, center(carat) would be [-sd/2, sd/2]
    np.testing.assert_allclose(design.transform(new), [[0.0, 0.0], [sd, 1.0]])


def test_stateless_transforms(df):
    design, X, _, _ = Design.fit("price ~ np.log(carat) + I(carat**2)", df)
    np.testing.assert_allclose(X[:, 0], np.log(df["carat"]))
    np.testing.assert_allclose(X[:, 1], df["carat"] ** 2)
    np.testing.assert_allclose(design.transform({"carat": [2.0]}), [[np.log(2.0), 4.0]])


@pytest.mark.parametrize("dtype", ["int64", "float64", "Int64"])
def test_caret_inside_calls_is_rs_power_on_every_dtype(df, dtype):
    # Python reads ^ as xor: I(x^2) on integers would silently be x xor 2 (120 -> 122)
    frame = df.assign(region=(df["region"] * 30).astype(dtype))
    design, X, *_ = Design.fit("price ~ I(region^2) + np.log(region^3) + I((region - 1)^2)", frame)
    x = frame["region"].to_numpy(dtype=float)
    np.testing.assert_allclose(X, np.column_stack([x**2, np.log(x**3), (x - 1) ** 2]))
    np.testing.assert_allclose(
        design.transform(pd.DataFrame({"region": [120]})), [[14400.0, np.log(120.0**3), 119.0**2]]
    )


def test_caret_outside_calls_stays_the_interaction_power(df):
    design, *_ = Design.fit("price ~ (carat + region + C(cut))^2 + I(carat^2)", df)
    names = design.column_names
    assert "carat:region" in names and "I(carat ** 2)" in names
    assert not any(":" in c and c.count(":") > 1 for c in names)  # ^2: pairs only
    y_design, _, y, _ = Design.fit("I(price^2) ~ carat", df)  # the response too
    assert y_design.response_name == "I(price ** 2)"
    np.testing.assert_allclose(y, df["price"] ** 2)


def test_poly_keeps_fit_basis(df):
    design, X, _, _ = Design.fit("price ~ poly(carat, 2)", df)
    np.testing.assert_allclose(design.transform(df.iloc[[3]]), X[[3]])
    np.testing.assert_allclose(design.transform(df.iloc[[3, 4]]), X[[3, 4]])


def test_interaction(df):
    design, X, _, _ = Design.fit("price ~ carat:C(cut)", df)
    assert design.column_names == [
        "carat:C(cut)[fair]",
        "carat:C(cut)[good]",
        "carat:C(cut)[ideal]",
    ]
    np.testing.assert_array_equal(design.transform({"carat": [2.0], "cut": ["good"]}), [[0.0, 2.0, 0.0]])
    with pytest.raises(InputError, match="'bad'"):
        design.transform({"carat": [2.0], "cut": ["bad"]})


def test_backticked_column_name():
    data = pd.DataFrame({"y": [1.0, 2.0, 4.0], "my x": [1.0, 2.0, 3.0]})
    design, X, _, _ = Design.fit("y ~ center(`my x`)", data)
    assert design.variables == ["my x"]
    np.testing.assert_allclose(X[:, 0], [-1.0, 0.0, 1.0])


# ------------------------------------------------------------------ pickle
def test_pickle_round_trip(df):
    design, X, _, _ = Design.fit("price ~ center(carat) + C(cut) + color + carat:C(region) + poly(carat, 2)", df)
    clone = pickle.loads(pickle.dumps(design))
    new = df.sample(7, random_state=3)
    np.testing.assert_array_equal(clone.transform(new), design.transform(new))
    np.testing.assert_array_equal(clone.transform(df), X)
    for attr in ("formula", "response_name", "column_names", "variables", "has_intercept", "na_action", "n_dropped"):
        assert getattr(clone, attr) == getattr(design, attr)
    with pytest.raises(InputError, match="'nope'"):
        clone.transform(new.assign(cut="nope"))


def test_unused_category_at_fit_is_not_a_level(df):
    # An unused category would be an all-zero column at fit that new rows
    # could then silently use; it is dropped and treated as unseen.
    data = df.assign(color=df["color"].cat.add_categories(["Z"]))
    design, X, _, _ = Design.fit("price ~ color", data)
    assert design.column_names == ["color[T.E]", "color[T.F]", "color[T.G]"]
    assert (X != 0).any(axis=0).all()
    with pytest.raises(InputError, match="'Z'"):
        design.transform(pd.DataFrame({"color": pd.Categorical(["Z"], categories=["D", "Z"])}))


def test_numeric_column_given_as_strings_at_transform(df):
    design, *_ = Design.fit("price ~ carat + cut", df)
    with pytest.raises(InputError, match=r"'carat' \(dtype .*\) were numeric at fit"):
        design.transform({"carat": ["1.0", "2.0"], "cut": ["fair", "good"]})


def test_unseen_levels_are_shown_as_plain_values(df):
    design, *_ = Design.fit("price ~ C(region)", df)
    with pytest.raises(InputError, match=r"level\(s\) \[7\]"):
        design.transform({"region": [7]})


def test_duplicate_used_column_names(df):
    data = pd.concat([df, df[["carat"]]], axis=1)
    with pytest.raises(InputError, match="several columns named"):
        Design.fit("price ~ carat", data)


# ------------------------------------------------- names and types R/statsmodels users bring
@pytest.fixture
def iris_like():
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "Sepal.Length": rng.normal(5, 1, 40),
            "Sepal.Width": rng.normal(3, 1, 40),
            "Species": rng.choice(["setosa", "virginica"], 40),
        }
    )


@pytest.mark.parametrize(
    "formula",
    [
        "`Sepal.Length` ~ `Sepal.Width` + Species",
        "Q('Sepal.Length') ~ Q('Sepal.Width') + Species",
        "`Sepal.Length` ~ .",
        "Q('Sepal.Length') ~ .",
        "Sepal.Length ~ Sepal.Width + Species",  # formulaic reads a bare dotted name as one name, as R does
    ],
)
def test_dotted_column_names(iris_like, formula):
    design, X, y, _ = Design.fit(formula, iris_like)
    assert design.variables == ["Sepal.Width", "Species"]
    np.testing.assert_array_equal(y, iris_like["Sepal.Length"])
    j = next(i for i, c in enumerate(design.column_names) if "Sepal.Width" in c)
    np.testing.assert_array_equal(X[:, j], iris_like["Sepal.Width"])
    assert design.transform(iris_like.drop(columns="Sepal.Length")).shape == X.shape


@pytest.mark.parametrize(
    "formula, hint",
    [
        ("`Sepal.Width` ~ np.log(Sepal.Length)", "`Sepal.Length` or Q('Sepal.Length')"),
        ("`Sepal.Length` ~ factor(Species)", "R's factor() is C(x)"),
        ("`Sepal.Length` ~ as.factor(Species)", "R's as.factor() is C(x)"),
        ("`Sepal.Length` ~ sqrt(`Sepal.Width`)", "np.sqrt(x)"),
    ],
)
def test_r_idioms_get_their_python_spelling(iris_like, formula, hint):
    with pytest.raises(FormulaError) as info:
        Design.fit(formula, iris_like)
    assert hint in str(info.value)


def test_object_column_of_numbers_is_numeric(df):
    obj = df.assign(carat=df["carat"].astype(object), price=df["price"].astype(object))
    d1, X1, y1, _ = Design.fit("price ~ carat", df)
    d2, X2, y2, _ = Design.fit("price ~ carat", obj)
    assert d2.column_names == d1.column_names == ["carat"]
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(d2.transform(obj.head(3)), X1[:3])


def test_text_with_a_level_per_row_needs_c_to_be_a_factor():
    frame = pd.DataFrame({"y": np.arange(30.0), "id": [f"r{i}" for i in range(30)]})
    with pytest.raises(InputError, match="write C\\(id\\)"):
        Design.fit("y ~ id", frame)
    design, X, *_ = Design.fit("y ~ C(id)", frame)  # asked for explicitly
    assert X.shape == (30, 29)


@pytest.mark.parametrize(
    "make", [lambda i: Decimal(i) / 4, lambda i: Fraction(i, 4), lambda i: Fraction(i, 4) if i % 2 else i / 4]
)
def test_decimal_and_fraction_objects_are_numbers(make):
    frame = pd.DataFrame({"y": np.arange(30.0), "x": pd.Series([make(i) for i in range(30)], dtype=object)})
    design, X, *_ = Design.fit("y ~ x", frame)
    assert design.column_names == ["x"] and X[:, 0].tolist() == [i / 4 for i in range(30)]


def test_few_levels_of_text_stay_a_factor():
    frame = pd.DataFrame({"y": np.arange(30.0), "g": ["1", "2", "3"] * 10})
    design, *_ = Design.fit("y ~ g", frame)
    assert design.column_names == ["g[T.2]", "g[T.3]"]


def test_non_string_column_names_become_strings():
    frame = pd.DataFrame({"y": np.arange(10.0), 0: np.arange(10.0) ** 2})
    design, X, *_ = Design.fit("y ~ .", frame)
    assert design.variables == ["0"]
    assert design.transform(pd.DataFrame({0: [4.0]})).tolist() == [[4.0]]


def test_one_row_series_and_frame_like_objects(df):
    design, X, *_ = Design.fit("price ~ carat + C(cut)", df)

    class FrameLike:  # polars and pyarrow offer to_pandas()
        def to_pandas(self):
            return df.head(3)

    pa = pytest.importorskip("pyarrow")
    table = pa.Table.from_pandas(df.head(3), preserve_index=False)

    class NeedsPyarrow(FrameLike):  # to_pandas() fails, the interchange protocol (read by pyarrow) works
        def to_pandas(self):
            raise ModuleNotFoundError("No module named 'pyarrow'")

        def __dataframe__(self, *args, **kwargs):  # pandas' own producer is deprecated: pyarrow's
            return table.__dataframe__(*args, **kwargs)

    class Broken(NeedsPyarrow):
        def __dataframe__(self, *args, **kwargs):
            raise RuntimeError("no")

    np.testing.assert_array_equal(design.transform(df.iloc[1]), X[1:2])
    np.testing.assert_array_equal(design.transform(FrameLike()), X[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read by pyarrow: no warning of pandas' deprecated interchange protocol
        np.testing.assert_array_equal(design.transform(NeedsPyarrow()), X[:3])
    with pytest.raises(InputError, match="pyarrow.*convert it yourself"):
        design.transform(Broken())


def test_spline_outside_its_range_says_how_to_fix(df):
    design, *_ = Design.fit("price ~ bs(carat, df=4)", df[df["carat"] < 1])
    with pytest.raises(InputError, match="lower_bound"):
        design.transform(df[df["carat"] > 1].head(3))


def test_formula_without_predictors(df):
    design, X, y, _ = Design.fit("price ~ 1", df)
    assert X.shape == (len(df), 0) and design.has_intercept
    design0, X0, *_ = Design.fit("price ~ 0", df)
    assert X0.shape == (len(df), 0) and not design0.has_intercept

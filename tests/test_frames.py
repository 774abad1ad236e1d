"""Data frames of other libraries as input (polars, pyarrow): every row, in order, dtypes mapped, no warning."""

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import pytest

import confrf as cf
from confrf.exceptions import ArgumentTypeError, InputError
from confrf.formula.frame import as_frame

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
nw = pytest.importorskip("narwhals.stable.v2")

FORMULA = "y ~ x + C(cat) + C(enum) + text + flag + count"
LEVELS = ["lo", "mid", "hi"]
FAST = {"n_estimators": 20, "min_samples_leaf": 15, "max_features": 1.0}


@pytest.fixture(scope="module")
def pandas_frame():
    """The pandas frame every other library's frame below stands for, dtype by dtype."""
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(size=n)
    cat = rng.choice(["z", "a", "m"], size=n)  # first seen: z; sorted: a
    enum = rng.choice(LEVELS, size=n)
    text = rng.choice(["red", "blue"], size=n)
    flag = rng.random(n) < 0.4
    count = rng.integers(0, 5, size=n)
    y = x + (cat == "a") + 0.5 * flag + 0.1 * count + rng.normal(scale=0.1 + x, size=n)
    return pd.DataFrame(
        {
            "y": y,
            "x": x,
            "cat": pd.Categorical(cat),  # pandas sorts the categories, as polars orders a Categorical
            "enum": pd.Categorical(enum, categories=LEVELS),  # declared order
            "text": pd.array(text, dtype=object),
            "flag": flag,
            "count": count.astype(np.int64),
        }
    )


@pytest.fixture(scope="module")
def polars_frame(pandas_frame):
    p = pandas_frame
    return pl.DataFrame(
        {
            "y": p["y"].to_numpy(),
            "x": p["x"].to_numpy(),
            "cat": pl.Series(p["cat"].astype(str).to_numpy(), dtype=pl.Categorical),
            "enum": pl.Series(p["enum"].astype(str).to_numpy(), dtype=pl.Enum(LEVELS)),
            "text": p["text"].astype(str).to_numpy(),
            "flag": p["flag"].to_numpy(),
            "count": pl.Series(p["count"].to_numpy(), dtype=pl.Int64),
        }
    )


@pytest.fixture(scope="module")
def arrow_table(pandas_frame):
    return pa.Table.from_pandas(pandas_frame, preserve_index=False)


@pytest.fixture(scope="module")
def fitted(pandas_frame):
    return cf.lcp_rf(FORMULA, data=pandas_frame.iloc[:500], random_state=0, **FAST)


def _no_warning(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas 3 warns of the interchange protocol: no longer used
        return call()


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_frames_convert_row_for_row_with_their_dtypes(kind, pandas_frame, polars_frame, arrow_table):
    native = polars_frame if kind == "polars" else arrow_table
    out = _no_warning(lambda: as_frame(native, "data"))
    assert out.columns.tolist() == pandas_frame.columns.tolist() and len(out) == len(pandas_frame)
    for c in ("y", "x", "count"):
        np.testing.assert_array_equal(out[c].to_numpy(), pandas_frame[c].to_numpy())  # every row, in order
    assert out["flag"].dtype == bool and (out["flag"] == pandas_frame["flag"]).all()
    assert out["text"].tolist() == pandas_frame["text"].tolist()
    assert out["cat"].cat.categories.tolist() == ["a", "m", "z"]  # sorted, as pandas' astype("category")
    assert out["enum"].cat.categories.tolist() == LEVELS  # the declared order
    assert (out["cat"].astype(str) == pandas_frame["cat"].astype(str)).all()


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_fit_and_predict_equal_the_pandas_ones(kind, pandas_frame, polars_frame, arrow_table, fitted):
    native = polars_frame if kind == "polars" else arrow_table
    train, new = native.slice(0, 500), native.slice(500, 100)
    res = _no_warning(lambda: cf.lcp_rf(FORMULA, data=train, random_state=0, **FAST))
    pred = _no_warning(lambda: res.predict(new))
    expected = fitted.predict(pandas_frame.iloc[500:].reset_index(drop=True))
    pd.testing.assert_frame_equal(pred, expected)
    # a polars/pyarrow frame predicted by a pandas fit, and the reverse: the same rows
    pd.testing.assert_frame_equal(fitted.predict(new), expected)
    pd.testing.assert_frame_equal(res.predict(pandas_frame.iloc[500:].reset_index(drop=True)), expected)


def test_polars_without_pyarrow_converts_column_by_column(polars_frame, monkeypatch):
    expected = as_frame(polars_frame, "data")

    def needs_pyarrow(self, *args, **kwargs):
        raise ModuleNotFoundError("No module named 'pyarrow'")

    monkeypatch.setattr(nw.DataFrame, "to_pandas", needs_pyarrow)
    out = _no_warning(lambda: as_frame(polars_frame, "data"))
    pd.testing.assert_frame_equal(out, expected, check_dtype=False)
    assert out["cat"].cat.categories.tolist() == ["a", "m", "z"] and out["enum"].cat.categories.tolist() == LEVELS
    nulls = pl.DataFrame({"i": pl.Series([1, None, 3]), "c": pl.Series(["b", None, "a"], dtype=pl.Categorical)})
    out = as_frame(nulls, "data")
    assert np.isnan(out["i"][1]) and pd.isna(out["c"][1]) and out["c"].cat.categories.tolist() == ["a", "b"]


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_missing_values_are_reported_never_dropped(kind):
    data = {"y": [1.0, 2.0, 3.0, 4.0] * 10, "n": [1, None, 3, 4] * 10, "b": [True, None, False, True] * 10}
    native = pl.DataFrame(data) if kind == "polars" else pa.table(data)
    for column in ("n", "b"):
        with pytest.raises(InputError, match=rf"'{column}' \(10 rows\)"):
            cf.split_cp(f"y ~ {column}", data=native, random_state=0)


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_dates_are_refused_with_a_fix(kind):
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(40)]
    data = {"y": np.arange(40.0), "d": days}
    native = pl.DataFrame(data) if kind == "polars" else pa.table(data)  # pyarrow's dates arrive as objects
    with pytest.raises(InputError, match="'d' of data holds dates or times.*dt.days"):
        cf.split_cp("y ~ d", data=native, random_state=0)


def test_lazy_frames_and_single_columns_are_refused(polars_frame):
    with pytest.raises(ArgumentTypeError, match=r"lazy frame .*\.collect\(\)"):
        cf.split_cp(FORMULA, data=polars_frame.lazy(), random_state=0)
    with pytest.raises(ArgumentTypeError, match="single column"):
        as_frame(polars_frame["x"], "newdata")


def test_arrow_streams_and_the_interchange_protocol(pandas_frame, arrow_table):
    class ArrowStream:  # any library that exports an Arrow stream (the PyCapsule interface)
        def __arrow_c_stream__(self, requested_schema=None):
            return arrow_table.__arrow_c_stream__(requested_schema)

    class Interchange:  # a frame of the dataframe interchange protocol only, read by pyarrow
        def __dataframe__(self, *args, **kwargs):
            return arrow_table.__dataframe__(*args, **kwargs)

    for obj in (ArrowStream(), Interchange()):
        out = _no_warning(lambda obj=obj: as_frame(obj, "data"))
        np.testing.assert_array_equal(out["y"].to_numpy(), pandas_frame["y"].to_numpy())
        assert out["enum"].cat.categories.tolist() == LEVELS

